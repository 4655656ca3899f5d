"""Reductions shared across threads and blocks on the GPU, for every element
type and `+ max min` (and `*`, which has no atomic and stays in one block),
against the reference interpreter in the simulator, and through `ptxas`.

A whole-tensor reduction long enough for blocks to share it (each thread of
two blocks gets `MIN_PER_THREAD` elements) is split over the blocks along x:
each block combines its threads with shuffles and shared memory, then adds
its total to the result with an atomic update. A few long rows get a block
each and the blocks along y share each row (the rows' initialisation runs
in a kernel of its own first). Sizes here are the smallest that split.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.frontend import parse_tc

#: Long enough to split (16384 = 2 blocks of 1024 threads x 8 elements).
N = 20000

TYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8")


def _inputs(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bfloat16":
        import ml_dtypes

        return rng.uniform(-1, 1, shape).astype(ml_dtypes.bfloat16)
    if dtype.startswith("float"):
        return rng.uniform(-1, 1, shape).astype(dtype)
    low = 0 if dtype.startswith("u") else -3
    return rng.integers(low, 4, shape).astype(dtype)


def _check(
    src: str, inputs: list[np.ndarray], options: CudaOptions | None = None
) -> str:
    """Run `src` on cuda-sim against the reference; its `gpu` stage."""
    want = reference.run(parse_tc(src), None, inputs)
    k = tcdialect.define(src, target="cuda-sim", options=options)
    got = k(*inputs)
    red = int(np.prod(inputs[0].shape))
    if inputs[0].dtype.itemsize == 2 and inputs[0].dtype.kind in "fV":
        want = tuple(np.asarray(w, dtype=np.float32) for w in want)
        got = np.asarray(got, dtype=np.float32)
        np.testing.assert_allclose(got, want[0], rtol=2e-2, atol=2e-2)
    else:
        check_outputs(got, want, red)
    return k.ir(*inputs, stage="gpu")


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", ["+", "max", "min"])
def test_whole_tensor_reduction_split_over_blocks(dtype: str, op: str) -> None:
    src = f"def r({dtype}(N) A) -> (s) {{ s {op}=! A(i) }}"
    gpu = _check(src, [_inputs(dtype, (N,), len(dtype))])
    assert "gpu.block_id x" in gpu and '"memref.atomic_rmw"' in gpu


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_stays_in_one_block(dtype: str) -> None:
    src = f"def r({dtype}(N) A) -> (s) {{ s *=! (1 + A(i) / 100000) }}"
    gpu = _check(src, [_inputs(dtype, (N,), 1)])
    assert "atomic_rmw" not in gpu and "gpu.shuffle" in gpu


def test_few_long_rows_split_over_blocks_along_y() -> None:
    src = "def r(float(B, K) A) -> (s, t) { s(b) +=! A(b, k)\n t(b) max=! A(b, k) }"
    gpu = _check(src, [_inputs("float32", (3, N), 2)])
    assert gpu.count("gpu.block_id y") == 2 and gpu.count("atomic_rmw") == 2
    # the initialisations run in kernels of their own, before
    assert gpu.count("gpu.launch_func") == 4


def test_generic_sizes_and_grid_option() -> None:
    """With sizes as kernel arguments the reduction is split and the host
    picks the grid from the length (one block for a short tensor);
    `grid=(1,)` keeps the reduction in one block."""
    src = "def r(float(N) A) -> (s) { s +=! A(i) }"
    for n in (100, N):
        gpu = _check(src, [_inputs("float32", (n,), n)], CudaOptions(specialize=False))
        assert "atomic_rmw" in gpu
    gpu = _check(src, [_inputs("float32", (N,), 3)], CudaOptions(grid=(1,)))
    assert "atomic_rmw" not in gpu


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
@pytest.mark.parametrize("dtype", TYPES)
def test_ptxas_accepts_split_reductions(dtype: str, tmp_path: Path) -> None:
    """The atomics of every type and combine assemble for sm_90 (NVPTX
    expands the ones PTX lacks, a `max` of floats or an 8-bit add, into
    compare-and-swap loops)."""
    src = (
        f"def r({dtype}(N) A) -> (s, t, u) "
        f"{{ s +=! A(i)\n t max=! A(i)\n u min=! A(i) }}"
    )
    x: Any = _inputs(dtype, (N,), 0)
    ptx = tcdialect.define(src, target="cuda").ir(x, stage="ptx")
    assert ptx.count("atom.") >= 3
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(
        ["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("op", ["max", "min"])
def test_bool_reduction_is_not_split(op: str, tmp_path: Path) -> None:
    """No 1-bit atomics: a `bool` reduction stays in one block (shared by its
    threads), and its PTX assembles."""
    src = f"def r(bool(N) A) -> (s) {{ s {op}=! A(i) }}"
    x = np.random.default_rng(0).random(N) < 0.5
    gpu = _check(src, [x])
    assert "atomic_rmw" not in gpu and "gpu.shuffle" in gpu
    if shutil.which("ptxas") is not None:
        (tmp_path / "k.ptx").write_text(
            tcdialect.define(src, target="cuda").ir(x, stage="ptx")
        )
        done = subprocess.run(
            ["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", os.devnull],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr


def test_overwrite_after_a_split_reduction_stays_after() -> None:
    """Only the statements before the reduction move to the initialisation
    kernel: an overwrite of the result stays after it."""
    src = "def r(float(B, K) A) -> (s) { s(b) +=! A(b, k)\n s(b) = 7.0 where b in 0:B }"
    _check(src, [_inputs("float32", (3, N), 4)])


def test_row_of_extent_one_is_shared() -> None:
    """A row dimension of extent 1 (its subscript a constant made in each
    loop body) still shares the reduction across threads and blocks."""
    src = "def r(float(B, K) A) -> (s) { s(b) +=! A(b, k) }"
    gpu = _check(src, [_inputs("float32", (1, N), 5)])
    assert "gpu.shuffle" in gpu and "atomic_rmw" in gpu


def test_product_rows_keep_their_initialisation() -> None:
    """A product is not split, so its rows' initialisation stays fused."""
    src = "def r(float(B, K) A) -> (s) { s(b) *=! (1 + A(b, k) / 100000) }"
    gpu = _check(src, [_inputs("float32", (3, N), 6)])
    assert gpu.count("gpu.launch_func") == 1
