"""Dynamic shared memory: boxes whose size is a run-time value, end to end.

Matmul with the reduction untiled (`tile=(32, 32, 0)`) at generic sizes
(`specialize=False`) reads a 32 x K strip of A and a K x 32 strip of B per
block: boxes whose size depends on K. With `use_shared_memory=True`
(`affine-gpu-promote`'s `dynamic-shared`) they go to shared memory at the
values of K where they fit the budget, as buffers with dynamic extents: the
launch passes their bytes
(`dynamic_shared_memory_size`), and the device code places them in one
extern array. The tests run one compiled kernel at values of K where the
buffers fit and where they do not (the kernel then reads global memory) in
the GPU simulator (which bounds- and race-checks the buffers and checks
that they fit in what the launch gives) against the reference interpreter,
assemble its PTX with ptxas, and check what the CUDA runtime asks of the
driver (against a stand-in for it, as test/unit/test_cuda_runtime.py),
including a `TCError` naming the kernel for a request over the device's
limit (test/unit/test_cuda_sim_dynamic_shared.py has the simulator's).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_cuda_runtime import FakeArray, FakeLib, install_fake  # test/unit
from xdsl.dialects import memref

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.kernel import Kernel
from tcdialect.runtime.cuda import driver
from tcdialect.runtime.cuda_sim import SimDevice, SimLauncher

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""
OPTIONS = CudaOptions(tile=(32, 32, 0), specialize=False, use_shared_memory=True)


def _define(target: str, options: CudaOptions = OPTIONS) -> Kernel:
    return tcdialect.define(MATMUL, "matmul", target=target, options=options)


def _inputs(m: int, k: int, n: int, seed: int = 0) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal((m, k), dtype=np.float32),
        rng.standard_normal((k, n), dtype=np.float32),
    ]


def test_one_compile_runs_at_two_sizes_in_the_simulator() -> None:
    k = _define("cuda-sim")
    launchers = set()
    for m, kk, n in [(40, 7, 33), (20, 13, 50)]:
        inputs = _inputs(m, kk, n)
        launcher = k.compile(*inputs).launcher
        launchers.add(id(launcher))
        (want,) = reference.run(parse_tc(MATMUL), "matmul", inputs)
        np.testing.assert_allclose(k(*inputs), want, rtol=1e-5, atol=1e-5)
    assert len(launchers) == 1  # generic code: compiled once
    assert isinstance(launcher, SimLauncher)
    (launch,) = launcher.program.kernels
    assert launch.dynamicSharedMemorySize is not None
    (kernel,) = launcher.program.kernels.values()
    shapes = [
        str(op.memref.type) for op in kernel.walk() if isinstance(op, memref.AllocaOp)
    ]
    assert shapes == ["memref<32x?xf32, 3 : i32>", "memref<?x33xf32, 3 : i32>"]


def test_boxes_that_do_not_fit_stay_in_global_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # K = 400: 32 x 401 and 400 x 33 floats, 104128 bytes, over the 48 KiB
    # budget; K = 100: 26128 bytes, within it
    asked: list[int] = []
    launch = SimDevice.launch

    def recording(self: SimDevice, *args: Any) -> None:
        asked.append(args[-1])
        launch(self, *args)

    monkeypatch.setattr(SimDevice, "launch", recording)
    k = _define("cuda-sim")
    for m, kk, n in [(3, 400, 5), (3, 100, 5)]:
        inputs = _inputs(m, kk, n)
        (want,) = reference.run(parse_tc(MATMUL), "matmul", inputs)
        np.testing.assert_allclose(k(*inputs), want, rtol=1e-5, atol=1e-5)
    assert asked == [0, 32 * 101 * 4 + 100 * 33 * 4]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptx_declares_extern_shared_memory_and_assembles(tmp_path: Path) -> None:
    ptx = _define("cuda").ir(*_inputs(40, 7, 33), stage="ptx")
    assert ".extern .shared .align 16 .b8 __dynamic_shmem[];" in ptx
    (tmp_path / "k.ptx").write_text(ptx)
    done = subprocess.run(
        ["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


class _SharedLib(FakeLib):
    """`FakeLib` that records the shared memory of launches and the
    attributes set on functions."""

    def __init__(self) -> None:
        super().__init__()
        self.shared: list[int] = []
        self.attributes: list[tuple[int, int]] = []

    def cuLaunchKernel(self, fn: Any, *args: Any) -> int:
        self.shared.append(args[6])
        return super().cuLaunchKernel(fn, *args)

    def cuFuncGetAttribute(self, value: Any, attribute: int, fn: Any) -> int:
        value._obj.value = 0  # no static shared memory
        return 0

    def cuFuncSetAttribute(self, fn: Any, attribute: int, value: int) -> int:
        self.attributes.append((attribute, value))
        return 0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[_SharedLib]:
    lib = _SharedLib()
    install_fake(monkeypatch, lib)
    yield lib
    tcdialect.clear_cache()


def _call(k: Kernel, m: int, kk: int, n: int) -> None:
    k(
        FakeArray((m, kk), 0x1_0000),
        FakeArray((kk, n), 0x100_0000),
        out=FakeArray((m, n), 0x200_0000),
    )


def test_the_cuda_runtime_passes_the_bytes_and_opts_in(fake: _SharedLib) -> None:
    # a budget over the default 48 KiB (the device may have 227 KiB)
    k = _define("cuda", OPTIONS.with_(max_shared_memory=300_000))
    _call(k, 2, 7, 2)  # 32 x 7 and 7 x 33 floats, each rounded up to 16 bytes
    _call(k, 2, 400, 2)  # 104128 bytes: over 48 KiB, the kernel opts in
    _call(k, 2, 2000, 2)  # 520128 bytes: over the budget, in global memory
    assert fake.shared == [32 * 7 * 4 + 928, 104128, 0]
    assert fake.attributes == [(driver.MAX_DYNAMIC_SHARED_SIZE_BYTES, 104128)]
    with pytest.raises(TCError, match=r"kernel @matmul_k0 .* a block may have 232448"):
        _call(k, 2, 1000, 2)  # 260128 bytes: over the device's opt-in limit
