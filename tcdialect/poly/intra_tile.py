"""Rescheduling the point loops inside a GPU tile (TC's intra-tile fusion).

Contract: `reschedule(node, scop, deps, fusion)` replaces the subtree at
`node`, the first node below a tile band (the point loops), by a new
schedule of the same statement instances computed with the fusion strategy
`fusion` (`max`, `preserve3coincident` or `min`; the outer scheduler's
`_fuse`) under the dependences among those instances: all of them, not
only those inside one tile (the others are kept by the tile loops anyway),
so that a member coincident for all of them keeps an element in one thread
across the iterations of a tile loop that runs in order in the block. With
`min` each group of statements closed under the dependence cycles (in
practice each statement) gets point loops of its own, in a sequence in
textual order; `max` fuses as much as isl can; and `preserve3coincident`
fuses while the fused band keeps its three outermost coincident members
(what the threads take).

`reschedule_tiles(schedule, scop, deps, mapping)` does so under every
thread mark (`map@<d>:...thread_x=<n>`) that `map_schedule` put right below
tile loops, when `mapping.intra_fusion` is set and differs from the outer
strategy (`mapping.fusion`, or the mapper's `preserve3coincident` when that
is None; TC too reschedules only then). Otherwise the tree is returned as
it is, and so are point loops of one statement and those with a reduction
shared by a warp (`/reduce`). Each outermost band of the new subtree has
its leading coincident members marked for threads the way `map_schedule`
marks a point band (innermost on x), within the block the old point band
had (all of it along x when the mapper gave that band a single thread
member), each thread count shrunk to what the member spans in a tile: the
nests of a block share its size. Nests in sequence
in one block then run one after the other, `convert-parallel-loops-to-gpu`
putting a barrier between two that touch the same array. The new subtree
is kept only where each dependence that a loop around it carries (a tile
loop that runs in order in the block) goes between instances of one
thread: a thread loop starts at its member's lowest value in each
iteration, which the new order may move from one iteration to the next,
and nothing orders two threads within a nest. Otherwise the point loops
keep the outer order: mlp2 fused with `max` and tiled (8, 16, 4) runs its
first layer's products in tiles of `-n` in order, their bias in the last
one, which rescheduled would read a product another thread wrote.

Example: `B(i, j) = A(i, j) * 2; C(i, j) = B(i, j) + 1` with `max` outer
fusion has one point band over both statements; with `min` inside a tile
the point subtree becomes (isl's YAML form)::

    sequence:
    - filter: "{ S0[i, j] }"
      child:
        mark: "map@2:thread_y=8,thread_x=32"
        child:
          schedule: "[{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]"
    - filter: "{ S1[i, j] }"
      child:
        mark: "map@2:thread_y=8,thread_x=32"
        child:
          schedule: "[{ S1[i, j] -> [(i)] }, { S1[i, j] -> [(j)] }]"
"""

from __future__ import annotations

import dataclasses
import math

import islpy as isl

from tcdialect.poly.gpu_mapping import (
    AXES,
    DEFAULT_FUSION,
    REDUCE,
    GpuMapping,
    _fused_schedule,
    _leading_coincident,
    _mark,
    _split,
    parse_mark,
)
from tcdialect.poly.schedule import (
    _node,
    _outer_bands,
    _statement_names,
    schedule_context,
)
from tcdialect.poly.scop import Scop

_T = isl.schedule_node_type


def reschedule(
    node: isl.ScheduleNode, scop: Scop, deps: isl.UnionMap, fusion: str
) -> isl.ScheduleNode:
    """The tree with the subtree at `node` rescheduled with `fusion` under
    the dependences among its instances (see the module docstring); returns
    the node at `node`'s position."""
    domain = node.get_domain()
    inside = deps.intersect_domain(domain).intersect_range(domain)
    names = set(_statement_names(node))
    part = dataclasses.replace(
        scop, statements={n: s for n, s in scop.statements.items() if n in names}
    )
    schedule = _fused_schedule(part, inside, schedule_context(scop), fusion, {})
    return _graft(node.cut(), schedule.get_root().child(0))


def _graft(leaf: isl.ScheduleNode, tree: isl.ScheduleNode) -> isl.ScheduleNode:
    """A copy of the subtree `tree` in place of `leaf`; returns its top."""
    t = tree.get_type()
    if t == _T.band:
        node = leaf.insert_partial_schedule(tree.band_get_partial_schedule())
        node = node.band_set_permutable(tree.band_get_permutable())
        for k in range(tree.band_n_member()):
            node = node.band_member_set_coincident(
                k, tree.band_member_get_coincident(k)
            )
        return _graft(node.child(0), tree.child(0)).parent()
    if t in (_T.sequence, _T.set):
        filters = isl.UnionSetList.alloc(leaf.get_ctx(), tree.n_children())
        for i in range(tree.n_children()):
            filters = filters.add(tree.child(i).filter_get_filter())
        insert = leaf.insert_sequence if t == _T.sequence else leaf.insert_set
        node = insert(filters)
        for i in range(tree.n_children()):
            node = _graft(node.child(i).child(0), tree.child(i).child(0))
            node = node.parent().parent()
        return node
    if t == _T.filter:
        node = leaf.insert_filter(tree.filter_get_filter())
        return _graft(node.child(0), tree.child(0)).parent()
    if t == _T.mark:
        node = leaf.insert_mark(tree.mark_get_id())
        return _graft(node.child(0), tree.child(0)).parent()
    return leaf  # a leaf (the scheduler makes no other nodes)


