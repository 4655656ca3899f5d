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
in the source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

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
from tcdialect.dialects.tc import ComprehensionOp, DefOp
from tcdialect.frontend.sema import CheckedDef, Tensor
from tcdialect.kernel import Kernel
from tcdialect.transforms.tc_differentiate import (
    DifferentiationError,
    check_wrt,
    differentiate,
)


def grad(kernel: Kernel, wrt: Sequence[str] | None = None) -> Kernel:
    """The backward kernel of `kernel` with respect to the inputs `wrt`."""
    if not isinstance(kernel, Kernel):
        raise TCError(
            f"grad() takes a tcdialect.Kernel (from tcdialect.define), "
            f"not {type(kernel).__name__}"
        )
    if isinstance(wrt, str):
        wrt = [wrt]
    names = check_wrt(kernel.defop, None if wrt is None else list(wrt))
    try:
        defop = differentiate(kernel.defop, names)
    except DifferentiationError as e:
        if e.statement is None or isinstance(kernel, _BackwardKernel):
            raise  # (a derived definition has no source to show)
        span = kernel.checked.statements[e.statement].stmt.span
        raise TCError(Diagnostic("error", e.message, span)) from None
    return _BackwardKernel(kernel, defop, names)


class _BackwardKernel(Kernel):
    """A `Kernel` whose definition is the derived `@<name>_grad`.

    It shares the forward kernel's source, target and options; its checked
    definition keeps the forward statements (their bounds checks still
    apply, as the backward recomputes them) and declares the backward's
    inputs, outputs and temporaries.
    """

    def __init__(self, fwd: Kernel, defop: DefOp, wrt: list[str]):
        #: The definition of the source that `fwd` derives from.
        self.source_entry: str = (
            fwd.source_entry if isinstance(fwd, _BackwardKernel) else fwd.entry
        )
        super().__init__(
            fwd.source, self.source_entry, target=fwd.target, options=fwd.options
        )
        self.wrt = tuple(wrt)
        self.forward_entry = fwd.entry
        self.entry = defop.sym_name.data
        self.defop = defop
        self.checked = _checked(fwd.checked, defop, wrt)
        self.out_dtypes = [numpy_dtype(t.element_type) for t in defop.output_types]
        self.out_names = list(defop.output_names)
        self.out_bfloat16 = tuple(
            fwd.checked.tensors[n].elem == "bfloat16" for n in wrt
        )
        self._key_prefix = (fwd.source, self.entry, self.wrt, fwd.target, self.options)

    def __repr__(self) -> str:
        return (
            f"<tcdialect.Kernel {self.entry} (gradient of {self.forward_entry}"
            f" wrt {', '.join(self.wrt)}) target={self.target} {self.options}>"
        )


def _checked(fwd: CheckedDef, defop: DefOp, wrt: list[str]) -> CheckedDef:
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
    for t in [*grads_in, *grads_out]:
        tensors[t.name] = t
    # adjoints, copies and helper products: temporaries of their own
    for op in defop.body.block.ops:
        if isinstance(op, ComprehensionOp) and op.target.data not in tensors:
            t = op.result_type
            tensors[op.target.data] = Tensor(
                op.target.data,
                "temp",
                _type_name(t.element_type),
                t.extents,
                fwd.node.span,
            )
    return CheckedDef(
        node=fwd.node,
        name=defop.sym_name.data,
        sizes=list(fwd.sizes),
        inputs=[*(tensors[t.name] for t in fwd.inputs), *grads_in],
        outputs=grads_out,
        tensors=tensors,
        statements=list(fwd.statements),
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


__all__ = ["grad"]
