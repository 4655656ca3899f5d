"""`func` and `cf` → llvm: calls, returns and branches of `convert-to-llvm`.

`populate_func_cf_to_llvm(handlers)` adds the handlers for the ops inside a
function body (see `lowering.py`, which translates `func.func` itself: name,
linkage, signature, blocks):

- `func.call @f(%args)` is `llvm.call @f` with the memref arguments expanded
  (`memref_abi`); the callee must be a function of the module (`func.func` or
  `llvm.func`). `func.return` is `llvm.return` of at most one value.
- `cf.br`/`cf.cond_br` are `llvm.br`/`llvm.cond_br` to the translated blocks,
  with block arguments expanded the same way::

      cf.cond_br %c, ^bb1(%A : memref<?xf32>), ^bb2

  becomes `llvm.cond_br %c, ^bb1(%A, %A_d0 : !llvm.ptr, i64), ^bb2`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import cf, func, llvm
from xdsl.ir import Block, Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.type_converter import err


def lower_call(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    name = op.callee.string_value()
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
