"""Linear forms over SSA values: subscripts, loop bounds and their extremes.

`Lin` is `c0 + c1 * v1 + ... + cn * vn` over `index` values (loop IVs,
sizes, anything defined outside the loops at hand). It is what
`affine-gpu-promote` reasons with: an access's subscripts (`subscripts`), a
loop's bounds (`loop_range`), the smallest and largest value of a subscript
over a set of loops (`extreme`), and back to an affine map (`to_map`).

Only linear maps are read (`floordiv`, `mod` and `ceildiv` of a non-constant
give None); operands that are `arith.constant`s or single-result
`affine.apply`s are folded in. Example: in

    affine.for %r = %c2 * 32 to min(symbol(%K), %c2 * 32 + 32) {
      affine.load %A[%m, %r]

`loop_range` of the loop is `(%c2 * 32, span 31, 32 trips)`, and `extreme` of
the second subscript over it is `%c2 * 32` (lowest) and `%c2 * 32 + 31`
(highest): a box of 32 elements at offset `%c2 * 32`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, func, memref
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from tcdialect.transforms.ir_values import constant_index


class Lin:
    """`const + sum(coef[v] * v)`, with no zero coefficient."""

    __slots__ = ("coef", "const")

    def __init__(self, coef: dict[SSAValue, int] | None = None, const: int = 0):
        self.coef = {v: c for v, c in (coef or {}).items() if c}
        self.const = const

    @staticmethod
    def of(v: SSAValue) -> Lin:
        return Lin({v: 1})

    def __add__(self, other: Lin | int) -> Lin:
        if isinstance(other, int):
            return Lin(self.coef, self.const + other)
        coef = dict(self.coef)
        for v, c in other.coef.items():
            coef[v] = coef.get(v, 0) + c
        return Lin(coef, self.const + other.const)

    def __sub__(self, other: Lin | int) -> Lin:
        return self + (-other if isinstance(other, int) else other.scale(-1))

    def scale(self, k: int) -> Lin:
        return Lin({v: c * k for v, c in self.coef.items()}, self.const * k)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Lin)
            and self.const == other.const
            and self.coef == other.coef
        )

    def __hash__(self) -> int:
        return hash((self.const, frozenset(self.coef.items())))

    def __repr__(self) -> str:
        terms = [f"{c}*{v.name_hint or '?'}" for v, c in self.coef.items()]
        return " + ".join([*terms, str(self.const)])

    @property
    def constant(self) -> int | None:
        """The value when no SSA value appears, else None."""
        return None if self.coef else self.const

    def substitute(self, v: SSAValue, by: Lin) -> Lin:
        c = self.coef.get(v, 0)
        if not c:
            return self
        rest = Lin({w: d for w, d in self.coef.items() if w is not v}, self.const)
        return rest + by.scale(c)


def value_lin(v: SSAValue) -> Lin | None:
    """`v` as a linear form: constants and linear `affine.apply`s folded."""
    c = constant_index(v)
    if c is not None:
        return Lin(const=c)
    owner = v.owner
    if isinstance(owner, affine.ApplyOp) and len(owner.map.data.results) == 1:
        (expr,) = owner.map.data.results
        return expr_lin(expr, owner.map.data.num_dims, list(owner.mapOperands))
    return Lin.of(v)


def expr_lin(e: AffineExpr, num_dims: int, operands: Sequence[SSAValue]) -> Lin | None:
    """The affine expression `e` over `operands` (dims first) as a `Lin`."""
    match e:
        case AffineConstantExpr(value=value):
            return Lin(const=value)
        case AffineDimExpr(position=p):
            return value_lin(operands[p])
        case AffineSymExpr(position=p):
            return value_lin(operands[num_dims + p])
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = expr_lin(lhs, num_dims, operands)
            b = expr_lin(rhs, num_dims, operands)
            if a is None or b is None:
                return None
            if kind == AffineBinaryOpKind.Add:
                return a + b
            if kind == AffineBinaryOpKind.Mul:
                if b.constant is not None:
                    return a.scale(b.constant)
                if a.constant is not None:
                    return b.scale(a.constant)
                return None
            x, y = a.constant, b.constant
            if x is None or y is None or y == 0:
                return None
            if kind == AffineBinaryOpKind.FloorDiv:
                return Lin(const=x // y)
            if kind == AffineBinaryOpKind.CeilDiv:
                return Lin(const=-(-x // y))
            return Lin(const=x % y)
        case _:
            return None


def map_lins(m: AffineMap, operands: Sequence[SSAValue]) -> list[Lin] | None:
    """Every result of `m` over `operands` as a `Lin` (None if one is not linear)."""
    out: list[Lin] = []
    for e in m.results:
        lin = expr_lin(e, m.num_dims, operands)
        if lin is None:
            return None
        out.append(lin)
    return out


def subscripts(op: affine.LoadOp | affine.StoreOp) -> list[Lin] | None:
    """The subscripts of an affine access, or None if one is not linear."""
    return map_lins(op.map.data, list(op.indices))


# -- loops ---------------------------------------------------------------------------


def is_loop(op: Operation) -> bool:
    """An `affine.for`, or a one-dimensional `affine.parallel`."""
    if isinstance(op, affine.ForOp):
        return True
    return isinstance(op, affine.ParallelOp) and len(op.steps.data) == 1


def loop_iv(op: Operation) -> SSAValue:
    return op.regions[0].blocks[0].args[0]


def _bound_lins(op: Operation) -> tuple[list[Lin] | None, list[Lin] | None, int]:
    if isinstance(op, affine.ForOp):
        lbs = map_lins(op.lowerBoundMap.data, list(op.lowerBoundOperands))
        ubs = map_lins(op.upperBoundMap.data, list(op.upperBoundOperands))
        return lbs, ubs, op.step.value.data
    assert isinstance(op, affine.ParallelOp)
    lmap, umap = op.lowerBoundsMap.data, op.upperBoundsMap.data
    operands = list(op.map_operands)
    split = lmap.num_dims + lmap.num_symbols
    lbs = map_lins(lmap, operands[:split])
    ubs = map_lins(umap, operands[split:])
    return lbs, ubs, op.steps.data[0].value.data


def loop_bounds(op: Operation) -> tuple[list[Lin], list[Lin], int] | None:
    """Lower bounds (the IV is at least each), upper bounds (the IV is below
    each) and step of the loop `op` (`is_loop`); None if one is not linear."""
    lbs, ubs, step = _bound_lins(op)
    if lbs is None or ubs is None:
        return None
    return lbs, ubs, step


@dataclass(frozen=True)
class Range:
    """A loop's IV takes values in `[lo, lo + span]` in at most `trips`
    iterations (`span` and `trips` are numbers)."""

    lo: Lin
    span: int
    trips: int


def loop_range(op: Operation) -> Range | None:
    """The tightest `Range` from one lower and one upper bound of `op` whose
    difference is a number; None when no pair has one, or the loop may run
    no iteration for every such pair."""
    bounds = loop_bounds(op)
    if bounds is None:
        return None
    lbs, ubs, step = bounds
    best: Range | None = None
    for lb in lbs:
        for ub in ubs:
            d = (ub - lb).constant
            if d is None or d < 1:
                continue
            r = Range(lb, step * ((d - 1) // step), -(-d // step))
            if best is None or r.span < best.span:
                best = r
    return best


def _fewest_terms(lins: Sequence[Lin]) -> Lin | None:
    return min(lins, key=lambda lin: len(lin.coef), default=None)


def loop_limits(op: Operation) -> tuple[Lin | None, Lin | None]:
    """A least and a greatest value of the IV of loop `op` (either None when
    unknown): the two ends of its `Range` when it has one, else the bounds
    with the fewest terms."""
    r = loop_range(op)
    if r is not None:
        return r.lo, r.lo + r.span
    lbs, ubs, _ = _bound_lins(op)
    lb = None if lbs is None else _fewest_terms(lbs)
    ub = None if ubs is None else _fewest_terms(ubs)
    return lb, None if ub is None else ub - 1


#: A loop's IV with its least and greatest value (either None when unknown).
Limits = tuple[SSAValue, Lin | None, Lin | None]


def extreme(lin: Lin, loops: Sequence[Limits], highest: bool) -> Lin | None:
    """A bound on `lin` over the IVs of `loops` (innermost first): the least
    value when not `highest`, else the greatest. The result has none of the
    IVs; None when a limit it needs is unknown."""
    for iv, lo, hi in loops:
        c = lin.coef.get(iv, 0)
        if not c:
            continue
        limit = hi if (c > 0) == highest else lo
        if limit is None:
            return None
        lin = lin.substitute(iv, limit)
    return lin


@dataclass(frozen=True)
class Loop:
    """A loop around an op: the loop, its IV, its `Range` (if any) and its
    `loop_limits`."""

    op: Operation
    iv: SSAValue
    range: Range | None
    lo: Lin | None
    hi: Lin | None

    @property
    def limits(self) -> Limits:
        return self.iv, self.lo, self.hi


def enclosing_loops(op: Operation, stop: Block | None = None) -> list[Loop]:
    """The loops around `op`, innermost first, up to (not including) the op
    whose region holds `stop` (the function when None)."""
    out: list[Loop] = []
    block = op.parent_block()
    while block is not None and block is not stop:
        parent = block.parent_op()
        if parent is None or isinstance(parent, func.FuncOp):
            break
        if is_loop(parent):
            lo, hi = loop_limits(parent)
            out.append(Loop(parent, loop_iv(parent), loop_range(parent), lo, hi))
        block = parent.parent_block()
    return out


# -- back to affine maps ----------------------------------------------------------------


def _is_symbol(v: SSAValue) -> bool:
    """Sizes (function arguments) and extents print as `symbol(...)`."""
    owner = v.owner
    if isinstance(owner, Block):
        return isinstance(owner.parent_op(), func.FuncOp)
    return isinstance(owner, memref.DimOp)


def to_exprs(lins: Iterable[Lin]) -> tuple[list[AffineExpr], int, list[SSAValue]]:
    """The `lins` as affine expressions, the number of dims, and the operands
    (dims in order of first use, then symbols)."""
    lins = list(lins)
    seen: list[SSAValue] = []
    for lin in lins:
        seen += [v for v in lin.coef if v not in seen]
    dims = [v for v in seen if not _is_symbol(v)]
    syms = [v for v in seen if _is_symbol(v)]
    pos: dict[SSAValue, AffineExpr] = {
        v: AffineExpr.dimension(i) for i, v in enumerate(dims)
    }
    pos.update((v, AffineExpr.symbol(i)) for i, v in enumerate(syms))
    exprs: list[AffineExpr] = []
    for lin in lins:
        e: AffineExpr = AffineExpr.constant(lin.const)
        terms = [pos[v] * c for v, c in lin.coef.items()]
        if terms:
            e = terms[0]
            for t in terms[1:]:
                e = e + t
            if lin.const:
                e = e + lin.const
        exprs.append(e)
    return exprs, len(dims), [*dims, *syms]


def to_map(lins: Iterable[Lin]) -> tuple[AffineMap, list[SSAValue]]:
    """An affine map with one result per linear form, and its operands."""
    exprs, nd, operands = to_exprs(lins)
    return AffineMap(nd, len(operands) - nd, tuple(exprs)), operands


#: The trip count of a loop with no `Range` (it may run many times).
MANY = math.inf
