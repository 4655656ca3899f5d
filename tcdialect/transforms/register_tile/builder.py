"""IR building helpers for `register-tile`: index arithmetic that folds constants, loops, strips.

`_Emitter` appends ops to a block, folding `affine.apply`s of constants into
ints (`_Val`), so that statically known bounds emit no ops. `_Variant` and
`_Strip` describe the strips a tiled dimension is cut into.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from tcdialect.dialects.affine import parallel_op
from tcdialect.transforms.register_tile.match import _Bound, _linear, _Val


class _Emitter:
    """Appends ops to a block."""

    def __init__(self, block: Block):
        self.block = block

    def op(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def val(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def apply(self, amap: AffineMap, operands: Sequence[_Val]) -> _Val:
        """The single result of `amap` on `operands`, with constant operands
        folded in (an int when the result is constant)."""
        (expr,) = amap.results
        n = amap.num_dims
        values: list[SSAValue] = []
        dims: list[AffineExpr] = []
        syms: list[AffineExpr] = []
        for i, v in enumerate(operands):
            if isinstance(v, int):
                e = AffineExpr.constant(v)
            else:
                # every SSA operand becomes a symbol (its position among `values`)
                if v not in values:
                    values.append(v)
                e = AffineExpr.symbol(values.index(v))
            (dims if i < n else syms).append(e)
        expr = expr.replace_dims_and_symbols(dims, syms)
        if isinstance(expr, AffineConstantExpr):
            return expr.value
        if isinstance(expr, AffineSymExpr):
            return values[expr.position]
        # drop the operands the expression does not use
        lin, nonlin = _linear(expr, 0)
        used = sorted(set(lin) | nonlin)
        renumber = [
            AffineExpr.symbol(used.index(i)) if i in used else AffineExpr.constant(0)
            for i in range(len(values))
        ]
        expr = expr.replace_dims_and_symbols([], renumber)
        values = [values[i] for i in used]
        return self.val(
            xaffine.ApplyOp(values, AffineMapAttr(AffineMap(0, len(values), (expr,))))
        )

    def subscripts(self, amap: AffineMap, operands: Sequence[_Val]) -> list[SSAValue]:
        """Each result of `amap` on `operands`, as an index value."""
        return [
            self.index(
                self.apply(AffineMap(amap.num_dims, amap.num_symbols, (r,)), operands)
            )
            for r in amap.results
        ]

    def index(self, v: _Val) -> SSAValue:
        """`v` as an SSA value (an `arith.constant` for an int)."""
        if isinstance(v, SSAValue):
            return v
        return self.val(arith.ConstantOp(IntegerAttr(v, IndexType())))

    def sym(self, expr: Callable[..., AffineExpr], *values: _Val) -> _Val:
        """`expr(s0, s1, ...)` applied to `values` as symbols."""
        syms = [AffineExpr.symbol(i) for i in range(len(values))]
        return self.apply(AffineMap(0, len(values), (expr(*syms),)), values)

    def max(self, a: _Val, b: _Val) -> _Val:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self.val(arith.MaxSIOp(self.index(a), self.index(b)))

    def min(self, a: _Val, b: _Val) -> _Val:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.val(arith.MinSIOp(self.index(a), self.index(b)))

    def bound(self, b: _Bound, remap: dict[SSAValue, SSAValue], is_max: bool) -> _Val:
        amap, operands = b
        ops: list[_Val] = [remap.get(v, v) for v in operands]
        values = [
            self.apply(AffineMap(amap.num_dims, amap.num_symbols, (r,)), ops)
            for r in amap.results
        ]
        out = values[0]
        for v in values[1:]:
            out = self.max(out, v) if is_max else self.min(out, v)
        return out

    def constant(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, VectorType):
            n = t.get_shape()[0]
            attr = DenseIntOrFPElementsAttr.from_list(t, [value] * n)
            return self.val(arith.ConstantOp(attr, t))
        if isinstance(t, AnyFloat):
            return self.val(arith.ConstantOp(FloatAttr(float(value), t), t))
        assert isinstance(t, IntegerType | IndexType)
        return self.val(arith.ConstantOp(IntegerAttr(int(value), t), t))


def _loop(
    em: _Emitter,
    lb: _Val,
    ub: _Val,
    step: int,
    parallel: bool,
    name: str | None,
) -> tuple[Block, SSAValue]:
    """An empty 1-D loop `lb to ub step step`; returns its body and IV."""
    block = Block(arg_types=[IndexType()])
    iv = block.args[0]
    iv.name_hint = name
    block.add_op(xaffine.YieldOp.get())
    operands = [v for v in (lb, ub) if isinstance(v, SSAValue)]
    lb_map, ub_map = _bound_map(lb), _bound_map(ub)
    if parallel:
        em.op(
            parallel_op(
                operands, lb_map.data, [1], ub_map.data, [1], [step], Region(block)
            )
        )
    else:
        em.op(
            xaffine.ForOp.from_region(
                [lb] if isinstance(lb, SSAValue) else [],
                [ub] if isinstance(ub, SSAValue) else [],
                [],
                [],
                lb_map,
                ub_map,
                Region(block),
                step,
            )
        )
    return block, iv


def _bound_map(v: _Val) -> AffineMapAttr:
    """`()[s0] -> (s0)` for an SSA value, `() -> (c)` for a constant."""
    if isinstance(v, int):
        return AffineMapAttr(AffineMap(0, 0, (AffineExpr.constant(v),)))
    return AffineMapAttr(AffineMap(0, 1, (AffineExpr.symbol(0),)))


def _reduction_loop(
    em: _Emitter, lo: _Val, hi: _Val, step: int, init: list[SSAValue], body: Block
) -> list[SSAValue]:
    """`affine.for lo to hi step step iter_args(init)` around `body` (its
    first argument the IV, then one per `init`; it ends in its yield)."""
    loop = xaffine.ForOp.from_region(
        [lo] if isinstance(lo, SSAValue) else [],
        [hi] if isinstance(hi, SSAValue) else [],
        init,
        [a.type for a in init],
        _bound_map(lo),
        _bound_map(hi),
        Region(body),
        step,
    )
    em.op(loop)
    return list(loop.results)


def _detach_all(block: Block) -> list[Operation]:
    """The ops of `block`, detached from it."""
    ops = list(block.ops)
    for op in ops:
        op.detach()
    return ops


def _body_emitter(block: Block) -> _Emitter:
    """An emitter inserting before the block's terminator."""

    class _Before(_Emitter):
        def op(self, op: Operation) -> Operation:
            last = self.block.last_op
            assert last is not None
            self.block.insert_op_before(op, last)
            return op

        def val(self, op: Operation) -> SSAValue:
            self.op(op)
            return op.results[0]

    return _Before(block)


@dataclass
class _Variant:
    """One strip of a tiled dimension: `count` points `stride` apart."""

    count: int
    stride: int
    masked: bool = False

    @property
    def step(self) -> int:
        return self.count * self.stride


@dataclass
class _Strip:
    iv: SSAValue
    parallel: bool
    variants: list[_Variant]
    ranges: list[tuple[_Val, _Val]] = field(default_factory=list)
    ub: _Val = 0


def _empty(lo: _Val, hi: _Val) -> bool:
    """Whether the range [lo, hi) is known to be empty."""
    return lo == hi or (isinstance(lo, int) and isinstance(hi, int) and lo >= hi)
