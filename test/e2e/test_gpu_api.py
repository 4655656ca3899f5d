"""The `cuda` and `cuda-sim` targets through the library: stages, errors, the
simulator switch. (Numerics in the simulator: test_cuda_sim_catalog.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import tcdialect
from tcdialect import CudaOptions, TCError

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""


def _ab() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.random((40, 24), dtype=np.float32),
        rng.random((24, 36), dtype=np.float32),
    )


def test_targets_are_registered() -> None:
    assert {"cpu", "cuda", "cuda-sim"} <= set(tcdialect.targets())


def test_cuda_stages_are_listed() -> None:
    k = tcdialect.define(MATMUL, target="cuda")
    assert k.stages == (
        "tc",
        "affine",
        "scheduled",
        "gpu",
        "llvm",
        "llvm-ir",
        "ptx",
    )
    assert tcdialect.define(MATMUL, target="cuda-sim").stages[-1] == "gpu"


def test_gpu_stage_of_specialised_matmul() -> None:
    a, b = _ab()
    ir = tcdialect.define(MATMUL, target="cuda").ir(a, b, stage="gpu")
    assert "gpu.container_module" in ir
    assert "gpu.launch_func @matmul_kernels::@matmul_k0" in ir
    # 40 x 36 outputs make fewer tiles of a 32 x 8 block than the GPU has
    # SMs: blocks of one warp, a tile each (2 x 40), sizes known at compile time
    assert "known_block_size = array<i32: 32, 1, 1>" in ir
    assert "arith.ceildivsi" not in ir
    assert "memref<40x24xf32>" in ir


def test_options_reach_the_mapper() -> None:
    a, b = _ab()
    opts = CudaOptions(tile=(8, 16, 0), block=(16, 4), grid=(3, 3))
    ir = tcdialect.define(MATMUL, target="cuda", options=opts).ir(a, b, stage="gpu")
    assert "known_block_size = array<i32: 16, 4, 1>" in ir


def test_env_switch_makes_cuda_the_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDIALECT_CUDA_SIM", "1")
    k = tcdialect.define(MATMUL, target="cuda")
    assert k.target == "cuda-sim"
    assert k.backend.name == "cuda-sim"


def test_unknown_stage_lists_the_targets_stages() -> None:
    a, b = _ab()
    with pytest.raises(TCError, match=r"unknown stage 'loops'; the stages are .*gpu"):
        tcdialect.define(MATMUL, target="cuda").ir(a, b, stage="loops")


def test_wrong_options_class_is_a_tcerror() -> None:
    with pytest.raises(TCError, match=r"must be a tcdialect\.CudaOptions"):
        tcdialect.define(MATMUL, target="cuda", options=tcdialect.CpuOptions())
