"""`convert-affine-to-scf`: lower every `affine` op to `scf`, `memref` and `arith`.

A complete replacement for xDSL's `lower-affine` (which only handles
constant single-result loop bounds, ignores `affine.if/min/parallel` and
leaves `arith.floordivsi/ceildivsi` behind). Contract:

- `affine.for` → `scf.for`. The lower bound is the `arith.maxsi` of the lower
  map's results, the upper bound the `arith.minsi` of the upper map's results
  (dims and symbols taken from the bound operands); the step becomes an
  `arith.constant`; `iter_args`, results and the `affine.yield` carry over
  (`scf.yield`).
- `affine.parallel` → `scf.parallel` (each dimension's bound combines its
  group of map results with max (lower) / min (upper)); its `affine.yield`
  becomes `scf.reduce`; its discardable attributes (the GPU mapping's
  `tc.gpu_processor`/`tc.gpu_size`) carry over. Reductions are rejected
  (`TCError`). A 0-dimensional
  `affine.parallel` runs its body once: the body is inlined in place.
- `affine.if` → `scf.if` on the conjunction (`arith.andi`) of its integer
  set's constraints (`expr >= 0` → `cmpi sge`, `expr == 0` → `cmpi eq`), with
  its else region and results.
- `affine.load/store` → `memref.load/store` on the expanded map results;
  `affine.apply` → the expanded expression; `affine.min` → an `arith.minsi`
  chain.
- Affine expressions expand into plain `arith` index ops with exact floor
  semantics: `x floordiv c` (c > 0) is `divsi(x < 0 ? x - (c - 1) : x, c)`,
  `x ceildiv c` is `divsi(x > 0 ? x + (c - 1) : x, c)`, `x mod c` is
  `r = remsi(x, c); r < 0 ? r + c : r`; negative divisors go through
  `x floordiv c = (-x) floordiv (-c)` and the like. Constants fold, `d0`
  and constants emit nothing but the value (one `arith.constant` per distinct
  value per lowered op), `e * -1` added to something becomes `arith.subi`.
  No `arith.floordivsi`/`ceildivsi` are produced.
- Everything that is not an `affine` op is left untouched (no DCE).
  `affine.vector_load/store` are rejected.

Example::

    affine.for %i = max affine_map<()[s0] -> (0, s0 - 4)>()[%N] to %N step 2 {
      %x = affine.load %A[%i floordiv 4] : memref<?xf32>
    }

becomes (one `arith.constant` per distinct value per lowered op)::

    %c4 = arith.constant 4 : index
    %0 = arith.subi %N, %c4 : index
    %c0 = arith.constant 0 : index
    %1 = arith.maxsi %0, %c0 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %1 to %N step %c2 {
      %c0_1 = arith.constant 0 : index
      %2 = arith.cmpi slt, %i, %c0_1 : index
      %c3 = arith.constant 3 : index
      %3 = arith.subi %i, %c3 : index
      %4 = arith.select %2, %3, %i : index
      %c4_1 = arith.constant 4 : index
      %5 = arith.divsi %4, %c4_1 : index
      %x = memref.load %A[%5] : memref<?xf32>
    }
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineConstraintKind,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError

Value = int | SSAValue
"""An index value being built: a folded constant or an SSA value."""


class IndexBuilder:
    """Emits `arith` index ops into `ops`, folding constants on the way.

    Values are `int` (known constants, not materialised yet) or `SSAValue`.
    `value()` materialises a constant, once per distinct value.
    """

    def __init__(self, constants: dict[int, SSAValue] | None = None) -> None:
        self.ops: list[Operation] = []
        self._constants: dict[int, SSAValue] = dict(constants or {})
        """Index constants already available at the insertion point."""

    @property
    def constants(self) -> dict[int, SSAValue]:
        """The index constants available after `ops` (a copy)."""
        return dict(self._constants)

    def _emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def value(self, v: Value) -> SSAValue:
        if isinstance(v, SSAValue):
            return v
        if v not in self._constants:
            const = self._emit(arith.ConstantOp(IntegerAttr(v, IndexType())))
            const.name_hint = f"c{v}" if v >= 0 else f"c_neg{-v}"
            self._constants[v] = const
        return self._constants[v]

    def add(self, a: Value, b: Value) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(a, int):
            a, b = b, a
        if b == 0:
            return a
        if isinstance(b, int) and b < 0:
            return self.sub(a, -b)
        return self._emit(arith.AddiOp(self.value(a), self.value(b)))

    def sub(self, a: Value, b: Value) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if b == 0:
            return a
        return self._emit(arith.SubiOp(self.value(a), self.value(b)))

    def neg(self, a: Value) -> Value:
        return self.sub(0, a)

    def mul(self, a: Value, b: Value) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(a, int):
            a, b = b, a
        if b == 0:
            return 0
        if b == 1:
            return a
        if b == -1:
            return self.neg(a)
        return self._emit(arith.MuliOp(self.value(a), self.value(b)))

    def divsi(self, a: Value, b: Value) -> Value:
        """Division truncating towards zero (`arith.divsi`)."""
        if isinstance(a, int) and isinstance(b, int) and b != 0:
            q = abs(a) // abs(b)
            return q if (a < 0) == (b < 0) else -q
        if b == 1:
            return a
        return self._emit(arith.DivSIOp(self.value(a), self.value(b)))

    def cmp(self, predicate: str, a: Value, b: Value) -> SSAValue:
        return self._emit(arith.CmpiOp(self.value(a), self.value(b), predicate))

    def andi(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._emit(arith.AndIOp(a, b))

    def select(self, cond: SSAValue, a: Value, b: Value) -> SSAValue:
        return self._emit(arith.SelectOp(cond, self.value(a), self.value(b)))

    def max(self, a: Value, b: Value) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        if a is b:
            return a
        return self._emit(arith.MaxSIOp(self.value(a), self.value(b)))

    def min(self, a: Value, b: Value) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        if a is b:
            return a
        return self._emit(arith.MinSIOp(self.value(a), self.value(b)))

    def max_of(self, values: Sequence[Value]) -> Value:
        """The maximum of `values` (an `arith.maxsi` chain)."""
        return self._extremum(values, self.max)

    def min_of(self, values: Sequence[Value]) -> Value:
        """The minimum of `values` (an `arith.minsi` chain)."""
        return self._extremum(values, self.min)

    @staticmethod
    def _extremum(
        values: Sequence[Value], combine: Callable[[Value, Value], Value]
    ) -> Value:
        if not values:
            raise TCError("internal error: min/max of an empty list of bounds")
        # Distinct SSA values in order, then all constants folded into one.
        distinct: list[Value] = []
        for v in values:
            if not isinstance(v, int) and not any(v is d for d in distinct):
                distinct.append(v)
        constants = [v for v in values if isinstance(v, int)]
        if constants:
            folded = constants[0]
            for c in constants[1:]:
                folded = combine(folded, c)
            distinct.append(folded)
        result = distinct[0]
        for v in distinct[1:]:
            result = combine(result, v)
        return result

    def floordiv(self, x: Value, c: int) -> Value:
        """`floor(x / c)` for a non-zero constant `c`."""
        if c == 0:
            raise TCError("affine floordiv by zero")
        if isinstance(x, int):
            return x // c
        if c < 0:
            return self.floordiv(self.neg(x), -c)
        if c == 1:
            return x
        negative = self.cmp("slt", x, 0)
        adjusted = self.select(negative, self.sub(x, c - 1), x)
        return self._emit(arith.DivSIOp(adjusted, self.value(c)))

    def ceildiv(self, x: Value, c: int) -> Value:
        """`ceil(x / c)` for a non-zero constant `c`."""
        if c == 0:
            raise TCError("affine ceildiv by zero")
        if isinstance(x, int):
            return -(-x // c)
        if c < 0:
            return self.ceildiv(self.neg(x), -c)
        if c == 1:
            return x
        positive = self.cmp("sgt", x, 0)
        adjusted = self.select(positive, self.add(x, c - 1), x)
        return self._emit(arith.DivSIOp(adjusted, self.value(c)))

    def mod(self, x: Value, c: int) -> Value:
        """`x - c * floor(x / c)` for a non-zero constant `c` (Python's `%`)."""
        if c == 0:
            raise TCError("affine mod by zero")
        if isinstance(x, int):
            return x % c
        if c < 0:
            return self.neg(self.mod(self.neg(x), -c))
        if c == 1:
            return 0
        rem = self._emit(arith.RemSIOp(self.value(x), self.value(c)))
        negative = self.cmp("slt", rem, 0)
        return self.select(negative, self.add(rem, c), rem)

    def expr(
        self, expr: AffineExpr, dims: Sequence[SSAValue], symbols: Sequence[SSAValue]
    ) -> Value:
        """The value of an affine expression over the given dims and symbols."""
        match expr:
            case AffineConstantExpr(value=value):
                return value
            case AffineDimExpr(position=position):
                return dims[position]
            case AffineSymExpr(position=position):
                return symbols[position]
            case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
                # `a - b` is stored as `a + b * -c`: emit a subtraction.
                if (
                    kind == AffineBinaryOpKind.Add
                    and isinstance(rhs, AffineBinaryOpExpr)
                    and rhs.kind == AffineBinaryOpKind.Mul
                    and isinstance(rhs.rhs, AffineConstantExpr)
                    and rhs.rhs.value < 0
                ):
                    a = self.expr(lhs, dims, symbols)
                    b = self.expr(rhs.lhs, dims, symbols)
                    return self.sub(a, self.mul(b, -rhs.rhs.value))
                # `-a + b` (a canonical `b - a` with `b` constant): subtract.
                if (
                    kind == AffineBinaryOpKind.Add
                    and isinstance(lhs, AffineBinaryOpExpr)
                    and lhs.kind == AffineBinaryOpKind.Mul
                    and isinstance(lhs.rhs, AffineConstantExpr)
                    and lhs.rhs.value < 0
                ):
                    a = self.expr(lhs.lhs, dims, symbols)
                    b = self.expr(rhs, dims, symbols)
                    return self.sub(b, self.mul(a, -lhs.rhs.value))
                a = self.expr(lhs, dims, symbols)
                b = self.expr(rhs, dims, symbols)
                if kind == AffineBinaryOpKind.Add:
                    return self.add(a, b)
                if kind == AffineBinaryOpKind.Mul:
                    if isinstance(a, int) or isinstance(b, int):
                        return self.mul(a, b)
                    return self._emit(arith.MuliOp(a, b))
                if not isinstance(b, int):
                    raise TCError(
                        f"semi-affine expression '{expr}' (division by a "
                        "non-constant) is not supported"
                    )
                if kind == AffineBinaryOpKind.FloorDiv:
                    return self.floordiv(a, b)
                if kind == AffineBinaryOpKind.CeilDiv:
                    return self.ceildiv(a, b)
                return self.mod(a, b)
            case _:
                raise TCError(f"unsupported affine expression '{expr}'")

    def map_results(
        self, affine_map: AffineMap, operands: Sequence[SSAValue]
    ) -> list[Value]:
        """The values of all results of `affine_map` applied to `operands`."""
        num_dims = affine_map.num_dims
        if len(operands) != num_dims + affine_map.num_symbols:
            raise TCError(
                f"affine map {affine_map} applied to {len(operands)} operands"
            )
        dims, symbols = operands[:num_dims], operands[num_dims:]
        return [self.expr(e, dims, symbols) for e in affine_map.results]


def _replace_terminator(
    block: Block, rewriter: PatternRewriter, make: type[scf.YieldOp] | None
) -> None:
    """Turn the `affine.yield` ending `block` into `scf.yield` (`make` set) or
    `scf.reduce` (`make` None); add one if the block has no terminator."""
    last = block.last_op
    args: Sequence[SSAValue] = ()
    if isinstance(last, affine.YieldOp):
        args = tuple(last.arguments)
    new: Operation = scf.YieldOp(*args) if make is not None else scf.ReduceOp()
    if make is None and args:
        raise TCError("affine.parallel with yielded values is not supported")
    if isinstance(last, affine.YieldOp):
        rewriter.replace(last, new)
    else:
        rewriter.insert(new, InsertPoint.at_end(block))


class LowerFor(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ForOp, rewriter: PatternRewriter) -> None:
        b = IndexBuilder()
        lb = b.max_of(b.map_results(op.lowerBoundMap.data, op.lowerBoundOperands))
        ub = b.min_of(b.map_results(op.upperBoundMap.data, op.upperBoundOperands))
        step = op.step.value.data
        if step <= 0:
            raise TCError(f"affine.for with non-positive step {step}")
        lb_val, ub_val, step_val = b.value(lb), b.value(ub), b.value(step)
        body = rewriter.move_region_contents_to_new_regions(op.body)
        _replace_terminator(body.block, rewriter, scf.YieldOp)
        rewriter.insert(b.ops)
        new = scf.ForOp(lb_val, ub_val, step_val, tuple(op.inits), body)
        new.attributes.update(op.attributes)  # a recurrence's `tc.recurrence`
        rewriter.replace(op, new)


class LowerParallel(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: affine.ParallelOp, rewriter: PatternRewriter
    ) -> None:
        if op.reductions.data or op.res:
            raise TCError("affine.parallel with reductions is not supported")
        lb_map, ub_map = op.lowerBoundsMap.data, op.upperBoundsMap.data
        num_lb_operands = lb_map.num_dims + lb_map.num_symbols
        operands = tuple(op.map_operands)
        b = IndexBuilder()
        lb_results = b.map_results(lb_map, operands[:num_lb_operands])
        ub_results = b.map_results(ub_map, operands[num_lb_operands:])
        lb_groups = [int(g) for g in op.lowerBoundsGroups.get_values()]
        ub_groups = [int(g) for g in op.upperBoundsGroups.get_values()]
        steps = [s.value.data for s in op.steps.data]
        if not len(lb_groups) == len(ub_groups) == len(steps):
            raise TCError("affine.parallel: inconsistent number of dimensions")
        if any(s <= 0 for s in steps):
            raise TCError(f"affine.parallel with non-positive steps {steps}")

        body_block = op.body.block
        if not steps:
            # 0-dimensional: the body runs exactly once.
            if isinstance(body_block.last_op, affine.YieldOp):
                if body_block.last_op.arguments:
                    raise TCError("affine.parallel with results is not supported")
                rewriter.erase(body_block.last_op)
            rewriter.inline_block(body_block, InsertPoint.before(op))
            rewriter.erase(op)
            return

        def grouped(values: list[Value], groups: list[int]) -> list[list[Value]]:
            out: list[list[Value]] = []
            start = 0
            for g in groups:
                out.append(values[start : start + g])
                start += g
            return out

        lbs = [b.max_of(g) for g in grouped(lb_results, lb_groups)]
        ubs = [b.min_of(g) for g in grouped(ub_results, ub_groups)]
        lb_vals = [b.value(v) for v in lbs]
        ub_vals = [b.value(v) for v in ubs]
        step_vals = [b.value(s) for s in steps]
        body = rewriter.move_region_contents_to_new_regions(op.body)
        _replace_terminator(body.block, rewriter, None)
        rewriter.insert(b.ops)
        new = scf.ParallelOp(lb_vals, ub_vals, step_vals, body)
        # Discardable attributes (a GPU mapping's `tc.gpu_*`) stay with the loop.
        new.attributes.update(op.attributes)
        rewriter.replace(op, new)


class LowerIf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.IfOp, rewriter: PatternRewriter) -> None:
        condition = op.condition.data
        args = tuple(op.args)
        if len(args) != condition.num_dims + condition.num_symbols:
            raise TCError(
                f"affine.if: integer set {condition} applied to {len(args)} operands"
            )
        dims, symbols = args[: condition.num_dims], args[condition.num_dims :]
        b = IndexBuilder()
        cond: SSAValue | None = None
        known_false = False
        for constraint in condition.constraints:
            lhs = b.expr(constraint.lhs, dims, symbols)
            rhs = b.expr(constraint.rhs, dims, symbols)
            predicate = {
                AffineConstraintKind.ge: "sge",
                AffineConstraintKind.le: "sle",
                AffineConstraintKind.eq: "eq",
            }[constraint.kind]
            if isinstance(lhs, int) and isinstance(rhs, int):
                holds = {"sge": lhs >= rhs, "sle": lhs <= rhs, "eq": lhs == rhs}
                known_false = known_false or not holds[predicate]
                continue
            c = b.cmp(predicate, lhs, rhs)
            cond = c if cond is None else b.andi(cond, c)
        if known_false or cond is None:
            const = arith.ConstantOp(IntegerAttr(0 if known_false else 1, i1))
            b.ops.append(const)
            cond = const.result

        then_region = rewriter.move_region_contents_to_new_regions(op.then_region)
        _replace_terminator(then_region.block, rewriter, scf.YieldOp)
        else_region: Region | None = None
        if op.else_region.blocks:
            else_region = rewriter.move_region_contents_to_new_regions(op.else_region)
            _replace_terminator(else_region.block, rewriter, scf.YieldOp)
        elif op.res:
            raise TCError("affine.if with results needs an else region")
        rewriter.insert(b.ops)
        rewriter.replace(op, scf.IfOp(cond, op.res.types, then_region, else_region))


