"""Register tiles along short thread axes, in the GPU simulator.

A matmul-like band whose thread axis is no longer than the block (a mode
product of Kronecker3 over a 16-long `d`; a grouped convolution's `f` on
threads along z) gives that axis a quarter of the threads, each with a
register tile of 4 along it (`gpu_mapping._register_tile_threads`); a
convolution whose output plane has no register tiles (extents that are no
multiples of the block) takes 4 output channels a thread, on one thread
along z (`_outer_register_tile`). The sizes make at least the GPU's 132
tiles (fewer keep an element per thread); the outputs agree with the
reference interpreter.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc

MODE = """def mode(float(M, N, R) X, float(D, R) W) -> (O) {
    O(m, n, d) +=! X(m, n, r_r) * W(d, r_r)
}"""

CONV2D = """def conv2d(float(N, C, H, W) I, float(K, C, KH, KW) W1) -> (O) {
    O(n, k, h, w) +=! I(n, r_c, h + r_kh, w + r_kw) * W1(k, r_c, r_kh, r_kw)
}"""

GROUP_CONV = """def group_conv(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1)
    -> (O) {
    O(n, g, f, h, w) +=! I(n, g, r_c, h + r_kh, w + r_kw) * W1(g, f, r_c, r_kh, r_kw)
}"""


@pytest.mark.parametrize(
    ("source", "shapes", "block", "fmas", "red"),
    [
        pytest.param(
            MODE, [(140, 32, 40), (16, 40)], "4, 8, 1", 16, 40, id="mode-product"
        ),
        pytest.param(
            GROUP_CONV,
            [(12, 12, 8, 7, 7), (12, 8, 8, 3, 3)],
            "5, 5, 2",
            4,
            72,
            id="group-conv-z",
        ),
        pytest.param(
            CONV2D,
            [(5, 3, 42, 12), (64, 3, 3, 3)],
            "10, 8, 1",
            4,
            27,
            id="conv2d-k-on-z",
        ),
    ],
)
def test_short_axis_register_tiles(
    source: str, shapes: list[tuple[int, ...]], block: str, fmas: int, red: int
) -> None:
    rng = np.random.default_rng(len(shapes[0]))
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    k = tcdialect.define(source, target="cuda-sim")
    gpu = k.ir(*inputs, stage="gpu")
    assert re.search(rf"known_block_size = array<i32: {block}>", gpu)
    assert gpu.count("math.fma") == fmas  # a thread's register tile, jammed
    want = reference.run(parse_tc(source), None, inputs)
    check_outputs(k(*inputs), want, red)


MLP = """def mlp(float(B, M) I, float(M, N) W, float(N) bias) -> (O) {
    O(b, n) +=! I(b, r_m) * W(r_m, n)
    O(b, n) = fmax(O(b, n) + bias(n), 0.0)
}"""

#: The weights read across their rows along n (PyTorch's linear layer).
MLP_T = MLP.replace("float(M, N) W", "float(N, M) W").replace("W(r_m, n)", "W(n, r_m)")


@pytest.mark.parametrize(
    ("source", "batch", "n", "block", "fmas"),
    [
        # 2 x 2 tiles of 128 x 128 for one SM: 16 x 16 threads of 8 x 8
        pytest.param(MLP, 256, 256, "16, 16, 1", 64, id="square-8x8"),
        # 200 is no multiple of 128: the 32 x 8 block stays (with a register
        # tile of 4 along the batch only, 200 being no multiple of 4 x 32)
        pytest.param(MLP, 256, 200, "32, 8, 1", 4, id="ragged-32x8"),
        # W read a row apart along n: the 32 x 8 block's 4 x 4 tiles stay
        pytest.param(MLP_T, 256, 256, "32, 8, 1", 16, id="transposed-32x8"),
    ],
)
def test_wide_register_tiles_where_tiles_fill_the_sms(
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    batch: int,
    n: int,
    block: str,
    fmas: int,
) -> None:
    # a GPU of one SM, so that a small GEMM has the tiles that matmul 4096
    # has on an H100's 132 (`gpu_mapping._square_block`); the reduction's
    # 40 is two 16-slices and a short one, double-buffered
    from tcdialect.backend.cuda.target import GENERIC_GPU, CudaSimBackend

    one_sm = dataclasses.replace(GENERIC_GPU, cores=1)
    monkeypatch.setattr(CudaSimBackend, "info", lambda self: one_sm)
    rng = np.random.default_rng(n)
    w = (40, n) if source is MLP else (n, 40)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in [(batch, 40), w, (n,)]]
    k = tcdialect.define(source, target="cuda-sim")
    gpu = k.ir(*inputs, stage="gpu")
    assert re.search(rf"known_block_size = array<i32: {block}>", gpu)
    assert gpu.count("math.fma") == fmas
    want = reference.run(parse_tc(source), None, inputs)
    check_outputs(k(*inputs), want, 40)
