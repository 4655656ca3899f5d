"""`grad(kernel, wrt=None)`: the backward `Kernel` of a TC kernel.

The backward definition is derived by the `tc-differentiate` pass
(`tcdialect.transforms.tc_differentiate`, docs/autodiff.md) and compiled by
the same pipeline, target and options as the forward kernel::

    mm = tcdialect.define('''
    def matmul(float(M, K) A, float(K, N) B) -> (C) {
        C(m, n) +=! A(m, r_k) * B(r_k, n)
    }''')
    mm_grad = grad(mm)               # def matmul_grad(A, B, d_C) -> (d_A, d_B)
    d_A, d_B = mm_grad(A, B, d_C)
    print(mm_grad.ir(stage="tc"))    # the derived comprehensions

Its inputs are the forward inputs in declared order, then one gradient per
forward output (``d_<output>``, shaped like the output); its outputs are
``d_<input>`` for each input in `wrt` (default: every floating-point input),
in declared order. An unknown `wrt` name or an integer input is a `TCError`
naming it; a statement the pass cannot differentiate (a builtin without a
derivative, a data-dependent read) is a `TCError` that shows the statement
in the source. `grad`'s kernel recomputes every forward value it needs.

`forward_backward(kernel, wrt=None, save="auto", memory_budget=None)` is
the saving variant (the pass's rematerialisation policy, docs/autodiff.md):
a forward kernel that also returns the tensors the policy saves, and a
backward kernel that takes them (`saved`: their names) instead of
recomputing them::

    sm_fwd, sm_bwd = forward_backward(softmax)   # def softmax(I) -> (O)
    O, mx, e, s = sm_fwd(I)                      # @softmax_fwd -> (O, mx, e, s)
    assert sm_bwd.saved == ("mx", "e", "s")
    d_I = sm_bwd(I, mx, e, s, d_O)               # @softmax_grad(I, mx, e, s, d_O)

Each name in ``bwd.saved`` is an output of the forward kernel (a forward
output itself, as max pooling's ``O``, or a saved tensor after them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from tcdialect.arguments import numpy_dtype
from tcdialect.diagnostics import Diagnostic, TCError
from tcdialect.dialects.tc import ComprehensionOp, DefOp, TensorType
from tcdialect.frontend.sema import CheckedDef, Tensor
from tcdialect.kernel import Kernel
from tcdialect.transforms.tc_differentiate import (
    DifferentiationError,
    Policy,
    check_wrt,
    differentiate,
    differentiate_saving,
)


def grad(kernel: Kernel, wrt: Sequence[str] | None = None) -> Kernel:
    """The backward kernel of `kernel` with respect to the inputs `wrt`."""
    names = _wrt(kernel, "grad", wrt)
    with _pointing_at(kernel):
        defop = differentiate(kernel.defop, names)
    return _BackwardKernel(kernel, defop, names)


def forward_backward(
    kernel: Kernel,
    wrt: Sequence[str] | None = None,
    *,
    save: str = "auto",
    memory_budget: str | int | None = None,
) -> tuple[Kernel, Kernel]:
    """``(forward, backward)``: the kernel of ``@<name>_fwd``, `kernel`'s
    outputs then the tensors `save` keeps (``"auto"``: the reductions and
    transcendentals, ``"all"``, ``"none"``), at most `memory_budget`
    elements (a size expression such as ``"N * D"``; None: no limit), and
    the backward kernel ``@<name>_grad`` taking them between the inputs and
    the output gradients (its `saved` names them)."""
    names = _wrt(kernel, "forward_backward", wrt)
    policy = Policy.parse(save, memory_budget)
    with _pointing_at(kernel):
        fwd_def, grad_def = differentiate_saving(kernel.defop, names, policy)
    key = (tuple(names), policy)
    forward = _ForwardKernel(kernel, fwd_def, key)
    saved = tuple(n for n in grad_def.input_names if n in fwd_def.output_names)
    return forward, _BackwardKernel(kernel, grad_def, names, saved, key)


def _wrt(kernel: Kernel, function: str, wrt: Sequence[str] | None) -> list[str]:
    if not isinstance(kernel, Kernel):
        raise TCError(
            f"{function}() takes a tcdialect.Kernel (from tcdialect.define), "
            f"not {type(kernel).__name__}"
        )
    if isinstance(wrt, str):
        wrt = [wrt]
    return check_wrt(kernel.defop, None if wrt is None else list(wrt))


@contextmanager
def _pointing_at(kernel: Kernel) -> Iterator[None]:
    """A `DifferentiationError` as a `TCError` that shows the statement in
    `kernel`'s source."""
    try:
        yield
    except DifferentiationError as e:
        if e.statement is None or isinstance(kernel, _DerivedKernel):
            raise  # (a derived definition has no source to show)
        span = kernel.checked.statements[e.statement].stmt.span
        raise TCError(Diagnostic("error", e.message, span)) from None


class _DerivedKernel(Kernel):
    """A `Kernel` whose definition is derived from another's, with its
    source, target and options."""

    quick_start: ClassVar[bool] = False

    def __init__(self, fwd: Kernel, defop: DefOp, checked: CheckedDef, key: Any):
        #: The definition of the source that `fwd` derives from.
        self.source_entry: str = (
            fwd.source_entry if isinstance(fwd, _DerivedKernel) else fwd.entry
        )
        super().__init__(
            fwd.source, self.source_entry, target=fwd.target, options=fwd.options
        )
        self.forward_entry = fwd.entry
        self.entry = defop.sym_name.data
        self.defop = defop
        self.checked = checked
        self.out_dtypes = [numpy_dtype(t.element_type) for t in defop.output_types]
        self.out_names = list(defop.output_names)
        self.out_bfloat16 = tuple(
            isinstance(t.element_type, BFloat16Type) for t in defop.output_types
        )
        self._key_prefix = (fwd.source, self.entry, key, fwd.target, self.options)


