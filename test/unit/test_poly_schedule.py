"""The isl scheduler (tcdialect.poly.schedule) and the regeneration of affine code.

Properties checked on every catalog kernel, specialised and generic, under
every fusion strategy and with and without tiling: the new schedule respects
every dependence (isl: each dependence goes lexicographically forward in the
new schedule), and the pass regenerates the function (does not leave it
alone). Numerics under every schedule are checked end to end in
test/e2e/test_schedules.py.
"""

from __future__ import annotations

import islpy as isl
import pytest
from test_reference_catalog import KERNELS
from xdsl.dialects import affine, func
from xdsl.dialects.builtin import ModuleOp

from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import lower
from tcdialect.poly.schedule import (
    FUSIONS,
    ScheduleOptions,
    _groups,
    _reductions,
    compute_schedule,
    schedule_context,
    schedule_tree,
)
from tcdialect.poly.scop import dependences, extract_scop
from tcdialect.transforms.affine_isl_schedule import schedule_function

SOFTMAX = """
def softmax(float(N, D) I) -> (O) {
    mx(n) max=! I(n, r_d)
    e(n, d) = exp(I(n, d) - mx(n))
    s(n) +=! e(n, r_d)
    O(n, d) = e(n, d) / s(n)
}"""

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""


def _funcs(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]


def _respects(schedule: isl.Schedule, deps: isl.UnionMap, context: isl.Set) -> bool:
    """Every dependence source runs before its sink (for sizes >= 0)."""
    smap = schedule.get_map()
    before = smap.lex_lt_union_map(smap)
    return bool(deps.intersect_params(context).is_subset(before))


def _cases() -> list[object]:
    out = []
    for k in KERNELS:
        for spec in (True, False):
            out.append(
                pytest.param(k, spec, id=f"{k.name}-{'spec' if spec else 'generic'}")
            )
    return out


@pytest.mark.parametrize(("kernel", "specialize"), _cases())
def test_every_schedule_respects_dependences(kernel: object, specialize: bool) -> None:
    sizes = kernel.sizes[0] if specialize else None  # type: ignore[attr-defined]
    module = lower(parse_tc(kernel.source), "affine", sizes)  # type: ignore[attr-defined]
    for fn in _funcs(module):
        scop = extract_scop(fn)
        deps = dependences(scop).all
        for fusion in FUSIONS:
            for tile in ((0,), (4, 3, 5), None):
                s = compute_schedule(scop, deps, ScheduleOptions(fusion, tile))
                ok = _respects(s, deps, schedule_context(scop))
                assert ok, (fusion, tile, schedule_tree(s))


@pytest.mark.parametrize(("kernel", "specialize"), _cases())
def test_every_catalog_kernel_is_rescheduled(kernel: object, specialize: bool) -> None:
    sizes = kernel.sizes[0] if specialize else None  # type: ignore[attr-defined]
    module = lower(parse_tc(kernel.source), "affine", sizes)  # type: ignore[attr-defined]
    for fn in _funcs(module):
        assert schedule_function(fn, ScheduleOptions()) is not None
        fn.verify()


def _scheduled(source: str, **options: object) -> tuple[func.FuncOp, str]:
    names = ("N", "D") if "softmax" in source else ("M", "K", "N")
    module = lower(parse_tc(source), "affine", {n: 64 for n in names})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(**options))  # type: ignore[arg-type]
    assert tree is not None
    return fn, tree


def _top_loops(fn: func.FuncOp) -> list[object]:
    body = fn.body.blocks.first
    assert body is not None
    return [op for op in body.ops if isinstance(op, affine.ForOp | affine.ParallelOp)]


def test_max_fuses_softmax_into_one_parallel_row_loop() -> None:
    fn, tree = _scheduled(SOFTMAX, fusion="max")
    loops = _top_loops(fn)
    assert len(loops) == 1 and isinstance(loops[0], affine.ParallelOp)
    assert 'mark: "parallel@0"' in tree


def test_min_keeps_one_nest_per_statement() -> None:
    fn, _ = _scheduled(SOFTMAX, fusion="min")
    assert len(_top_loops(fn)) == 6  # two inits, four statements


def test_preserve3coincident_sits_between_min_and_max() -> None:
    counts = [len(_top_loops(_scheduled(SOFTMAX, fusion=f)[0])) for f in FUSIONS]
    assert counts[0] <= counts[1] <= counts[2]


