"""The body builder of `tc-differentiate`: `_Body` emits index and float
ops at the end of one comprehension body (sizes, affine subscripts,
constants, arithmetic, comparisons), `_position` a row-major position (of `_position_type`), and
`is_float_type` tells which element types carry gradients."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate.subscripts import _Affine, _Key

_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def is_float_type(t: Attribute) -> bool:
    return isinstance(t, _FLOATS)


class _Body:
    """Emits ops at the end of one comprehension body."""

    def __init__(self, block: Block):
        self.b = Builder(InsertPoint.at_end(block))
        self._sizes: dict[str, SSAValue] = {}

    def op(self, o: Operation) -> SSAValue:
        self.b.insert(o)
        return o.results[0]

    def fconst(self, value: float, t: Attribute) -> SSAValue:
        return self.op(arith.ConstantOp(FloatAttr(value, t)))  # type: ignore[arg-type]

    def iconst(self, value: int) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.op(arith.AddfOp(x, y))

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.op(arith.SubfOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.op(arith.MulfOp(x, y))

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.op(arith.DivfOp(x, y))

    def neg(self, x: SSAValue) -> SSAValue:
        return self.op(arith.NegfOp(x))

    def select(self, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.op(arith.SelectOp(c, x, y))

    def cmpf(self, x: SSAValue, y: SSAValue, pred: str) -> SSAValue:
        return self.op(arith.CmpfOp(x, y, pred))

    def cmpi(self, x: SSAValue, y: SSAValue, pred: str) -> SSAValue:
        return self.op(arith.CmpiOp(x, y, pred))

    def and_(self, x: SSAValue | None, y: SSAValue) -> SSAValue:
        return y if x is None else self.op(arith.AndIOp(x, y))

    def or_(self, x: SSAValue | None, y: SSAValue) -> SSAValue:
        return y if x is None else self.op(arith.OrIOp(x, y))

    def size(self, e: SizeExpr) -> SSAValue:
        """`e` computed with index ops."""
        key = str(e)
        if key in self._sizes:
            return self._sizes[key]
        acc: SSAValue | None = None
        for atom, c in e.terms:
            if atom.kind == "sym":
                x = self.op(tc.SizeOp(atom.name))
            elif atom.kind == "floordiv":
                inner = self.size(atom.args[0])
                x = self.op(arith.FloorDivSIOp(inner, self.iconst(atom.divisor)))
            elif atom.kind == "mul":
                args = [self.size(a) for a in atom.args]
                x = args[0]
                for y in args[1:]:
                    x = self.op(arith.MuliOp(x, y))
            elif atom.kind == "div":
                num, den = (self.size(a) for a in atom.args)
                x = self.op(arith.FloorDivSIOp(num, den))
            else:
                args = [self.size(a) for a in atom.args]
                x = args[0]
                for y in args[1:]:
                    cls = arith.MinSIOp if atom.kind == "min" else arith.MaxSIOp
                    x = self.op(cls(x, y))
            if acc is not None and c == -1:
                acc = self.op(arith.SubiOp(acc, x))
                continue
            if c != 1:
                x = self.op(arith.MuliOp(x, self.iconst(c)))
            acc = x if acc is None else self.op(arith.AddiOp(acc, x))
        if acc is None:
            acc = self.iconst(e.const)
        elif e.const < 0:
            acc = self.op(arith.SubiOp(acc, self.iconst(-e.const)))
        elif e.const:
            acc = self.op(arith.AddiOp(acc, self.iconst(e.const)))
        self._sizes[key] = acc
        return acc

    def affine(self, a: _Affine, values: dict[_Key, SSAValue]) -> SSAValue:
        """The index value of `a`, with `values` for its variables."""
        acc: SSAValue | None = None
        for key, coeff in a.coeffs.items():
            x = values[key]
            c = coeff.constant_value()
            if c is None:  # a symbolic stride
                x = self.op(arith.MuliOp(x, self.size(coeff)))
                acc = x if acc is None else self.op(arith.AddiOp(acc, x))
            elif acc is None or abs(c) != 1:
                if c != 1:
                    x = self.op(arith.MuliOp(x, self.iconst(c)))
                acc = x if acc is None else self.op(arith.AddiOp(acc, x))
            else:
                cls = arith.AddiOp if c == 1 else arith.SubiOp
                acc = self.op(cls(acc, x))
        if acc is None:
            return self.size(a.rest)
        if a.rest.is_constant and a.rest.const < 0:
            return self.op(arith.SubiOp(acc, self.iconst(-a.rest.const)))
        if a.rest != SizeExpr.lit(0):
            acc = self.op(arith.AddiOp(acc, self.size(a.rest)))
        return acc


def _position_type(ranges: Sequence[tuple[SizeExpr, SizeExpr]]) -> IntegerType:
    """The integer type of a row-major position in `ranges` and of the
    "none" marker after it: i32 for a constant space of fewer than
    ``2**31 - 1`` positions (a pooling window: half the bytes), else i64."""
    size = SizeExpr.lit(1)
    for lo, hi in ranges:
        size = size * (hi - lo)
    n = size.constant_value()
    return IntegerType(32 if n is not None and n < (1 << 31) - 1 else 64)


def _position(
    body: _Body, values: Sequence[SSAValue], ranges: Sequence[tuple[SizeExpr, SizeExpr]]
) -> SSAValue:
    """The row-major position of `values` in `ranges`, of `_position_type`."""
    pos: SSAValue | None = None
    for x, (lo, hi) in zip(values, ranges):
        if lo != SizeExpr.lit(0):
            x = body.op(arith.SubiOp(x, body.size(lo)))
        if pos is not None:
            pos = body.op(arith.MuliOp(pos, body.size(hi - lo)))
            x = body.op(arith.AddiOp(pos, x))
        pos = x
    if pos is None:
        pos = body.iconst(0)
    return body.op(arith.IndexCastOp(pos, _position_type(ranges)))
