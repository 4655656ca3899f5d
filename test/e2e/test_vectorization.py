"""The hot loops of benchmark-style kernels compile to packed vector instructions.

Checked on the host assembly (the `asm` stage) after O3 for the host CPU:
packed single-precision arithmetic (`mulps`/`vmulps`, `addps`, `maxps`,
`vfmadd...ps`) must appear, on 256-bit (`ymm`) registers or wider when the host
has AVX. Reductions carry `reassoc` (TC reductions may be reordered), so they
vectorise too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tcdialect

KERNELS = {
    "chain": (
        "def chain(float(N) A, float(N) B, float(N) C, float(N) D) -> (O) {"
        " O(i) = max(A(i) * B(i) + C(i), 0.0) * D(i) }",
        [(4096,)] * 4,
        r"\bv?mulps\b",
    ),
    "rowsum": (
        "def rowsum(float(M, N) A) -> (S) { S(m) +=! A(m, n) }",
        [(64, 2048)],
        r"\bv?addps\b",
    ),
    "scale_rows": (
        "def scale(float(M, N) A, float(M) s) -> (O) { O(m, n) = A(m, n) * s(m) }",
        [(64, 2048), (64,)],
        r"\bv?mulps\b",
    ),
    "relu": (
        "def relu(float(M, N) I) -> (O) { O(m, n) = fmax(I(m, n), 0.0) }",
        [(512, 512)],
        r"\bv?maxps\b",
    ),
}


def _host_has_avx() -> bool:
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return re.search(r"\bavx\b", flags) is not None


@pytest.mark.parametrize("name", KERNELS)
def test_hot_loop_is_vectorised(name: str) -> None:
    source, shapes, packed = KERNELS[name]
    k = tcdialect.define(source)
    inputs = [np.ones(s, np.float32) for s in shapes]
    asm = k.ir(*inputs, stage="asm")
    assert re.search(packed, asm), f"no packed instruction {packed} in {name}"
    if _host_has_avx():
        assert re.search(packed + r"\s.*%[yz]mm", asm), f"{name}: no 256-bit vectors"


def test_exp_is_vectorised_and_accurate() -> None:
    k = tcdialect.define("def e(float(N) X) -> (Y) { Y(i) = exp(X(i)) }")
    x = np.concatenate(
        [
            np.linspace(-110.0, 95.0, 100_001),
            [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.7229, -87.3, 1e-30],
        ]
    ).astype(np.float32)
    asm = k.ir(x, stage="asm")
    assert "expf" not in asm
    assert re.search(r"\bv?mulps\b", asm)
    got = k(x).astype(np.float64)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    normal = np.isfinite(want) & (want >= np.finfo(np.float32).tiny)
    rel = np.abs(got[normal] - want[normal]) / want[normal]
    assert rel.max() < 2.5e-7  # within 2 ulp over the whole normal range
    tiny = want < np.finfo(np.float32).tiny
    assert np.abs(got[tiny] - want[tiny]).max() <= 2e-45  # subnormal results
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
