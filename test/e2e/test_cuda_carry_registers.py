"""`gpu-carry-registers` in the GPU simulator: fused GEMM epilogues, and
elements a loop only reads.

A fully connected layer with bias and ReLU (`O1 = max(I W1^T + B1, 0)`)
fuses the epilogue into the last iteration of the tile loop over the
reduction. The thread's elements of `O1` start from the initialisation's
zero and stay in registers through the tile loop, the epilogue included
(an `scf.if` that yields them): the kernel never loads `O1`, which before
it read and wrote every tile of the output once per slice of the
reduction. The outputs agree with the reference interpreter.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc

FCRELU = """def fcrelu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
    O1(b, n) +=! I(b, r_m) * W1(n, r_m)
    O1(b, n) = O1(b, n) + B1(n)
    O1(b, n) = fmax(O1(b, n), 0)
}"""


@pytest.mark.parametrize(("b", "m", "n"), [(64, 96, 128), (40, 70, 33)])
def test_epilogue_stays_in_registers(b: int, m: int, n: int) -> None:
    rng = np.random.default_rng(b + m + n)
    shapes = [(b, m), (n, m), (n,)]
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    k = tcdialect.define(FCRELU, target="cuda-sim")
    gpu = k.ir(*inputs, stage="gpu")
    if (b, m, n) == (64, 96, 128):  # tiles that divide every extent
        assert "memref.load %O1" not in gpu
        assert re.search(r"= scf\.if .* -> \(f32", gpu)
    want = reference.run(parse_tc(FCRELU), None, inputs)
    check_outputs(k(*inputs), want, m)


#: Random program seed 5134 of test_cuda_sim_random.py, reduced: the loop
#: over r0 only reads X1(i + 1) and X1(i), which used to be carried and
#: stored back after it, a write of an input that raced with the thread
#: reading X1(i + 1) as its X1(i).
READS_ONLY = """def g5134(float32(N) X1, int32(N, N, N) X2) -> (T4) {
    T4(i, j) +=! X1(i + 1) - X1(i) where exists X2(i + 1, r0, (2 * j) + 1)
    T4(i, j) +=! X2(r0, i + 1, i + 1) where exists X2(i + 1, i, j), j in 0:N / 2
}"""


def test_elements_only_read_are_not_stored_back() -> None:
    rng = np.random.default_rng(5134)
    x1 = rng.uniform(-1, 1, 10).astype(np.float32)
    x2 = rng.integers(-3, 4, (10, 10, 10)).astype(np.int32)
    k = tcdialect.define(READS_ONLY, target="cuda-sim")
    assert not re.search(r"memref\.store [^\n]*%X1\[", k.ir(x1, x2, stage="gpu"))
    want = reference.run(parse_tc(READS_ONLY), None, [x1, x2])
    check_outputs(k(x1, x2), want, 10)
