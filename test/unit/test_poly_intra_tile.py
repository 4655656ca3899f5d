"""Rescheduling inside GPU tiles (tcdialect.poly.intra_tile) on schedule trees.

The new trees keep every dependence, give statements fused outside nests
of their own under `min`, and are left alone where the strategies agree or
where a tile loop that runs in order in a block would carry a value from
one thread to another (numerics: test/e2e/test_cuda_intra_tile.py).
"""

from __future__ import annotations

import math
import re

import islpy as isl
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from xdsl.dialects import func

from tcdialect.frontend import parse_tc
from tcdialect.pipeline import lower
from tcdialect.poly.gpu_mapping import GpuMapping, map_schedule, parse_mark
from tcdialect.poly.intra_tile import reschedule_tiles
from tcdialect.poly.schedule import FUSIONS, schedule_context, schedule_tree
from tcdialect.poly.scop import Scop, dependences, extract_scop

MATMUL_BIAS = """
def mmb(float(M, K) A, float(K, N) B, float(N) b) -> (C, D) {
  C(m, n) +=! A(m, r_k) * B(r_k, n)
  D(m, n) = C(m, n) + b(n)
}"""
MLP2 = next(k.source for k in catalog.KERNELS if k.name == "mlp2")


def _scop(source: str, sizes: dict[str, int]) -> tuple[Scop, isl.UnionMap]:
    module = lower(parse_tc(source), "affine", sizes)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    scop = extract_scop(fn)
    return scop, dependences(scop).all


def _mapped(
    source: str, sizes: dict[str, int], intra: str, tile: tuple[int, ...]
) -> tuple[isl.Schedule, isl.Schedule, isl.UnionMap, Scop]:
    scop, deps = _scop(source, sizes)
    mapping = GpuMapping("max", tile, intra_fusion=intra)
    before = map_schedule(scop, deps, mapping)
    return before, reschedule_tiles(before, scop, deps, mapping), deps, scop


@pytest.mark.parametrize("intra", FUSIONS)
def test_rescheduled_trees_keep_every_dependence(intra: str) -> None:
    _, after, deps, scop = _mapped(
        MATMUL_BIAS, {"M": 24, "K": 20, "N": 36}, intra, (8, 16, 8)
    )
    smap = after.get_map()
    before = smap.lex_lt_union_map(smap)
    assert deps.intersect_params(schedule_context(scop)).is_subset(before)


def test_min_gives_each_statement_its_thread_nest_below_the_tile_loops() -> None:
    old, new, _, _ = _mapped(
        MATMUL_BIAS, {"M": 24, "K": 20, "N": 36}, "min", (8, 16, 8)
    )
    assert schedule_tree(old).count("thread_x") == 1
    tree = schedule_tree(new)
    # the init, the products (over k's tiles, each thread its own elements)
    # and the bias, one thread nest each
    assert tree.count("thread_y=8,thread_x=16") == 3
    assert "sequence" in tree and "floor((r_k)/8)" in tree


def test_equal_strategies_leave_the_tree_alone() -> None:
    scop, deps = _scop(MATMUL_BIAS, {"M": 24, "K": 20, "N": 36})
    for outer, intra in (("max", "max"), (None, "preserve3coincident"), ("min", None)):
        mapping = GpuMapping(outer, intra_fusion=intra)
        schedule = map_schedule(scop, deps, mapping)
        assert reschedule_tiles(schedule, scop, deps, mapping) is schedule


def test_values_carried_between_threads_by_a_serial_tile_loop_keep_the_old_order() -> (
    None
):
    # Fused with the second layer, the first layer's products O1(b, n) run
    # in tiles of -n in order in the block, its bias and ReLU in the last:
    # rescheduled, the threads along n would start at other offsets in the
    # two iterations, so another thread would read the product (a race).
    sizes = {"B": 2, "M": 16, "N": 9, "P": 1}
    for intra in ("preserve3coincident", "min"):
        old, new, _, _ = _mapped(MLP2, sizes, intra, (8, 16, 4))
        assert schedule_tree(new) == schedule_tree(old)


SOFTMAX = """
def softmax(float(N, D) I) -> (O, mx, sm) {
  mx(n) max=! I(n, d)
  O(n, d) = exp(I(n, d) - mx(n))
  sm(n) +=! O(n, d)
  O(n, d) = O(n, d) / sm(n)
}"""


@pytest.mark.parametrize("sizes", [None, {"N": 1024, "D": 1024}])
def test_the_nests_of_a_tile_share_one_block(sizes: dict[str, int] | None) -> None:
    # The mapper gives the rows a whole block of 256 threads along x; the
    # rescheduled nests stay within it (not 256 along x for one nest and
    # 32 x 8 for another: a block of 256 x 8).
    module = lower(parse_tc(SOFTMAX), "affine", sizes)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    scop = extract_scop(fn)
    deps = dependences(scop).all
    mapping = GpuMapping("max", intra_fusion="min")
    tree = schedule_tree(
        reschedule_tiles(map_schedule(scop, deps, mapping), scop, deps, mapping)
    )
    block = {"x": 1, "y": 1, "z": 1}
    for mark in re.findall(r'mark: "(map@[^"]*)"', tree):
        for member in parse_mark(mark).values():
            if member.processor.startswith("thread_"):
                axis = member.processor[-1]
                block[axis] = max(block[axis], member.size)
    assert tree.count("thread_x") == 6  # a nest per statement
    assert math.prod(block.values()) <= 256
