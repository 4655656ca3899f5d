"""Backward kernels with scatter-accumulates, compiled: the adjoint of a
data-dependent read (an embedding lookup, with repeated indices) and of a
non-injective one, for the CPU and the GPU simulator, against the reference
interpreter; 16-bit floats accumulate in f32; an out-of-range index in the
scatter is an error naming the gradient. On the GPU the scatter's points run
in parallel and add with atomics (many threads at one element in the
simulator; `atom.global.add` in the PTX, assembled by ptxas where
installed); on the CPU it stays a sequential nest without atomics."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.autodiff import grad
from tcdialect.diagnostics import TCError

LOOKUP = """
def lookup(float(V, D) E, int32(K) Idx, float(D) W) -> (O) {
    O(k, d) = E(Idx(k), d) * W(d) + E(k, d)
}
"""

UPSAMPLE = "def up(float(N) X) -> (Y) { Y(i) = X(i / 2) * X(i / 2) where i in 0:2*N }"


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_lookup_backward(target: str) -> None:
    rng = np.random.default_rng(0)
    e = rng.standard_normal((7, 5)).astype(np.float32)
    idx = np.array([3, 1, 3, 3, 0, 6, 1], np.int32)  # repeated rows add up
    w = rng.standard_normal(5).astype(np.float32)
    bwd = grad(tcdialect.define(LOOKUP, "lookup", target=target))
    g = rng.standard_normal((7, 5)).astype(np.float32)
    d_e, d_w = bwd(e, idx, w, g)
    want_e, want_w = reference.run(bwd.defop, None, [e, idx, w, g])
    exact = g.astype(np.float64).copy()
    np.add.at(exact, idx, g * w)
    np.testing.assert_allclose(want_e, exact, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_e, want_e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_w, want_w, rtol=1e-5, atol=1e-6)


def test_non_injective_backward_cpu() -> None:
    x = np.array([0.5, -2.0, 3.0], np.float32)
    bwd = grad(tcdialect.define(UPSAMPLE, "up", target="cpu"))
    g = np.arange(1.0, 7.0, dtype=np.float32)
    d_x = bwd(x, g)
    np.testing.assert_allclose(d_x, 2 * x * (g[0::2] + g[1::2]), rtol=1e-6)


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_half_accumulates_in_f32(target: str) -> None:
    src = "def f(float16(V, D) E, int32(K) Idx) -> (O) { O(k, d) = E(Idx(k), d) }"
    bwd = grad(tcdialect.define(src, "f", target=target))  # (GPU: f32 atomics)
    idx = np.array([2, 0, 2] * 100, np.int32)
    g = np.full((300, 2), 1.0 + 2**-10, np.float16)  # f16 steps would stall
    d_e = bwd(np.zeros((3, 2), np.float16), idx, g)
    exact = np.zeros((3, 2))
    np.add.at(exact, idx, g.astype(np.float64))
    np.testing.assert_array_equal(d_e, exact.astype(np.float16))


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_out_of_range_index(target: str) -> None:
    src = "def f(float(V, D) E, int32(K) Idx) -> (O) { O(k, d) = E(Idx(k), d) }"
    bwd = grad(tcdialect.define(src, "f", target=target))
    idx = np.array([0, 3, 5, 3], np.int32)  # several threads store the code
    with pytest.raises(TCError, match="'d_E'"):
        bwd(np.zeros((3, 2), np.float32), idx, np.ones((4, 2), np.float32))


EMBEDDING = """
def emb(float(V, D) E, int32(K) Idx, float(D) W) -> (O) {
    O(k, d) = E(Idx(k), d) * W(d)
}
"""


def _emb_inputs(dtype: type) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(1)
    idx = np.full(16, 2, np.int32)  # most of the 16 x 5 points add at row 2
    idx[[3, 9]] = [0, 3]
    e = rng.standard_normal((4, 5)).astype(dtype)
    w = rng.standard_normal(5).astype(dtype)
    g = rng.standard_normal((16, 5)).astype(dtype)
    return [e, idx, w, g]


def _kernel_with(gpu_ir: str, text: str) -> str:
    """The `gpu.func` of the gpu-stage module `gpu_ir` that contains `text`."""
    (kernel,) = [k for k in gpu_ir.split("gpu.func @")[1:] if text in k]
    return kernel


def test_gpu_scatter_is_parallel_with_atomics() -> None:
    """On the GPU the scatter's points are threads that add with atomics
    (many at one element here), no longer one thread; on the CPU the
    scatter stays a sequential nest of plain adds (no `atomicrmw`)."""
    args = _emb_inputs(np.float32)
    want = reference.run(grad(tcdialect.define(EMBEDDING, "emb")).defop, None, args)
    bwd = grad(tcdialect.define(EMBEDDING, "emb", target="cuda-sim"))
    for got, ref in zip(bwd(*args), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    scatter = _kernel_with(bwd.ir(*args, stage="gpu"), "memref.atomic_rmw")
    found = re.search(r"known_block_size = array<i32: (\d+), (\d+), (\d+)>", scatter)
    assert found is not None
    assert [int(n) for n in found.groups()] == [5, 8, 1]  # d on x, k on y
    cpu = grad(tcdialect.define(EMBEDDING, "emb", target="cpu"))
    for got, ref in zip(cpu(*args), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert "atomicrmw" not in cpu.ir(*args, stage="llvm-ir")


PTXAS = shutil.which("ptxas")
SCALARS = [(np.float32, "f32"), (np.float64, "f64")]


@functools.cache
def _scatter_ptx(dtype: type) -> str:
    src = EMBEDDING if dtype is np.float32 else EMBEDDING.replace("float", "double")
    bwd = grad(tcdialect.define(src, "emb", target="cuda"))
    return bwd.ir(*_emb_inputs(dtype), stage="ptx")


@pytest.mark.parametrize(("dtype", "ptx_type"), SCALARS)
def test_gpu_scatter_ptx_adds_atomically(dtype: type, ptx_type: str) -> None:
    """The PTX of the scatter's kernel: `atom.global.add.f32` (`.f64` for
    doubles) on 5 x 8 threads; the zero-init of d_E before it and the
    gather of d_W have no atomics."""
    ptx = _scatter_ptx(dtype)
    entries = ptx.split(".entry ")[1:]
    assert [e.split("(")[0] for e in entries if "atom." in e] == ["emb_grad_k1"]
    entry = entries[1]
    assert f"atom.global.add.{ptx_type}" in entry
    assert ".maxntid 5, 8, 1" in entry


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize(("dtype", "ptx_type"), SCALARS)
def test_gpu_scatter_ptx_assembles(dtype: type, ptx_type: str, tmp_path: Path) -> None:
    assert PTXAS is not None
    (tmp_path / f"{ptx_type}.ptx").write_text(_scatter_ptx(dtype))
    done = subprocess.run(
        [
            PTXAS,
            "-arch=sm_90",
            str(tmp_path / f"{ptx_type}.ptx"),
            "-o",
            str(tmp_path / "k"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
