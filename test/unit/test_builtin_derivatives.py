"""`tc-differentiate` through the builtins without a math op (docs/builtins.md).

The derived gradients of kernels using them match central differences of the
reference interpreter (float64); the builtins without a derivative rule
(`lgamma`, `tgamma`: digamma is no builtin; `logb`: piecewise constant) are
a `TCError` naming the builtin and the statement.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_tc_differentiate import vjp_check  # test/unit is on pytest's pythonpath

from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.transforms.tc_differentiate import differentiate

SOURCE = """
def f(double(N) X, double(N) P, double(N) Z) -> (A, B, C) {
    A(i) = erfinv(X(i)) + normcdf(X(i)) * normcdfinv(P(i)) + erfcinv(P(i))
        + erfcx(X(i)) + sinpi(X(i)) * cospi(Z(i)) + rcbrt(Z(i))
    B(i) = j0(X(i)) + j1(X(i)) + y0(Z(i)) + y1(Z(i)) + cyl_bessel_i0(X(i))
        + cyl_bessel_i1(X(i)) + nextafter(X(i), Z(i)) + remainder(Z(i), P(i))
    C(i) = norm3d(X(i), P(i), Z(i)) + rnorm3d(X(i), Z(i), 1.0) + rhypot(P(i), Z(i))
        + norm4d(X(i), P(i), Z(i), 1.0) * rnorm4d(Z(i), P(i), X(i), X(i))
        + fdivide(X(i), Z(i))
}
"""


def test_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.9, 0.9, 7)
    p = rng.uniform(0.1, 0.9, 7)
    z = rng.uniform(0.6, 2.4, 7)
    vjp_check(SOURCE, None, [x, p, z], seed=4)


def test_j1_derivative_at_zero() -> None:
    fwd = reference.find_def(parse_tc("def f(double(N) X) -> (Y) { Y(i) = j1(X(i)) }"))
    (d_x,) = reference.run(differentiate(fwd), None, [np.zeros(2), np.ones(2)])
    np.testing.assert_array_equal(d_x, [0.5, 0.5])


@pytest.mark.parametrize(
    ("builtin", "why"),
    [
        ("lgamma", "its derivative, digamma, is not a builtin"),
        ("tgamma", "its derivative needs digamma, which is not a builtin"),
        ("logb", "it is piecewise constant"),
    ],
)
def test_builtins_without_a_derivative(builtin: str, why: str) -> None:
    fwd = reference.find_def(
        parse_tc(f"def f(float(N) X) -> (Y) {{ Y(i) = {builtin}(X(i)) * X(i) }}")
    )
    with pytest.raises(TCError, match="tc-differentiate") as e:
        differentiate(fwd)
    assert (
        f"the builtin '{builtin}' in the statement defining 'Y' ({builtin}(X(i))) "
        f"has no derivative: {why}"
    ) in str(e.value)
