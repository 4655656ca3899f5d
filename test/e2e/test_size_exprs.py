"""Products of sizes and scalars that drive sizes, compiled on every target.

Each kernel runs on `cpu` and `cuda-sim`, specialised to the sizes (the
default) and as generic code whose products and quotients of sizes are
derived parameters of the polyhedral model, against the reference
interpreter. A scalar that drives sizes is specialised per value: calls with
other values after a first one must not reuse its code. Inputs may be passed
by keyword (docs/language-notes.md, "Scalars that drive sizes", "Calling").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import TCError, reference
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.frontend import parse_tc

KRON = """
def kron(float(M, N) A, float(P, Q) B) -> (K) {
    K(i, j) = A(i / P, j / Q) * B(i % P, j % Q) where i in 0:M * P, j in 0:N * Q
}
"""
SCONV = """
def sconv(float(N) I, float(K) W, int32 S) -> (O) {
    O(i) +=! I(i * S + r_k) * W(r_k)
}
"""
# Dilation D and stride S of a 2-d convolution, then a product-sized flatten.
CONV2D = """
def conv2d(float(C, H, W) X, float(F, C, KH, KW) Wt, int32 S, int64 D) -> (O, Flat) {
    O(f, h, w) +=! X(r_c, h * S + D * r_kh, w * S + D * r_kw) * Wt(f, r_c, r_kh, r_kw)
    Flat(f, p) = O(f, p / ((W - D * (KW - 1) - 1) / S + 1), p % ((W - D * (KW - 1) - 1) / S + 1))
        where p in 0:((H - D * (KH - 1) - 1) / S + 1) * ((W - D * (KW - 1) - 1) / S + 1)
}
"""


def rand(*shape: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def options(target: str, specialize: bool) -> Any:
    if target == "cpu":
        return tcdialect.CpuOptions(specialize=specialize, threads=2)
    return CudaOptions(specialize=specialize)


MODES = [
    pytest.param(t, s, id=f"{t}-{'specialized' if s else 'generic'}")
    for t in ("cpu", "cuda-sim")
    for s in (True, False)
]


def check(got: Any, want: tuple[Any, ...]) -> None:
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("target", "specialize"), MODES)
def test_kron(target: str, specialize: bool) -> None:
    k = tcdialect.define(KRON, target=target, options=options(target, specialize))
    for a, b in ((rand(3, 4), rand(2, 5, seed=1)), (rand(1, 2), rand(3, 1, seed=2))):
        got = k(a, b)
        check(got, (np.kron(a, b),))
        check(got, reference.run(parse_tc(KRON), None, [a, b]))


@pytest.mark.parametrize(("target", "specialize"), MODES)
def test_strided_convolution_per_stride(target: str, specialize: bool) -> None:
    k = tcdialect.define(SCONV, target=target, options=options(target, specialize))
    x, w = rand(13), rand(3, seed=1)
    module = parse_tc(SCONV)
    # the same shapes with other strides, and the first stride again
    for s in (2, 3, 1, 2):
        want = reference.run(module, None, [x, w, s])
        assert want[0].shape == ((13 - 3) // s + 1,)
        check(k(x, w, s), want)
        check(k(x, w, S=np.int32(s)), want)
    check(k(I=x, W=w, S=5), reference.run(module, None, [x, w, 5]))


@pytest.mark.parametrize(("target", "specialize"), MODES)
def test_dilated_strided_conv2d_and_flatten(target: str, specialize: bool) -> None:
    k = tcdialect.define(CONV2D, target=target, options=options(target, specialize))
    x, wt = rand(2, 9, 8), rand(3, 2, 3, 2, seed=1)
    module = parse_tc(CONV2D)
    for s, d in ((1, 1), (2, 3)):
        want = reference.run(module, None, [x, wt, s, d])
        oh, ow = (9 - d * 2 - 1) // s + 1, (8 - d - 1) // s + 1
        assert want[0].shape == (3, oh, ow) and want[1].shape == (3, oh * ow)
        np.testing.assert_array_equal(want[1], want[0].reshape(3, oh * ow))
        check(k(x, wt, s, D=d), want)


def test_call_errors_name_the_input() -> None:
    k = tcdialect.define(SCONV)
    x, w = rand(13), rand(3, seed=1)
    with pytest.raises(TCError, match=r"input 'S' .* must not be negative, but is -2"):
        k(x, w, -2)
    with pytest.raises(TCError, match="divides by 'S', which is 0 for S=0"):
        k(x, w, S=0)
    with pytest.raises(TCError, match="missing input 'S'"):
        k(x, W=w)
    with pytest.raises(TCError, match="has no input named 'w'"):
        k(x, w=w, S=1)
    with pytest.raises(TCError, match=r"'W' .* is given twice"):
        k(x, w, W=w, S=1)
    with pytest.raises(TCError, match=r"expects 3 inputs .* missing: S"):
        k(x, w)
