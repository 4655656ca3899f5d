"""Scheduling a SCoP with isl: fusion, tiling, intra-tile order, parallel loops.

Contract: `compute_schedule(scop, deps, options)` returns an `isl.Schedule`
(a schedule tree) over `scop.domain` that respects every dependence in
`deps` (flow, anti and output, used as validity, proximity and coincidence
constraints as TC did), shaped by `options` (`ScheduleOptions`):

- **fusion** (TC's meaning, on mainline isl). Statements are first split into
  *groups*: maximal runs of consecutive statements (textual order) closed
  under dependence cycles, so every dependence between groups goes forward.
  - `max`: one group; isl schedules it with `schedule_whole_component`, which
    fuses everything it legally can, unless the fused outermost band has
    fewer leading coincident members than each group's own (fusing three
    contractions into one band with one parallel loop): then the groups are
    merged as `preserve3coincident` does, and when the fused band's first
    member is coincident and leads every remaining group's band, the groups
    run in sequence inside that one parallel loop (`_shared_prefix`; not
    when it is the rows of a register tile, as in chained matrix products).
  - `min`: one group per dependence cycle (in practice per statement); the
    schedule is the sequence of the groups' schedules.
  - `preserve3coincident`: groups are merged greedily in order; a merge is
    kept when the merged schedule's outermost band has at least
    `min(3, c_a, c_b)` leading coincident members, `c_a`, `c_b` those of the
    two parts (TC's merge rule, without TC's private isl callback).
- **tile**: the outermost band of each group is tiled: member `k` by
  `tile[k]` (0 = not tiled; missing sizes are 0); a shared outer loop
  (`max` above) is member 0 and the groups' bands continue with `tile[1:]`.
  Tile loops come first, point loops keep their original values. Inside a
  tile the point loops are rescheduled with the `min` strategy (TC's `intraTileScheduleFusionStrategy`):
  one band per statement, in textual order (only when that order respects the
  dependences within a tile; otherwise the point band stays fused), below
  the leading point loops all statements share: a loop stays shared while it
  leads every statement's own order, each statement keeps a parallel loop of
  its own (two when a reduction loop runs between them: a register tile's
  rows and vectors), and no statement loses its last outer product (two
  loops with a load varying along one and not the other, and another load
  the other way round: the rows and vectors of a register tile). An
  initialisation's slice is then accumulated while in cache
  (docs/perf/affine-isl-schedule.md).
- **intra-tile order**: a band that schedules a single statement (a point
  band, or an untiled outer band) is permuted so that its innermost member is
  the one along which the most accesses are stride-1 or invariant (ties keep
  isl's order; coincident members win ties with reductions). Members of a
  permutable band may be reordered freely; members that are constant for the
  statement are dropped.
- **parallel**: the first member of each group's outermost band, when it is
  coincident, is split off and marked `parallel@<d>` (an isl mark node; `d` is
  its schedule depth, so the AST loop is `c<d>`); code generation makes that
  loop an `affine.parallel`. Point bands are marked the same way: their mark
  takes effect only when isl drops the tile loop (a single tile), since no
  loop inside a parallel loop becomes parallel.
- **parallel depth**: `parallel_depth = k` marks member `k` of those bands
  instead, when the band has it, it is coincident and it takes more than one
  value (else member 0 as above): the `k` members before it run in order
  around it, each of their iterations sharing member `k` among the
  threads. Deeper parallel loops fork more often but split work more evenly
  when the outer members are short (a batch of 2 on 16 cores); the
  autotuner chooses. A shared outer loop (`max` above) is always member 0.

`schedule_tree(schedule)` prints the tree (isl's YAML form) for inspection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import islpy as isl

from tcdialect.diagnostics import TCError
from tcdialect.poly.options import FUSIONS, tile_sizes
from tcdialect.poly.scop import Access, Scop

PARALLEL_MARK = "parallel"


@dataclass(frozen=True)
class ScheduleOptions:
    """How to schedule: see the module docstring."""

    fusion: str = "max"
    #: Tile size per member of each outermost band (0 = do not tile that
    #: member); None chooses sizes from the problem (`auto_tile`).
    tile: tuple[int, ...] | None = None
    #: Mark the outermost coincident loop of each nest parallel.
    parallel: bool = True
    #: Which member of each outermost band is the parallel loop (see the
    #: module docstring; 0 is the outermost).
    parallel_depth: int = 0
    #: Threads that share the parallel loops: `auto_tile` cuts the outermost
    #: member into a multiple of this many tiles of equal size.
    threads: int = 1
    #: The sizes `auto_tile` aims for (a target fills them from its
    #: `TargetInfo`; the autotuner searches them).
    tile_policy: TilePolicy = field(default_factory=lambda: TilePolicy())

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise TCError(
                f"unknown fusion strategy '{self.fusion}' "
                f"(expected one of {', '.join(FUSIONS)})"
            )
        object.__setattr__(self, "tile", tile_sizes(self.tile))
        if not isinstance(self.threads, int) or self.threads < 1:
            raise TCError(f"threads must be an integer >= 1, not {self.threads!r}")
        if (
            not isinstance(self.parallel_depth, int)
            or isinstance(self.parallel_depth, bool)
            or self.parallel_depth < 0
        ):
            raise TCError(
                f"parallel_depth must be an integer >= 0, not {self.parallel_depth!r}"
            )
        if not isinstance(self.tile_policy, TilePolicy):
            raise TCError(f"tile_policy must be a TilePolicy, not {self.tile_policy!r}")


@dataclass(frozen=True)
class TilePolicy:
    """The sizes `auto_tile` chooses from when the user gives no tile sizes.

    parallel, reduction: tile sizes of coincident and of other members.
    rows: the largest row tile aimed for when the parallel member is split
        evenly among the threads.
    batch_chunks: the fewest values per thread of an outermost member
        without reuse for it to get tiles of one value.

    The defaults keep an `A` tile of `rows` x `reduction` floats within half
    of a 1 MiB L2 cache; `parallel` is a multiple of register-tile's row and
    column strips (8 rows, 3 x 16 lanes; 6 rows, 2 x 8 lanes), so full tiles
    have no remainder strips.
    """

    parallel: int = 192
    reduction: int = 256
    rows: int = 512
    batch_chunks: int = 8

    def __post_init__(self) -> None:
        for name in ("parallel", "reduction", "rows", "batch_chunks"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TCError(
                    f"TilePolicy.{name} must be a positive int, not {value!r}"
                )


#: Largest tile size: tile loops' bounds are 32-bit integers in isl's AST.
def _items(lst: Any) -> list[Any]:
    """The elements of an isl list (islpy's lists are not iterable)."""
    n = next(getattr(lst, a)() for a in dir(lst) if a.startswith("n_"))
    return [lst.get_at(i) for i in range(n)]


def _pieces(pma: isl.PwMultiAff) -> list[tuple[isl.Set, isl.MultiAff]]:
    out: list[tuple[isl.Set, isl.MultiAff]] = []
    pma.foreach_piece(lambda s, ma: out.append((s, ma)))
    return out


def _ctx() -> isl.Context:
    return isl.DEFAULT_CONTEXT


def _union_set(sets: Sequence[isl.Set]) -> isl.UnionSet:
    out = isl.UnionSet.empty(isl.Space.params_alloc(_ctx(), 0))
    for s in sets:
        out = out.union(isl.UnionSet.from_set(s))
    return out


def schedule_context(scop: Scop) -> isl.Set:
    """Sizes are never negative (nor are the derived parameters known to be
    non-negative, `Scop.nonneg_params`)."""
    if not scop.params:
        return isl.Set("{ : }")
    nonneg = [
        p for p in scop.params if p in scop.nonneg_params or not scop.param_values
    ]
    cons = " and ".join(f"{p} >= 0" for p in nonneg)
    return isl.Set(f"[{', '.join(scop.params)}] -> {{ {': ' + cons if cons else ''} }}")


def _pairs(deps: isl.UnionMap) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for m in _items(deps.get_map_list()):
        src = m.get_tuple_name(isl.dim_type.in_)
        dst = m.get_tuple_name(isl.dim_type.out)
        out.add((src, dst))
    return out


def _groups(names: list[str], deps: isl.UnionMap) -> list[list[str]]:
    """Runs of consecutive statements, merged so that no dependence goes back."""
    index = {n: i for i, n in enumerate(names)}
    group = list(range(len(names)))  # statement index -> group start
    changed = True
    pairs = [(index[a], index[b]) for a, b in _pairs(deps) if a != b]
    while changed:
        changed = False
        for a, b in pairs:
            ga, gb = group[a], group[b]
            if ga > gb:  # a later group feeds an earlier one: merge the range
                lo = gb
                hi = max(i for i in range(len(names)) if group[i] == ga)
                for i in range(lo, hi + 1):
                    if group[i] != lo:
                        group[i] = lo
                        changed = True
    out: list[list[str]] = []
    for i, n in enumerate(names):
        if i == 0 or group[i] != group[i - 1]:
            out.append([])
        out[-1].append(n)
    return out


#: The largest constant term isl may give a schedule dimension when a group
#: has more than `UNBOUNDED_STATEMENTS` statements or more than one
#: reduction (a statement whose instances share an element they write):
#: none, so statements are not shifted against each other; with static
#: extents (no size parameters) such a group gets no proximity constraints
#: either. isl's search is slow on these groups when extents are large
#: numbers: kronecker3's six statements with M=256 took > 5 minutes
#: unbounded; two chained batched matrix products, 64 x 128 x 128, 6 s with
#: the bound at 4 (> 10 minutes unbounded at 256-long reductions); a
#: two-layer MLP of 1024s, 66 s bounded at 0 with proximity. Without
#: proximity each takes 0.01 s and, on the catalog and bench kernels, gives
#: the same schedules (with size parameters it would shift statements by
#: multiples of a size, and parametric searches are fast anyway). Other
#: groups keep the unbounded search: placing an epilogue after a reduction
#: inside one band takes a constant as large as the reduction's extent (the
#: MLP's bias and ReLU after `r_m` < 1024, which keeps its band tileable).
#: A bound only costs fusion, never legality.
MAX_CONSTANT_TERM = 0
UNBOUNDED_STATEMENTS = 4


def _reductions(scop: Scop, names: list[str]) -> int:
    """How many of statements `names` are reductions (a written element is
    written by more than one instance)."""
    count = 0
    for n in names:
        stmt = scop.statements[n]
        for a in stmt.accesses:
            if (
                a.kind == "write"
                and not a.map.intersect_domain(stmt.domain).is_injective()
            ):
                count += 1
                break
    return count


def _schedule_group(
    scop: Scop, names: list[str], deps: isl.UnionMap, context: isl.Set
) -> isl.Schedule:
    domain = _union_set([scop.statements[n].domain for n in names])
    d = deps.intersect_domain(domain).intersect_range(domain)
    ctx = _ctx()
    ctx.set_schedule_serialize_sccs(0)
    ctx.set_schedule_whole_component(1)
    ctx.set_schedule_outer_coincidence(1)
    bounded = len(names) > UNBOUNDED_STATEMENTS or _reductions(scop, names) > 1
    ctx.set_schedule_max_constant_term(MAX_CONSTANT_TERM if bounded else -1)
    sc = (
        isl.ScheduleConstraints.on_domain(domain)
        .set_context(context)
        .set_validity(d)
        .set_coincidence(d)
    )
    if not bounded or scop.params:
        sc = sc.set_proximity(d)
    return sc.compute_schedule()


def _outer_coincidence(schedule: isl.Schedule) -> int:
    node = schedule.get_root()
    while node.get_type() not in (
        isl.schedule_node_type.band,
        isl.schedule_node_type.leaf,
        isl.schedule_node_type.sequence,
        isl.schedule_node_type.set,
    ):
        node = node.child(0)
    if node.get_type() != isl.schedule_node_type.band:
        return 0
    n = 0
    while n < node.band_n_member() and node.band_member_get_coincident(n):
        n += 1
    return n


def _fuse(
    scop: Scop, deps: isl.UnionMap, context: isl.Set, fusion: str, threads: int
) -> tuple[isl.Schedule, isl.MultiUnionPwAff | None]:
    """The fused schedule, and the shared outer loop to put around it (or None)."""
    names = list(scop.statements)
    parts = _groups(names, deps)
    schedules = [_schedule_group(scop, g, deps, context) for g in parts]
    whole = None
    if fusion == "max" and len(parts) > 1:
        whole = _schedule_group(scop, names, deps, context)
        # Fusing everything is worth losing no outer parallel loop: when the
        # fused band has fewer coincident members than every group has on
        # its own (three contractions in one band), merge as p3c does.
        if _outer_coincidence(whole) >= min(map(_outer_coincidence, schedules)):
            return whole, None
        fusion = "preserve3coincident"
    if fusion == "preserve3coincident" and len(parts) > 1:
        merged_parts = [parts[0]]
        merged = [schedules[0]]
        for g, s in zip(parts[1:], schedules[1:]):
            trial = _schedule_group(scop, merged_parts[-1] + g, deps, context)
            need = min(3, _outer_coincidence(merged[-1]), _outer_coincidence(s))
            if _outer_coincidence(trial) >= need and _fused(trial):
                merged_parts[-1] = merged_parts[-1] + g
                merged[-1] = trial
            else:
                merged_parts.append(g)
                merged.append(s)
        parts, schedules = merged_parts, merged
    prefix = None
    if whole is not None and len(schedules) > 1:
        prefix = _shared_prefix(scop, parts, schedules, whole, threads)
        if prefix is not None:
            schedules = [_drop_first_member(s) for s in schedules]
    out = schedules[0]
    for s in schedules[1:]:
        out = out.sequence(s)
    return out, prefix


def _outer_band(schedule: isl.Schedule) -> isl.ScheduleNode | None:
    node = schedule.get_root().child(0)
    return node if node.get_type() == isl.schedule_node_type.band else None


def _shared_prefix(
    scop: Scop,
    parts: list[list[str]],
    schedules: list[isl.Schedule],
    whole: isl.Schedule,
    threads: int,
) -> isl.MultiUnionPwAff | None:
    """The outer loop that `max` fusion still shares between `parts` when it
    cannot fuse their bands, or None.

    That is the first member of the fully fused schedule `whole` when it is
    coincident and is also the first member of every part's own outer band,
    and dropping it from a part takes no statement's last outer product
    (the rows and vectors of a register tile: not the rows of a matrix
    product), and it has at least 4 iterations per thread when its extent
    is known. A loop over it around the parts in sequence is valid (it is a
    member of a valid schedule; with it equal, every dependence between
    parts goes forward and those inside a part are kept by the part's other
    members) and parallel (coincident). Each iteration then makes its slice
    of a temporary right before the next part reads it, while it is in
    cache, and contract-temporaries shrinks the temporary to that slice
    (kronecker3's three mode products along `m`).
    """
    top = _outer_band(whole)
    if top is None or not top.band_member_get_coincident(0):
        return None
    member = top.band_get_partial_schedule().get_union_pw_aff(0)
    extent = _extent(member, whole.get_domain())
    if extent is not None and extent < 4 * threads:
        return None
    shared = isl.UnionMap.from_union_pw_aff(member)
    for names, schedule in zip(parts, schedules):
        band = _outer_band(schedule)
        if band is None or not band.band_member_get_coincident(0):
            return None
        pm, coinc = _band_members(band)
        domain = band.get_domain()
        first = isl.UnionMap.from_union_pw_aff(pm.get_union_pw_aff(0))
        if not first.intersect_domain(domain).is_equal(shared.intersect_domain(domain)):
            return None
        members = list(range(len(coinc)))
        for n in names:
            if _outer_product(scop, n, pm, coinc, members) and not _outer_product(
                scop, n, pm, coinc, members[1:]
            ):
                return None
    return top.band_get_partial_schedule().drop_dims(
        isl.dim_type.set, 1, top.band_n_member() - 1
    )


def _drop_first_member(schedule: isl.Schedule) -> isl.Schedule:
    band = _outer_band(schedule)
    assert band is not None
    if band.band_n_member() > 1:
        band = band.band_split(1)
    return band.delete().get_schedule()


def _fused(schedule: isl.Schedule) -> bool:
    """Whether the tree starts with a band (isl found a common outer loop)."""
    node = schedule.get_root().child(0)
    return node.get_type() == isl.schedule_node_type.band


# -- tree walking ---------------------------------------------------------------


def _node(schedule: isl.Schedule, path: Sequence[int]) -> isl.ScheduleNode:
    node = schedule.get_root()
    for i in path:
        node = node.child(i)
    return node


def _outer_bands(node: isl.ScheduleNode, path: list[int]) -> list[list[int]]:
    """Paths of the bands that are not below another band."""
    t = node.get_type()
    if t == isl.schedule_node_type.band:
        return [path]
    if t == isl.schedule_node_type.leaf:
        return []
    out: list[list[int]] = []
    for i in range(node.n_children()):
        out.extend(_outer_bands(node.child(i), [*path, i]))
    return out


def _statement_names(node: isl.ScheduleNode) -> list[str]:
    names: list[str] = []
    for s in _items(node.get_domain().get_set_list()):
        names.append(s.get_tuple_name())
    return sorted(names, key=lambda n: int(n[1:]) if n[1:].isdigit() else 0)


# -- per-statement member analysis ------------------------------------------------


def _single_aff(upa: isl.UnionPwAff, stmt: isl.Set) -> isl.Aff | None:
    pa = upa.intersect_domain(isl.UnionSet.from_set(stmt))
    pieces: list[tuple[isl.Set, isl.Aff]] = []
    for p in _items(pa.get_pw_aff_list()):
        pieces.extend(p.get_pieces())
    affs = {str(a) for _, a in pieces}
    if len(affs) != 1:
        return None
    return pieces[0][1]


def _member_dim(aff: isl.Aff, ndims: int) -> int | None:
    """The statement dim a member walks with unit step, if it is just that."""
    nz = [
        k
        for k in range(ndims)
        if not aff.get_coefficient_val(isl.dim_type.in_, k).is_zero()
    ]
    if len(nz) != 1:
        return None
    c = aff.get_coefficient_val(isl.dim_type.in_, nz[0])
    return nz[0] if c.abs().is_one() else None


def _coefficients(a: Access, dim: int) -> list[isl.Val] | None:
    """The coefficient of statement dim `dim` in each subscript of `a`; None
    when `a` is not one affine function (a may-access, a piecewise map)."""
    if not a.map.is_single_valued():
        return None
    pma = isl.PwMultiAff.from_map(a.map)
    if pma.n_piece() != 1:
        return None
    ma = _pieces(pma)[0][1]
    return [
        ma.get_aff(j).get_coefficient_val(isl.dim_type.in_, dim)
        for j in range(ma.dim(isl.dim_type.out))
    ]


def _stride_score(scop: Scop, name: str, dim: int | None, coincident: bool) -> float:
    """How well a loop over statement dim `dim` suits the innermost position."""
    if dim is None:
        return -100.0
    score = 0.5 if coincident else 0.0
    for a in scop.statements[name].accesses:
        if a.kind not in ("read", "write"):
            continue
        coefs = _coefficients(a, dim)
        if coefs is None:
            score -= 3
            continue
        if all(c.is_zero() for c in coefs):
            score += 1
        elif all(c.is_zero() for c in coefs[:-1]) and coefs[-1].abs().is_one():
            score += 3
        else:
            score -= 3
    return score


def _statement_order(
    scop: Scop, name: str, pm: isl.MultiUnionPwAff, coincident: list[bool]
) -> list[int]:
    """The members of `pm` for statement `name`, constant ones dropped, with
    the best innermost one (`_stride_score`) moved last, then the reduction
    members over a window (`WINDOW_EXTENT`) after it.

    A window innermost is unrolled by LLVM, so the accumulator stays in a
    register and the loop over the output's columns becomes the innermost
    (vectorised) loop, instead of the running maximum being loaded and stored
    once per window element (docs/perf/affine-isl-schedule.md)."""
    stmt = scop.statements[name]
    ndims = len(stmt.dims)
    keep: list[tuple[int, int | None, float]] = []
    for k in range(pm.dim(isl.dim_type.set)):
        upa = pm.get_union_pw_aff(k)
        aff = _single_aff(upa, stmt.domain)
        if aff is not None and all(
            aff.get_coefficient_val(isl.dim_type.in_, j).is_zero() for j in range(ndims)
        ):
            continue  # constant for this statement
        dim = _member_dim(aff, ndims) if aff is not None else None
        keep.append((k, dim, _stride_score(scop, name, dim, coincident[k])))
    if not keep:
        return []
    best = max(range(len(keep)), key=lambda i: (keep[i][2], i))
    order = [k for i, (k, _, _) in enumerate(keep) if i != best] + [keep[best][0]]
    window = [
        k
        for k, _, _ in keep
        if not coincident[k] and _window_member(pm.get_union_pw_aff(k), stmt.domain)
    ]
    return [k for k in order if k not in window] + window


def _window_member(upa: isl.UnionPwAff, domain: isl.Set) -> bool:
    """Whether a member takes at most `WINDOW_EXTENT` values on `domain`."""
    extent = _extent(upa, isl.UnionSet.from_set(domain))
    return extent is not None and extent <= WINDOW_EXTENT


def _statement_band(
    scop: Scop, name: str, pm: isl.MultiUnionPwAff, coincident: list[bool]
) -> tuple[isl.MultiUnionPwAff, list[bool]] | None:
    """`pm` restricted to statement `name`, constant members dropped, reordered."""
    order = _statement_order(scop, name, pm, coincident)
    if not order:
        return None
    stmt = scop.statements[name]
    filt = isl.UnionSet.from_set(isl.Set.universe(stmt.domain.get_space()))
    lst = isl.UnionPwAffList.alloc(_ctx(), len(order))
    for k in order:
        lst = lst.add(pm.get_union_pw_aff(k).intersect_domain(filt))
    space = isl.Space.set_alloc(_ctx(), 0, len(order))
    space = space.align_params(pm.get_space())
    mupa = isl.MultiUnionPwAff.from_union_pw_aff_list(space, lst)
    return mupa, [coincident[k] for k in order]


def _set_band(
    node: isl.ScheduleNode, mupa: isl.MultiUnionPwAff, coincident: list[bool]
) -> isl.ScheduleNode:
    node = node.insert_partial_schedule(mupa).band_set_permutable(1)
    for k, c in enumerate(coincident):
        node = node.band_member_set_coincident(k, int(c))
    return node


def _band_members(node: isl.ScheduleNode) -> tuple[isl.MultiUnionPwAff, list[bool]]:
    pm = node.band_get_partial_schedule()
    coinc = [
        bool(node.band_member_get_coincident(k))
        for k in range(pm.dim(isl.dim_type.set))
    ]
    return pm, coinc


def _forward_within(
    deps: isl.UnionMap, prefix: isl.MultiUnionPwAff | None, names: list[str]
) -> bool:
    """Whether every dependence with equal `prefix` goes forward in `names`."""
    d = deps if prefix is None else deps.eq_at_multi_union_pw_aff(prefix)
    index = {n: i for i, n in enumerate(names)}
    return all(index[a] <= index[b] for a, b in _pairs(d) if a in index and b in index)


def _reads_along(scop: Scop, name: str, dim: int | None) -> frozenset[int]:
    """The reads of statement `name` (of arrays it does not write) whose
    subscripts depend on statement dim `dim` (all of them for None)."""
    stmt = scop.statements[name]
    written = {a.array for a in stmt.accesses if a.kind in ("write", "may_write")}
    out: set[int] = set()
    for i, a in enumerate(stmt.accesses):
        if a.kind not in ("read", "may_read") or a.array in written:
            continue
        coefs = None if dim is None or a.kind != "read" else _coefficients(a, dim)
        if coefs is None or not all(c.is_zero() for c in coefs):
            out.add(i)
    return frozenset(out)


def _outer_product(
    scop: Scop,
    name: str,
    pm: isl.MultiUnionPwAff,
    coinc: list[bool],
    members: list[int],
) -> bool:
    """Whether two coincident `members` form an outer product for statement
    `name`: a read varies along one and not the other, another read the other
    way round (the rows and vectors of a register tile, each load reused)."""
    stmt = scop.statements[name]
    along: list[frozenset[int]] = []
    for k in members:
        if coinc[k]:
            aff = _single_aff(pm.get_union_pw_aff(k), stmt.domain)
            dim = _member_dim(aff, len(stmt.dims)) if aff is not None else None
            along.append(_reads_along(scop, name, dim))
    return any(a - b and b - a for i, a in enumerate(along) for b in along[i + 1 :])


def _shared_members(
    scop: Scop, names: list[str], pm: isl.MultiUnionPwAff, coinc: list[bool]
) -> int:
    """How many leading members of a multi-statement band stay shared.

    Member k stays a loop around all statements while it is the k-th of every
    statement's own order (`_statement_order`), every statement keeps at least
    one coincident member below it (two when a non-coincident member, a
    reduction, comes before its last coincident one: the rows and vectors of
    a register tile with the reduction in between), and a statement with an
    outer product among its members (`_outer_product`: what a register tile
    unrolls) keeps one below it. A producer's slice (an initialisation, a
    temporary) is then consumed by the next statement while it is still in
    cache. A reduction over windows inside its innermost coincident loop
    (maxpool) keeps only that loop: each row of O is initialised right before
    the pooling updates it, not a whole plane in a separate pass, whose
    stores stall on reads for ownership (docs/perf/affine-isl-schedule.md).
    """
    orders = [_statement_order(scop, n, pm, coinc) for n in names]

    def keeps(name: str, o: list[int], k: int) -> bool:
        rest = o[k + 1 :]
        last = max((i for i, j in enumerate(rest) if coinc[j]), default=0)
        tile = any(not coinc[j] for j in rest[:last])
        return (
            len(o) > k + 1
            and o[k] == k
            and sum(coinc[j] for j in rest) >= (2 if tile else 1)
            and (
                _outer_product(scop, name, pm, coinc, rest)
                or not _outer_product(scop, name, pm, coinc, o[k:])
            )
        )

    shared = 0
    while all(keeps(n, o, shared) for n, o in zip(names, orders)):
        shared += 1
    return shared


def _distribute(
    scop: Scop, band: isl.ScheduleNode, deps: isl.UnionMap
) -> isl.ScheduleNode:
    """Replace `band` by one reordered band per statement, in textual order,
    below the leading members all statements share (`_shared_members`).

    Returns the node at the same position (the shared band, the sequence, or
    the band when there is only one statement or the split would break a
    dependence)."""
    names = _statement_names(band)
    pm, coinc = _band_members(band)
    prefix = band.get_prefix_schedule_multi_union_pw_aff()
    prefix = prefix if prefix.dim(isl.dim_type.set) else None
    if len(names) == 1:
        sb = _statement_band(scop, names[0], pm, coinc)
        band = band.delete()
        return band if sb is None else _set_band(band, *sb)
    if not band.band_get_permutable() or not _forward_within(deps, prefix, names):
        return band
    shared = _shared_members(scop, names, pm, coinc)
    if shared:
        band = band.band_split(shared).child(0)
        pm, coinc = _band_members(band)
    filters = isl.UnionSetList.alloc(_ctx(), len(names))
    for n in names:
        filters = filters.add(isl.UnionSet.from_set(scop.statements[n].domain))
    node = band.delete().insert_sequence(filters)
    for i, n in enumerate(names):
        sb = _statement_band(scop, n, pm, coinc)
        child = node.child(i).child(0)
        if sb is not None:
            child = _set_band(child, *sb)
        node = child.parent().parent()
    return node.parent() if shared else node


def _tile(node: isl.ScheduleNode, sizes: Sequence[int]) -> isl.ScheduleNode | None:
    """Insert a tile band above the band `node`; None when nothing is tiled."""
    n = node.band_n_member()
    sizes = [*sizes[:n], *[0] * (n - len(sizes))]
    if not any(sizes) or not node.band_get_permutable():
        return None
    pm, coinc = _band_members(node)
    mv = isl.MultiVal.zero(pm.get_space())
    for k, t in enumerate(sizes):
        mv = mv.set_val(k, isl.Val(t or 1))
    tiled = pm.scale_down_multi_val(mv).floor()
    for k in reversed(range(n)):
        if not sizes[k]:
            tiled = tiled.drop_dims(isl.dim_type.set, k, 1)
    return _set_band(node, tiled, [c for c, t in zip(coinc, sizes) if t])


def auto_tile(
    band: isl.ScheduleNode,
    threads: int = 1,
    accesses: isl.UnionMap | None = None,
    policy: TilePolicy | None = None,
) -> tuple[int, ...]:
    """Tile sizes for an outermost band when the user gave none.

    Only nests with reuse across a reduction are tiled: a permutable band of
    at least three members, one of them not coincident (matmul, convolution
    and contractions). Elementwise nests and row reductions stream through
    memory and gain nothing from tiling. Sizes keep an `A` tile, a `B` panel
    and the `C` tile within the L2 cache of one core.

    The outermost member, when it is coincident (the parallel loop) and its
    extent is a known number larger than `TilePolicy.parallel`, is cut into a
    multiple of `threads` tiles of equal size (a multiple of 8 rows), each at
    most about `TilePolicy.rows`: 1024 rows on 2 threads make two tiles of 512 (192
    made five tiles and a 64-row one: one thread did 576 rows, the other 448).
    A shorter outermost member with at least two more coincident ones below
    it (a batch loop around the rows and columns: einsum's `a` in
    `O(a, b, d) +=! X(a, b, r_c) * Y(r_c, d)`) is cut into `threads` tiles,
    so each thread's share is a serial point loop, over which register-tile
    copies the panels that do not vary along it (`Y`'s) once instead of once
    per iteration. (Two coincident members are rows and columns: there each
    row tile would copy the whole of `B`.)

    Before those two rules: an outermost coincident member along which no
    array element is touched twice (`accesses`, statement instances to
    elements: a batch loop whose operands all vary along it, `b` of
    `Z(b, n, k) +=! X(b, n, r_m) * Y(b, r_m, k)`), with at least
    `TilePolicy.batch_chunks` values per thread (or an unknown number), gets tiles of
    one value: a tile of it keeps nothing in cache for the next, and the
    parallel loop then gives the runtime's threads many small chunks to
    share instead of one tile each, so a thread that starts late takes fewer
    (the runtime deals chunks out as threads ask: `__tc_parallel_team`); with
    fewer values per thread one tile each was faster, hence the minimum.

    The innermost coincident member (the output's unit-stride dimension:
    `n` of matmul, `w` of a convolution) stays whole when another coincident
    member is tiled, as BLIS leaves its `NC` loop long: register-tile packs
    operand panels per column strip anyway, and each row tile's packed or
    cached rows then serve every column instead of one column tile's worth.
    Measurements of these rules: docs/perf/affine-isl-schedule.md.
    """
    n = band.band_n_member()
    if n < 3 or not band.band_get_permutable():
        return ()
    coincident = [bool(band.band_member_get_coincident(k)) for k in range(n)]
    if all(coincident):
        return ()
    p = policy or TilePolicy()
    sizes = [p.parallel if c else p.reduction for c in coincident]
    extent = _member_extent(band, 0) if coincident[0] else None
    if (
        coincident[0]
        and (extent is None or extent >= p.batch_chunks * threads)
        and accesses is not None
        and not _reused_along(band, accesses)
    ):
        sizes[0] = 1
    elif extent is not None and extent > p.parallel:
        tiles = threads * -(-extent // (threads * p.rows))
        sizes[0] = (-(-extent // tiles) + 7) // 8 * 8
    elif extent is not None and extent > threads and sum(coincident) >= 3:
        sizes[0] = -(-extent // threads)
    if sum(coincident) >= 2:
        sizes[max(k for k in range(n) if coincident[k])] = 0
    return tuple(sizes)


def _reused_along(band: isl.ScheduleNode, accesses: isl.UnionMap) -> bool:
    """Whether some element in `accesses` is touched at two values of the
    outermost member of `band`."""
    domain = band.get_domain()
    upa = band.band_get_partial_schedule().get_union_pw_aff(0)
    member = isl.UnionMap.from_union_pw_aff(upa).intersect_domain(domain)
    values = accesses.intersect_domain(domain).reverse().apply_range(member)
    return not values.is_single_valued()


def _member_extent(band: isl.ScheduleNode, k: int) -> int | None:
    """How many values member `k` of `band` takes, when that is a number."""
    upa = band.band_get_partial_schedule().get_union_pw_aff(k)
    return _extent(upa, band.get_domain())


def _extent(upa: isl.UnionPwAff, domain: isl.UnionSet) -> int | None:
    """How many values `upa` takes on `domain`, when that is a number."""
    values = isl.UnionMap.from_union_pw_aff(upa).intersect_domain(domain)
    rng = values.range()
    if rng.is_empty():
        return None
    s = rng.as_set()
    lo, hi = s.dim_min(0), s.dim_max(0)
    if not (lo.is_cst() and hi.is_cst()):
        return None
    ends: list[int] = []
    for pa in (lo, hi):
        pieces: list[isl.Aff] = []
        pa.foreach_piece(lambda _s, aff: pieces.append(aff))
        if len(pieces) != 1:
            return None
        ends.append(pieces[0].get_constant_val().to_python())
    return ends[1] - ends[0] + 1


#: Reduction members with at most this many values (pooling and convolution
#: windows) go innermost in `_statement_order`, after the unit-stride member.
WINDOW_EXTENT = 4


def _mark_parallel(node: isl.ScheduleNode, depth: int = 0) -> isl.ScheduleNode:
    """Mark member `depth` of band `node` parallel (see the module
    docstring); the node returned is at `node`'s place in the tree."""
    k = depth
    if k and (
        k >= node.band_n_member()
        or not node.band_member_get_coincident(k)
        or _member_extent(node, k) == 1
    ):
        k = 0
    if not node.band_member_get_coincident(k):
        return node
    if k:
        node = node.band_split(k).child(0)
    if node.band_n_member() > 1:
        node = node.band_split(1)
    # The mark names the schedule depth of the loop it means: isl drops loops
    # that run once, and the mark must not pass to a loop further in.
    mark = node.insert_mark(isl.Id(f"{PARALLEL_MARK}@{node.get_schedule_depth()}"))
    return mark.parent() if k else mark


def _mark_point_bands(node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
    """Mark the point band(s) at `node` (a band, or a sequence of bands) too.

    The tile band's mark wins when its loop exists (codegen makes no loop
    inside a parallel loop parallel); when isl drops that loop because it
    runs once (a single tile), the point loop runs in parallel instead.
    """
    if node.get_type() == isl.schedule_node_type.band:
        return _mark_parallel(node, depth)
    if node.get_type() != isl.schedule_node_type.sequence:
        return node
    for i in range(node.n_children()):
        child = node.child(i).child(0)
        if child.get_type() == isl.schedule_node_type.band:
            child = _mark_parallel(child, depth)
        node = child.parent().parent()
    return node


def compute_schedule(
    scop: Scop, deps: isl.UnionMap, options: ScheduleOptions
) -> isl.Schedule:
    """The schedule tree of `scop` under `options` (see the module docstring)."""
    if not scop.statements:
        return isl.Schedule.from_domain(scop.domain)
    context = schedule_context(scop)
    schedule, prefix = _fuse(scop, deps, context, options.fusion, options.threads)
    # Below a shared outer loop, that loop is the parallel one, and given
    # tile sizes go on naming the members in order: the first is its own.
    threads, parallel, tile = options.threads, options.parallel, options.tile
    depth = options.parallel_depth
    accesses = (
        scop.reads.union(scop.writes).union(scop.may_reads).union(scop.may_writes)
    )
    if prefix is not None:
        threads, parallel = 1, False
        tile = None if tile is None else tile[1:]
    for path in reversed(_outer_bands(schedule.get_root(), [])):
        node = _node(schedule, path)
        sizes = (
            tile
            if tile is not None
            else auto_tile(node, threads, accesses, options.tile_policy)
        )
        tiled = _tile(node, sizes) if sizes else None
        if tiled is not None:
            point = _distribute(scop, tiled.child(0), deps)
            if parallel:
                point = _mark_point_bands(point, depth)
            node = point.parent()
        elif len(_statement_names(node)) == 1:
            node = _distribute(scop, node, deps)
        if parallel and node.get_type() == isl.schedule_node_type.band:
            node = _mark_parallel(node, depth)
        schedule = node.get_schedule()
    if prefix is not None:
        node = _set_band(schedule.get_root().child(0), prefix, [True])
        tiled = _tile(node, options.tile[:1]) if options.tile else None
        if tiled is not None:
            node = tiled
            if options.parallel:  # for when isl drops a tile loop that runs once
                node = _mark_parallel(tiled.child(0)).parent()
        if options.parallel:
            node = _mark_parallel(node)
        schedule = node.get_schedule()
    return schedule


def schedule_tree(schedule: isl.Schedule) -> str:
    """The schedule tree in isl's YAML form."""
    return schedule.get_root().to_str().replace("# YOU ARE HERE\n", "")


__all__ = [
    "FUSIONS",
    "PARALLEL_MARK",
    "ScheduleOptions",
    "TilePolicy",
    "auto_tile",
    "compute_schedule",
    "schedule_context",
    "schedule_tree",
]
