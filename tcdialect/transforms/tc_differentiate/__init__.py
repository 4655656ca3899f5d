"""`tc-differentiate{entry=f wrt=A,B}`: derive the backward definition of a `tc.def`.

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
* **adjoints**: every read ``V(s(i, r))`` of a differentiable tensor in a
  statement ``T(i) op= body`` contributes ``dV(u) += dT(i) * dbody/dV`` at
  ``u = s(i, r)``. That scatter is turned into a gather by inverting the
  subscripts: each dimension ``u_d = c*v + rest`` solves for one index ``v``
  with a constant ``c`` (``v = (u_d - rest) floordiv c``; coefficients that
  are sizes, ``i * S``, stay in ``rest``; output indices preferred, so a
  convolution's adjoint reduces over the kernel window); the indices not
  solved stay reduction indices; range and divisibility guards (clamped
  index values, then `arith.select`) keep every read in bounds. A tensor's
  contributions are accumulated (``=``/``+=!`` first, then ``+=``), then
  propagated when its defining statement is reached.
* **reductions**: ``+=!``/``+=`` pass ``dT`` through; ``*=!``/``*=`` multiply
  by the product of the *other* factors (a ``*=!`` temporary excluding one
  factor, never a division, so zeros are exact); ``max=``/``min=`` give
  ``dT`` to the first element equal to the result (row-major over the
  reduction indices, the ``into`` value first; an i64 ``min=!`` temporary
  holds its position); pointwise ``fmax``/``max``... to the first operand
  equal to the result.
* **bodies**: reverse-mode over `arith`/`math`/`tc.builtin` ops with a
  derivative table; comparisons, integer values and select conditions carry
  no gradient; casts between float types pass it through.

Errors are `TCError`s naming the definition: an unknown or integer `wrt`
input, a builtin without derivative (``floor``...), a non-affine subscript
(data-dependent or non-injective reads such as ``E(Idx(k), d)``, whose
adjoint needs a scatter-accumulate that is not supported yet).

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
from tcdialect.transforms.tc_differentiate.subscripts import GUARDED
from tcdialect.transforms.tc_differentiate.sweep import (
    check_wrt,
    differentiate,
    float_inputs,
)


@dataclass(frozen=True)
class TcDifferentiatePass(ModulePass):
    """Add the backward definition of a `tc.def` (see the module docstring)."""

    name = "tc-differentiate"

    entry: str = ""
    wrt: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tcdialect.reference import find_def

        d = find_def(op, self.entry or None)
        grad_name = f"{d.sym_name.data}_grad"
        if any(
            isinstance(o, tc.DefOp) and o.sym_name.data == grad_name for o in op.walk()
        ):
            raise TCError(f"tc-differentiate: the module already defines @{grad_name}")
        g = differentiate(d, self.wrt or None)
        parent = d.parent_block()
        assert parent is not None
        parent.insert_op_after(g, d)


__all__ = [
    "GUARDED",
    "DifferentiationError",
    "TcDifferentiatePass",
    "check_wrt",
    "differentiate",
    "float_inputs",
    "is_float_type",
]