class LowerLoad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.LoadOp, rewriter: PatternRewriter) -> None:
        b = IndexBuilder()
        indices = [b.value(v) for v in b.map_results(op.map.data, op.indices)]
        rewriter.insert(b.ops)
        rewriter.replace(op, memref.LoadOp.get(op.memref, indices))


class LowerStore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.StoreOp, rewriter: PatternRewriter) -> None:
        b = IndexBuilder()
        indices = [b.value(v) for v in b.map_results(op.map.data, op.indices)]
        rewriter.insert(b.ops)
        rewriter.replace(op, memref.StoreOp.get(op.value, op.memref, indices))


class LowerApply(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ApplyOp, rewriter: PatternRewriter) -> None:
        b = IndexBuilder()
        (result,) = b.map_results(op.map.data, op.mapOperands)
        value = b.value(result)
        rewriter.replace(op, b.ops, [value])


class LowerMin(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.MinOp, rewriter: PatternRewriter) -> None:
        b = IndexBuilder()
        value = b.value(b.min_of(b.map_results(op.map.data, op.arguments)))
        rewriter.replace(op, b.ops, [value])


@dataclass(frozen=True)
class ConvertAffineToScfPass(ModulePass):
    """Lower all `affine` ops to `scf`, `memref` and `arith` (see module doc)."""

    name = "convert-affine-to-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, affine.VectorLoadOp | affine.VectorStoreOp):
                raise TCError(f"convert-affine-to-scf: '{inner.name}' is not supported")
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerFor(),
                    LowerParallel(),
                    LowerIf(),
                    LowerLoad(),
                    LowerStore(),
                    LowerApply(),
                    LowerMin(),
                ],
                dce_enabled=False,
            ),
            walk_regions_first=False,
        ).rewrite_module(op)
        for inner in op.walk():
            if inner.dialect_name() == "affine":
                raise TCError(
                    f"convert-affine-to-scf: '{inner.name}' left outside of an "
                    "affine loop or conditional"
                )
