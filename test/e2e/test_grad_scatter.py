"""Backward kernels with scatter-accumulates, compiled: the adjoint of a
data-dependent read (an embedding lookup, with repeated indices) and of a
non-injective one, for the CPU and the GPU simulator, against the reference
interpreter; 16-bit floats accumulate in f32; an out-of-range index in the
scatter is an error naming the gradient."""

from __future__ import annotations

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


def test_half_accumulates_in_f32() -> None:
    src = "def f(float16(V, D) E, int32(K) Idx) -> (O) { O(k, d) = E(Idx(k), d) }"
    bwd = grad(tcdialect.define(src, "f", target="cpu"))
    idx = np.array([2, 0, 2] * 100, np.int32)
    g = np.full((300, 2), 1.0 + 2**-10, np.float16)  # f16 steps would stall
    d_e = bwd(np.zeros((3, 2), np.float16), idx, g)
    exact = np.zeros((3, 2))
    np.add.at(exact, idx, g.astype(np.float64))
    np.testing.assert_array_equal(d_e, exact.astype(np.float16))


def test_out_of_range_index() -> None:
    src = "def f(float(V, D) E, int32(K) Idx) -> (O) { O(k, d) = E(Idx(k), d) }"
    bwd = grad(tcdialect.define(src, "f", target="cpu"))
    idx = np.array([0, 3], np.int32)
    with pytest.raises(TCError, match="'d_E'"):
        bwd(np.zeros((3, 2), np.float32), idx, np.ones((2, 2), np.float32))
