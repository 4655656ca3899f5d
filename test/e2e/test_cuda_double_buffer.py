"""`gpu-double-buffer` in the GPU simulator: streamed slices copied one
iteration ahead agree with the reference interpreter.

The simulator lands a `cp.async` copy only when its thread reaches the next
barrier and reports a read that races with a write, so a slice read before
its copies landed, a copy into the half other threads still read, or a next
tile's first copies racing with the last iteration's reads all fail here.
The cases give the tile loop over the reduction two, three (an odd count:
the last slice in half 0, where the block's next tile starts) and more
iterations, a last slice shorter than the others, blocks that run several
tiles (a grid smaller than the tiles), run-time sizes (the first copies
under a guard), and a fused epilogue reading its own buffer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.frontend import parse_tc

MATMUL = """def mm(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""

FCRELU = """def fcrelu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
    O1(b, n) +=! I(b, r_m) * W1(n, r_m)
    O1(b, n) = O1(b, n) + B1(n)
    O1(b, n) = fmax(O1(b, n), 0)
}"""

#: A doubled shared buffer in the `gpu` stage.
DOUBLED = re.compile(r"memref\.alloca\(\) : memref<2x\d+x\d+xf32, 3 : i32>")

CASES = [
    # (source, shapes, options, reduction length)
    pytest.param(MATMUL, [(40, 64), (64, 136)], {}, 64, id="mm-2-slices"),
    pytest.param(MATMUL, [(40, 96), (96, 136)], {}, 96, id="mm-3-slices"),
    pytest.param(MATMUL, [(33, 150), (150, 70)], {}, 150, id="mm-short-last"),
    pytest.param(
        MATMUL, [(64, 96), (96, 256)], {"grid": (1, 1)}, 96, id="mm-tiles-per-block"
    ),
    pytest.param(
        MATMUL, [(40, 96), (96, 136)], {"specialize": False}, 96, id="mm-generic"
    ),
    pytest.param(FCRELU, [(16, 100), (40, 100), (40,)], {}, 100, id="fcrelu-epilogue"),
]


@pytest.mark.parametrize(("source", "shapes", "options", "red"), CASES)
def test_double_buffered_slices(
    source: str, shapes: list[tuple[int, ...]], options: dict[str, Any], red: int
) -> None:
    rng = np.random.default_rng(sum(map(sum, shapes)))
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    want = reference.run(parse_tc(source), None, inputs)
    k = tcdialect.define(source, target="cuda-sim", options=CudaOptions(**options))
    assert DOUBLED.search(k.ir(*inputs, stage="gpu"))
    check_outputs(k(*inputs), want, red)


def test_off_leaves_single_buffers() -> None:
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in [(40, 96), (96, 136)]]
    options = CudaOptions(double_buffer=False)
    k = tcdialect.define(MATMUL, target="cuda-sim", options=options)
    gpu = k.ir(*inputs, stage="gpu")
    assert not DOUBLED.search(gpu) and gpu.count("gpu.barrier") == 2
    check_outputs(k(*inputs), reference.run(parse_tc(MATMUL), None, inputs), 96)
