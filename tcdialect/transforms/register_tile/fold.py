"""Folding of T's initialisation and pointwise epilogues into `register-tile`'s kernels.

The matching half (`_initial`, `_final`) lives here; the kernels apply what
it found (`_Kernel.accumulators`, `_Kernel.finish`).

Folded initialisation and updates: a perfect nest right before the band
(or before the `affine.for` tile loops around it, constant bounds) that
stores one value `c` into T (`C = 0`), and the perfect nests right after
that update each element of T from itself, other arrays and constants
(`O = O + B[n]`, `O = max(O, 0)`), are folded into the kernels when isl
shows that every tile iteration writes exactly the elements the nest writes
(`tiles_cover`, with the reduction loops' extents left out: a kernel
loads and stores all its points). The kernels of the first tile start from
`c` instead of loading T, those of the last apply the updates before the
store (an `scf.if` on the tile IVs when there are tile loops), and the
nests are erased (`_initial`, `_final`)::

    %r:MR*NV = scf.if %kt_is_0 { yield %c... } else { vector.load %T ... }
    ... reduction loops ...
    %s:MR*NV = scf.if %kt_is_last { O + B, max(.., 0) per vector } else { %r }
    vector.store %s, %T[...]

Each element still sees the initialisation, the band's updates and the
nests' updates in their order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineMap,
    AffineSymExpr,
)

from tcdialect.poly.scop import Scop, tiles_cover
from tcdialect.transforms.register_tile.match import (
    _VECTOR_OPS,
    _Access,
    _loop_dims,
    _only_child,
)

if TYPE_CHECKING:
    from tcdialect.transforms.register_tile.policy import _Plan


@dataclass
class _Start:
    """T's initialisation, folded into the kernels (`_initial`)."""

    nest: Operation
    """The loop nest that stored `value` into T: erased."""
    value: SSAValue
    """The stored value: an `arith.constant` of `nest` (cloned) or a value
    defined before it."""
    first: list[tuple[SSAValue, int]]
    """The tile loops around the band and their constant lower bounds: the
    kernels start from `value` when all are at them, else load T."""


def _nest_statement(nest: Operation) -> list[Operation] | None:
    """The innermost block's ops (its yield left out) of a perfect nest of
    step-1 `affine.for` / `affine.parallel` loops without results, when
    they end in an `affine.store`."""
    op = nest
    if not isinstance(op, xaffine.ForOp | xaffine.ParallelOp):
        return None
    while True:
        if _loop_dims(op) is None:
            return None
        child = _only_child(op.regions[0].blocks[0])
        if not isinstance(child, xaffine.ForOp | xaffine.ParallelOp):
            break
        op = child
    ops = list(op.regions[0].blocks[0].ops)[:-1]
    if not ops or not isinstance(ops[-1], xaffine.StoreOp):
        return None
    return ops


def _initial(plan: _Plan, scop: Scop | None) -> _Start | None:
    """Fold the nest that initialises T into the kernels' first tile.

    Matches a band whose outer op, after the perfectly nested `affine.for`
    tile loops `t` around it (constant lower bounds), directly follows a
    perfect nest storing one value `c` (a constant, or defined before it)
    into T, when `tiles_cover`: every tile iteration writes exactly
    the elements the nest wrote, and the first one runs whenever it wrote.
    The kernels of the first tile then start from `c` instead of loading T
    (an `scf.if` on `t == lb` selects between the two when there are tile
    loops), and the nest is erased: C is no longer zeroed in one pass and
    read back in another::

        affine.for %m ... { affine.for %n ... { affine.store %zero, %C[%m, %n] } }
        affine.for %kt = 0 to 4 { <band: C[m, n] += A[k, m] * B[k, n], k in tile kt> }
    """
    if scop is None:
        return None
    top, first = _tile_chain(plan, 0)
    if first is None:
        return None
    nest = top.prev_op
    while isinstance(nest, arith.ConstantOp):
        nest = nest.prev_op
    if nest is None:
        return None
    ops = _nest_statement(nest)
    if ops is None or not all(isinstance(o, arith.ConstantOp) for o in ops[:-1]):
        return None
    init_store = ops[-1]
    assert isinstance(init_store, xaffine.StoreOp)
    if init_store.memref != plan.stmt.store.memref:
        return None
    value = init_store.value
    owner = value.owner
    if isinstance(owner, Operation) and nest.is_ancestor(owner):
        if not isinstance(owner, arith.ConstantOp):
            return None
    if not _covers(scop, init_store, plan, first):
        return None
    return _Start(nest, value, first)


