"""Row-wise chains (softmax, layer normalisation, a row-normalised product,
a normalisation over planes, moments, group normalisation)
with enough rows for a block each to fill the GPU run as one kernel, a block
per row walking the row's nests in order (`gpu_mapping._fuse_rows`), and
agree with the reference interpreter in the simulator, whose race checks
cover the barriers between the nests. Sizes: the fewest rows that fuse
(132 SMs x 2048 threads / 256 threads a block = 1056), short rows; and
fewer rows (300, moments and group normalisation, the chains that were
separate kernels under the default fusion), whose blocks get 1024 threads
to fill the GPU, the planes of group normalisation collapsed first."""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_catalog import check_outputs

import tcdialect
from bench.cuda.kernels import GROUP_NORM
from bench.kernels import LAYERNORM, MOMENTS2, SOFTMAX
from tcdialect import reference
from tcdialect.frontend import parse_tc

ROWNORM = """def rownorm(float(N, D) I, float(D) w) -> (O, s) {
    s(n) +=! I(n, r_d) * I(n, r_d)
    O(n, d) = I(n, d) * w(d) / sqrt(s(n) + 1e-6)
}"""

PLANES = """def planes(float(N, D, E) I) -> (O, s) {
    s(n) +=! I(n, r_d, r_e)
    O(n, d, e) = I(n, d, e) / s(n)
}"""


@pytest.mark.parametrize(
    ("src", "shapes"),
    [
        pytest.param(SOFTMAX, [(1100, 40)], id="softmax"),
        pytest.param(LAYERNORM, [(2, 550, 37)], id="layernorm"),
        pytest.param(ROWNORM, [(1100, 33), (33,)], id="rownorm"),
        pytest.param(PLANES, [(1100, 3, 20)], id="planes"),
        pytest.param(MOMENTS2, [(300, 40)], id="moments2"),
        pytest.param(
            GROUP_NORM, [(3, 100, 2, 3, 5), (100, 2), (100, 2)], id="group_norm"
        ),
    ],
)
def test_row_chain_is_one_kernel(src: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(len(src))
    inputs = [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in shapes]
    want = reference.run(parse_tc(src), None, inputs)
    k = tcdialect.define(src, target="cuda-sim")
    check_outputs(k(*inputs), want, int(np.prod(shapes[0][1:])))
    gpu = k.ir(*inputs, stage="gpu")
    assert gpu.count("gpu.launch_func") == 1
    assert "gpu.shuffle" in gpu and "gpu.barrier" in gpu


@pytest.mark.parametrize(
    ("src", "shapes"),
    [
        pytest.param(MOMENTS2, [(300, 40)], id="moments2"),
        pytest.param(
            GROUP_NORM, [(3, 100, 2, 3, 5), (100, 2), (100, 2)], id="group_norm"
        ),
    ],
)
def test_sibling_reductions_read_the_row_once(
    src: str, shapes: list[tuple[int, ...]]
) -> None:
    # The sum and the sum of squares of a row: each thread accumulates its
    # parts of both in one loop (fuse-sibling-loops), so the row is read
    # once for the two, not once each; the simulator checks the result and
    # the barriers the combining code keeps.
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in shapes]
    k = tcdialect.define(src, target="cuda-sim")
    check_outputs(
        k(*inputs),
        reference.run(parse_tc(src), None, inputs),
        int(np.prod(shapes[0][1:])),
    )
    loops = [
        line
        for line in k.ir(*inputs, stage="gpu").splitlines()
        if "scf.for" in line and "iter_args" in line
    ]
    assert loops and all(line.rstrip().endswith("-> (f32, f32) {") for line in loops)
