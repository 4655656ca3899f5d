"""TC's promotion depths and copy unrolling on the `cuda-sim` target: each
changes the code (`affine-gpu-promote{shared-depth, private-depth}`,
`unroll-inner-loops{copies}`), never the result."""

from __future__ import annotations

import numpy as np
import pytest

import tcdialect
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""

BASE = {"use_shared_memory": True, "tile": (32, 32, 32), "block": (32, 8)}


def _run(**fields: object) -> tuple[str, np.ndarray]:
    rng = np.random.default_rng(0)
    A = rng.random((32, 64), dtype=np.float32)  # two r_k tiles of 32
    B = rng.random((64, 32), dtype=np.float32)
    k = tcdialect.define(
        MATMUL, target="cuda-sim", options=CudaOptions(**BASE, **fields)
    )  # type: ignore[arg-type]
    C = k(A, B)
    np.testing.assert_allclose(C, A @ B, rtol=1e-4)
    return k.ir(A, B, stage="gpu"), C


def test_depths_choose_where_promotion_happens() -> None:
    default, _ = _run()
    assert default.count("_shared = memref.alloca") == 2
    # the tile loop's body is at depth 3: at 2 there is no scope
    shallow, _ = _run(shared_depth=2)
    assert "_shared = memref.alloca" not in shallow
    # the r_k loop is at depth 6: at 7 nothing is held in a register
    assert "iter_args" in default
    assert "iter_args" not in _run(private_depth=7)[0]
    with pytest.raises(TCError, match="shared_depth"):
        CudaOptions(shared_depth=0)


def test_unroll_copy_shared_unrolls_the_copies_too() -> None:
    rolled, _ = _run(unroll=4)
    unrolled, _ = _run(unroll=4, unroll_copy_shared=True)
    # four stores into each tile per copy loop body instead of one
    assert unrolled.count("memref.store") > rolled.count("memref.store")
    assert rolled.count("_shared[") < unrolled.count("_shared[")