def test_auto_tiling_tiles_matmul_and_orders_points_stride_one() -> None:
    fn, tree = _scheduled(MATMUL)
    assert "floor((r_k)/" in tree  # the reduction is tiled
    # The innermost loop walks n: B and C are stride-1, A is invariant.
    innermost = [
        op
        for op in fn.walk()
        if isinstance(op, affine.ForOp)
        and not any(isinstance(o, affine.ForOp) for o in op.body.walk())
    ]
    names = {op.body.block.args[0].name_hint for op in innermost}
    assert names == {"n"}


def test_auto_tiling_leaves_the_innermost_parallel_member_whole() -> None:
    # m is tiled, r_k is tiled, n (the output's unit-stride dimension, the
    # innermost coincident member) runs whole inside each row tile.
    module = lower(parse_tc(MATMUL), "affine", {"M": 1024, "K": 1024, "N": 1024})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions())
    assert tree is not None
    assert "floor((m)/512)" in tree
    assert "floor((r_k)/256)" in tree
    assert "floor((n)/" not in tree


@pytest.mark.parametrize(
    ("rows", "threads", "tile"),
    [(1024, 1, 512), (1024, 2, 512), (1024, 3, 344), (1000, 2, 504), (4096, 2, 512)],
)
def test_auto_tiling_splits_the_parallel_member_evenly(
    rows: int, threads: int, tile: int
) -> None:
    # A multiple of `threads` row tiles of (nearly) equal size, at most ~512.
    module = lower(parse_tc(MATMUL), "affine", {"M": rows, "K": 1024, "N": 64})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(threads=threads))
    assert tree is not None
    assert f"floor((m)/{tile})" in tree
    tiles = -(-rows // tile)
    assert tiles % threads == 0
    assert rows - (tiles - 1) * tile > tile - 8 * threads


BMM = """
def bmm(float(B, M, K) X, float(B, K, N) Y) -> (Z) {
    Z(b, m, n) +=! X(b, m, r_k) * Y(b, r_k, n)
}"""


@pytest.mark.parametrize(
    ("depth", "tile", "mark", "loop"),
    [
        (0, (1, 32), 0, "[(b)]"),  # the batch loop, as by default
        (1, (1, 32), 1, "[(floor((m)/32))]"),  # row tiles, inside the batch loop
        (1, (1, 512), 0, "[(b)]"),  # a single row tile: member 0 instead
        (3, (1, 32), 0, "[(b)]"),  # the tile band has no member 3
    ],
)
def test_parallel_depth_marks_that_member_of_the_outer_band(
    depth: int, tile: tuple[int, ...], mark: int, loop: str
) -> None:
    module = lower(parse_tc(BMM), "affine", {"B": 2, "M": 256, "K": 64, "N": 96})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(tile=tile, parallel_depth=depth))
    assert tree is not None
    # the outermost mark, and the loop it marks (the band right below it)
    after = tree.split('mark: "parallel@', 1)[1]
    assert after.split('"', 1)[0] == str(mark)
    assert loop in after.split("schedule:", 1)[1].split("\n", 1)[0]


def test_auto_tiling_keeps_small_parallel_members_in_one_tile() -> None:
    # 192 rows are one tile (the parallel point loop shares them), not 2 x 96.
    module = lower(parse_tc(MATMUL), "affine", {"M": 192, "K": 1024, "N": 64})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(threads=2))
    assert tree is not None
    assert "floor((m)/192)" in tree


EINSUM = """
def ein(float(A, B, C) X, float(C, D) Y) -> (O) {
    O(a, b, d) +=! X(a, b, r_c) * Y(r_c, d)
}"""


@pytest.mark.parametrize(("threads", "tile"), [(2, 16), (3, 11), (4, 8)])
def test_auto_tiling_cuts_a_short_batch_member_per_thread(
    threads: int, tile: int
) -> None:
    # `a` (32) is outside the row and column members b and d: one tile per
    # thread, so that each thread's share is a serial loop.
    sizes = {"A": 32, "B": 128, "C": 256, "D": 512}
    module = lower(parse_tc(EINSUM), "affine", sizes)
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(threads=threads))
    assert tree is not None
    assert f"floor((a)/{tile})" in tree


BATCH_MATMUL = """
def bmm(float(B, N, M) X, float(B, M, K) Y) -> (Z) {
    Z(b, n, k) +=! X(b, n, r_m) * Y(b, r_m, k)
}"""


