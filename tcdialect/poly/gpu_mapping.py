"""Mapping a schedule onto a GPU's blocks and threads (TC's steps 9-14).

Contract: `map_schedule(scop, deps, mapping)` returns a schedule tree over
`scop.domain` that respects every dependence in `deps`, whose outermost
bands carry *mapping marks* for code generation (`tcdialect.poly.codegen`):

1. The statements are fused with `mapping.fusion` (the CPU scheduler's
   `_fuse`: `max`, `preserve3coincident` or `min`); a shared outer loop of
   `max` becomes an outermost band of its own. When the options leave the
   strategy to the mapper (None), it is `preserve3coincident`, unless that
   fuses statements by shifting one after the other along a loop that then
   runs in order in one thread (a member neither coincident nor along
   reduction dimensions: softmax's row maximum and `exp` over the row) and
   no fusion (`min`) has no such loop: then `min`, whose separate nests map
   the row onto threads. (The CPU keeps the fused order: one core walks a
   row anyway, and it stays in cache.) When those nests (also those of a
   fusion that leaves several kernels: group normalisation's seven) all
   start with the same rows, depend on each other only within a row and are
   each a reduction or element-wise below the rows, and the rows are
   enough for a block each to fill the GPU (blocks of up to 1024 threads
   where rows are fewer), the rows become one band over the nests instead
   (`_fuse_rows`), on blocks, and each nest of a row runs on the block's
   threads in turn (`_map_rows`): softmax in one kernel that reads each row
   from memory once, not six kernels that read the tensor again each time.
2. Each outermost band is tiled with `mapping.tile` (member `k` by `tile[k]`,
   0 = not tiled), or, when `tile` is None, the innermost `len(block)`
   leading coincident members (those that go to threads) by `DEFAULT_TILE`,
   the outer leading coincident members by 1 (each of their values is a
   tile of its own, for the blocks), the others not at all. When a loop
   runs inside the threads' elements (matmul's `r_k`, with two or more
   thread members), each thread member is tiled by `REGISTER_TILE` times
   its block size instead (a register tile of elements per thread) and the
   first inner member by `DEFAULT_TILE` (the slice of the reduction that a
   block stages in shared memory): matmul with 32 x 8 threads gets
   32 x 128 x 32 tiles. Only where a read is shared by the threads along a
   thread member (`_reused_across`: matmul's `A(m, r_k)` along `n`), so
   that the copies share their loads; and only where those tiles are at
   least as many as the GPU's SMs (`fill // SM_THREADS`): with fewer
   (mlp1's 128 x 128 output makes 4), each thread takes one element and a
   tile is a block's (8 x 32: 64 tiles), and while the tiles are still
   fewer than the SMs the block's outer thread axes halve (2 x 32: 256
   tiles), so that more SMs share the work. Where 128 x 128 tiles are at
   least two per SM, their extents multiples of the tile and the reads
   along x unit-stride (`_square_block`, `_unit_stride_along`: matmul
   4096), the block's threads are 16 x 16, each with 8 x 8 elements
   (`WIDE_REGISTER_TILE`), and the reduction is staged `WIDE_SLICE` at a
   time. A thread member no longer
   than its block, a multiple of `REGISTER_TILE` long, gets a quarter of
   the threads instead, each with a register tile along it
   (`_register_tile_threads`: Kronecker3's 16-long `d2` on 4 threads of 4,
   not 16 of 1), while the block keeps a warp.
   A tile never exceeds its member's extent when that is a known number.
3. The outermost leading coincident members of the tile band go to blocks
   (at most `len(grid)`; further ones stay loops in each block) and the
   innermost leading coincident members of the point band to threads (at
   most `len(block)`; outer ones stay loops in each thread), the innermost
   on `x` in both, so consecutive threads touch consecutive elements of the
   unit-stride subscript (the scheduler puts it innermost). For a grouped
   convolution `O(n, g, f, h, w)` with the default 32 x 8 block: blocks on
   `n, g` (tiles of 1), threads on `h, w` (tiles of 32), `f` a loop in each
   thread; where `h, w` give fewer than `MIN_BLOCK_THREADS` threads
   (5 x 5 at C=F=32 7x7), `f` goes to threads along z too (`_z_threads`:
   5 x 5 x 32, then 5 x 5 x 8 with 4 `f` each as above); where they give
   enough threads but no register tiles (extents that are no multiples of
   the block: a 54 x 54 plane, a 3x3 convolution's 56 x 56), a matmul-like
   band's member outside them that a read is shared along (`f`, a
   convolution's output channels `k`) goes to one thread along z with a
   register tile of 4 of it (`_outer_register_tile`). The mapping is
   cyclic (code generation turns a mapped loop into a loop starting at the
   block or thread index and stepping by the grid or block size), so every
   size is correct.
4. Reductions (TC's `matchLibraryCalls`; `mapping.reductions`, by default
   when the band has at most one leading coincident member, a row
   reduction, or fewer rows (the product of the leading members' extents)
   than would give each a warp of the GPU's `mapping.fill` threads): when
   the member after the leading coincident ones walks only reduction
   dimensions (`_reduces_along`), it goes to the threads along x, a warp of
   them (`WARP`), marked `/reduce`, and the leading members to y and z.
   A block then takes `DEFAULT_TILE` rows, a few per warp along y, halved
   while its blocks hold fewer threads than `mapping.fill`, down to a row
   per warp (`_fill_with_rows`: 16384 rows make 2048 blocks, not 512).
   When all the members after the leading ones walk reduction dimensions,
   the innermost (the unit-stride subscript, whose loads then coalesce)
   is moved first and goes to the warp; the others are loops inside it.
   With few rows, each row is a tile of its own (a block per row, as many
   blocks as rows), and the row's reduction is shared by as many warps as
   fill the GPU and the reduction member has elements for (`_warps`, at most
   32): their totals meet in shared memory. `convert-parallel-loops-to-gpu` turns each such loop
   whose body is one reduction (inside loops of its own or not) into
   per-thread partial results combined across the warp.
5. A band with no leading coincident member is not mapped (its nest runs
   in one thread), unless its first member walks reduction dimensions only
   (a whole-tensor reduction) and reductions are mapped (by default): then
   the warps of one block share it (`/reduce` on `thread_x`, `_warps`).
6. Across blocks (`_split_blocks`): when a whole block per row (or for the
   whole tensor) leaves the GPU's `fill` threads partly idle and each row
   has `MIN_PER_THREAD` elements for every thread of two blocks, the
   blocks along the next free grid axis share each row's reduction too
   (`thread_x=1024/reduce/block_y=132`: as many blocks as fill the GPU, at
   most `grid` along that axis); `convert-parallel-loops-to-gpu` combines
   their totals with atomic updates. Those need the result initialised
   before the kernel starts, so the statements that initialise it leave
   the reduction's band for a nest of their own, first (`_separate_inits`).

The point loops keep the order of the outer schedule. `affine-gpu-map`
then reschedules them inside each tile when `mapping.intra_fusion` is set
and differs from the outer strategy (TC's intra-tile fusion,
`tcdialect.poly.intra_tile.reschedule_tiles`), each new nest marked for
threads as in 3.

A mark is an isl mark node named ``map@<d>:<p>=<n>,...`` above a band whose
first member is at schedule depth `d`: one `<p>=<n>` per member, `p` the
processor (`block_x`, ..., `thread_z`, or `-` for none) and `n` the grid or
block size it wants along that axis: for blocks `grid[axis]`, for threads
`block[axis]` shrunk to the member's tile (or extent) so that no thread is
idle by construction ("launch bounds tightened to what the mapping needs").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl

from tcdialect.backend.cuda.options import MAX_GRID
from tcdialect.poly.schedule import (
    _band_members,
    _fuse,
    _items,
    _member_extent,
    _node,
    _outer_bands,
    _set_band,
    _single_aff,
    _statement_names,
    _tile,
    schedule_context,
)
from tcdialect.poly.scop import Reduction, Scop, reduction_loops

#: The mark prefix (`map@<depth>:...`).
MAP_MARK = "map"
#: The tile size of a leading coincident member when no tile sizes are given:
#: one warp along the unit-stride member.
DEFAULT_TILE = 32
#: Elements per thread along each thread axis when a reduction loop runs
#: inside them (`affine-gpu-register-tile`): each operand that a thread
#: loads then serves REGISTER_TILE multiply-adds, and a 4 x 4 tile of
#: accumulators (16 of the 255 registers a thread may have) leaves room for
#: the operands and addresses on every CUDA GPU.
REGISTER_TILE = 4
#: Elements per thread along each of two thread axes where a matmul-like
#: band has tiles enough (`_square_block`): a thread's 8 + 8 loads from
#: shared memory then serve 64 multiply-adds, 0.25 a multiply-add, which is
#: what an SM's shared memory (32 four-byte words a clock on sm_70 to
#: sm_90) feeds its FMA units (128 a clock) with; 4 x 4 needs 0.5, and the
#: FMA units wait on shared memory half the time. 64 accumulators still
#: leave room for the operands within the 255 registers of a thread.
WIDE_REGISTER_TILE = 8
#: The slice of the reduction a block stages with `WIDE_REGISTER_TILE`
#: tiles: (128 + 128) x 16 four-byte elements, 16 KiB, 32 KiB double
#: buffered, within the 48 KiB of static shared memory of every CUDA GPU.
WIDE_SLICE = 16
#: The threads that share a reduction member: one warp, so that the partial
#: results combine with shuffles within it.
WARP = 32
#: The fewest elements of a reduction that each thread accumulates before a
#: reduction is shared across blocks: a block's total costs a shuffle tree,
#: a barrier and an atomic update, worth it only over several loads a thread.
MIN_PER_THREAD = 8
#: The fusion strategy when the options leave it to the mapper.
DEFAULT_FUSION = "preserve3coincident"
#: The threads an SM holds on sm_80 and sm_90: `fill // SM_THREADS` is the
#: GPU's SMs there (and fewer on the GPUs whose SMs hold fewer threads).
SM_THREADS = 2048
#: Threads in a block on every CUDA GPU.
MAX_THREADS = 1024
#: Threads along z in a block on every CUDA GPU.
MAX_BLOCK_Z = 64
#: The fewest threads a block gets from its x and y members before a third
#: member goes to z (`_z_threads`): four warps, one per scheduler of an SM.
MIN_BLOCK_THREADS = 128
AXES = ("x", "y", "z")


@dataclass(frozen=True)
class GpuMapping:
    """What `map_schedule` needs of `CudaOptions`."""

    #: The fusion strategy; None: the mapper's choice (module docstring).
    fusion: str | None = None
    tile: tuple[int, ...] | None = None
    block: tuple[int, ...] = (32, 8)
    grid: tuple[int, ...] = (MAX_GRID[0], MAX_GRID[1])
    #: Map a reduction member to threads along x (TC's matchLibraryCalls):
    #: True, False, or None for when a band has one parallel member only or
    #: too few rows (see `fill`).
    reductions: bool | None = None
    #: The threads resident on the whole GPU (SMs x threads per SM): a band
    #: with fewer rows than a warp each would fill has its reduction shared.
    fill: int = 132 * 2048
    #: The fusion strategy inside a tile (`tcdialect.poly.intra_tile`);
    #: None, or the outer one: the point loops keep the outer order.
    intra_fusion: str | None = None


@dataclass(frozen=True)
class MemberMap:
    """One band member's processor (`block_x`, `thread_y`, ...) and size;
    `reduce`: the member is a reduction whose values the threads share."""

    processor: str
    size: int
    reduce: bool = False
    #: A reduction member shared across blocks too: the block axis
    #: (`block_x`, ...) and the most blocks along it (`split_size`); the
    #: blocks' totals meet in atomic updates of the result.
    split: str | None = None
    split_size: int = 0


#: Marks a reduction member in a mark (`thread_x=32/reduce`).
REDUCE = "/reduce"


def format_mark(depth: int, members: Sequence[MemberMap | None]) -> str:
    """The mark's name: `map@<depth>:` and one part per member, `-` or
    `<processor>=<size>`, then `/reduce` for a shared reduction and
    `/<block axis>=<blocks>` when the blocks share it too
    (`thread_x=1024/reduce/block_x=264`)."""
    parts = []
    for m in members:
        if m is None:
            parts.append("-")
            continue
        part = f"{m.processor}={m.size}{REDUCE if m.reduce else ''}"
        if m.split is not None:
            part += f"/{m.split}={m.split_size}"
        parts.append(part)
    return f"{MAP_MARK}@{depth}:{','.join(parts)}"


def parse_mark(name: str) -> dict[str, MemberMap]:
    """`map@3:-,thread_x=32` as `{"c4": MemberMap("thread_x", 32)}` (AST
    iterator names); empty for any other mark."""
    if not name.startswith(MAP_MARK + "@"):
        return {}
    depth, members = name[len(MAP_MARK) + 1 :].split(":", 1)
    out: dict[str, MemberMap] = {}
    for i, part in enumerate(members.split(",")):
        if part == "-":
            continue
        first, *flags = part.split("/")
        proc, size = first.split("=")
        split, blocks = None, 0
        for flag in flags:
            if flag != REDUCE[1:]:
                split, n = flag.split("=")
                blocks = int(n)
        reduce = REDUCE[1:] in flags
        out[f"c{int(depth) + i}"] = MemberMap(proc, int(size), reduce, split, blocks)
    return out


def _leading_coincident(node: isl.ScheduleNode) -> int:
    n = 0
    while n < node.band_n_member() and node.band_member_get_coincident(n):
        n += 1
    return n


def _split(node: isl.ScheduleNode, n: int) -> isl.ScheduleNode:
    """`node` with its first `n` members as a band of their own."""
    return node.band_split(n) if 0 < n < node.band_n_member() else node


def _mark(
    node: isl.ScheduleNode,
    kind: str,
    sizes: Sequence[int],
    limits: Sequence[int],
    first_axis: int = 0,
) -> isl.ScheduleNode:
    """Mark the innermost of `node`'s members (all of them coincident) for
    `kind` (`block` or `thread`), the innermost on axis `first_axis` (x
    unless x holds a reduction), as many as `limits` has axes from there."""
    n = node.band_n_member()
    mapped = max(0, min(n, len(limits) - first_axis))
    members: list[MemberMap | None] = [None] * (n - mapped)
    for k in range(n - mapped, n):
        axis = first_axis + n - 1 - k
        size = limits[axis] if sizes[k] <= 0 else min(limits[axis], sizes[k])
        members.append(MemberMap(f"{kind}_{AXES[axis]}", max(1, size)))
    if mapped == 0:
        return node
    depth = node.get_schedule_depth()
    return node.insert_mark(isl.Id(format_mark(depth, members))).child(0)


def _few_rows(node: isl.ScheduleNode, lead: int, mapping: GpuMapping) -> bool:
    """Whether the band's rows (its `lead` leading members) are too few for
    a warp each to fill the GPU while each row reduces over more elements
    than there are rows (group normalisation's 1024 rows of 36864): then
    each row's reduction is shared by a warp of a block of its own. (A small
    matmul, with more outputs than terms per output, keeps a thread per
    output.) Unknown extents are never few."""
    extents = [_member_extent(node, k) for k in range(node.band_n_member())]
    names, below = _statement_names(node), node.child(0)
    while below.get_type() == isl.schedule_node_type.band:
        if _statement_names(below) != names:
            break  # (the loops below the band that are the reduction's own)
        extents += [_member_extent(below, k) for k in range(below.band_n_member())]
        below = below.child(0)
    if any(e is None or e <= 0 for e in extents):
        return False
    rows = math.prod(e for e in extents[:lead] if e is not None)
    length = math.prod(e for e in extents[lead:] if e is not None)
    return rows * WARP <= mapping.fill and length >= rows


def _absorb_reductions(
    node: isl.ScheduleNode, scop: Scop, reductions: dict[str, Reduction]
) -> isl.ScheduleNode:
    """Band `node` with the bands below it merged in while they schedule the
    same statements and walk reduction dimensions only (the reduction's
    loops, which isl may split into several bands, in one band: reordering
    them, like sharing them among threads, relies on the reduction being
    associative and commutative)."""
    names = _statement_names(node)
    while True:
        child = node.child(0)
        if (
            child.get_type() != isl.schedule_node_type.band
            or _statement_names(child) != names
            or not all(
                _reduces_along(child, k, scop, reductions)
                for k in range(child.band_n_member())
            )
        ):
            return node
        pm, coincident = _band_members(node)
        inner, _ = _band_members(child)
        merged = pm.flat_range_product(inner)
        node = child.delete().parent().delete()
        node = _set_band(node, merged, [*coincident, *[False] * child.band_n_member()])


def _permute(node: isl.ScheduleNode, order: Sequence[int]) -> isl.ScheduleNode:
    """The permutable band `node` with its members in `order`."""
    pm, coincident = _band_members(node)
    members = isl.UnionPwAffList.alloc(node.get_ctx(), len(order))
    for k in order:
        members = members.add(pm.get_union_pw_aff(k))
    permuted = isl.MultiUnionPwAff.from_union_pw_aff_list(pm.get_space(), members)
    return _set_band(node.delete(), permuted, [coincident[k] for k in order])


def _reused_across(
    node: isl.ScheduleNode,
    members: Sequence[int],
    scop: Scop,
    reductions: dict[str, Reduction],
) -> bool:
    """Whether some reduction statement of band `node` reads a tensor
    element that the threads along one of `members` share: a read whose subscripts do not
    involve the statement dims that member walks (matmul's `A(m, r_k)` is
    the same for every thread along `n`). Register tiles pay only then: a
    thread's copies share the loads (layer normalisation's `I(t, b, c)` is
    every thread's own)."""
    pm = node.band_get_partial_schedule()
    for name in _statement_names(node):
        if name not in reductions:
            continue
        stmt = scop.statements[name]
        walked: list[set[int]] = []
        for k in members:
            aff = _single_aff(pm.get_union_pw_aff(k), stmt.domain)
            if aff is None:
                return False
            walked.append(
                {
                    d
                    for d in range(len(stmt.dims))
                    if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()
                }
            )
        for access in stmt.accesses:
            if access.kind != "read":
                continue
            used = {
                d
                for d in range(len(stmt.dims))
                if access.map.involves_dims(isl.dim_type.in_, d, 1)
            }
            if any(dims and not dims & used for dims in walked):
                return True
    return False