def _tile_chain(
    plan: _Plan, end: int
) -> tuple[Operation, list[tuple[SSAValue, int]] | None]:
    """The outermost of the perfectly nested `affine.for` loops (step 1)
    around the band (the band's outer op when none), and those loops,
    outermost first, with their first (`end` 0) or last (`end` -1)
    iteration; None when one of these is not a constant."""
    top = plan.outer
    chain: list[tuple[SSAValue, int]] | None = []
    while True:
        block = top.parent_block()
        parent = block.parent_op() if block is not None else None
        if not (
            isinstance(parent, xaffine.ForOp)
            and not parent.inits
            and parent.step.value.data == 1
            and _only_child(parent.body.block) is top
        ):
            return top, chain
        amap = parent.upperBoundMap.data if end else parent.lowerBoundMap.data
        r = amap.results
        one = r[0] if len(r) == 1 else None
        if chain is not None and isinstance(one, AffineConstantExpr):
            chain.insert(0, (parent.body.block.args[0], one.value + end))
        else:
            chain = None
        top = parent


def _covers(
    scop: Scop, other: Operation, plan: _Plan, tiles: list[tuple[SSAValue, int]]
) -> bool:
    """`tiles_cover` for the statement of the store `other` and the
    band's, the tile loops `tiles` at the given iteration."""
    target = plan.stmt.store
    reduction = set(plan.red)
    statements = {s.store: s for s in scop.statements.values()}
    near = statements.get(other)
    stmt = statements.get(target)
    if near is None or stmt is None:
        return False
    depth = 0
    while (
        depth < min(len(near.ivs), len(stmt.ivs)) and near.ivs[depth] == stmt.ivs[depth]
    ):
        depth += 1
    ivs = tuple(iv for iv, _ in tiles)
    if stmt.ivs[depth : depth + len(tiles)] != ivs:
        return False
    # the kernels load and store T at every point of the output loops, also
    # where the reduction loops run zero times
    free = [i for i, iv in enumerate(stmt.ivs) if iv in reduction]
    return tiles_cover(near, stmt, depth, [at for _, at in tiles], free)


@dataclass
class _Epilogue:
    """One pointwise update of T folded into the kernels (`_final`)."""

    nest: Operation
    ops: list[Operation]
    """The innermost block's ops, its `affine.store` of T last."""
    ivs: dict[SSAValue, SSAValue]
    """The nest's IVs → the band IVs that index the same subscript of T."""


@dataclass
class _Finish:
    """T's pointwise updates after the band, folded into the kernels."""

    epilogues: list[_Epilogue]
    last: list[tuple[SSAValue, int]]
    """The tile loops around the band and their last iterations: the
    kernels apply the updates before storing when all are at them."""


