"""The `tcrt` dialect: calls into tcdialect's CPU runtime.

`tcrt.parallel_for` runs an outlined loop body on disjoint chunks of an
iteration space, possibly from several threads (the CPU backend lowers it to
`__tc_parallel_for`, a thread pool call). `outline-parallel-loops` creates it
from the outermost `scf.parallel` of a nest; `convert-to-llvm` lowers it.

Example::

    tcrt.parallel_for @relu_par0(%n) (%lb, %step, %A, %B) : (index, index, memref<?xf32>, memref<?xf32>)

calls ``@relu_par0(%begin, %end, %lb, %step, %A, %B)`` for chunks
``[begin, end)`` that together cover ``[0, n)`` exactly once, and returns when
every chunk is done. ``n <= 0`` runs nothing. The callee must be a
`func.func` whose arguments are two `index` values followed by the types of
the captures, with no results.

The runtime's ABI symbols are defined here, once: `convert-to-llvm` emits calls
to them and the CPU backend defines them (`PARALLEL_FOR_SYMBOL`,
`NUM_THREADS_SYMBOL`, `PARALLEL_TEAM_SYMBOL`, in `tcdialect.runtime.abi`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FlatSymbolRefAttrConstr, IndexType, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import SymbolTable, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException


class _ParallelForCallee(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, ParallelForOp)
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, FuncOp):
            raise VerifyException(f"'{op.callee}' does not reference a func.func")
        inputs = callee.function_type.inputs.data
        expected = (IndexType(), IndexType(), *(c.type for c in op.captures))
        if tuple(inputs) != expected:
            raise VerifyException(
                f"callee {op.callee} takes ({', '.join(map(str, inputs))}); expected "
                f"(index, index{''.join(', ' + str(c.type) for c in op.captures)})"
            )
        if callee.function_type.outputs.data:
            raise VerifyException(f"callee {op.callee} must not return values")


@irdl_op_definition
class ParallelForOp(IRDLOperation):
    """Run ``@callee(begin, end, captures...)`` over chunks of ``[0, count)``."""

    name = "tcrt.parallel_for"

    count = operand_def(IndexType)
    captures = var_operand_def()
    callee = prop_def(FlatSymbolRefAttrConstr)

    traits = traits_def(_ParallelForCallee())

    assembly_format = (
        "$callee `(` $count `)` ` ` `(` $captures `)` attr-dict `:` "
        "`(` type($captures) `)`"
    )

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        count: SSAValue,
        captures: Sequence[SSAValue],
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(operands=[count, captures], properties={"callee": callee})


TCRT = Dialect("tcrt", [ParallelForOp], [])
