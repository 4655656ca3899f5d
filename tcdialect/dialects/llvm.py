"""xDSL's `llvm` dialect plus MLIR's `llvm.atomicrmw`.

xDSL 0.74 has no atomic read-modify-write op. This module keeps every xDSL
llvm op and adds `llvm.atomicrmw` with MLIR's syntax and properties, so that
IR carrying it reads the same in `tc-opt` and `mlir-translate`::

    %old = llvm.atomicrmw fadd %p, %v monotonic : !llvm.ptr<1>, f32

atomically replaces the value at `%p` by ``old <bin_op> %v`` and returns
`old`. `bin_op` is LLVM's `AtomicRMWInst::BinOp` (`ATOMIC_BIN_OPS`:
``fadd`` for floats, ``add`` for integers ...), `ordering` LLVM's atomic
ordering (xDSL's `ATOMIC_ORDERING_KEYWORDS`: ``monotonic`` is relaxed).
`convert-to-llvm` makes it from `memref.atomic_rmw`; the backend
(`tcdialect.backend.llvm`) prints LLVM's ``atomicrmw`` instruction, which the
NVPTX backend selects as ``atom.global.add.f32`` (``red.global.add.f32``
when the old value is unused) and x86 as ``lock xadd`` (integers) or a
``lock cmpxchg`` loop (floats). `tc-opt` registers this dialect under the
name `llvm` instead of xDSL's.
"""

from __future__ import annotations

from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i64
from xdsl.dialects.llvm import ATOMIC_ORDERING_KEYWORDS, LLVMPointerType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

#: LLVM's `AtomicRMWInst::BinOp` (MLIR's `AtomicBinOp`), by value.
ATOMIC_BIN_OPS = (
    "xchg",
    "add",
    "sub",
    "and",
    "nand",
    "or",
    "xor",
    "max",
    "min",
    "umax",
    "umin",
    "fadd",
    "fsub",
    "fmax",
    "fmin",
    "uinc_wrap",
    "udec_wrap",
    "usub_cond",
    "usub_sat",
    "fmaximum",
    "fminimum",
)

#: `ordering` of a relaxed atomic (LLVM's `monotonic`).
MONOTONIC = 2


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """`%old = llvm.atomicrmw <bin_op> %ptr, %val <ordering> : !llvm.ptr, T`."""

    name = "llvm.atomicrmw"

    ptr = operand_def(LLVMPointerType)
    val = operand_def()
    bin_op = prop_def(IntegerAttr[IntegerType])
    ordering = prop_def(IntegerAttr[IntegerType])

    res = result_def()

    def __init__(
        self, bin_op: str, ptr: SSAValue, val: SSAValue, ordering: int = MONOTONIC
    ):
        super().__init__(
            operands=[ptr, val],
            result_types=[val.type],
            properties={
                "bin_op": IntegerAttr(ATOMIC_BIN_OPS.index(bin_op), i64),
                "ordering": IntegerAttr(ordering, i64),
            },
        )

    @property
    def operation(self) -> str:
        """The keyword of `bin_op` (``fadd``)."""
        return ATOMIC_BIN_OPS[self.bin_op.value.data]

    def verify_(self) -> None:
        if not 0 <= self.bin_op.value.data < len(ATOMIC_BIN_OPS):
            raise VerifyException(
                f"{self.name}: unknown operation {self.bin_op.value.data}"
            )
        if self.ordering.value.data not in ATOMIC_ORDERING_KEYWORDS:
            raise VerifyException(
                f"{self.name}: unknown ordering {self.ordering.value.data}"
            )
        if self.res.type != self.val.type:
            raise VerifyException(
                f"{self.name}: the result type {self.res.type} is not the "
                f"value's, {self.val.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> AtomicRMWOp:
        bin_op = parser.parse_keyword_in(ATOMIC_BIN_OPS)
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        val = parser.parse_unresolved_operand()
        keywords = {k: v for v, k in ATOMIC_ORDERING_KEYWORDS.items()}
        ordering = keywords[parser.parse_keyword_in(tuple(keywords))]
        parser.parse_punctuation(":")
        ptr_type: Attribute = parser.parse_type()
        parser.parse_punctuation(",")
        val_type: Attribute = parser.parse_type()
        return cls(
            bin_op,
            parser.resolve_operand(ptr, ptr_type),
            parser.resolve_operand(val, val_type),
            ordering,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.operation} ")
        printer.print_ssa_value(self.ptr)
        printer.print_string(", ")
        printer.print_ssa_value(self.val)
        ordering = ATOMIC_ORDERING_KEYWORDS[self.ordering.value.data]
        printer.print_string(f" {ordering} : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(", ")
        printer.print_attribute(self.val.type)


LLVM = Dialect(
    "llvm",
    [*xllvm.LLVM.operations, AtomicRMWOp],
    [*xllvm.LLVM.attributes],
)