def _pointwise(nest: Operation, plan: _Plan, top: Operation) -> _Epilogue | None:
    """`nest` as a pointwise update of the band's target T: a perfect nest
    whose innermost block reads T only at the element it stores, other
    arrays through affine loads (along the vector IV in mode 1: only in the
    last subscript with coefficient 1, or not at all), and otherwise holds
    constants and `_VECTOR_OPS`. Each subscript of both stores is one value:
    an IV of the nest (one per subscript, all of them) where the band's is
    a band IV, else the band's same outer value."""
    target = plan.stmt.store
    ops = _nest_statement(nest)
    if ops is None:
        return None
    store = ops[-1]
    assert isinstance(store, xaffine.StoreOp)
    if store.memref != target.memref:
        return None

    def subscripts(m: AffineMap, operands: Sequence[SSAValue]) -> list[SSAValue]:
        out: list[SSAValue] = []
        for r in m.results:
            if not isinstance(r, AffineDimExpr | AffineSymExpr):
                return []
            pos = r.position + (m.num_dims if isinstance(r, AffineSymExpr) else 0)
            out.append(operands[pos])
        return out

    mine = subscripts(store.map.data, store.indices)
    band = subscripts(target.map.data, target.indices)
    if not mine or len(mine) != len(band) or len(set(mine)) != len(mine):
        return None
    nest_ivs: set[SSAValue] = set()
    for o in nest.walk():
        if isinstance(o, xaffine.ForOp | xaffine.ParallelOp):
            nest_ivs |= set(o.regions[0].blocks[0].args)
    # subscripts: the nest's IVs (one each) or the band's own outer values
    ivs: dict[SSAValue, SSAValue] = {}
    for a, b in zip(mine, band):
        if a in nest_ivs:
            ivs[a] = b
        elif a != b:
            return None
    if set(ivs) != nest_ivs:
        return None
    inner = set(ops)
    band_ivs = {d.iv for d in plan.dims}
    for o in ops[:-1]:
        for v in o.operands:
            owner = v.owner
            if (
                isinstance(owner, Operation)
                and owner not in inner
                and not isinstance(owner, arith.ConstantOp)
                and owner.parent_block() is top.parent_block()
            ):
                # defined after the band (constants are cloned)
                return None
        if isinstance(o, xaffine.LoadOp):
            indices = list(o.indices)
            if o.memref == target.memref:
                if o.map != store.map or indices != list(store.indices):
                    return None
                continue
            if any(v in inner for v in indices):
                return None
            mapped = [ivs.get(v, v) for v in indices]
            if any(v in nest_ivs and v not in ivs for v in indices):
                return None
            if plan.mode == 1:
                access = _Access.of(o.memref, o.map.data, mapped, band_ivs)
                if access.unit_last(plan.vec_iv) is False:
                    return None
            continue
        if isinstance(o, arith.ConstantOp):
            continue
        if o.name not in _VECTOR_OPS or len(o.results) != 1:
            return None
    if store.value.type != target.value.type:
        return None
    return _Epilogue(nest, ops, ivs)


def _final(plan: _Plan, scop: Scop | None) -> _Finish | None:
    """Fold the pointwise updates of T that follow the band into its last tile.

    Matches, after the band and the `affine.for` tile loops `t` around it
    (constant bounds), consecutive perfect nests that each update every
    element of T the band writes from that element, other arrays and
    constants (`_pointwise`), when `tiles_cover` holds for the last
    tile: every tile iteration writes exactly the elements the nest
    updates, and the last one runs whenever the nest does. The kernels of
    the last tile apply the updates to their accumulators before storing
    them (an `scf.if` on `t == last` when there are tile loops); the nests
    are erased, and with them a pass over T each (MLP's bias and ReLU)::

        affine.for %kt = 0 to 4 { <band: O[b, n] += I[b, k] * W[n, k]> }
        affine.for %b ... { affine.for %n ... { O[b, n] = O[b, n] + B[n] } }
        affine.for %b ... { affine.for %n ... { O[b, n] = max(O[b, n], 0) } }

    Each element still sees the band's updates, then the nests' in their
    order: a pointwise update reads and writes only its own element of T.
    """
    if scop is None:
        return None
    top, last = _tile_chain(plan, -1)
    if last is None:
        return None
    epilogues: list[_Epilogue] = []
    nest = top.next_op
    while True:
        while isinstance(nest, arith.ConstantOp):
            nest = nest.next_op
        if nest is None:
            break
        epi = _pointwise(nest, plan, top)
        if epi is None or not _covers(scop, epi.ops[-1], plan, last):
            break
        epilogues.append(epi)
        nest = nest.next_op
    if not epilogues:
        return None
    return _Finish(epilogues, last)