@pytest.mark.parametrize(
    ("batches", "threads", "tile"),
    [(500, 2, 1), (500, 3, 1), (16, 2, 1), (15, 2, 8), (4, 2, 2), (None, 2, 1)],
)
def test_auto_tiling_gives_a_batch_member_without_reuse_one_batch_per_tile(
    batches: int | None, threads: int, tile: int
) -> None:
    # Every operand varies along b: with >= 8 batches per thread (or an
    # unknown number) each is its own tile; fewer keep one tile per thread.
    sizes = {"N": 26, "M": 72, "K": 26} | ({"B": batches} if batches else {})
    module = lower(parse_tc(BATCH_MATMUL), "affine", sizes)
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(threads=threads))
    assert tree is not None
    if tile == 1:
        assert "floor((b)/" not in tree
        assert "-> [(b)] }]" in tree.split("child:")[2]  # the outermost band
    else:
        assert f"floor((b)/{tile})" in tree


def test_auto_tiling_keeps_short_rows_in_one_tile_with_two_coincident_members() -> None:
    # The same rule does not cut rows: matmul's 128 rows stay one tile.
    module = lower(parse_tc(MATMUL), "affine", {"M": 128, "K": 1024, "N": 1024})
    fn = _funcs(module)[0]
    tree = schedule_function(fn, ScheduleOptions(threads=2))
    assert tree is not None
    assert "floor((m)/192)" in tree


def _parallel_loops(fn: func.FuncOp) -> list[affine.ParallelOp]:
    return [op for op in fn.walk() if isinstance(op, affine.ParallelOp)]


def test_point_loop_is_parallel_when_the_tile_loop_runs_once() -> None:
    # 64 rows in 128-row tiles: isl drops the tile loop over m (one tile), and
    # the point loop over m takes its place as the parallel loop.
    fn, _ = _scheduled(MATMUL)
    par = _parallel_loops(fn)
    # One parallel row loop per statement (the init and the update).
    assert [p.body.block.args[0].name_hint for p in par] == ["m", "m"]
    assert not any(
        isinstance(op, affine.ParallelOp) for p in par for op in p.body.walk()
    )


def test_no_parallel_loop_inside_a_parallel_tile_loop() -> None:
    module = lower(parse_tc(MATMUL), "affine", {"M": 1024, "K": 64, "N": 64})
    fn = _funcs(module)[0]
    assert schedule_function(fn, ScheduleOptions()) is not None
    par = _parallel_loops(fn)
    assert len(par) == 1  # the tile loop; the point loop over m stays serial
    assert any(
        isinstance(op, affine.ForOp) and op.body.block.args[0].name_hint == "m"
        for op in par[0].body.walk()
    )


TWO_MATMULS = """
def two(float(M, K) A, float(K, N) B, float(N, P) D) -> (C) {
    T(m, n) +=! A(m, r_k) * B(r_k, n)
    C(m, p) +=! T(m, r_n) * D(r_n, p)
}
"""


def test_max_does_not_fuse_away_outer_parallelism() -> None:
    # Fused whole, the two contractions share one band with a single
    # coincident member; each on its own has two (m and n, m and p).
    module = lower(parse_tc(TWO_MATMULS), "affine", {"M": 32, "K": 24, "N": 16, "P": 8})
    fn = _funcs(module)[0]
    scop = extract_scop(fn)
    deps = dependences(scop).all
    schedule = compute_schedule(scop, deps, ScheduleOptions(tile=(0,)))
    assert _respects(schedule, deps, schedule_context(scop))
    root = schedule.get_root().child(0)
    assert root.get_type() == isl.schedule_node_type.sequence
    for i in range(root.n_children()):
        band = root.child(i).child(0)
        while band.get_type() == isl.schedule_node_type.mark:
            band = band.child(0)
        assert band.get_type() == isl.schedule_node_type.band
        members = [band]
        if band.band_n_member() == 1:  # the parallel member was split off
            members.append(band.child(0))
        coincident = [
            bool(b.band_member_get_coincident(k))
            for b in members
            for k in range(b.band_n_member())
        ]
        assert coincident[:2] == [True, True]


KRONECKER3 = next(k for k in KERNELS if k.name == "kronecker3").source


