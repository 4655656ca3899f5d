"""`tc-differentiate` on reads whose subscripts do not invert: their adjoint
is a scatter-accumulate (``tc.yield ... at [...]``), checked against central
differences in float64 (`vjp_check_def`): data-dependent reads with
repeated indices, through a max and a product, ``floordiv``/``mod`` of
indices, and second order (through a scatter, and through a strided
inversion, whose solved index is a ``floordiv``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_tc_differentiate import _def, vjp_check_def

from tcdialect.dialects import tc
from tcdialect.transforms.tc_differentiate import differentiate

R = np.random.default_rng(5)
IDX = np.array([2, 0, 2, 2, 1], np.int32)

FORMS: dict[str, tuple[str, list[Any]]] = {
    "lookup": (
        "def f(double(V, D) E, int32(K) Idx, double(D) W) -> (O) {\n"
        "  O(k, d) = E(Idx(k), d) * W(d) + E(k, d) * E(Idx(k), d)\n}",
        [R.standard_normal((5, 3)), IDX, R.standard_normal(3)],
    ),
    "gather_then_scatter": (
        "def f(double(V, D) E, int32(K) Idx) -> (O) {\n"
        "  O(k, d) = E(k, d) * 3.0 + E(Idx(k), d)\n}",
        [R.standard_normal((5, 3)), IDX],
    ),
    "into_an_output_gradient": (
        "def f(double(N) X, int32(K) Idx) -> (T, O) {\n"
        "  T(i) = X(i) * X(i)\n  O(k) = T(Idx(k)) * T(k)\n}",
        [R.standard_normal(4), IDX],
    ),
    "max_of_lookups": (
        "def f(double(V, D) E, int32(K) Idx) -> (O) { O(d) max=! E(Idx(k), d) }",
        [R.standard_normal((3, 4)), IDX],
    ),
    "product_of_lookups": (
        "def f(double(V, D) E, int32(K) Idx) -> (O) { O(d) *=! E(Idx(k), d) }",
        [R.standard_normal((3, 4)), IDX],
    ),
    "halves": (
        "def f(double(N) X) -> (Y) { Y(i) = X(i / 2) * X(i / 2) where i in 0:2*N }",
        [R.standard_normal(4)],
    ),
    "modulo": (
        "def f(double(P) A, double(N) B) -> (C) { C(i) = A(i % P) * B(i) }",
        [R.standard_normal(3), R.standard_normal(7)],
    ),
}


@pytest.mark.parametrize("name", FORMS)
def test_scatter_vjp(name: str) -> None:
    source, inputs = FORMS[name]
    fwd = _def(source)
    bwd = differentiate(fwd)
    assert any(
        isinstance(op, tc.ComprehensionOp) and op.is_scatter for op in bwd.walk()
    )
    vjp_check_def(fwd, inputs, 1)


def test_second_order_through_a_scatter() -> None:
    source, inputs = FORMS["lookup"]
    g1 = differentiate(_def(source))
    d_o = R.standard_normal((5, 3))
    vjp_check_def(g1, [*inputs, d_o], 2, ["E", "W", "d_O"])


def test_second_order_through_a_strided_inversion() -> None:
    src = "def f(double(N) X, double(K) W) -> (Y) { Y(i) +=! X(2 * i + r) * W(r) }"
    g1 = differentiate(_def(src))
    x, w, d_y = R.standard_normal(9), R.standard_normal(3), R.standard_normal(4)
    vjp_check_def(g1, [x, w, d_y], 3)