def _span(band: isl.ScheduleNode, k: int) -> int:
    """How many values member `k` of `band` takes in one iteration of the
    loops above it, when that is a number; else 0."""
    values = isl.UnionMap.from_union_pw_aff(
        band.band_get_partial_schedule().get_union_pw_aff(k)
    ).intersect_domain(band.get_domain())
    prefix = band.get_prefix_schedule_union_map()
    together = prefix.apply_range(prefix.reverse())
    deltas = values.reverse().apply_range(together).apply_range(values).deltas()
    if deltas.is_empty():
        return 0
    most = deltas.as_set().dim_max(0)
    pieces: list[isl.Aff] = []
    most.foreach_piece(lambda _s, aff: pieces.append(aff))
    if len(pieces) != 1 or not pieces[0].is_cst():
        return 0
    return pieces[0].get_constant_val().to_python() + 1


def _mark_threads(band: isl.ScheduleNode, limits: tuple[int, ...]) -> isl.ScheduleNode:
    """Mark the leading coincident members of `band` for threads, as
    `map_schedule` marks a point band, within the block sizes `limits`."""
    lead = _leading_coincident(band)
    if lead == 0:
        return band
    band = _split(band, lead)
    return _mark(band, "thread", [_span(band, k) for k in range(lead)], limits)


def _thread_marks(node: isl.ScheduleNode, path: list[int]) -> list[list[int]]:
    """Paths of the thread marks right below a band (the tile loops) whose
    subtree shares no reduction among threads."""
    if node.get_type() == _T.mark:
        members = parse_mark(node.mark_get_id().get_name()).values()
        if any(m.processor.startswith("thread_") for m in members):
            below = node.parent().get_type() == _T.band and not any(
                REDUCE in m.mark_get_id().get_name() for m in _marks(node)
            )
            return [path] if below else []
    out: list[list[int]] = []
    for i in range(node.n_children()):
        out.extend(_thread_marks(node.child(i), [*path, i]))
    return out


def _marks(node: isl.ScheduleNode) -> list[isl.ScheduleNode]:
    """The mark nodes in the subtree at `node`."""
    out = [node] if node.get_type() == _T.mark else []
    for i in range(node.n_children()):
        out.extend(_marks(node.child(i)))
    return out


def _offsets(node: isl.ScheduleNode, axis: str) -> isl.UnionMap:
    """Each instance of the subtree at `node` to its offset along the
    block's `axis`: the value of the member a thread mark maps to that axis
    minus its lowest value in the same iteration of the loops around it
    (the thread loop starts there, so equal offsets mean the same thread
    whatever the block size); 0 where no thread loop along `axis` runs it
    (its stores run in thread 0)."""
    out = isl.UnionMap.empty(node.get_domain().get_space())
    for mark in _marks(node):
        band = mark.child(0)
        depth = band.get_schedule_depth()
        for key, member in parse_mark(mark.mark_get_id().get_name()).items():
            if member.processor != f"thread_{axis}":
                continue
            upa = band.band_get_partial_schedule().get_union_pw_aff(
                int(key[1:]) - depth
            )
            upa = upa.intersect_domain(band.get_domain())
            prefix = band.get_prefix_schedule_union_map()
            lowest = (
                prefix.apply_range(prefix.reverse())
                .apply_range(isl.UnionMap.from_union_pw_aff(upa))
                .lexmin()
            )
            first = isl.UnionPwMultiAff.from_union_map(lowest).get_union_pw_aff(0)
            out = out.union(isl.UnionMap.from_union_pw_aff(upa.sub(first)))
    rest = node.get_domain().subtract(out.domain())
    return out.union(isl.UnionMap.from_domain_and_range(rest, isl.UnionSet("{ [0] }")))


def _same_threads(node: isl.ScheduleNode, carried: isl.UnionMap) -> bool:
    """Whether each dependence in `carried` goes between instances that the
    thread marks of the subtree at `node` give to the same thread."""
    zero = isl.UnionSet("{ [0] }")
    for axis in AXES:
        offsets = _offsets(node, axis)
        moves = carried.apply_domain(offsets).apply_range(offsets).deltas()
        if not moves.is_subset(zero):
            return False
    return True


def reschedule_tiles(
    schedule: isl.Schedule, scop: Scop, deps: isl.UnionMap, mapping: GpuMapping
) -> isl.Schedule:
    """`schedule` (from `map_schedule`) with its point loops rescheduled
    with `mapping.intra_fusion` (see the module docstring)."""
    fusion = mapping.intra_fusion
    if fusion is None or fusion == (mapping.fusion or DEFAULT_FUSION):
        return schedule
    for path in reversed(_thread_marks(schedule.get_root(), [])):
        node = _node(schedule, path)
        if len(_statement_names(node)) < 2:
            continue
        # The new nests share the block the old one had: the whole block
        # along x when the mapper gave a single thread member all of it.
        marked = parse_mark(node.mark_get_id().get_name()).values()
        threads = [m for m in marked if m.processor.startswith("thread_")]
        limits = mapping.block
        if mapping.tile is None and len(threads) == 1:
            limits = (math.prod(mapping.block),)
        # the dependences that the loops around the tile carry
        domain = node.get_domain()
        inside = deps.intersect_domain(domain).intersect_range(domain)
        prefix = node.get_prefix_schedule_multi_union_pw_aff()
        carried = inside.subtract(inside.eq_at_multi_union_pw_aff(prefix))
        node = reschedule(node, scop, deps, fusion)
        for inner in reversed(_outer_bands(node, [])):
            band = _node(node.get_schedule(), [*path, *inner])
            node = _mark_threads(band, limits)
        node = _node(node.get_schedule(), path)
        if carried.is_empty() or _same_threads(node, carried):
            schedule = node.get_schedule()
    return schedule


__all__ = ["reschedule", "reschedule_tiles"]
