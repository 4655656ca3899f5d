"""Affine subscripts for `tc-differentiate`: `_affine` reads an index value
of a body as an affine form `_Affine` (what subscript inversion solves for
the gather's indices), `_within` proves a solved index stays in its range,
`GUARDED` marks the clamps of solved indices, and `_render` spells
subscripts and values in TC-like syntax for error messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, UnitAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr, SymbolicError, provably_le

#: A variable of an affine form: ``("v", k)`` is the k-th index of the
#: forward statement, ``("u", d)`` the d-th index of the gradient tensor.
_Key = tuple[str, int]


@dataclass
class _Affine:
    """``sum(coeff * var) + rest``; variables are keys (``("v", k)``, ``("u", d)``);
    coefficients are size expressions (``2``, or a stride ``S`` that is a size).
    Products that `SizeExpr` cannot form raise `SymbolicError`."""

    coeffs: dict[_Key, SizeExpr] = field(default_factory=dict[_Key, SizeExpr])
    rest: SizeExpr = field(default_factory=lambda: SizeExpr.lit(0))

    @staticmethod
    def var(key: _Key) -> _Affine:
        return _Affine({key: SizeExpr.lit(1)})

    def scaled(self, k: SizeExpr | int) -> _Affine:
        return _Affine({v: c * k for v, c in self.coeffs.items()}, self.rest * k)

    def plus(self, o: _Affine) -> _Affine:
        coeffs = dict(self.coeffs)
        for v, c in o.coeffs.items():
            coeffs[v] = coeffs.get(v, SizeExpr.lit(0)) + c
        zero = SizeExpr.lit(0)
        return _Affine(
            {v: c for v, c in coeffs.items() if c != zero}, self.rest + o.rest
        )

    def constant_coeff(self, key: _Key) -> int | None:
        c = self.coeffs.get(key)
        return None if c is None else c.constant_value()

    def substitute(self, var: _Key, by: _Affine) -> _Affine:
        if var not in self.coeffs:
            return self
        c = self.coeffs[var]
        rest = _Affine({v: k for v, k in self.coeffs.items() if v != var}, self.rest)
        return rest.plus(by.scaled(c))


#: Marks the clamps of solved indices: the value they clamp is used only
#: where the range guard holds (elsewhere the contribution is selected away),
#: so differentiating the derived definition again may read through them.
GUARDED = "tc.guarded"


def _guarded(op: Operation) -> Operation:
    op.attributes[GUARDED] = UnitAttr()
    return op


def _affine(v: SSAValue, args: Sequence[BlockArgument]) -> _Affine | None:
    """`v` (an index value of a body with index arguments `args`) as affine."""
    if isinstance(v, BlockArgument) and v in args:
        return _Affine.var(("v", args.index(v)))
    op = v.owner
    if isinstance(op, arith.MinSIOp | arith.MaxSIOp) and GUARDED in op.attributes:
        return _affine(op.lhs, args)
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return _Affine(rest=SizeExpr.lit(op.value.value.data))
    if isinstance(op, tc.SizeOp):
        return _Affine(rest=SizeExpr.sym(op.size.data))
    if isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        a, b = _affine(op.lhs, args), _affine(op.rhs, args)
        if a is None or b is None:
            return None
        if isinstance(op, arith.AddiOp):
            return a.plus(b)
        if isinstance(op, arith.SubiOp):
            return a.plus(b.scaled(-1))
        for x, y in ((a, b), (b, a)):
            if not y.coeffs:
                try:
                    return x.scaled(y.rest)
                except SymbolicError:
                    return None
        return None
    if isinstance(op, arith.FloorDivSIOp):
        a, b = _affine(op.lhs, args), _affine(op.rhs, args)
        if (
            a is not None
            and b is not None
            and not a.coeffs
            and not b.coeffs
            and b.rest.is_constant
            and b.rest.const > 0
        ):
            return _Affine(rest=a.rest.floordiv(b.rest.const))
    return None


def _within(
    num: _Affine,
    lo: SizeExpr,
    hi: SizeExpr,
    extents: Sequence[SizeExpr],
    divisor: int = 1,
) -> tuple[bool, bool]:
    """Whether ``num floordiv divisor`` (an index solved as ``±u_d + rest``,
    then divided) provably stays ``>= lo`` and ``< hi`` for every ``u_d`` in
    ``[0, extent_d)``."""
    if len(num.coeffs) != 1:
        return False, False
    ((key, coeff),) = num.coeffs.items()
    c = coeff.constant_value()
    if key[0] != "u" or c is None or abs(c) != 1:
        return False, False
    e = extents[key[1]]
    # num in [first, last]
    first, last = (
        (num.rest, num.rest + e - 1) if c == 1 else (num.rest - e + 1, num.rest)
    )
    try:
        if divisor != 1:
            first, last = first.floordiv(divisor), last.floordiv(divisor)
    except SymbolicError:
        return False, False
    return provably_le(lo, first), provably_le(last + 1, hi)


def _render(v: SSAValue, top: bool = True) -> str:
    """A subscript or value in TC-like syntax, for error messages."""
    if isinstance(v, BlockArgument):
        return v.name_hint or f"i{v.index}"
    op = v.owner
    assert isinstance(op, Operation)
    if isinstance(op, arith.ConstantOp):
        value = op.value
        if isinstance(value, IntegerAttr | FloatAttr):
            return str(value.value.data)
    if isinstance(op, tc.SizeOp):
        return op.size.data
    if isinstance(op, tc.ReadOp):
        return _render_access(op)
    if isinstance(op, arith.IndexCastOp | arith.ExtFOp | arith.TruncFOp):
        return _render(op.operands[0], top)
    binary = {
        arith.AddiOp: "+",
        arith.SubiOp: "-",
        arith.MuliOp: "*",
        arith.FloorDivSIOp: "/",
        arith.AddfOp: "+",
        arith.SubfOp: "-",
        arith.MulfOp: "*",
        arith.DivfOp: "/",
    }
    for cls, sym in binary.items():
        if isinstance(op, cls):
            text = f"{_render(op.operands[0], False)} {sym} {_render(op.operands[1], False)}"
            return text if top else f"({text})"
    if isinstance(op, Operation) and op.operands:
        name = op.name.split(".")[-1]
        name = {"maxsi": "max", "minsi": "min"}.get(name, name)
        if isinstance(op, tc.BuiltinOp):
            name = op.callee.data
        return f"{name}({', '.join(_render(x) for x in op.operands)})"
    return "?"


def _render_access(op: tc.ReadOp) -> str:
    return f"{_tensor_name(op.tensor)}({', '.join(_render(i) for i in op.indices)})"


def _tensor_name(v: SSAValue) -> str:
    if isinstance(v.owner, tc.ComprehensionOp):
        return v.owner.target.data
    return v.name_hint or "?"
