"""`collapse-dims`: two loops that only ever index two adjacent whole array
dimensions become one loop over one dimension.

An affine → affine pass (docs/pipeline.md: `affine` stage IR), run before
`affine-isl-schedule`. Spatial dimensions that a definition only ever walks
whole and together, like tensordot's `h, w` in
`O(n, c1, c3, h, w) +=! I0(n, c1, r_c2, h, w) * I1(n, r_c2, c3, h, w)`, are
one contiguous run of memory in every array: walking them as one dimension
of `H * W` elements gives the vectoriser one long stride-1 loop (784 floats
= 49 whole vectors) instead of 28 rows of 28 (16 lanes and a masked 12,
most of them straddling two cache lines).

Contract. A *pair* is two IVs `a`, `b` of

- one `affine.parallel` without reductions or results whose bounds are all
  single-result groups, `a` and `b` running from 0 to constants `A`, `B` by
  1 (any two of its dimensions; `a` is the major one), or
- two perfectly nested `affine.for`s without iteration arguments, the outer
  (IV `a`) holding only the inner (IV `b`), from 0 to constants by 1.

A pair collapses when every use of `a` and `b` is a subscript operand of an
`affine.load` / `affine.store` whose map has `a` exactly in one result `p`
(the bare dimension) and `b` exactly in the last result `p + 1` and nowhere
else, on a memref of static extents `A`, `B` at `p`, `p + 1` and identity
layout; and each such memref is a function argument or a `memref.alloc` /
`memref.alloca` whose every use is an access of that kind at the same `p`
(covered by a collapsing pair) or a `memref.dealloc`. The memref then gets
one dimension of `A * B` elements at `p` (the same bytes: row-major order
is unchanged, so callers pass the same buffers), each access keeps `a` at
`p` and drops `b`, and the pair becomes one loop over `A * B` (`a`'s
dimension or the outer `affine.for`; `b`'s dimension or the inner loop is
gone). Element `(a, b)` of the old loop is iteration `a * B + b` of the new
one and reads and writes element `a * B + b` of the new dimension, the same
address as before, in the same order for the `affine.for`s; so the result
is the same. Pairs and memrefs that share accesses collapse together (a
fixed point over the function); the pass repeats until nothing collapses,
so `(c, h, w)` walked whole everywhere becomes one dimension.

Only the innermost dimensions collapse: that is where a longer contiguous
run helps, while merging outer dimensions (einsum's `a, b` in
`O(a, b, d) +=! X(a, b, r_c) * Y(r_c, d)`) only trades a short batch loop,
which `auto_tile` gives each thread whole, for a long row loop cut into
tiles that each copy `Y`'s panels again (docs/perf/collapse-dims.md).

Left alone: an IV used anywhere else (a bound, an `affine.if`, a computed
subscript like `h + kh` or `2 * h`, arithmetic), a memref with a dynamic
extent at `p` or `p + 1`, a non-identity layout or another use (a call, a
`memref.load`), an `affine.for` pair walked in the other order (`X[w, h]`
under `for h { for w }`: merging would reorder the iterations).

Example (tensordot; the reduction nest)::

    "affine.parallel"() <{... upperBoundsMap = affine_map<() -> (4, 512, 2, 28, 28)> ...}> ({
    ^bb0(%n: index, %c1: index, %c3: index, %h: index, %w: index):
      affine.for %r_c2 = 0 to 8 {
        %1 = affine.load %I0[%n, %c1, %r_c2, %h, %w] : memref<4x512x8x28x28xf32>
        ...

becomes::

    "affine.parallel"() <{... upperBoundsMap = affine_map<() -> (4, 512, 2, 784)> ...}> ({
    ^bb0(%n: index, %c1: index, %c3: index, %h_w: index):
      affine.for %r_c2 = 0 to 8 {
        %1 = affine.load %I0[%n, %c1, %r_c2, %h_w] : memref<4x512x8x784xf32>
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine as xaffine
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    TensorType,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.dialects.affine import LoadOp, StoreOp, exact_subscript

_Access = xaffine.LoadOp | xaffine.StoreOp


@dataclass(frozen=True)
class _Pair:
    """Two IVs of `loop` that may become one: `a` (major, extent `ea`) and
    `b` (minor, extent `eb`); `inner` is the inner `affine.for` of a for pair."""

    loop: Operation
    a: BlockArgument
    b: BlockArgument
    ea: int
    eb: int
    inner: xaffine.ForOp | None = None


def _constants(m: AffineMap) -> list[int] | None:
    """The results of `m` when all are constants."""
    out: list[int] = []
    for e in m.results:
        if not isinstance(e, AffineConstantExpr):
            return None
        out.append(e.value)
    return out


def _for_extent(op: xaffine.ForOp) -> int | None:
    """U when `op` runs from 0 to constant U by 1 without iteration arguments."""
    if (
        op.inits
        or op.results
        or op.lowerBoundOperands
        or op.upperBoundOperands
        or op.step.value.data != 1
    ):
        return None
    lo, hi = _constants(op.lowerBoundMap.data), _constants(op.upperBoundMap.data)
    if lo != [0] or hi is None or len(hi) != 1:
        return None
    return hi[0]


def _parallel_extents(op: xaffine.ParallelOp) -> list[int | None] | None:
    """Each dimension's constant extent (None: not from 0 by 1 to a
    constant), when `op` has no reductions and single-result groups."""
    if op.results or op.reductions.data:
        return None
    n = len(op.body.block.args)
    groups = [
        *op.lowerBoundsGroups.get_values(),
        *op.upperBoundsGroups.get_values(),
    ]
    if any(g != 1 for g in groups) or len(groups) != 2 * n:
        return None
    lo, hi = op.lowerBoundsMap.data.results, op.upperBoundsMap.data.results
    out: list[int | None] = []
    for lo_k, hi_k, step in zip(lo, hi, op.steps.data, strict=True):
        whole = (
            isinstance(lo_k, AffineConstantExpr)
            and lo_k.value == 0
            and isinstance(step, IntegerAttr)
            and step.value.data == 1
        )
        out.append(
            hi_k.value if whole and isinstance(hi_k, AffineConstantExpr) else None
        )
    return out


def _candidates(fn: func.FuncOp) -> Iterator[_Pair]:
    """Every pair of `fn`'s loops of the shapes the contract names (ordered:
    a parallel op gives both orders of each two dimensions)."""
    for op in fn.walk():
        if isinstance(op, xaffine.ParallelOp):
            extents = _parallel_extents(op)
            if extents is None:
                continue
            args = op.body.block.args
            for i, ei in enumerate(extents):
                for j, ej in enumerate(extents):
                    if i != j and ei is not None and ej is not None:
                        yield _Pair(op, args[i], args[j], ei, ej)
        elif isinstance(op, xaffine.ForOp):
            ea = _for_extent(op)
            body = [o for o in op.body.block.ops if not isinstance(o, xaffine.YieldOp)]
            if ea is None or len(body) != 1 or not isinstance(body[0], xaffine.ForOp):
                continue
            inner = body[0]
            eb = _for_extent(inner)
            if eb is not None:
                yield _Pair(
                    op, op.body.block.args[0], inner.body.block.args[0], ea, eb, inner
                )


def _identity_static(t: MemRefType, p: int) -> bool:
    """Whether `t` has the identity layout and static extents at `p`, `p + 1`."""
    shape = t.get_shape()
    return (
        isinstance(t.layout, NoneAttr)
        and p + 1 < len(shape)
        and shape[p] > 0
        and shape[p + 1] > 0
    )


class _Analysis:
    """Which pairs and memrefs of one function collapse (module docstring)."""

    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        # pair -> its accesses, each with the position p of (a, b)
        self.pairs: dict[_Pair, list[tuple[_Access, int]]] = {}
        for pair in _candidates(fn):
            found = self._accesses(pair)
            if found is not None:
                self.pairs[pair] = found
        # memref -> all its accesses (None: it has other uses)
        self.accesses: dict[SSAValue, list[_Access] | None] = {}
        for found in self.pairs.values():
            for access, _ in found:
                if access.memref not in self.accesses:
                    self.accesses[access.memref] = self._memref_accesses(access.memref)

    def _accesses(self, pair: _Pair) -> list[tuple[_Access, int]] | None:
        """The accesses using `pair`'s IVs with the position of `a`, when
        each is an access of the collapsible form (module docstring)."""
        out: list[tuple[_Access, int]] = []
        ops = {use.operation for iv in (pair.a, pair.b) for use in iv.uses}
        for op in ops:
            if not isinstance(op, _Access):
                return None
            pa, pb = exact_subscript(op, pair.a), exact_subscript(op, pair.b)
            t = op.memref.type
            if (
                pa is None
                or pb != pa + 1
                or not isinstance(t, MemRefType)
                or not _identity_static(t, pa)
                or pa + 2 != len(t.get_shape())
                or t.get_shape()[pa : pa + 2] != (pair.ea, pair.eb)
                or (isinstance(op, xaffine.StoreOp) and op.value in (pair.a, pair.b))
            ):
                return None
            out.append((op, pa))
        return out or None

    def _memref_accesses(self, m: SSAValue) -> list[_Access] | None:
        """Every affine access of `m`, when it is a function argument or a
        local allocation whose other uses are deallocations."""
        owner = m.owner
        entry = self.fn.body.blocks.first
        if isinstance(owner, Block):
            if owner is not entry:
                return None
        elif not isinstance(owner, memref.AllocOp | memref.AllocaOp):
            return None
        out: list[_Access] = []
        for use in m.uses:
            op = use.operation
            if isinstance(op, _Access) and op.memref is m:
                out.append(op)
            elif not isinstance(op, memref.DeallocOp):
                return None
        return out

    def _consistent(
        self, valid: dict[_Pair, list[tuple[_Access, int]]]
    ) -> dict[_Pair, list[tuple[_Access, int]]]:
        """The largest subset of `valid` whose every access is on a memref
        that those pairs cover at that position in all its accesses."""
        while True:
            at: dict[_Access, set[int]] = {}
            for found in valid.values():
                for access, p in found:
                    at.setdefault(access, set()).add(p)

            def covered(m: SSAValue, p: int) -> bool:
                uses = self.accesses[m]
                return uses is not None and all(p in at.get(x, set()) for x in uses)

            keep = {
                pair: found
                for pair, found in valid.items()
                if all(covered(a.memref, p) for a, p in found)
            }
            if len(keep) == len(valid):
                return keep
            valid = keep

    def solve(self) -> tuple[list[_Pair], dict[SSAValue, int]] | None:
        """One group of pairs and memrefs (with their position) that collapse
        together, or None when nothing does."""
        valid = self._consistent(dict(self.pairs))
        while valid:
            seed = next(iter(valid))
            group = self._group(seed, valid)
            if group is not None:
                return group
            del valid[seed]  # conflicts: others may have leant on it
            valid = self._consistent(valid)
        return None

    def _group(
        self, seed: _Pair, valid: dict[_Pair, list[tuple[_Access, int]]]
    ) -> tuple[list[_Pair], dict[SSAValue, int]] | None:
        """The pairs and memrefs linked to `seed` through shared accesses;
        None when they conflict (a memref at two positions, an IV twice)."""
        pairs: list[_Pair] = []
        positions: dict[SSAValue, int] = {}
        ivs: set[SSAValue] = set()
        todo = [seed]
        while todo:
            pair = todo.pop()
            if pair in pairs:
                continue
            if pair.a in ivs or pair.b in ivs:
                return None
            ivs |= {pair.a, pair.b}
            pairs.append(pair)
            for access, p in valid[pair]:
                m = access.memref
                if positions.setdefault(m, p) != p:
                    return None
                for other, found in valid.items():
                    if other not in pairs and any(
                        x.memref is m and q == p for x, q in found
                    ):
                        todo.append(other)
        return pairs, positions


def _collapsed_type(t: MemRefType, p: int) -> MemRefType:
    shape = list(t.get_shape())
    shape[p : p + 2] = [shape[p] * shape[p + 1]]
    return MemRefType(t.element_type, shape)


def _rewrite_access(
    access: _Access, memref_value: SSAValue, p: int, b: SSAValue
) -> None:
    """Replace `access` by one on `memref_value` without result `p + 1` (`b`)."""
    amap = access.map.data
    results = amap.results[: p + 1] + amap.results[p + 2 :]
    operands = list(access.indices)
    dropped = [k < amap.num_dims and v is b for k, v in enumerate(operands)]
    new_map = AffineMap(amap.num_dims, amap.num_symbols, results).drop_dims(
        dropped[: amap.num_dims]
    )
    indices = [v for v, d in zip(operands, dropped) if not d]
    new: LoadOp | StoreOp
    if isinstance(access, xaffine.StoreOp):
        new = StoreOp(access.value, memref_value, indices, AffineMapAttr(new_map))
    else:
        new = LoadOp(memref_value, indices, AffineMapAttr(new_map), access.result.type)
    Rewriter.replace_op(access, new)


def _groups(n: int) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(TensorType(i32, [n]), [1] * n)


def _merge_loops(pair: _Pair) -> None:
    """Make `pair.a`'s loop run over `ea * eb` and remove `pair.b`'s."""
    if pair.a.name_hint and pair.b.name_hint:
        pair.a.name_hint = f"{pair.a.name_hint}_{pair.b.name_hint}"
    extent: AffineExpr = AffineConstantExpr(pair.ea * pair.eb)
    if pair.inner is not None:
        loop = pair.loop
        assert isinstance(loop, xaffine.ForOp)
        loop.properties["upperBoundMap"] = AffineMapAttr(AffineMap(0, 0, (extent,)))
        inner = pair.inner
        for op in list(inner.body.block.ops):
            if isinstance(op, xaffine.YieldOp):
                continue
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(inner))
        Rewriter.erase_op(inner)
        return
    loop = pair.loop
    assert isinstance(loop, xaffine.ParallelOp)
    ia, ib = pair.a.index, pair.b.index
    lo, hi = loop.lowerBoundsMap.data, loop.upperBoundsMap.data
    hi_results = list(hi.results)
    hi_results[ia] = extent
    keep = [k != ib for k in range(len(hi_results))]
    n = sum(keep)
    loop.properties["lowerBoundsMap"] = AffineMapAttr(
        AffineMap(
            lo.num_dims, lo.num_symbols, tuple(e for e, k in zip(lo.results, keep) if k)
        )
    )
    loop.properties["upperBoundsMap"] = AffineMapAttr(
        AffineMap(
            hi.num_dims, hi.num_symbols, tuple(e for e, k in zip(hi_results, keep) if k)
        )
    )
    loop.properties["lowerBoundsGroups"] = _groups(n)
    loop.properties["upperBoundsGroups"] = _groups(n)
    loop.properties["steps"] = ArrayAttr(
        [s for s, k in zip(loop.steps.data, keep) if k]
    )
    loop.body.block.erase_arg(pair.b)


def _retype(fn: func.FuncOp, m: SSAValue, new_type: MemRefType) -> SSAValue:
    """A value of `new_type` standing for memref `m` (a new function
    argument or allocation; `m`'s remaining uses move to it)."""
    owner = m.owner
    if isinstance(owner, Block):
        assert isinstance(m, BlockArgument)
        new = owner.insert_arg(new_type, m.index)
        new.name_hint = m.name_hint
        m.replace_all_uses_with(new)
        owner.erase_arg(m)
        inputs = [a.type for a in owner.args]
        fn.function_type = FunctionType.from_lists(
            inputs, fn.function_type.outputs.data
        )
        return new
    assert isinstance(owner, memref.AllocOp | memref.AllocaOp)
    alloc = type(owner).get(
        new_type.get_element_type(),
        owner.alignment,
        new_type.get_shape(),
        list(owner.dynamic_sizes),
        new_type.layout,
        new_type.memory_space,
    )
    alloc.memref.name_hint = m.name_hint
    Rewriter.insert_op(alloc, InsertPoint.before(owner))
    m.replace_all_uses_with(alloc.memref)
    Rewriter.erase_op(owner)
    return alloc.memref


def _collapse(
    fn: func.FuncOp,
    analysis: _Analysis,
    pairs: list[_Pair],
    positions: dict[SSAValue, int],
) -> None:
    b_of: dict[_Access, SSAValue] = {}
    for pair in pairs:
        for access, _ in analysis.pairs[pair]:
            b_of[access] = pair.b
    for m, p in positions.items():
        t = m.type
        assert isinstance(t, MemRefType)
        accesses = analysis.accesses[m]
        assert accesses is not None
        new_m = _retype(fn, m, _collapsed_type(t, p))
        for access in accesses:
            _rewrite_access(access, new_m, p, b_of[access])
    for pair in pairs:
        _merge_loops(pair)


def collapse_dims(fn: func.FuncOp) -> int:
    """Collapse every pair of `fn` the contract allows; returns how many."""
    count = 0
    while (found := (analysis := _Analysis(fn)).solve()) is not None:
        pairs, positions = found
        _collapse(fn, analysis, pairs, positions)
        count += len(pairs)
    return count


@dataclass(frozen=True)
class CollapseDimsPass(ModulePass):
    """Loops that walk two adjacent whole array dimensions together become one.

    See the module docstring.
    """

    name = "collapse-dims"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if isinstance(fn, func.FuncOp):
                collapse_dims(fn)


__all__ = ["CollapseDimsPass", "collapse_dims"]
