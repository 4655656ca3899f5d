"""The GPU mappings that the catalog's small sizes do not reach, on the device.

Reductions shared across blocks with atomic updates (every element type,
`+ max min`; a whole tensor and a few long rows), chains of row-wise nests
fused into one kernel (softmax, layer normalisation at enough rows to fill
the GPU), and dynamic shared memory (generic sizes with
`use_shared_memory=True`), each against NumPy or the reference interpreter,
and against the simulator where it is fast enough. The same kernels run in
the simulator in test/e2e (test_cuda_split_reduction.py,
test_cuda_fused_rows.py, test_cuda_dynamic_shared.py) at the smallest sizes
that reach these mappings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_cpu_catalog import check_outputs
from test_cuda_fused_rows import LAYERNORM, SOFTMAX
from test_cuda_split_reduction import TYPES, N, _inputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.frontend import parse_tc


def _check(src: str, inputs: list[Any], options: CudaOptions | None = None) -> None:
    want = reference.run(parse_tc(src), None, inputs)
    got = tcdialect.define(src, target="cuda", options=options)(*inputs)
    if inputs[0].dtype.itemsize == 2 and inputs[0].dtype.kind in "fV":
        got = np.asarray(got, dtype=np.float32)
        np.testing.assert_allclose(got, np.asarray(want[0], np.float32), rtol=2e-2)
    else:
        check_outputs(got, want, int(np.prod(inputs[0].shape)))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", ["+", "max", "min"])
def test_whole_tensor_reduction_over_blocks(dtype: str, op: str) -> None:
    src = f"def r({dtype}(N) A) -> (s) {{ s {op}=! A(i) }}"
    _check(src, [_inputs(dtype, (64 * N,), len(dtype))])


def test_few_long_rows_over_blocks() -> None:
    src = "def r(float(B, K) A) -> (s, t) { s(b) +=! A(b, k)\n t(b) max=! A(b, k) }"
    _check(src, [_inputs("float32", (3, 64 * N), 2)])


@pytest.mark.parametrize("src", [SOFTMAX, LAYERNORM], ids=["softmax", "layernorm"])
def test_fused_rows(src: str) -> None:
    shape = (4096, 512) if src == SOFTMAX else (8, 512, 256)
    x = np.random.default_rng(0).uniform(0.5, 1.5, shape).astype(np.float32)
    got = tcdialect.define(src, target="cuda")(x)
    sim = tcdialect.define(src, target="cuda-sim")(x[..., :64].copy())
    check_outputs(sim, reference.run(parse_tc(src), None, [x[..., :64].copy()]), 64)
    check_outputs(got, reference.run(parse_tc(src), None, [x]), shape[-1])


def test_dynamic_shared_memory() -> None:
    src = "def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
    options = CudaOptions(specialize=False, use_shared_memory=True, tile=(32, 32, 0))
    rng = np.random.default_rng(1)
    for m, k, n in ((64, 96, 80), (33, 1000, 17)):
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        _check(src, [a, b], options)