@pytest.mark.parametrize(("m", "threads", "shared"), [(64, 2, True), (7, 2, False)])
def test_max_shares_the_batch_loop_of_chained_mode_products(
    m: int, threads: int, shared: bool
) -> None:
    # The three contractions lose parallel loops fused whole, but all lead
    # with m, which is no register tile's rows: with enough iterations for
    # the threads, one parallel loop over m runs them in sequence.
    sizes = {"M": m, "D0": 4, "D1": 5, "D2": 6, "N0": 7, "N1": 8, "N2": 9}
    module = lower(parse_tc(KRONECKER3), "affine", sizes)
    fn = _funcs(module)[0]
    scop = extract_scop(fn)
    deps = dependences(scop).all
    options = ScheduleOptions(threads=threads)
    assert _respects(
        compute_schedule(scop, deps, options), deps, schedule_context(scop)
    )
    assert schedule_function(fn, options) is not None
    loops = _top_loops(fn)
    assert all(isinstance(op, affine.ParallelOp) for op in loops)
    assert len(loops) == (1 if shared else 3)
    if shared:
        stores = [op.memref for op in loops[0].walk() if isinstance(op, affine.StoreOp)]
        assert {v.name_hint for v in stores} == {"XW2", "XW1", "Y"}


BATCHED_CHAIN = """
def chain(float(B, I, R) A, float(B, R, J) W, float(B, J, K) V) -> (C) {
    T(b, i, j) +=! A(b, i, r_r) * W(b, r_r, j)
    C(b, i, k) +=! T(b, i, r_j) * V(b, r_j, k)
}
"""

MLP = """
def mlp(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
    O1(b, n) +=! I(b, r_m) * W1(n, r_m)
    O1(b, n) = O1(b, n) + B1(n)
    O1(b, n) = fmax(O1(b, n), 0)
}
"""


MLP2 = next(k for k in KERNELS if k.name == "mlp2").source


@pytest.mark.parametrize(
    ("source", "sizes", "reductions"),
    [
        (BATCHED_CHAIN, {"B": 64, "I": 128, "R": 128, "J": 128, "K": 128}, 2),
        (MLP2, {"B": 1024, "M": 1024, "N": 1024, "P": 1024}, 2),
        (MLP, {"B": 256, "M": 512, "N": 256}, 1),
    ],
)
def test_isl_search_is_bounded_for_two_reductions(
    source: str, sizes: dict[str, int], reductions: int
) -> None:
    # Two chained batched products: isl's unbounded search took over ten
    # minutes (the whole group: two inits, two reductions); two MLP layers
    # of 1024s, 66 s bounded but with proximity constraints (0.01 s now).
    # The MLP keeps the unbounded search that puts its epilogue in the
    # reduction's band.
    fn = _funcs(lower(parse_tc(source), "affine", sizes))[0]
    scop = extract_scop(fn)
    assert _reductions(scop, list(scop.statements)) == reductions
    deps = dependences(scop).all
    schedule = compute_schedule(scop, deps, ScheduleOptions(threads=2))
    assert _respects(schedule, deps, schedule_context(scop))
    if reductions == 1:
        assert "floor((r_m)/" in schedule_tree(schedule)  # one tiled band


def test_tile_zero_turns_tiling_off() -> None:
    _, tree = _scheduled(MATMUL, tile=(0,))
    assert "floor(" not in tree


def test_groups_merge_dependence_cycles_only() -> None:
    deps = isl.UnionMap("{ S0[i] -> S1[i]; S2[i] -> S1[i + 1]; S1[i] -> S2[i] }")
    assert _groups(["S0", "S1", "S2", "S3"], deps) == [["S0"], ["S1", "S2"], ["S3"]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fusion": "maximal"}, "unknown fusion strategy 'maximal'"),
        ({"tile": (32, -1)}, "tile sizes must be integers >= 0"),
        ({"parallel_depth": -1}, "parallel_depth must be an integer >= 0"),
    ],
)
def test_bad_options_are_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(TCError, match=message):
        ScheduleOptions(**options)  # type: ignore[arg-type]


def test_constant_owned_by_one_statement_is_cloned_for_another() -> None:
    # Found by the random program generator (seed 2): the top-level constants
    # before the first store belong to statement S0 but S1's checked read uses
    # them too; regeneration must clone them, not reference erased values.
    import numpy as np

    import tcdialect
    from tcdialect import reference

    source = "def g2(float32(N, N) X1) -> (T5) {\n  T5 +=! X1(r0 % N, 2 * r0)\n}"
    x = np.array([[0.5, -1.0], [2.0, 3.0]], dtype=np.float32)
    for fusion in FUSIONS:
        k = tcdialect.define(source, options=tcdialect.CpuOptions(fusion=fusion))
        want = reference.run(parse_tc(source), None, [x])
        np.testing.assert_allclose(k(x), want[0], rtol=1e-6)