def _reduces_along(
    node: isl.ScheduleNode, k: int, scop: Scop, reductions: dict[str, Reduction]
) -> bool:
    """Whether member `k` of band `node` walks reduction dimensions only: for
    every statement it is either constant (an initialisation) or a function
    of that statement's reduction dims alone, and some statement reduces
    along it."""
    upa = node.band_get_partial_schedule().get_union_pw_aff(k)
    some = False
    for name in _statement_names(node):
        stmt = scop.statements[name]
        aff = _single_aff(upa, stmt.domain)
        if aff is None:
            return False
        dims = [
            d
            for d in range(len(stmt.dims))
            if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()
        ]
        if not dims:
            continue
        red = reductions.get(name)
        if red is None or not set(dims) <= set(red.dims):
            return False
        some = True
    return some


def _map_band(
    node: isl.ScheduleNode,
    mapping: GpuMapping,
    scop: Scop,
    reductions: dict[str, Reduction],
) -> isl.ScheduleNode:
    """Tile and mark the outermost band `node`; returns a node of the tree."""
    lead = _leading_coincident(node)
    n = node.band_n_member()
    if mapping.reductions is not None:
        want = mapping.reductions
    else:
        want = lead <= 1 or _few_rows(node, lead, mapping)
    if lead == 0:
        # A whole-tensor reduction: the threads of one block share it.
        if not (want and _reduces_along(node, 0, scop, reductions)):
            return node
        first = _split(node, 1)
        extents = [_member_extent(first, 0)]
        warps = _warps(extents, 0, mapping)
        member = MemberMap("thread_x", WARP * warps, True)
        blocks = _split_blocks(extents, 0, warps, mapping, 0)
        if blocks > 1:
            member = MemberMap("thread_x", WARP * warps, True, "block_x", blocks)
        mark = format_mark(first.get_schedule_depth(), [member])
        return first.insert_mark(isl.Id(mark)).child(0)
    if not node.band_get_permutable():
        return node
    reduce = want and lead < n and _reduces_along(node, lead, scop, reductions)
    if reduce and all(
        _reduces_along(node, k, scop, reductions) for k in range(lead + 1, n)
    ):
        node = _absorb_reductions(node, scop, reductions)
        n = node.band_n_member()
        # the warp walks the innermost reduction member (the unit-stride
        # subscript, so that its loads coalesce), the others loop inside it
        node = _permute(node, [*range(lead), n - 1, *range(lead, n - 1)])
    extents = [_member_extent(node, k) for k in range(n)]
    few = reduce and _few_rows(node, lead, mapping)
    # The innermost leading members go to threads (y and z only when x
    # shares a reduction), the others to blocks only.
    threads = min(lead, len(mapping.block) - (1 if reduce else 0))
    # One parallel member for the threads: the whole block along x (32x8
    # threads become 256 along x, each a tile's element), not x alone.
    limits = mapping.block
    if mapping.tile is None and not reduce and threads == 1:
        limits = (math.prod(mapping.block),)
    elif mapping.tile is None and not reduce and threads == len(limits) == 2:
        z = _z_threads(extents, lead, limits, mapping.fill // SM_THREADS)
        if z > 1:
            limits, threads = (*limits, z), 3
        elif _outer_register_tile(node, extents, lead, limits, scop, reductions):
            # one thread along z, whose register tile takes 4 of the member
            # (a convolution's output channels k)
            limits, threads = (*limits, 1), 3
    # A reduction loop inside each thread's elements (matmul's r_k): each
    # thread takes a register tile of REGISTER_TILE elements along each
    # thread axis, and the block stages DEFAULT_TILE of the reduction at a
    # time (in shared memory when promoted).
    gemm = (
        not reduce
        and threads >= 2
        and lead < n
        and _reused_across(node, range(lead - threads, lead), scop, reductions)
    )
    if mapping.tile is None:
        sizes = [
            (limits[0] if threads == 1 and not reduce else DEFAULT_TILE)
            if k >= lead - threads and not few and k < lead
            else (1 if k < lead else 0)
            for k in range(n)
        ]
        if gemm:
            # a register tile per thread, unless its tiles would be fewer
            # than the GPU's SMs (mlp1's 128 x 128 output: 4 tiles of
            # 32 x 128): then an element per thread, tiles of a block
            sms = mapping.fill // SM_THREADS
            square = (
                _square_block(extents, lead, threads, limits, sms)
                if _unit_stride_along(node, lead - 1, scop, reductions)
                else None
            )
            tiled = _register_tile_threads(extents, lead, threads, limits)
            per = [REGISTER_TILE * tiled[axis] for axis in range(threads)]
            if square is not None:
                limits = square
                per = [WIDE_REGISTER_TILE * b for b in square[:threads]]
            elif _tiles(extents, lead, per) < sms:
                per = list(limits[:threads])
            else:
                limits = tiled
            # still fewer (the embedding bag's 128 x 64 outputs): narrower
            # blocks, halving the outer thread axes (x keeps its warp)
            axis = threads - 1
            while axis > 0 and _tiles(extents, lead, per) < sms:
                if per[axis] > 1:
                    per[axis] = -(-per[axis] // 2)
                else:
                    axis -= 1
            for axis in range(threads):
                sizes[lead - 1 - axis] = per[axis]
            sizes[lead] = DEFAULT_TILE if square is None else WIDE_SLICE
        if reduce and not few and threads == 1:
            _fill_with_rows(sizes, extents, lead, mapping)
    else:
        sizes = [*mapping.tile[:n], *[0] * (n - len(mapping.tile))]
    sizes = [
        min(t, e) if t and e is not None and e > 0 else t
        for t, e in zip(sizes, extents)
    ]
    # What each leading point member spans: its tile, else its extent (0: unknown).
    spans = [sizes[k] or (extents[k] or 0) for k in range(lead)]
    tiled = _tile(node, sizes)
    point = node
    grid = 0
    if tiled is not None:
        # The tile band holds the tiled members; its outermost leading
        # coincident ones go to blocks (a grid size is always the option's:
        # tiles are many), the others stay loops in each block.
        n_tiled = tiled.band_n_member()
        grid = min(_leading_coincident(tiled), len(mapping.grid))
        point = tiled.child(0)
        if grid:
            blocks = _mark(_split(tiled, grid), "block", [0] * grid, mapping.grid)
            point = blocks.child(0)
            if grid < n_tiled:
                point = point.child(0)
    point = _split(point, lead)
    if not reduce:
        return _mark(point, "thread", spans, limits)
    # Threads along x share the reduction member (a warp: the reduction is
    # combined with shuffles); the parallel members go to y and z.
    limits = [WARP]
    room = MAX_THREADS // WARP  # the block's threads along y and z
    for b in mapping.block[1:]:
        limits.append(max(1, min(b, room)))
        room //= limits[-1]
    point = _mark(point, "thread", spans, limits, first_axis=1)
    rest = _split(point.child(0), 1)
    # (several warps along x only while a block holds one row: the warps'
    # totals meet in one shared buffer per block)
    alone = few and all(span == 1 for span in spans)
    warps = _warps(extents, lead, mapping) if alone else 1
    member = MemberMap("thread_x", WARP * warps, True)
    # the next block axis after the rows' (`grid` of them) may share the
    # row's reduction too
    blocks = _split_blocks(extents, lead, warps, mapping, grid) if alone else 1
    if blocks > 1:
        member = MemberMap(
            "thread_x", WARP * warps, True, f"block_{AXES[grid]}", blocks
        )
    mark = format_mark(rest.get_schedule_depth(), [member])
    return rest.insert_mark(isl.Id(mark)).child(0)


def _fill_with_rows(
    sizes: list[int],
    extents: Sequence[int | None],
    lead: int,
    mapping: GpuMapping,
) -> None:
    """Halve the rows of a block of a warp-shared row reduction (`sizes[lead -
    1]`, `DEFAULT_TILE`, each warp along y walking several rows) while its
    blocks hold fewer threads than fill the GPU (`mapping.fill`), down to a
    row per warp (the block's y extent): the same work per warp, but twice
    the warps resident, and so twice the loads in flight, which is what a
    row sum waits on (16384 rows of 4096: 512 blocks of 8 warps, half the
    GPU's warp slots, become 2048)."""
    rows = min(mapping.block[1], MAX_THREADS // WARP) if len(mapping.block) > 1 else 1
    threads = WARP * rows
    tile = sizes[lead - 1]
    while tile // 2 >= rows and _tiles(extents, lead, [tile]) * threads < mapping.fill:
        tile //= 2
    sizes[lead - 1] = tile


def _outer_register_tile(
    node: isl.ScheduleNode,
    extents: Sequence[int | None],
    lead: int,
    limits: Sequence[int],
    scop: Scop,
    reductions: dict[str, Reduction],
) -> bool:
    """Whether the leading member outside the two that go to threads (a
    convolution's output channel `k`, outside `h, w`) should go to threads
    along z as one thread with a register tile of `REGISTER_TILE` of it: a
    reduction runs inside the band, the member's extent is a known multiple
    of `REGISTER_TILE`, a read is shared along it (the convolution's input
    `I(n, r_c, h + r_kh, w + r_kw)`, the same for every `k`), and the two
    thread members' own register tiles hold at most `REGISTER_TILE`
    elements together (Kronecker3's mode products, 4 x 4 or 4 x 2 already,
    would hold 64 or 32 accumulators a thread). Why: otherwise each block
    takes one `k`, and every input element a thread loads serves one
    multiply-add; with 4 `k` a thread, it serves 4."""
    if lead < 3 or lead >= node.band_n_member():
        return False
    e = extents[lead - 3]
    if e is None or e <= 0 or e % REGISTER_TILE:
        return False

    def factor(axis: int) -> int:
        # a thread's elements along the axis, when the register tile pass
        # can take them at once (tiles that divide the extent, the block
        # dividing the tile); 1 otherwise
        x, b = extents[lead - 1 - axis], limits[axis]
        if x is None:
            return 1
        if x <= b:
            return REGISTER_TILE if x % REGISTER_TILE == 0 else 1
        t = min(REGISTER_TILE * b, x)
        return t // b if x % t == 0 and t % b == 0 else 1

    if factor(0) * factor(1) > REGISTER_TILE:
        return False
    return _reused_across(node, [lead - 3], scop, reductions)


def _square_block(
    extents: Sequence[int | None],
    lead: int,
    threads: int,
    limits: Sequence[int],
    sms: int,
) -> tuple[int, ...] | None:
    """The block of a matmul-like band with two thread axes whose threads
    take `WIDE_REGISTER_TILE` x `WIDE_REGISTER_TILE` elements each: the
    block's threads (`limits`' x times y: 32 x 8) as near a square as powers
    of two allow (16 x 16), x the wider. Only where both thread members'
    extents are known multiples of their tiles (a register tile takes whole
    tiles) and the tiles (128 x 128 from 16 x 16 threads) number at least
    two per SM (such a block holds 64 accumulators a thread, so an SM fits
    about two): matmul 4096 makes 1024, tmm's 128 x 16384 output 128, which
    keeps 4 x 4 tiles. None otherwise. The caller also asks that the reads
    along x be unit-stride (`_unit_stride_along`)."""
    if threads != 2:
        return None
    count = limits[0] * limits[1]
    x = 1 << (count.bit_length() // 2)
    if count % x:
        return None
    block = (x, count // x)
    per = [WIDE_REGISTER_TILE * b for b in block]
    for axis in range(2):
        e = extents[lead - 1 - axis]
        if e is None or e <= 0 or e % per[axis]:
            return None
    if _tiles(extents, lead, per) < 2 * sms:
        return None
    return (*block, *limits[2:])


def _unit_stride_along(
    node: isl.ScheduleNode,
    member: int,
    scop: Scop,
    reductions: dict[str, Reduction],
) -> bool:
    """Whether every read of the reduction statements of band `node` that
    varies along `member` (the one on threads along x) varies in its last,
    unit-stride subscript only: matmul's `B(r_k, n)` along `n`, not MLP's
    `W(n, r_m)`, which the threads along x read a row apart. `_square_block`
    narrows x to 16 threads, and a read across rows made it slower than the
    32 x 8 block on an H100."""
    pm = node.band_get_partial_schedule()
    for name in _statement_names(node):
        if name not in reductions:
            continue
        stmt = scop.statements[name]
        aff = _single_aff(pm.get_union_pw_aff(member), stmt.domain)
        if aff is None:
            return False
        walked = [
            d
            for d in range(len(stmt.dims))
            if not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero()
        ]
        for access in stmt.accesses:
            if access.kind != "read":
                continue
            n_out = access.map.dim(isl.dim_type.out)
            for j in range(n_out - 1):
                sub = access.map.project_out(
                    isl.dim_type.out, j + 1, n_out - j - 1
                ).project_out(isl.dim_type.out, 0, j)
                if any(sub.involves_dims(isl.dim_type.in_, d, 1) for d in walked):
                    return False
    return True


def _register_tile_threads(
    extents: Sequence[int | None],
    lead: int,
    threads: int,
    limits: Sequence[int],
) -> tuple[int, ...]:
    """The block of a matmul-like band: `limits`, except that a thread axis
    no longer than its block (each thread would take one element along it)
    whose extent is a multiple of `REGISTER_TILE` gets extent /
    `REGISTER_TILE` threads, each a register tile of `REGISTER_TILE`
    elements, while the block keeps at least a warp. Why: a thread's
    multiply-adds per load from shared memory grow with its register tile
    along every axis (T_x * T_y of them for T_x + T_y loads); with one
    element along x, Kronecker3's 16-long `d2` on 16 threads did 4 per 5
    loads, where 4 threads of 4 elements do 16 per 8."""
    out = list(limits)
    for axis in range(threads):
        e = extents[lead - 1 - axis]
        if e is None or e > out[axis] or e % REGISTER_TILE or e == REGISTER_TILE:
            continue
        fewer = e // REGISTER_TILE
        block = fewer
        for other in range(threads):
            if other != axis:
                o = extents[lead - 1 - other]
                block *= out[other] if o is None else min(out[other], o)
        if block >= WARP:
            out[axis] = fewer
    return (*out[:threads], *limits[threads:])


def _z_threads(
    extents: Sequence[int | None], lead: int, limits: Sequence[int], sms: int
) -> int:
    """Threads along z for the leading member outside the two on x and y,
    when those two give a block fewer than `MIN_BLOCK_THREADS` threads (a
    grouped convolution's 5 x 5 output plane: 25 threads, most of each SM
    idle) and the members outside it still give the `sms` SMs a block each:
    the largest power of two within that member's extent, CUDA's 64 along z
    and `MAX_THREADS` in all (the 7x7 convolution's `f` of 32: 32, 5 x 5 x 32
    threads, n x g = 1024 blocks); 1 when the extents are not numbers or the
    block is big enough."""
    if lead < 3 or any(e is None for e in extents[:lead]):
        return 1
    if math.prod(e for e in extents[: lead - 3] if e is not None) < sms:
        return 1
    w, h, outer = (extents[lead - 1], extents[lead - 2], extents[lead - 3])
    assert w is not None and h is not None and outer is not None
    plane = min(w, limits[0]) * min(h, limits[1])
    if plane >= MIN_BLOCK_THREADS:
        return 1
    z = 1
    while z * 2 <= min(outer, MAX_BLOCK_Z, MAX_THREADS // max(1, plane)):
        z *= 2
    return z


def _tiles(extents: Sequence[int | None], lead: int, per: Sequence[int]) -> float:
    """The tiles of a band whose `lead` leading members are tiled by 1 except
    the innermost `len(per)`, tiled by `per` (innermost first); unknown
    extents count as many."""
    count = 1
    for k in range(lead):
        e = extents[k]
        if e is None:
            return math.inf
        axis = lead - 1 - k
        count *= -(-e // per[axis]) if axis < len(per) else e
    return count


def _warps(extents: Sequence[int | None], lead: int, mapping: GpuMapping) -> int:
    """The warps that share each row's reduction when rows are few: enough
    for the rows' blocks to fill the GPU, no more than the reduction member
    (the one the threads walk) has elements for, at most a block's worth;
    a power of two (their totals combine in a butterfly)."""
    rows = math.prod(e or 1 for e in extents[:lead])
    walked = extents[lead] or MAX_THREADS  # (unknown: as long as a block)
    want = min(MAX_THREADS // WARP, mapping.fill // (rows * WARP), -(-walked // WARP))
    warps = 1
    while warps * 2 <= want:
        warps *= 2
    return warps


def _split_blocks(
    extents: Sequence[int | None],
    lead: int,
    warps: int,
    mapping: GpuMapping,
    axis: int,
) -> int:
    """The most blocks along grid `axis` that share each row's reduction
    (besides the `warps` of each block): 1 unless a whole block per row
    (`MAX_THREADS`) leaves the GPU's `fill` threads partly idle and the
    row's reduction member has at least `MIN_PER_THREAD` elements for each
    thread of two blocks (or an unknown extent); then as many blocks as
    fill the GPU, at most `grid[axis]` (so `grid` tunes it, and a grid of
    fewer axes has none to spare). `convert-parallel-loops-to-gpu` launches
    fewer when the row is short, and combines the blocks' totals with
    atomic updates."""
    if warps * WARP < MAX_THREADS or axis >= len(mapping.grid):
        return 1
    rows = math.prod(e or 1 for e in extents[:lead])
    walked = extents[lead]
    if walked is not None and walked < 2 * MAX_THREADS * MIN_PER_THREAD:
        return 1
    return max(1, min(-(-mapping.fill // (rows * MAX_THREADS)), mapping.grid[axis]))


def _separate_inits(
    node: isl.ScheduleNode,
    mapping: GpuMapping,
    scop: Scop,
    deps: isl.UnionMap,
    reductions: dict[str, Reduction],
) -> isl.ScheduleNode:
    """Outermost band `node`, or a sequence above two copies of it: the
    statements that initialise a reduction's result first, then the
    reduction, when its rows are few and long enough for blocks to share
    each row (`_split_blocks`: the GPU holds more than a block per row, and
    a row has `MIN_PER_THREAD` elements for each thread of two blocks).
    Blocks that share a row combine their totals with atomic updates, which
    must find the result initialised: by a kernel of its own, launched
    before. Only a band of one reduction that blocks can share (not a
    product: no atomic) and statements that write its result without
    reading it, none of them after the reduction (no dependence from it:
    an overwrite stays after), qualifies."""
    lead = _leading_coincident(node)
    names = _statement_names(node)
    red = [n for n in names if n in reductions]
    if (
        mapping.reductions is False
        or mapping.tile is not None
        or not 0 < lead < node.band_n_member()
        or lead >= len(mapping.grid)
        or len(red) != 1
        or len(names) == 1
        or not node.band_get_permutable()
        or not _reduces_along(node, lead, scop, reductions)
        or not _few_rows(node, lead, mapping)
    ):
        return node
    stmt = scop.statements[red[0]]
    if reductions[red[0]].op in ("arith.mulf", "arith.muli"):
        return node
    (result,) = [a.array for a in stmt.accesses if a.op is stmt.store]
    after = deps.intersect_domain(isl.UnionSet.from_set(stmt.domain))
    for name in names:
        other = scop.statements[name]
        if name != red[0] and (
            any(
                (a.array == result and a.op is not other.store)
                or (a.op is other.store and a.array != result)
                for a in other.accesses
            )
            or not after.intersect_range(isl.UnionSet.from_set(other.domain)).is_empty()
        ):
            return node  # reads the result, writes something else, or follows
    extents = [_member_extent(node, k) for k in range(node.band_n_member())]
    rows = math.prod(e or 1 for e in extents[:lead])
    length = math.prod(e or 1 for e in extents[lead:])
    if rows * MAX_THREADS >= mapping.fill or length < 2 * MAX_THREADS * MIN_PER_THREAD:
        return node
    domain = node.get_domain()
    first = domain.subtract(isl.UnionSet.from_set(stmt.domain))
    second = domain.intersect(isl.UnionSet.from_set(stmt.domain))
    filters = isl.UnionSetList.alloc(node.get_ctx(), 2).add(first).add(second)
    return node.insert_sequence(filters)


def _fuse_rows(
    schedule: isl.Schedule,
    deps: isl.UnionMap,
    mapping: GpuMapping,
    scop: Scop,
    reductions: dict[str, Reduction],
) -> tuple[isl.Schedule, int] | None:
    """The unfused `schedule` (a sequence of nests) with the outer members
    that every nest starts with (its first `k` leading coincident ones, the
    same rows: softmax's `n`, layer normalisation's `t, b`) made one band
    above the sequence, and the threads of a row's block, when every
    dependence stays within a row (each row's nests then run in order, one
    row after another or at once), each nest below the rows is a reduction
    (all its members walk reduction dimensions) or element-wise (all
    coincident), and the rows are enough for a block each to fill the GPU
    (`_row_threads`); else None. Each row's reductions and element-wise
    nests then run in one kernel, one block per row (`_map_rows`), where the
    row's data is still in cache, instead of a kernel per nest that reads
    the whole tensor again. (A contraction below the rows is left to the
    tiled mapping of 2-3, which shares its operands.)"""
    seq = schedule.get_root().child(0)
    if (
        seq.get_type() != isl.schedule_node_type.sequence
        or seq.n_children() < 2
        or any(
            seq.child(i).child(0).get_type() != isl.schedule_node_type.band
            for i in range(seq.n_children())
        )
    ):
        return None
    bands = [seq.child(i).child(0) for i in range(seq.n_children())]
    k = min(_leading_coincident(b) for b in bands)
    if k == 0:
        return None
    for b in bands:
        inner = range(k, b.band_n_member())
        if not all(b.band_member_get_coincident(j) for j in inner) and not all(
            _reduces_along(b, j, scop, reductions) for j in inner
        ):
            return None
    rows: list[isl.UnionPwAff] = []
    for j in range(k):
        upa = bands[0].band_get_partial_schedule().get_union_pw_aff(j)
        for b in bands[1:]:
            upa = upa.union_add(b.band_get_partial_schedule().get_union_pw_aff(j))
        rows.append(upa)
    space = bands[0].band_get_partial_schedule().get_space()
    space = space.drop_dims(isl.dim_type.set, k, space.dim(isl.dim_type.set) - k)
    members = isl.UnionPwAffList.alloc(seq.get_ctx(), k)
    for upa in rows:
        members = members.add(upa)
    partial = isl.MultiUnionPwAff.from_union_pw_aff_list(space, members)
    as_map = isl.UnionMap.from_multi_union_pw_aff(partial)
    moved = deps.apply_domain(as_map).apply_range(as_map).deltas()
    for delta in _items(moved.get_set_list()):
        zero = isl.Set.universe(delta.get_space())
        for j in range(k):
            zero = zero.fix_dim_si(j, 0)
        if not delta.is_subset(zero):
            return None
    extents = [_member_extent(bands[0], j) for j in range(k)]
    if any(e is None for e in extents):
        return None
    threads = _row_threads(mapping, math.prod(e for e in extents if e is not None))
    if threads is None:
        return None
    for i in range(seq.n_children()):
        band = seq.child(i).child(0)
        band = _split(band, k).delete()
        seq = band.parent().parent()
    band = seq.insert_partial_schedule(partial)
    band = band.band_set_permutable(1)
    for j in range(k):
        band = band.band_member_set_coincident(j, 1)
    return band.get_schedule(), threads


def _row_threads(mapping: GpuMapping, rows: int) -> int | None:
    """Threads of a block that walks one of `rows` rows (`_map_rows`): the
    block's (`math.prod(block)`, 256 by default) as a power of two, at least
    a warp (the reductions' butterflies want one), doubled up to
    `MAX_THREADS` while the rows' blocks hold fewer than the GPU's `fill`
    threads (moments' 1024 rows get 512); None when even `MAX_THREADS`
    leave it partly idle."""
    threads = WARP
    while threads * 2 <= min(MAX_THREADS, math.prod(mapping.block)):
        threads *= 2
    while rows * threads < mapping.fill and threads < MAX_THREADS:
        threads *= 2
    return threads if rows * threads >= mapping.fill else None


def _map_rows(
    node: isl.ScheduleNode,
    mapping: GpuMapping,
    threads: int,
    scop: Scop,
    reductions: dict[str, Reduction],
) -> isl.ScheduleNode:
    """Mark the row band `node` of `_fuse_rows` for blocks (a block per row,
    cyclic over the grid) and a member of each nest below it for the
    block's `threads` (`_row_threads`) along x: in a nest that walks reduction
    dimensions only, the innermost of them (moved first: the unit-stride
    subscript, whose loads coalesce), which the threads share (`/reduce`);
    in an element-wise nest, the innermost of its leading coincident
    members, each thread its own elements. (`collapse-dims` ran before: a
    row walked whole, group normalisation's `16 x 48 x 48`, has its `h, w`
    as one member of 2304 for the threads, not `w`'s 48.) Nests run one
    after the other in the block; `convert-parallel-loops-to-gpu` puts the
    barriers between them."""
    k = node.band_n_member()
    node = _mark(node, "block", [0] * k, mapping.grid)
    if node.get_type() == isl.schedule_node_type.mark:
        node = node.child(0)
    seq = node.child(0)
    for i in range(seq.n_children()):
        inner = seq.child(i).child(0)
        if inner.get_type() != isl.schedule_node_type.band:
            continue
        m = inner.band_n_member()
        lead = _leading_coincident(inner)
        if all(_reduces_along(inner, j, scop, reductions) for j in range(m)):
            inner = _absorb_reductions(inner, scop, reductions)
            m = inner.band_n_member()
            if m > 1:
                inner = _permute(inner, [m - 1, *range(m - 1)])
            member = MemberMap("thread_x", threads, True)
            inner = _split(inner, 1)
            mark = format_mark(inner.get_schedule_depth(), [member])
            inner = inner.insert_mark(isl.Id(mark)).child(0)
        elif lead:
            inner = _mark(_split(inner, lead), "thread", [0] * lead, (threads,))
        else:
            continue
        seq = inner.parent().parent().parent()
    return seq


def _sequential(
    schedule: isl.Schedule, scop: Scop, reductions: dict[str, Reduction]
) -> bool:
    """Whether some band member of `schedule` is neither coincident nor a
    walk along reduction dimensions: a loop that must run in order in one
    thread (fusion shifted one statement after another along it)."""
    found = False

    def visit(node: isl.ScheduleNode) -> bool:
        nonlocal found
        if node.get_type() == isl.schedule_node_type.band:
            for k in range(node.band_n_member()):
                if not node.band_member_get_coincident(k) and not _reduces_along(
                    node, k, scop, reductions
                ):
                    found = True
        return not found

    schedule.get_root().foreach_descendant_top_down(visit)
    return found


def _rows_may_fill(scop: Scop, mapping: GpuMapping) -> bool:
    """Whether every statement may have the rows that blocks of
    `MAX_THREADS` need to fill the GPU: a prefilter, checked before the
    unfused schedule is computed, for what `_fuse_rows` needs of the rows
    (`_row_threads` decides). Each domain's bounding box bounds its
    instances from above (counting them would enumerate every point: 16 s
    for Kronecker3); sizes known at run time only give False."""
    least = -(-mapping.fill // MAX_THREADS)
    for stmt in scop.statements.values():
        domain = stmt.domain
        params = domain.dim(isl.dim_type.param)
        if params and domain.involves_dims(isl.dim_type.param, 0, params):
            return False  # sizes known at run time only: extents unknown
        if domain.is_empty():
            return False
        box = 1
        for i in range(domain.dim(isl.dim_type.set)):
            low, high = domain.dim_min_val(i), domain.dim_max_val(i)
            if not (low.is_int() and high.is_int()):
                return False
            box *= high.to_python() - low.to_python() + 1
        if box < least:
            return False
    return True


def _nests(schedule: isl.Schedule) -> int:
    """The outermost nests of `schedule` (its kernels): the children of a
    top-level sequence, else 1."""
    node = schedule.get_root().child(0)
    if node.get_type() == isl.schedule_node_type.sequence:
        return node.n_children()
    return 1


def _fused_schedule(
    scop: Scop,
    deps: isl.UnionMap,
    context: isl.Set,
    fusion: str,
    reductions: dict[str, Reduction],
) -> isl.Schedule:
    """The schedule fused with `fusion`, `max`'s shared outer loop as a
    band of its own."""
    schedule, prefix = _fuse(scop, deps, context, fusion, 1)
    if prefix is not None:
        schedule = _set_band(
            schedule.get_root().child(0), prefix, [True]
        ).get_schedule()
    return schedule


def map_schedule(scop: Scop, deps: isl.UnionMap, mapping: GpuMapping) -> isl.Schedule:
    """The mapped schedule tree of `scop` (see the module docstring)."""
    if not scop.statements:
        return isl.Schedule.from_domain(scop.domain)
    context = schedule_context(scop)
    reductions = reduction_loops(scop)
    fusion = mapping.fusion or DEFAULT_FUSION
    schedule = _fused_schedule(scop, deps, context, fusion, reductions)
    sequential = _sequential(schedule, scop, reductions)
    if mapping.fusion is None and (
        sequential or (_nests(schedule) > 1 and _rows_may_fill(scop, mapping))
    ):
        unfused = _fused_schedule(scop, deps, context, "min", reductions)
        if not _sequential(unfused, scop, reductions):
            rows = None
            if mapping.reductions is not False:
                rows = _fuse_rows(unfused, deps, mapping, scop, reductions)
            if rows is not None:
                node = _node(rows[0], [0])
                return _map_rows(
                    node, mapping, rows[1], scop, reductions
                ).get_schedule()
            if sequential:
                schedule = unfused
    for path in reversed(_outer_bands(schedule.get_root(), [])):
        node = _node(schedule, path)
        schedule = _separate_inits(node, mapping, scop, deps, reductions).get_schedule()
    for path in reversed(_outer_bands(schedule.get_root(), [])):
        node = _node(schedule, path)
        schedule = _map_band(node, mapping, scop, reductions).get_schedule()
    return schedule


__all__ = [
    "DEFAULT_TILE",
    "MAP_MARK",
    "GpuMapping",
    "MemberMap",
    "format_mark",
    "map_schedule",
    "parse_mark",
]
