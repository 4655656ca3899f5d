"""`prefetch-next-slice` in the default pipeline, on catalog kernels: the next
iteration's slice is prefetched where the contract says (Kronecker3's `X(m+1)`
from all three mode products, group convolution's `I(n, g+1)` from its own
rows), scalar loops stay with LLVM's vectoriser, and the kernels still compute
what the reference interpreter does."""

from __future__ import annotations

import re

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from test_cpu_catalog import check_outputs  # test/e2e is on pytest's pythonpath

import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.target import GENERIC_CPU
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import Lowering

SOURCES = {k.name: k.source for k in catalog.KERNELS}


def _uniform(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]


def _kronecker3_inputs(m: int, d: int, n: int) -> list[np.ndarray]:
    return _uniform((d, n), (d, n), (d, n), (m, n, n, n))


def _check(name: str, k: tcdialect.Kernel, inputs: list[np.ndarray], red: int) -> None:
    want = reference.run(parse_tc(SOURCES[name]), None, inputs)
    check_outputs(k(*inputs), want, red)


def _define(name: str, threads: int | None = None) -> tcdialect.Kernel:
    """`SOURCES[name]` compiled as for a machine with 512-bit vectors, whatever
    this one has: the nests these tests look at are deep enough for the pass
    only with register-tile's 16-lane strips (with 8 lanes it splits the rows
    into two loops and the chain of loops stops above the slice)."""
    k = tcdialect.define(SOURCES[name], options=tcdialect.CpuOptions(threads=threads))
    info = GENERIC_CPU.with_(vector_bits=512, cores=threads or 1)
    k.lowering = Lowering(k.backend, k.options, info)
    return k


def _next_slice_prefetches(loops: str, array: str, iv: str) -> list[str]:
    """The prefetches of `array` whose first subscript is `iv + 1`."""
    nxt = set(re.findall(rf"(%\w+) = arith\.addi %{iv}, %c1\w*\b", loops))
    return [
        line
        for line in loops.splitlines()
        if (hit := re.search(rf"memref\.prefetch %{array}\[(%\w+),", line))
        and hit.group(1) in nxt
    ]


@pytest.mark.parametrize("threads", [1, 2])
def test_kronecker3_prefetches_the_next_slice_and_is_right(threads: int) -> None:
    # M >= 4 x threads, so that the three mode products share the loop over m
    inputs = _kronecker3_inputs(m=9, d=16, n=32)  # X(m, ...): 128 KiB
    k = _define("kronecker3", threads)
    loops = k.ir(*inputs, stage="loops")
    prefetches = _next_slice_prefetches(loops, "X", "m")
    assert prefetches and all("locality<3>" in p for p in prefetches)
    # spread over the three mode products: in the first, the only nest that
    # reads X (before its last load of X), and in the two later ones (after
    # that load and before the last store of Y)
    lines = loops.splitlines()
    at = [i for i, line in enumerate(lines) if line in prefetches]
    loads_x = [i for i, line in enumerate(lines) if re.search(r"load %X\[", line)]
    last_y = max(i for i, line in enumerate(lines) if re.search(r"store .*%Y\[", line))
    assert any(i < loads_x[-1] for i in at), (loads_x, at)
    assert any(loads_x[-1] < i < last_y for i in at), (loads_x, at, last_y)
    assert all(i < last_y for i in at), (at, last_y)
    # X(m) itself was fetched by the previous m: no look-ahead within it
    assert not re.search(r"memref\.prefetch %X\[%m,", loops)
    _check("kronecker3", k, inputs, red=32 * 3)


def test_small_slices_are_left_to_the_hardware() -> None:
    inputs = _kronecker3_inputs(m=6, d=4, n=8)  # X(m, ...) is 2 KiB, under min-bytes
    k = tcdialect.define(SOURCES["kronecker3"])
    assert _next_slice_prefetches(k.ir(*inputs, stage="loops"), "X", "m") == []
    _check("kronecker3", k, inputs, red=8 * 3)


def test_group_conv_prefetches_the_next_group_from_its_own_rows() -> None:
    # I(n, g, *) is 4 planes of 48 x 48 (36 KiB); I(n, *) is 8 of those,
    # over max-bytes, so the loop over g prefetches, not the one over n
    inputs = _uniform((2, 8, 4, 48, 48), (8, 4, 4, 3, 3), (8, 4))
    k = _define("group_conv", 2)
    loops = k.ir(*inputs, stage="loops")
    nxt = set(re.findall(r"(%\w+) = arith\.addi %g, %c1\w*\b", loops))
    hits = re.findall(r"memref\.prefetch %I\[%n, (%\w+),", loops)
    assert hits and set(hits) <= nxt, (hits, nxt)
    _check("group_conv", k, inputs, red=4 * 9)


def test_scalar_loops_stay_with_the_vectoriser() -> None:
    # rows of 16 KiB: the next row is a slice; the max and sum loops (on
    # vectors) take its prefetches, the exponential and division loops (on
    # scalars) none: LLVM vectorises those only while no prefetch sits in
    # their bodies
    inputs = [4 * _uniform((16, 4096))[0]]
    k = tcdialect.define(SOURCES["softmax"], options=tcdialect.CpuOptions(threads=2))
    asm = k.ir(*inputs, stage="asm")
    assert re.search(r"\bv?divps\b", asm), "the division loop is not vectorised"
    assert not re.search(r"\bv?divss\b", asm), "a scalar division remains"
    _check("softmax", k, inputs, red=4096)
