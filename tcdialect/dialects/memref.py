"""xDSL's `memref` dialect plus MLIR's `memref.prefetch`.

xDSL 0.74 has no prefetch op. This module keeps every xDSL memref op and adds
`memref.prefetch` with MLIR's syntax and properties, so that IR carrying it
reads the same in `tc-opt` and `mlir-opt`:

    memref.prefetch %A[%i, %j], read, locality<3>, data : memref<64x32xf32>

A prefetch is a hint with no semantics: it reads nothing and writes nothing
that a program can observe, and its address may lie outside the memref (the
lowering uses a GEP without `inbounds`, and `llvm.prefetch` never faults).
`isWrite` says whether the line will be written, `localityHint` (0..3) how
long it should stay in cache (3: keep in L1), `isDataCache` whether it is data
(rather than instructions). `tc-opt` registers this dialect under the name
`memref` instead of xDSL's.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref as xmemref
from xdsl.dialects.builtin import (
    BoolAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i32,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """`memref.prefetch %m[%i...], read|write, locality<0..3>, data|instr : T`."""

    name = "memref.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    isWrite = prop_def(BoolAttr)
    localityHint = prop_def(IntegerAttr[IntegerType])
    isDataCache = prop_def(BoolAttr)

    def __init__(
        self,
        memref: SSAValue,
        indices: Sequence[SSAValue],
        *,
        write: bool = False,
        locality: int = 3,
        data: bool = True,
    ):
        super().__init__(
            operands=[memref, indices],
            properties={
                "isWrite": IntegerAttr.from_bool(write),
                "localityHint": IntegerAttr(locality, i32),
                "isDataCache": IntegerAttr.from_bool(data),
            },
        )

    @property
    def locality(self) -> int:
        return self.localityHint.value.data

    def verify_(self) -> None:
        t = self.memref.type
        assert isinstance(t, MemRefType)
        if len(self.indices) != t.get_num_dims():
            raise VerifyException(
                f"{self.name}: {len(self.indices)} indices for a memref of rank "
                f"{t.get_num_dims()}"
            )
        if not 0 <= self.locality <= 3:
            raise VerifyException(
                f"{self.name}: locality hint {self.locality} is not in 0..3"
            )

    @classmethod
    def parse(cls, parser: Parser) -> PrefetchOp:
        memref = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(",")
        write = parser.parse_keyword_in(("read", "write")) == "write"
        parser.parse_punctuation(",")
        parser.parse_keyword("locality")
        parser.parse_punctuation("<")
        locality = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">")
        parser.parse_punctuation(",")
        data = parser.parse_keyword_in(("data", "instr")) == "data"
        parser.parse_punctuation(":")
        t: Attribute = parser.parse_type()
        mem = parser.resolve_operand(memref, t)
        idx = [parser.resolve_operand(i, IndexType()) for i in indices]
        return cls(mem, idx, write=write, locality=locality, data=data)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("], ")
        printer.print_string("write" if self.isWrite.value.data != 0 else "read")
        printer.print_string(f", locality<{self.locality}>, ")
        printer.print_string("data" if self.isDataCache.value.data != 0 else "instr")
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)


#: MLIR's `AtomicRMWKind`, the `kind` of `memref.atomic_rmw`, by value
#: (``0``: ``addf``); xDSL's op takes the integer.
ATOMIC_RMW_KINDS = (
    "addf",
    "addi",
    "andi",
    "assign",
    "maximumf",
    "maxnumf",
    "maxs",
    "maxu",
    "minimumf",
    "minnumf",
    "mins",
    "minu",
    "mulf",
    "muli",
    "ori",
    "xori",
)


MemRef = Dialect(
    "memref",
    [*xmemref.MemRef.operations, PrefetchOp],
    [*xmemref.MemRef.attributes],
)
