"""Every prefetch `register-tile` emits, and the decision to emit it.

Ownership: no other module of the pass creates a `memref.prefetch`; the
kernel (`kernel.py`) calls in here at fixed points (before its reduction
loops, after each packed-panel or in-place vector load, in mode 2's vector
loops) and these functions decide from the plan and the kernel whether to
emit anything. Later passes may drop some of these hints where they
prefetch the same lines themselves (`prefetch-next-slice`) or where stores
bypass the caches (`nontemporal-stores`); see their contracts. The
measurements behind the constants are in docs/perf/register-tile.md.

Prefetching (mode 1): when all the columns fit one strip, the one reduction
loop `r` has a static extent and a broadcast load read in place walks rows of
at most `PREFETCH_ROW_BYTES` (512) along `r` that change with an outer loop
(`X(m, n, r)` under `m`), each full row strip first prefetches the next
strip's rows, one `memref.prefetch` per 64 bytes of a row plus its last
element::

    memref.prefetch %X[%m, %u0 + MR + i, lb_r + c], read, locality<3>, data

A kernel reading a packed panel of more than `PANEL_MIN_BYTES` (16 KiB, or
of unknown size), which will not stay in L1 from one row strip to the next,
prefetches it `PANEL_AHEAD_BYTES` (768) ahead, rounded up to whole steps,
once per 64-byte line (`_panel_ahead`): matmul 1024²'s 256 x 48 panel::

    %b0 = vector.load %panel[%k, %c0]
    memref.prefetch %panel[%k + 4, %c0], read, locality<3>, data

A vector load read in place from an array of at least `FAR_ARRAY_BYTES`
(1 MiB) that the innermost reduction loop moves by at least
`FAR_STEP_BYTES` (1 KiB) per step is prefetched `FAR_AHEAD_STEPS` (2) steps
ahead, for the first vector of each row (`_Kernel.prefetch_far`):
tensordot's `I0(n, c1, r_c2, h, w)`, a new 3136-byte plane at every step.

Short rows give the hardware prefetcher, which follows long streams, too
little to start on; with several column strips or rows that every outer
iteration reads again they come from cache anyway. Every mode-1 tile with at
least `PREFETCH_TARGET_STEPS` (16) reduction steps also prefetches for
writing its vectors of T at the next iteration of the innermost kept output
loop, when that is at most `PREFETCH_NEXT_BYTES` away (group conv's next
output row), so that the stores do not wait for their lines
(`_Kernel.prefetch_target`).

Prefetching (mode 2): when an enclosing loop `o` outside the band (step 1)
moves a load that walks `r` contiguously by at most `PREFETCH_NEXT_BYTES`
(16 KiB), the vector loops along `r` prefetch that load for `o + 1`, at
their own columns, once per 64 bytes; and, for writing, the stores of `o`'s
body to arrays from outside it whose last subscript is a loop with `r`'s
bounds (a row that a later nest of the same iteration writes)::

    affine.for %n = 0 to 4096 {          // mx, e, s, O share the row loop
      ... affine.for %d = 0 to 1024 step 64 iter_args(...) {
        %x = vector.load %I[%n, %d]
        memref.prefetch %I[%n + 1, %d], read, locality<0>, data
        memref.prefetch %O[%n + 1, %d], write, locality<3>, data
        ...

The hardware prefetcher stops at 4 KiB pages and idles while the row's
other nests work from cache, so without it every row starts with misses
(`_Kernel.next_rows`). Each array is prefetched for `o + 1` by the first
statement that does so (moments2's second row sum does not again). The
reads are prefetched non-temporally (`NEXT_ROW_LOCALITY`).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import affine as xaffine
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineDimExpr,
    AffineSymExpr,
)

from tcdialect.dialects.memref import PrefetchOp
from tcdialect.transforms.ir_values import defined_outside
from tcdialect.transforms.register_tile.builder import _Emitter
from tcdialect.transforms.register_tile.match import (
    _Access,
    _elem_bytes,
    _loop_dims,
    _stride,
    _Val,
)

if TYPE_CHECKING:
    from tcdialect.transforms.register_tile.kernel import _Body, _Kernel


PREFETCH_ROW_BYTES = 512
"""Mode 1: the broadcast rows of the next row strip are prefetched when a
row spans at most this many bytes of the one reduction loop (`_Kernel.prefetch`)."""
PREFETCH_TARGET_STEPS = 16
"""Mode 1: T's vectors for the next kept iteration are prefetched only for
tiles with at least this many reduction steps (`_Kernel.prefetch_target`)."""
PANEL_MIN_BYTES = 16384
"""Mode 1: packed panels of more bytes than this are prefetched ahead in
the reduction loop (`_panel_ahead`)."""
PANEL_AHEAD_BYTES = 768
"""Mode 1: how far ahead, in bytes, a kernel prefetches its packed panel."""
FAR_STEP_BYTES = 1024
"""Mode 1: vector loads read in place that each reduction step moves by at
least this many bytes are prefetched `FAR_AHEAD_STEPS` steps ahead
(`_Kernel.prefetch_far`)."""
FAR_AHEAD_STEPS = 2
FAR_ARRAY_BYTES = 1 << 20
"""Mode 1: `_Kernel.prefetch_far` leaves arrays smaller than this (an L2)
alone: they stay in cache."""
PREFETCH_NEXT_BYTES = 16384
"""Accesses are prefetched for the next iteration of a loop only when it
moves them by at most this many bytes (`_Kernel.next_rows`,
`_Kernel.prefetch_target`)."""
NEXT_ROW_LOCALITY = 0
"""Locality of mode 2's read prefetches: 0, the non-temporal hint
(`prefetchnta` on x86). The next row (at most `PREFETCH_NEXT_BYTES`) is read
in the next iteration and not after it, so it need not be kept in the outer
caches."""


def _panel_ahead(buf: SSAValue, lead: int, offset: int) -> int:
    """Reduction steps ahead at which a kernel prefetches the vector at
    element `offset` of each step of its packed panel `buf` (`lead` leading
    dimensions select the strip); 0 for none.

    A panel (`[*lead, r_1, ..., r_n, count * VL]`, contiguous) that fits in
    half the L1 stays there for all the row strips that reuse it; a bigger
    one (matmul 1024²'s 256 x 48 floats, 48 KiB) streams from L2 at every
    strip, `count` vectors a step, and the L1's own prefetcher fetches them
    late. Prefetching `PANEL_AHEAD_BYTES` ahead (rounded up to whole steps)
    hides that. One prefetch per 64-byte line: only vectors that start one.
    Past the panel's end the addresses are the next strip's panel or past
    the buffer (a prefetch never faults)."""
    t = buf.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()[lead:]
    size = _elem_bytes(t)
    if offset * size % 64 or (
        DYNAMIC_INDEX not in shape and pymath.prod(shape) * size <= PANEL_MIN_BYTES
    ):
        return 0
    return -(-PANEL_AHEAD_BYTES // (shape[-1] * size))


def _next_pays(stride: int | None, t: MemRefType) -> bool:
    """Whether to prefetch the next iteration of a loop (step 1) for an
    access it moves by `stride` elements of `t`."""
    return (
        stride is not None and 0 < abs(stride) * _elem_bytes(t) <= PREFETCH_NEXT_BYTES
    )


@dataclass
class _Ahead:
    """A mode-2 prefetch for the next iteration of an enclosing loop: the
    access, the loop's IV and IV + 1, the access's column IV (replaced by
    the reduction loop's), and whether it is a store's."""

    access: _Access
    iv: SSAValue
    next: SSAValue
    column: SSAValue
    write: bool


def prefetch_rows(kernel: _Kernel, em: _Emitter) -> None:
    """Mode 1, a full row strip, one reduction loop `r` of static extent,
    all columns in one strip: prefetch the lines that the next row strip
    (rows `u0 + MR + i`) will broadcast from, one per cache line of each
    row, before this strip's reduction loop. (With several column strips
    the rows are read again by each, from cache.)

    Only loads read in place (not packed) whose last subscript is `r`
    (coefficient 1), whose other subscripts use `u` and some other value
    (the same rows at every outer iteration stay in cache: `W(d, r)`),
    with rows of at most `PREFETCH_ROW_BYTES`: short rows, each strip
    reading new lines that the hardware prefetcher, which follows long
    streams, fetches late (`XW2(m,n0,n1,d2) +=! X(m,n0,n1,r) * W2(d2,r)`:
    128-byte rows of X, 8 per strip). The addresses are linear, so past the last strip
    they are the next outer iteration's rows (or past the array: a
    prefetch never faults). `prefetch-next-slice` erases these again
    where it fetches the whole slice during other nests (Kronecker3)."""
    plan, rw = kernel.plan, kernel.rw
    rows = [iv for iv in kernel.dims if iv != plan.vec_iv]
    if len(plan.red) != 1 or len(rows) != 1:
        return
    (r,), (u,) = plan.red, rows
    extent = plan.dim(r).static_extent()
    columns = plan.dim(plan.vec_iv).static_extent()
    width = plan.factors[kernel.dims.index(plan.vec_iv)] * plan.lanes
    base, var = kernel.env[u]
    if (
        extent is None
        or columns is None
        or columns > width
        or var.count != plan.factors[kernel.dims.index(u)]
    ):
        return
    first: _Val | None = None
    p0 = kernel.flat_points[0]
    for op, access in kernel.stmt.loads.items():
        t = access.memref.type
        if (
            op in kernel.packed
            or op in rw.row_buffers
            or plan.vec_iv in access.deps()
            or not access.unit_last(r)
            or u not in access.deps() - access.uses(len(access.coeffs) - 1)
            or not set(access.operands) - {u, r}
            or not isinstance(t, MemRefType)
        ):
            continue
        size = _elem_bytes(t)
        if extent * size > PREFETCH_ROW_BYTES:
            continue
        if first is None:
            first = em.bound(plan.dim(r).lb, rw.remap, is_max=True)
        per_line = max(1, 64 // size)
        cols = [
            em.index(em.sym(lambda s0, o=c: s0 + o, first))
            for c in sorted({*range(0, extent, per_line), extent - 1})
        ]
        for i in range(var.count):
            row = em.sym(lambda s0, o=(var.count + i) * var.stride: s0 + o, base)
            for col in cols:
                operands = [
                    row if x == u else col if x == r else kernel.iv_value(x, p0, None)
                    for x in access.operands
                ]
                indices = em.subscripts(access.map, operands)
                em.op(PrefetchOp(access.memref, indices))


def prefetch_target(kernel: _Kernel, em: _Emitter) -> None:
    """Mode 1: before the reduction loops, prefetch for writing the
    vectors of T that the next iteration of the innermost kept output
    loop `k` stores, when `k` moves T by at most `PREFETCH_NEXT_BYTES`.

    A tile's stores read their lines for ownership; the vectors of the
    next `k` lie a short stride away (group conv's next output row, 216
    bytes) and the hardware prefetcher, which follows the loads, does
    not fetch them, so every tile would end stalled on its stores. Only
    with at least `PREFETCH_TARGET_STEPS` reduction steps (unknown extents
    count as enough): a prefetch per vector costs about a step's issue
    slots."""
    plan = kernel.plan
    steps = 1
    for r in plan.red:
        steps *= plan.dim(r).static_extent() or PREFETCH_TARGET_STEPS
    if not plan.kept or steps < PREFETCH_TARGET_STEPS:
        return
    k = plan.kept[-1]
    target = kernel.stmt.target
    t = target.memref.type
    assert isinstance(t, MemRefType)
    if not _next_pays(_stride(target, k), t):
        return
    nxt = em.index(
        em.sym(lambda s0: s0 + 1, kernel.iv_value(k, kernel.flat_points[0], None))
    )
    for p in kernel.flat_points:
        operands = [
            nxt if x == k else kernel.iv_value(x, p, None) for x in target.operands
        ]
        em.op(
            PrefetchOp(target.memref, em.subscripts(target.map, operands), write=True)
        )


def next_rows(kernel: _Kernel, em: _Emitter) -> list[_Ahead]:
    """Mode 2: what to prefetch for the next iteration of an enclosing
    loop `o` (outside the band, step 1), at the columns of `r`.

    Loads: those that walk `r` contiguously and that the nearest
    enclosing loop moving them moves by at most `PREFETCH_NEXT_BYTES`: a
    row loop around a row reduction that other statements share
    (softmax's `mx(n) max=! I(n, r_d)` next to `e(n, d)`, `s(n)`,
    `O(n, d)`). The hardware prefetcher follows a stream within a 4 KiB
    page and idles while the row's other statements work from cache, so
    each row would start with a miss per line; fetching the next row
    while this one streams overlaps the two.

    Stores (for writing), when some load qualifies, with that load's
    `o`: the stores in `o`'s body to arrays from outside it, other than
    T, whose last subscript is the IV of an `affine.for` with the bounds
    of `r` (coefficient 1) and whose other subscripts use only `o` and
    values from outside its body, moved by at most as much: a row written
    later in the same iteration (layernorm's `O(t, b, c)`), whose lines
    would otherwise be read for ownership only when the fast store loop
    reaches them."""
    r = kernel.plan.vec_iv
    out: list[_Ahead] = []
    nxt: dict[SSAValue, SSAValue] = {}
    loops: dict[SSAValue, Operation] = {}

    def ahead(a: _Access, o: SSAValue, column: SSAValue, write: bool) -> None:
        claim = kernel.plan.prefetched.setdefault(
            (o, a.memref, write), kernel.stmt.store
        )
        if claim is not kernel.stmt.store:
            return  # an earlier statement of the iteration prefetches it
        if o not in nxt:
            nxt[o] = em.index(em.sym(lambda s0: s0 + 1, o))
        out.append(_Ahead(a, o, nxt[o], column, write))

    for access in kernel.stmt.loads.values():
        t = access.memref.type
        if not access.unit_last(r) or not isinstance(t, MemRefType):
            continue
        op = kernel.plan.outer.parent_op()
        while op is not None and not isinstance(op, func.FuncOp):
            if isinstance(op, xaffine.ForOp | xaffine.ParallelOp):
                moved = [
                    (iv, _stride(access, iv))
                    for iv in op.body.block.args
                    if iv in access.operands
                ]
                moved = [(iv, st) for iv, st in moved if st != 0]
                if moved:
                    o, stride = moved[-1]
                    if _loop_dims(op) is not None and _next_pays(stride, t):
                        ahead(access, o, r, False)
                        loops[o] = op
                    break
            op = op.parent_op()
    for o, loop in loops.items():
        for store, c in _row_stores(kernel, loop, o):
            ahead(store, o, c, True)
    return out


def _row_stores(
    kernel: _Kernel, loop: Operation, o: SSAValue
) -> list[tuple[_Access, SSAValue]]:
    """The stores of `loop`'s body that `next_rows` prefetches, each with
    its column IV."""
    r = kernel.plan.dim(kernel.plan.vec_iv)
    out: list[tuple[_Access, SSAValue]] = []
    for op in loop.walk():
        if not isinstance(op, xaffine.StoreOp) or op is kernel.stmt.store:
            continue
        t = op.memref.type
        amap = op.map
        assert amap is not None
        last = amap.data.results[-1] if amap.data.results else None
        if (
            op.memref == kernel.stmt.target.memref
            or not isinstance(t, MemRefType)
            or not defined_outside(op.memref, loop)
            or not isinstance(last, AffineDimExpr | AffineSymExpr)
        ):
            continue
        operands = tuple(op.indices)
        c = operands[
            last.position
            + (amap.data.num_dims if isinstance(last, AffineSymExpr) else 0)
        ]
        cloop = c.owner.parent_op() if isinstance(c, BlockArgument) else None
        dims = _loop_dims(cloop) if isinstance(cloop, xaffine.ForOp) else None
        if dims is None or (dims[0].lb, dims[0].ub) != (r.lb, r.ub):
            continue
        a = _Access.of(op.memref, amap.data, operands, {c})
        if (
            a.unit_last(c)
            and all(x in (o, c) or defined_outside(x, loop) for x in operands)
            and _next_pays(_stride(a, o), t)
        ):
            out.append((a, c))
    return out


def prefetch_next(
    kernel: _Kernel, em: _Emitter, ahead: list[_Ahead], at: SSAValue, offset: int
) -> None:
    """Mode 2: prefetch, at the column of the vector `offset` elements
    past `at`, what `next_rows` found, once per 64 bytes."""
    done: set[tuple[SSAValue, tuple[SSAValue, ...]]] = set()
    for x in ahead:
        a = x.access
        t = a.memref.type
        assert isinstance(t, MemRefType)
        if offset * _elem_bytes(t) % 64:
            continue
        for p in kernel.points:
            operands = tuple(
                at
                if v == x.column
                else x.next
                if v == x.iv
                else kernel.iv_value(v, p, None)
                for v in a.operands
            )
            if (a.memref, operands) in done:
                continue
            done.add((a.memref, operands))
            indices = em.subscripts(a.map, operands)
            hint = 3 if x.write else NEXT_ROW_LOCALITY
            em.op(PrefetchOp(a.memref, indices, write=x.write, locality=hint))


def prefetch_far(
    kernel: _Kernel,
    body: _Body,
    access: _Access,
    operands: Sequence[SSAValue],
    p: tuple[int, ...],
) -> None:
    """Mode 1: prefetch a vector load read in place that the innermost
    reduction loop `r` moves by at least `FAR_STEP_BYTES` per step,
    `FAR_AHEAD_STEPS` steps ahead, for the first vector of each row.

    Such a load starts a new short stream at every step (tensordot's
    `I0(n, c1, r_c2, h, w)`: 28-float rows, planes 3136 bytes apart),
    which the hardware prefetcher, tracking each 4 KiB page on its own,
    picks up late. The row's next line is left to the L2's adjacent-line
    prefetcher. Arrays below `FAR_ARRAY_BYTES` stay in cache. Past the last
    step the addresses are the next tile's or past the array (a
    prefetch never faults)."""
    plan = kernel.plan
    if plan.mode != 1 or not plan.red or p[kernel.dims.index(plan.vec_iv)]:
        return
    r = plan.red[-1]
    t = access.memref.type
    assert isinstance(t, MemRefType)
    shape, size = t.get_shape(), _elem_bytes(t)
    stride = _stride(access, r)
    if (
        stride is None
        or abs(stride) * size < FAR_STEP_BYTES
        or DYNAMIC_INDEX in shape  # of unknown size
        or pymath.prod(shape) * size < FAR_ARRAY_BYTES
    ):
        return
    new_r = kernel.rw.remap.get(r, r)
    nxt = body.steps_on(new_r, FAR_AHEAD_STEPS)
    ahead = [nxt if x == new_r else x for x in operands]
    body.em.op(PrefetchOp(access.memref, body.em.subscripts(access.map, ahead)))


def prefetch_panel(
    body: _Body, buf: SSAValue, prefix: list[SSAValue], col: SSAValue, offset: int
) -> None:
    """Mode 1: after the load of the vector at element `offset` of a step of
    the packed panel `buf` (`prefix` selects the strip, `col` is `offset` as
    an index), prefetch the same vector `_panel_ahead` steps on."""
    ahead = _panel_ahead(buf, len(prefix), offset)
    if not ahead:
        return
    rel = body.rel
    assert rel is not None
    nxt = body.steps_on(rel[-1], ahead)
    body.em.op(PrefetchOp(buf, [*prefix, *rel[:-1], nxt, col]))