class _ForwardKernel(_DerivedKernel):
    """The kernel of ``@<name>_fwd``: the forward outputs, then the saved
    tensors."""

    def __init__(self, fwd: Kernel, defop: DefOp, key: Any):
        #: The saved tensors, the outputs after the forward's own.
        self.saved = tuple(defop.output_names[len(fwd.out_names) :])
        super().__init__(fwd, defop, _checked_forward(fwd.checked, defop), key)

    def __repr__(self) -> str:
        return (
            f"<tcdialect.Kernel {self.entry} (forward of {self.forward_entry}"
            f" saving {', '.join(self.saved) or 'nothing'})"
            f" target={self.target} {self.options}>"
        )


class _BackwardKernel(_DerivedKernel):
    """A `Kernel` whose definition is the derived `@<name>_grad`.

    It shares the forward kernel's source, target and options; its checked
    definition keeps the forward statements (their bounds checks still
    apply, as the backward recomputes them) and declares the backward's
    inputs (`saved`: the saved tensors among them), outputs and temporaries.
    """

    def __init__(
        self,
        fwd: Kernel,
        defop: DefOp,
        wrt: list[str],
        saved: tuple[str, ...] = (),
        key: Any = None,
    ):
        self.wrt = tuple(wrt)
        #: The saved forward tensors the backward takes after the inputs.
        self.saved = saved
        checked = _checked(fwd.checked, defop, wrt, saved)
        super().__init__(fwd, defop, checked, self.wrt if key is None else key)

    def __repr__(self) -> str:
        return (
            f"<tcdialect.Kernel {self.entry} (gradient of {self.forward_entry}"
            f" wrt {', '.join(self.wrt)}) target={self.target} {self.options}>"
        )


def _checked(
    fwd: CheckedDef, defop: DefOp, wrt: list[str], saved: tuple[str, ...]
) -> CheckedDef:
    """The checked form of the backward definition, for the runtime's size,
    bounds and memory checks."""
    tensors: dict[str, Tensor] = {}
    for t in fwd.tensors.values():
        kind = "input" if t.kind == "input" else "temp"
        tensors[t.name] = dataclasses.replace(t, kind=kind)
    grads_in = [
        dataclasses.replace(t, name=f"d_{t.name}", kind="input") for t in fwd.outputs
    ]
    grads_out = [
        dataclasses.replace(fwd.tensors[n], name=f"d_{n}", kind="output") for n in wrt
    ]
    types = dict(zip(defop.input_names, defop.input_types))
    saved_in = [_tensor(n, "input", types[n], fwd) for n in saved]
    for t in [*grads_in, *grads_out, *saved_in]:
        tensors[t.name] = t
    _temporaries(defop, tensors, fwd)
    return CheckedDef(
        node=fwd.node,
        name=defop.sym_name.data,
        sizes=list(fwd.sizes),
        inputs=[*(tensors[t.name] for t in fwd.inputs), *saved_in, *grads_in],
        outputs=grads_out,
        tensors=tensors,
        statements=list(fwd.statements),
    )


def _checked_forward(fwd: CheckedDef, defop: DefOp) -> CheckedDef:
    """The checked form of ``@<name>_fwd``: `fwd`'s, with the saved tensors
    as outputs after its own."""
    tensors = dict(fwd.tensors)
    types = dict(zip(defop.output_names, defop.output_types))
    saved = [
        _tensor(n, "output", types[n], fwd)
        for n in defop.output_names[len(fwd.outputs) :]
    ]
    for t in saved:
        tensors[t.name] = t
    _temporaries(defop, tensors, fwd)
    return CheckedDef(
        node=fwd.node,
        name=defop.sym_name.data,
        sizes=list(fwd.sizes),
        inputs=list(fwd.inputs),
        outputs=[*fwd.outputs, *saved],
        tensors=tensors,
        statements=list(fwd.statements),
    )


def _tensor(
    name: str, kind: Literal["input", "output", "temp"], t: TensorType, fwd: CheckedDef
) -> Tensor:
    return Tensor(name, kind, _type_name(t.element_type), t.extents, fwd.node.span)


def _temporaries(defop: DefOp, tensors: dict[str, Tensor], fwd: CheckedDef) -> None:
    """Adjoints, copies and helper products: temporaries of their own."""
    for op in defop.body.block.ops:
        if isinstance(op, ComprehensionOp) and op.target.data not in tensors:
            tensors[op.target.data] = _tensor(
                op.target.data, "temp", op.result_type, fwd
            )


def _type_name(t: Attribute) -> str:
    """The TC scalar type name of element type `t`."""
    if isinstance(t, IntegerType):
        if t.width.data == 1:
            return "bool"
        unsigned = t.signedness.data == Signedness.UNSIGNED
        return f"{'u' if unsigned else ''}int{t.width.data}"
    if isinstance(t, BFloat16Type):
        return "bfloat16"
    assert isinstance(t, Float16Type | Float32Type | Float64Type)
    return f"float{t.bitwidth}"


__all__ = ["forward_backward", "grad"]
