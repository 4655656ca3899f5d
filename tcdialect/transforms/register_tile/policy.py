"""Planning heuristics of `register-tile`: the mode, the unrolled loops, the tile sizes, packing.

`_plan` turns a matched band (`match.py`) into a `_Plan`: mode 1 (vectors
along an output loop `v`, rows along `u`) or mode 2 (vectors along a
reduction loop `r`), the unroll factors, and which loads are packed
(`_pack_pays`, `_rows_pay`, `_rows_alias`, `_hoist_point`). Nothing here
changes the IR.

Defaults (`rows` and `vectors` 0): 16 lanes → MR=8, NV=3 (24 accumulators
of 32 zmm: each step loads MR + NV values for MR * NV FMAs), 8 lanes →
MR=6, NV=2 (12 of 16 ymm), else 4 x 2; mode 2 uses 4 x 4 (16 lanes) or
3 x 3. They shrink to static extents smaller than the tile (NV to the
vectors that cover the extent, the last one masked: 26 columns by 16 lanes
keep NV = 2), and NV grows by one when that covers a static extent in one
strip and MR x NV accumulators still fit in 24 of 32 zmm (12 of 16 ymm): 54
columns by 4 rows are 4 x 4, the last vector masked, instead of 4 x 3 and a
strip of 4 x 1. NV is 2 instead of 3 when strips of 3 would leave a last
strip of one vector and 2 divides the vector count (1024 columns: 32 strips
of 2 vectors instead of 21 of 3 and one of 1); a last strip of 2 is kept.
When the columns are one vector (NV = 1) with 16 lanes and the static row
extent is a multiple of 16, MR is 16 (`ROWS_ONE_VECTOR`): 8 x 1 has just
the 8 FMA chains that two pipes of 4-cycle FMAs need. The measurements
behind these choices are in docs/perf/register-tile.md.
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Operation, SSAValue

from tcdialect.dialects.affine import LoadOp
from tcdialect.transforms.ir_values import defined_outside
from tcdialect.transforms.register_tile.match import (
    _Access,
    _band,
    _Dim,
    _elem_bytes,
    _gatherable,
    _loop_dims,
    _match_statement,
    _panel,
    _Statement,
    _stride,
)

if TYPE_CHECKING:
    from tcdialect.transforms.register_tile.fold import _Finish, _Start


SPLIT_CHAINS = 4
"""Mode 2 keeps at least this many independent vector chains along r (points
x partial vectors per point)."""
ROWS_ONE_VECTOR = 16
"""Mode 1 on 32-register hosts: MR when the columns are one vector (`_factors`)."""


@dataclass
class _Plan:
    outer: Operation
    dims: list[_Dim]
    stmt: _Statement
    mode: int
    vec_iv: SSAValue
    unrolled: list[SSAValue]
    red: list[SSAValue]
    kept: list[SSAValue]
    lanes: int
    factors: list[int]
    deps: dict[SSAValue, set[SSAValue]] = field(default_factory=dict)
    packed: list[Operation] = field(default_factory=list)
    """Mode 1: vector loads shared by all rows (the panel), copied per column
    strip into a contiguous buffer; non-empty makes the column strips outer."""
    gathers: list[Operation] = field(default_factory=list)
    """Packed loads that are strided in the vector IV (copied element-wise)."""
    anchor: Operation | None = None
    """Where the panel is copied once for every column strip (`_hoist_point`;
    None: once per column strip); without a panel, where the rows are
    copied when they are only widened factors (`_Statement.wide_loads`;
    None: after the kept loops)."""
    row_packed: list[Operation] = field(default_factory=list)
    """Mode 1: broadcast loads of the rows that the innermost reduction loop
    walks with a non-unit stride (`A[k, m]`), copied once for all full row
    strips into `buf[strip, r_1 - lb_1, ..., i]` (MR consecutive scalars per
    reduction step)."""
    start: _Start | None = None
    """The loop nest that initialised T, folded into the first tile (`_initial`)."""
    finish: _Finish | None = None
    """The pointwise updates of T after the band, folded into the last tile
    (`_final`)."""
    pair_tails: bool = True
    """Mode 1: pack the masked tail vectors of two rows into one (`_Kernel`)."""
    prefetched: dict[tuple[SSAValue, SSAValue, bool], Operation] = field(
        default_factory=dict[tuple[SSAValue, SSAValue, bool], Operation]
    )
    """Shared by the plans of a module: (enclosing IV, memref, for writing)
    -> the store of the statement whose kernels prefetch it for the IV's
    next iteration (`_Kernel.next_rows`: one statement per row does)."""

    def dim(self, iv: SSAValue) -> _Dim:
        return next(d for d in self.dims if d.iv == iv)


def _plan(
    store: xaffine.StoreOp,
    lanes32: int,
    rows: int,
    vectors: int,
    pack: str,
    fma16: bool = False,
) -> _Plan | None:
    block = store.parent_block()
    loop = block.parent_op() if block is not None else None
    if loop is None or loop.regions[0].blocks[0] is not block:
        return None
    found = _band(loop)
    if found is None:
        return None
    outer, dims = found
    band = {d.iv for d in dims}
    if len(band) != len(dims):
        return None
    stmt = _match_statement(store, band, fma16)
    if stmt is None:
        return None
    target = stmt.target
    # injective target: each subscript linear in at most one band IV, each
    # band IV in at most one subscript
    out: list[SSAValue] = []
    for k in range(len(target.coeffs)):
        if target.nonlinear[k] or len(target.coeffs[k]) > 1:
            return None
        out.extend(target.coeffs[k])
    if len(set(out)) != len(out):
        return None
    order = [d.iv for d in dims]
    out_ivs = [iv for iv in order if iv in out]
    red = [iv for iv in order if iv not in out]
    if not red:
        return None
    accesses = list(stmt.loads.values())
    elem = store.value.type
    assert isinstance(elem, AnyFloat | IntegerType)
    width = elem.bitwidth if isinstance(elem, AnyFloat) else elem.width.data
    lanes = max(1, lanes32 * 32 // width)
    if lanes < 2:
        return None

    # mode 1: vector along an output loop; loads strided in it (`W[n, k]`
    # with `v = n`) are gathered into the packed panel
    extent = {d.iv: d.static_extent() for d in dims}
    last = len(target.coeffs) - 1
    mode = 0
    gathers: list[Operation] = []
    best: tuple[int, int, SSAValue, list[SSAValue], list[Operation]] | None = None
    for pos, iv in enumerate(out_ivs):
        if last < 0 or target.coeffs[last].get(iv) != 1:
            continue
        strided = [op for op, a in stmt.loads.items() if a.unit_last(iv) is False]
        if strided and (
            pack == "never"
            or not all(_gatherable(stmt.loads[op], iv) for op in strided)
        ):
            continue
        broadcast = [a for a in accesses if a.unit_last(iv) is None]
        others = [
            x
            for x in out_ivs
            if x != iv and not any(x in stmt.loads[op].deps() for op in strided)
        ]
        preferred = [x for x in others if any(x in a.deps() for a in broadcast)]
        u_list = (preferred or others)[-1:]
        if strided and not u_list:
            continue
        if strided and pack == "auto":
            # a gathered copy must serve enough row strips (measured: in a
            # 64 x 64 x 128 tile mode 2 is faster); a copy made once before
            # the kept loops serves the rows of all their iterations
            ext = extent[u_list[0]]
            kept_c = [x for x in out_ivs if x != iv and x not in u_list]
            panel_c = [op for op, a in stmt.loads.items() if _panel(a, iv, u_list[0])]
            moved_c = [*u_list, iv, *red]
            anchor, trips = _hoist_point(outer, dims, kept_c, moved_c, panel_c, stmt)
            if anchor is not None:
                ext = None if ext is None or trips is None else ext * trips
            if ext is not None and ext < 16 * (rows or _default_rows(lanes32)):
                continue
        key = (-len(strided), pos)
        if best is None or key > best[:2]:
            best = (key[0], key[1], iv, u_list, strided)
    if best is not None:
        mode = 1
        _, _, vec_iv, u_list, gathers = best
        unrolled = u_list + [vec_iv]
    else:
        r_candidates = [
            iv
            for iv in red
            if any(a.unit_last(iv) for a in accesses)
            and all(a.unit_last(iv) is not False for a in accesses)
            # a reduction shorter than a vector would run only its remainder
            and ((e := extent[iv]) is None or e >= lanes)
        ]
        if not r_candidates:
            return None
        mode = 2
        vec_iv = r_candidates[-1]
        # unroll the (up to two) innermost output loops that loads depend on
        used = [iv for iv in out_ivs if any(iv in a.deps() for a in accesses)]
        unrolled = (used or out_ivs)[-2:]
    kept = [iv for iv in out_ivs if iv not in unrolled]
    # rectangular: no bound in the band uses a tiled or reduction IV
    moved = set(unrolled) | set(red) | {vec_iv}
    for d in dims:
        if d.bound_values() & moved:
            return None
    plan = _Plan(outer, dims, stmt, mode, vec_iv, unrolled, red, kept, lanes, [])
    plan.factors = _factors(plan, lanes32, rows, vectors)
    _compute_deps(plan)
    if mode == 1 and len(unrolled) == 2 and pack != "never":
        u = unrolled[0]
        panel = [op for op, a in stmt.loads.items() if _panel(a, vec_iv, u)]
        if gathers or pack == "always" or _pack_pays(plan, panel):
            plan.packed = panel
            plan.anchor, _ = _hoist_point(
                outer, dims, kept, [*unrolled, *red], panel, stmt
            )
        if plan.factors[0] > 1:
            inner = red[-1]
            rows_packed = [
                op
                for op, a in stmt.loads.items()
                if u in a.deps()
                and vec_iv not in a.deps()
                and (
                    pack == "always"
                    or (inner in a.deps() and not a.unit_last(inner))
                    or _rows_alias(a, u, plan.factors[0])
                    # a 16-bit factor, extended once instead of per step
                    or op in stmt.wide_loads
                )
            ]
            # rows that are only 16-bit factors are extended once, before
            # the kept loops when they do not move them (conv2d's weights)
            hoist = None
            if rows_packed and not plan.packed:
                if all(op in stmt.wide_loads for op in rows_packed):
                    hoist, _ = _hoist_point(
                        outer, dims, kept, [*unrolled, *red], rows_packed, stmt
                    )
            if pack == "always" or _rows_pay(plan) or hoist is not None:
                plan.row_packed = rows_packed
                if hoist is not None:
                    plan.anchor = hoist
    plan.gathers = gathers
    return plan


def _hoist_point(
    outer: Operation,
    dims: list[_Dim],
    kept: list[SSAValue],
    moved: list[SSAValue],
    panel: list[Operation],
    stmt: _Statement,
) -> tuple[Operation | None, int | None]:
    """Where the panel can be copied once for all column strips, and how many
    times that saves: the op before which to copy (None: per column strip,
    as usual) and the product of the trip counts of the loops it hoists over
    (None when one is unknown).

    The copy moves before the kept loops (the band's output loops that are not
    unrolled) when no panel access and no bound of the strip and reduction
    loops (`moved`) uses their IVs, then on out of enclosing serial
    `affine.for` loops while the same holds for their IVs, every value these
    use is defined outside the loop, and nothing in the loop but loads uses
    a panel's memref (kronecker3's `XW2(m, n0, n1, d2) +=! X(m, n0, n1,
    r_n2) * W2(d2, r_n2)`: `W2` gathered once per thread, not per (m, n0))."""
    if not panel:
        return None, None
    uses: set[SSAValue] = set()
    for op in panel:
        uses |= set(stmt.loads[op].operands)
    for d in dims:
        if d.iv in moved:
            uses |= d.bound_values()
    if any(iv in uses for iv in kept):
        return None, None
    uses -= {d.iv for d in dims}
    trips: int | None = 1
    for iv in kept:
        ext = next(d for d in dims if d.iv == iv).static_extent()
        trips = None if ext is None or trips is None else trips * ext
    anchor = outer if kept else None
    memrefs = {op.operands[0] for op in panel}
    loop = outer
    while True:
        block = loop.parent_block()
        parent = block.parent_op() if block is not None else None
        if not isinstance(parent, xaffine.ForOp) or parent.inits:
            break
        if not all(defined_outside(v, parent) for v in uses):
            break
        if any(
            x in memrefs and not isinstance(op, LoadOp | xaffine.LoadOp)
            for op in parent.walk()
            if op is not parent
            for x in op.operands
        ):
            break
        (d,) = _loop_dims(parent) or [None]
        ext = d.static_extent() if d is not None else None
        trips = None if ext is None or trips is None else trips * ext
        anchor = loop = parent
    return anchor, trips


def _rows_pay(plan: _Plan) -> bool:
    """Whether copying strided rows pays: each copy serves at least 4 column
    strips (a static column extent of at least 4 * NV * VL, or an unknown one;
    measured: in a 64 x 64 tile the copy costs more than it saves)."""
    ext = plan.dim(plan.vec_iv).static_extent()
    return ext is None or ext >= 4 * plan.factors[1] * plan.lanes


def _rows_alias(a: _Access, u: SSAValue, rows: int) -> bool:
    """Whether `rows` consecutive rows (values of `u`) of a broadcast load `a`
    crowd into at most two L1 sets: their distance in bytes, a static
    number, is a multiple of 2 KiB (addresses 4 KiB apart share a set of an
    8-way 32 KiB L1, so 8 rows of `A[m, k]` with 1024-float rows take a
    whole set and evict each other and the panel)."""
    t = a.memref.type
    assert isinstance(t, MemRefType)
    stride = _stride(a, u)
    if not stride:
        return False
    sets = 4096 // pymath.gcd(abs(stride) * _elem_bytes(t), 4096)
    return -(-rows // sets) >= 4


def _pack_pays(plan: _Plan, panel: list[Operation]) -> bool:
    """Whether copying the panel pays: its rows are far apart in memory (at
    least 1 KiB: cache-set conflicts) and each copy serves at least 8 row
    strips (a static row extent of at least 8 * MR, or an unknown one)."""
    if not panel:
        return False
    u = plan.unrolled[0]
    ext = plan.dim(u).static_extent()
    if ext is not None and ext < 8 * plan.factors[0]:
        return False
    for op in panel:
        t = op.operands[0].type
        assert isinstance(t, MemRefType)
        shape = t.get_shape()
        if len(shape) < 2 or (shape[-1] >= 0 and shape[-1] * _elem_bytes(t) < 1024):
            return False
    return True


def _default_rows(lanes32: int) -> int:
    """MR for mode 1: 8 x 3 accumulators of 32 zmm, 6 x 2 of 16 ymm, 4 x 2."""
    return 8 if lanes32 >= 16 else 6 if lanes32 >= 8 else 4


def _factors(plan: _Plan, lanes32: int, rows: int, vectors: int) -> list[int]:
    """Unroll factors of `plan.unrolled` (mode 1: [MR, NV] or [NV])."""
    big = lanes32 >= 16
    if plan.mode == 1:
        mr = rows or _default_rows(lanes32)
        if len(plan.unrolled) == 1:
            mr = 1
        elif not rows:
            ext = plan.dim(plan.unrolled[0]).static_extent()
            if ext is not None:
                mr = max(1, min(mr, ext))
        nv = vectors or (3 if big else 2)
        if not vectors:
            ext = plan.dim(plan.vec_iv).static_extent()
            if ext is not None:
                # a partial last vector is masked (26 columns: 16 + 10
                # masked); one vector more than NV covers the extent in one
                # strip when the accumulators still fit (gconv's 54 columns
                # by 4 rows: 4 x 4 instead of 4 x 3 and a strip of 4 x 1,
                # which had half the independent FMA chains for 6 columns)
                need = -(-ext // plan.lanes)
                if need == nv + 1 and mr * need <= (24 if big else 12):
                    nv = need
                nv = max(1, min(nv, need))
                if nv == 3 and need > nv and need % 3 == 1 and need % 2 == 0:
                    # strips of 2 vectors instead of 3 and a last strip of
                    # 1 (MR chains on one column load per step; when the
                    # column strips are the parallel loop, a dispatch of its
                    # own that one thread runs): 1024 columns are 32 strips
                    # of 2 vectors, 56 columns 2 (docs/perf/register-tile.md)
                    nv = 2
                if nv == 1 and big and not rows and mr == _default_rows(lanes32):
                    # one vector of columns: MR = 8 gives 8 FMA chains, just
                    # enough for 2 pipes of 4-cycle FMAs, and a column load
                    # per 8 FMAs; 16 rows when they divide the extent (no
                    # remainder strip) load the column half as often
                    ext = plan.dim(plan.unrolled[0]).static_extent()
                    if ext is not None and ext % ROWS_ONE_VECTOR == 0:
                        mr = ROWS_ONE_VECTOR
        return [nv] if len(plan.unrolled) == 1 else [mr, nv]
    if len(plan.unrolled) == 2:
        defaults = [rows or (4 if big else 3), vectors or (4 if big else 3)]
    else:
        defaults = [rows or (8 if big else 6)][: len(plan.unrolled)]
    out = []
    for iv, f in zip(plan.unrolled, defaults):
        ext = plan.dim(iv).static_extent()
        out.append(max(1, min(f, ext)) if ext is not None else f)
    return out


def _compute_deps(plan: _Plan) -> None:
    """Band IVs each value of e depends on (loads: their subscripts)."""
    stmt = plan.stmt

    def deps(v: SSAValue) -> set[SSAValue]:
        if v in plan.deps:
            return plan.deps[v]
        owner = v.owner
        out: set[SSAValue] = set()
        if isinstance(owner, Operation) and owner in stmt.inner:
            if owner in stmt.loads:
                out = stmt.loads[owner].deps()
            elif not isinstance(owner, arith.ConstantOp):
                for operand in owner.operands:
                    out = out | deps(operand)
        plan.deps[v] = out
        return out

    deps(stmt.expr)
    if stmt.fma is not None:
        deps(stmt.fma[0])
        deps(stmt.fma[1])
