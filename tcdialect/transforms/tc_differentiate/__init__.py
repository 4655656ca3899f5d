"""`tc-differentiate{entry=f wrt=A,B save=none memory-budget=...}`: derive the
backward definition of a `tc.def`.

A tc → tc pass (docs/autodiff.md). For the `tc.def @f` named `entry` (the
module's only one when `entry` is empty) it adds, after `@f` and leaving it
unchanged, a `tc.def @f_grad` that computes vector-Jacobian products:

* inputs: `@f`'s inputs in declared order, then one gradient per output,
  named ``d_<output>`` (same type as the output);
* outputs: ``d_<input>`` for each input in `wrt`, in declared order (default:
  every floating-point input), of the input's type.

`@f_grad` is ordinary `tc` IR, so every target compiles it. It is built by
reverse-mode differentiation, one statement at a time in reverse order:

* **recompute**: `@f_grad` starts with a copy of every statement of `@f`
  (the backward takes the forward inputs, so each forward value it needs is
  recomputed; copies nothing reads are dropped). A version of a tensor that
  a later statement accumulates into (``+=``) and that the backward also
  reads is copied first, so no version is overwritten while still needed.
* **save** (the rematerialisation policy, `remat.py`): with ``save=auto``
  the versions the backward still recomputes that are expensive, the
  reductions (work per element: the reduction space) and the elementwise
  statements calling a transcendental (``exp``...), are *saved* instead,
  elementwise arithmetic recomputed from the inputs and the saved values;
  ``save=all`` saves every such version; ``memory-budget=<size
  expression>`` caps the saved elements (reductions first, then
  transcendentals; a version fits when the total is at most the budget for
  all sizes; ``0`` saves nothing). The pass then
  also adds ``@f_fwd``: `@f` returning, after its outputs, each saved
  version that is not an output (through a copy ``<t>_saved`` when a later
  statement overwrites it); `@f_grad` takes the saved versions, named as
  `@f_fwd` returns them, between the forward inputs and the output
  gradients. With a saved ``max=!``/``min=!`` over a reduction space that
  is not a constant (softmax's row maximum), the positions of its first
  maxima (``mx_first``) are saved too. The default ``save=none`` adds no
  ``@f_fwd``.
* **adjoints**: every read ``V(s(i, r))`` of a differentiable tensor in a
  statement ``T(i) op= body`` contributes ``dV(u) += dT(i) * dbody/dV`` at
  ``u = s(i, r)``. That scatter is turned into a gather by inverting the
  subscripts: each dimension ``u_d = c*v + rest`` solves for one index ``v``
  with a constant ``c`` (``v = (u_d - rest) floordiv c``; coefficients that
  are sizes, ``i * S``, stay in ``rest``; output indices preferred, so a
  convolution's adjoint reduces over the kernel window), or for two
  indices where it is a mixed radix ``c*v + w + rest``, ``w`` ranging over
  ``[lo, lo + c)`` (a pooling window as wide as its stride: ``v = (u_d -
  rest - lo) floordiv c``, ``w = lo + (u_d - rest - lo) mod c``, no
  reduction, no divisibility guard); the indices not
  solved stay reduction indices; range and divisibility guards (clamped
  index values, then `arith.select`) keep every read in bounds. A tensor's
  contributions are accumulated (``=``/``+=!`` first, then ``+=``), then
  propagated when its defining statement is reached.
* **reductions**: ``+=!``/``+=`` pass ``dT`` through; ``*=!``/``*=`` multiply
  by the product of the *other* factors (a ``*=!`` temporary excluding one
  factor, never a division, so zeros are exact); ``max=``/``min=`` give
  ``dT`` to the first element equal to the result (row-major over the
  reduction indices, the ``into`` value first; a ``min=!`` temporary holds
  its position, an i32 for a constant reduction space such as a pooling
  window, else an i64); pointwise ``fmax``/``max``... to the first operand
  equal to the result.
* **bodies**: reverse-mode over `arith`/`math`/`tc.builtin` ops with a
  derivative table; comparisons, integer values and select conditions carry
  no gradient; casts between float types pass it through.
* **reuse** (`reuse.py`): a body that computes exactly what an available
  elementwise statement ``T(i) = body(i)`` computes (a saved version, or an
  earlier ``=`` statement of ``@f_grad``), at index arguments within
  ``T``'s ranges, reads ``T`` instead (softmax's ``d_I`` reads the saved
  ``e`` rather than recomputing ``exp``; ``d_mx`` reads ``d_I``).
* **folding** (`fold.py`): a pointwise ``+=`` update folds into its ``=``
  definition when nothing else reads that (``d_e = d_O / s`` then
  ``d_e += d_s`` is ``d_e = d_O / s + d_s``), and into the copy that gives
  an input its gradient (layer norm's ``d_I = d_cen + d_mean_1``, written
  once instead of ``d_cen += d_mean_1`` then ``d_I = d_cen``).
* **scatters**: a read whose subscripts do not invert (data-dependent
  ``E(Idx(k), d)``, non-injective ``X(i / 2)``, ``A(i % P)``) contributes a
  scatter-accumulate comprehension over the statement's own index space
  (``tc.yield %v at [%s...]``, see `tc.ComprehensionOp`; duplicates add up).

Errors are `TCError`s naming the definition: an unknown or integer `wrt`
input, a builtin without derivative (``floor``...).

Example: ``O(i) +=! A(i + r) * K(r)`` with ``float(N) A, float(3) K``
(``O`` of extent ``N - 2``) and ``wrt=A`` gives::

    tc.def @f_grad<N>(A, K, d_O) -> (d_A) {
    ^bb0(%A: !tc.tensor<[N], f32>, %K: !tc.tensor<[3], f32>, %d_O: !tc.tensor<[N - 2], f32>):
      %d_A = tc.comprehension @d_A(%i in [0, N)) "+=!" (%r in [0, 3),
                 %nonempty in [0, min(1, max(0, N - 2)))) : !tc.tensor<[N], f32> {
        %0 = arith.subi %i, %r : index          // the forward i, solved from i + r
        ...                                     // %7: 0 <= %0 < N - 2
        %11 = arith.maxsi %10, %1 {tc.guarded} : index  // %0 clamped to [0, N - 2)
        %12 = tc.read %K[%r] : !tc.tensor<[3], f32>
        %13 = tc.read %d_O[%11] : !tc.tensor<[N - 2], f32>
        %14 = arith.mulf %13, %12 : f32
        %15 = arith.constant 0.000000e+00 : f32
        %16 = arith.select %7, %14, %15 : f32
        tc.yield %16 : f32
      }
      tc.return %d_A : !tc.tensor<[N], f32>
    }

With ``save=auto memory-budget="2 * N"``, a softmax saves its maximum and
its sum (the reductions come first) and recomputes the exponentials from
them (without the budget it saves ``e`` and ``mx_first``, the positions
of the maxima, too)::

    tc.def @softmax_fwd<N, D>(I) -> (O, mx, s) {...}   // @softmax, returning mx, s
    tc.def @softmax_grad<N, D>(I, mx, s, d_O) -> (d_I) {
    ^bb0(%I: ..., %mx: !tc.tensor<[N], f32>, %s: !tc.tensor<[N], f32>, %d_O: ...):
      %e = tc.comprehension @e(%n in [0, N), %d in [0, D)) "=" ... {
        ...                                     // exp(I(n, d) - mx(n))
      }
      ...                                       // no @mx, no @s

(`nonempty` runs once, or not at all when the forward range of ``i`` is
empty: a clamped index then has no value to read.) Clamps carry the unit
attribute ``tc.guarded``: their value matters only where the guard holds,
so differentiating ``@f_grad`` again reads through them (second order).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.transforms.tc_differentiate.adjoints import DifferentiationError
from tcdialect.transforms.tc_differentiate.body import is_float_type
from tcdialect.transforms.tc_differentiate.remat import SAVE_MODES, Policy
from tcdialect.transforms.tc_differentiate.subscripts import GUARDED
from tcdialect.transforms.tc_differentiate.sweep import (
    check_wrt,
    differentiate,
    differentiate_saving,
    float_inputs,
)


@dataclass(frozen=True)
class TcDifferentiatePass(ModulePass):
    """Add the backward definition of a `tc.def` (see the module docstring)."""

    name = "tc-differentiate"

    entry: str = ""
    wrt: tuple[str, ...] = ()
    save: str = "none"
    memory_budget: str | int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tcdialect.reference import find_def

        policy = Policy.parse(self.save, self.memory_budget)
        if self.memory_budget is not None and policy.save == "none":
            raise TCError("tc-differentiate: memory-budget needs save=auto or save=all")
        d = find_def(op, self.entry or None)
        name = d.sym_name.data
        new = [f"{name}_grad"] + ([f"{name}_fwd"] if policy.save != "none" else [])
        for o in op.walk():
            if isinstance(o, tc.DefOp) and o.sym_name.data in new:
                raise TCError(
                    f"tc-differentiate: the module already defines @{o.sym_name.data}"
                )
        parent = d.parent_block()
        assert parent is not None
        if policy.save == "none":
            parent.insert_op_after(differentiate(d, self.wrt or None), d)
            return
        f, g = differentiate_saving(d, self.wrt or None, policy)
        parent.insert_op_after(g, d)
        parent.insert_op_after(f, d)


__all__ = [
    "GUARDED",
    "SAVE_MODES",
    "DifferentiationError",
    "Policy",
    "TcDifferentiatePass",
    "check_wrt",
    "differentiate",
    "differentiate_saving",
    "float_inputs",
    "is_float_type",
]
