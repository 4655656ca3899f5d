"""`func` and `cf` → llvm: calls, returns and branches of `convert-to-llvm`.

`populate_func_cf_to_llvm(handlers)` adds the handlers for the ops inside a
function body (see `lowering.py`, which translates `func.func` itself: name,
linkage, signature, blocks):

- `func.call @f(%args)` is `llvm.call @f` with the memref arguments expanded
  (`memref_abi`); the callee must be a function of the module (`func.func` or
  `llvm.func`). `func.return` is `llvm.return` of at most one value.
- A `func.call` of a builtin's C function that the C library lacks, on `f64`
  (`expand-math-polynomials` has expanded the `f32` ones): ``rcbrt``,
  ``rhypot``, ``norm3d``, ``norm4d``, ``rnorm3d``, ``rnorm4d`` become
  `cbrt` and `hypot` calls (``norm3d(a, b, c)`` is
  ``hypot(hypot(a, b), c)``, the ``r`` forms divide 1 by that); the others
  (``erfinv``, ``normcdf``, ``cospi`` ... : `NO_LIBM`) are a `TCError`.
  The other builtins' C functions (`lgamma`, `j0`, ...) are the C library's::

      %r = func.call @rnorm3d(%a, %b, %c) : (f64, f64, f64) -> f64

  becomes::

      %h = llvm.call @hypot(%a, %b) : (f64, f64) -> f64
      %n = llvm.call @hypot(%h, %c) : (f64, f64) -> f64
      %r = llvm.fdiv %one, %n : f64

  (The GPU's calls are `__nv_*` by then: `libdevice` renamed them.)
- `cf.br`/`cf.cond_br` are `llvm.br`/`llvm.cond_br` to the translated blocks,
  with block arguments expanded the same way::

      cf.cond_br %c, ^bb1(%A : memref<?xf32>), ^bb2

  becomes `llvm.cond_br %c, ^bb1(%A, %A_d0 : !llvm.ptr, i64), ^bb2`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import cf, func, llvm
from xdsl.dialects.builtin import Float64Type
from xdsl.ir import Block, Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.type_converter import err
from tcdialect.diagnostics import TCError

#: Builtins composed of `cbrt` and `hypot` calls on f64 (`_composed`).
_COMPOSED = frozenset(("rcbrt", "rhypot", "norm3d", "rnorm3d", "norm4d", "rnorm4d"))

NO_LIBM = frozenset(
    (
        "cospi sinpi erfinv erfcinv erfcx normcdf normcdfinv cyl_bessel_i0 "
        "cyl_bessel_i1"
    ).split()
)
"""Builtins with neither a C library function nor a composition on f64."""


def _composed(
    lw: FunctionLowering, name: str, xs: list[SSAValue], op: Operation
) -> SSAValue:
    t = xs[0].type

    def hypot(a: SSAValue, b: SSAValue) -> SSAValue:
        return lw.call("hypot", [a, b], t, op).results[0]

    if name == "rcbrt":
        y = lw.call("cbrt", xs, t, op).results[0]
    elif len(xs) == 2:
        y = hypot(xs[0], xs[1])
    elif len(xs) == 3:
        y = hypot(hypot(xs[0], xs[1]), xs[2])
    else:
        y = hypot(hypot(xs[0], xs[1]), hypot(xs[2], xs[3]))
    if name.startswith("r"):
        y = lw.emit_value(llvm.FDivOp(lw.const(1.0, t), y))
    return y


def lower_call(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    name = op.callee.string_value()
    if name in NO_LIBM:
        raise TCError(
            f"builtin '{name}' is not available in float64 on the cpu target "
            "(no C library function; float32 is, and the cuda target has both)"
        )
    if name in _COMPOSED and isinstance(op.res[0].type, Float64Type):
        xs = [lw.get(v, op) for v in op.arguments]
        lw.set(op.res[0], _composed(lw, name, xs, op))
        return
    ftype = lw.parent.signatures.get(name)
    if ftype is None:
        raise err(op, f"unknown callee @{name}")
    args = lw.flat(op.arguments, op)
    result = None if isinstance(ftype.output, llvm.LLVMVoidType) else ftype.output
    call = lw.emit(llvm.CallOp(name, *args, return_type=result))
    for old, new in zip(op.results, call.results, strict=True):
        lw.set(old, new)


def lower_return(lw: FunctionLowering, op: Operation) -> None:
    values = lw.flat(op.operands, op)
    lw.emit(llvm.ReturnOp(values[0] if values else None))


def _branch_arguments(
    lw: FunctionLowering, values: Sequence[SSAValue], dest: Block, op: Operation
) -> list[SSAValue]:
    """The lowered `values` passed to (lowered) block `dest`, whose types
    they must have: a memref's pointer may be in another address space than
    its type says (a GPU thread's private buffer is not in global memory)."""
    args = lw.flat(values, op)
    if [a.type for a in args] != [a.type for a in dest.args]:
        raise err(op, "unsupported block argument (a buffer in another memory)")
    return args


def lower_br(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, cf.BranchOp)
    dest = lw.blocks[op.successor]
    lw.emit(llvm.BrOp(dest, *_branch_arguments(lw, op.arguments, dest, op)))


def lower_cond_br(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, cf.ConditionalBranchOp)
    then, else_ = lw.blocks[op.then_block], lw.blocks[op.else_block]
    lw.emit(
        llvm.CondBrOp(
            lw.get(op.cond, op),
            then,
            _branch_arguments(lw, op.then_arguments, then, op),
            else_,
            _branch_arguments(lw, op.else_arguments, else_, op),
        )
    )


def populate_func_cf_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of `func.call`, `func.return`, `cf.br`, `cf.cond_br`."""
    handlers.update(
        {
            "func.call": lower_call,
            "func.return": lower_return,
            "cf.br": lower_br,
            "cf.cond_br": lower_cond_br,
        }
    )
