"""`prefetch-next-slice` in the default pipeline: Kronecker3's 128 KiB slice
`X(m, ...)` is prefetched for `m + 1` from the mode products that do not read
`X`, and the kernel still computes what the reference interpreter does."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_cpu_catalog import check_outputs  # test/e2e is on pytest's pythonpath

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc

KRONECKER3 = """
def kronecker3(float(D2, N2) W2, float(D1, N1) W1, float(D0, N0) W0,
               float(M, N0, N1, N2) X) -> (Y) {
    XW2(m, n0, n1, d2) +=! X(m, n0, n1, r_n2) * W2(d2, r_n2)
    XW1(m, n0, d1, d2) +=! XW2(m, n0, r_n1, d2) * W1(d1, r_n1)
    Y(m, d0, d1, d2) +=! XW1(m, r_n0, d1, d2) * W0(d0, r_n0)
}
"""


def _inputs(m: int, d: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    shapes = [(d, n), (d, n), (d, n), (m, n, n, n)]
    return [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]


def _next_slice_prefetches(loops: str) -> list[str]:
    """The prefetches of X whose first subscript is `%m` plus one."""
    nxt = set(re.findall(r"(%\w+) = arith\.addi %m, %c1\w*\b", loops))
    return [
        line
        for line in loops.splitlines()
        if (hit := re.search(r"memref\.prefetch %X\[(%\w+),", line))
        and hit.group(1) in nxt
    ]


@pytest.mark.parametrize("threads", [1, 2])
def test_kronecker3_prefetches_the_next_slice_and_is_right(threads: int) -> None:
    # M >= 4 x threads, so that the three mode products share the loop over m
    inputs = _inputs(m=9, d=16, n=32)  # X(m, ...) is 32^3 floats: 128 KiB
    k = tcdialect.define(KRONECKER3, options=tcdialect.CpuOptions(threads=threads))
    prefetches = _next_slice_prefetches(k.ir(*inputs, stage="loops"))
    # one in each of the two later mode products, which do not read X
    assert len(prefetches) == 2, prefetches
    assert all("locality<3>" in p for p in prefetches)
    want = reference.run(parse_tc(KRONECKER3), None, inputs)
    check_outputs(k(*inputs), want, red=32 * 3)


def test_small_slices_are_left_to_the_hardware() -> None:
    inputs = _inputs(m=6, d=4, n=8)  # X(m, ...) is 2 KiB, under min-bytes
    k = tcdialect.define(KRONECKER3)
    assert _next_slice_prefetches(k.ir(*inputs, stage="loops")) == []
    want = reference.run(parse_tc(KRONECKER3), None, inputs)
    check_outputs(k(*inputs), want, red=8 * 3)


GROUP_CONV = """
def group_conv(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1) -> (O) {
    O(n, g, f, h, w) +=! I(n, g, r_c, h + r_kh, w + r_kw) * W1(g, f, r_c, r_kh, r_kw)
}
"""


def test_group_conv_prefetches_the_next_group_from_its_own_rows() -> None:
    rng = np.random.default_rng(3)
    # I(n, g, *) is 4 planes of 48 x 48 (36 KiB); I(n, *) is 8 of those,
    # over max-bytes, so the loop over g prefetches, not the one over n
    inputs = [
        rng.uniform(-1, 1, (2, 8, 4, 48, 48)).astype(np.float32),
        rng.uniform(-1, 1, (8, 4, 4, 3, 3)).astype(np.float32),
    ]
    k = tcdialect.define(GROUP_CONV, options=tcdialect.CpuOptions(threads=2))
    loops = k.ir(*inputs, stage="loops")
    nxt = set(re.findall(r"(%\w+) = arith\.addi %g, %c1\w*\b", loops))
    hits = re.findall(r"memref\.prefetch %I\[%n, (%\w+),", loops)
    assert hits and set(hits) <= nxt, (hits, nxt)
    want = reference.run(parse_tc(GROUP_CONV), None, inputs)
    check_outputs(k(*inputs), want, red=4 * 9)


SOFTMAX = """
def softmax(float(N, D) I) -> (O) {
    mx(n) max=! I(n, r_d)
    e(n, d) = exp(I(n, d) - mx(n))
    s(n) +=! e(n, r_d)
    O(n, d) = e(n, d) / s(n)
}
"""


def test_scalar_loops_stay_with_the_vectoriser() -> None:
    # rows of 16 KiB: the next row is a slice; its quiet nests are the sum (a
    # vector loop, which takes the prefetches) and the division, a scalar
    # loop that LLVM vectorises only while no prefetch sits in its body
    I = np.random.default_rng(5).uniform(-4, 4, (16, 4096)).astype(np.float32)
    k = tcdialect.define(SOFTMAX, options=tcdialect.CpuOptions(threads=2))
    asm = k.ir(I, stage="asm")
    assert re.search(r"\bv?divps\b", asm), "the division loop is not vectorised"
    assert not re.search(r"\bv?divss\b", asm), "a scalar division remains"
    want = reference.run(parse_tc(SOFTMAX), None, [I])
    check_outputs(k(I), want, red=4096)
