"""erf, erfc, cbrt and hypot.

erf: an odd polynomial for |x| < 1, else 1 - a polynomial of (|x| - 2.5)/2;
erfc: t exp(-x^2 + P(t - 3/8)), t = 1/(1 + |x|), with x^2 in two parts;
cbrt: a quadratic guess and two Halley steps on the mantissa; hypot:
max sqrt(1 + (min/max)^2). Each algorithm takes an `Emitter` and the
operand(s) and returns the result.
"""

from __future__ import annotations

from tcdialect.transforms.expand_math_polynomials.common import (
    LN2_HI,
    LN2_LO,
    LOG2E,
    horner,
    ldexp,
    pow2,
    round_nearest,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, V
from tcdialect.transforms.expand_math_polynomials.exp_log import (
    expm1_poly,
    log_parts,
    split,
)

# --------------------------------------------------------------------------
# erf, erfc
# --------------------------------------------------------------------------

# erf(x) = x + x R(x^2) on |x| <= 1, minimax (relative error); R(0) carries
# 2/sqrt(pi) - 1, so that the rounding of the constant term costs little.
_ERF_R = (
    0.12837916612625122,
    -0.3761262595653534,
    0.11283578723669052,
    -0.026853347197175026,
    0.005187162198126316,
    -0.0007997853099368513,
    7.806903158780187e-05,
)
# erfc(x) = C((x - 2.5) / 2) on 1 <= x <= 4, minimax (absolute error).
_ERFC_C = (
    0.0004069526621606201,
    -0.004356377758085728,
    0.021782707422971725,
    -0.06681372970342636,
    0.1379629224538803,
    -0.19549763202667236,
    0.1790308654308319,
    -0.07168856263160706,
    -0.06617375463247299,
    0.13844479620456696,
    -0.08319985121488571,
    -0.03621349111199379,
    0.06457687169313431,
    -0.004171759821474552,
    -0.014677849598228931,
)
# erfc(x) = t exp(-x^2 + P(t - 3/8)), t = 1 / (1 + x), on 1/2 <= x <= 10.1,
# minimax (absolute error of the exponent: relative error of erfc). With
# t = 1/(1 + x) the result's sensitivity to the rounding of t is about 1.25;
# centring the variable keeps the coefficients, and so rounding, small.
_ERFC_P = (
    -0.23559583723545074,
    0.7115355730056763,
    -0.6291628479957581,
    -0.060400769114494324,
    0.6723235845565796,
    -0.6409059762954712,
    -0.27177584171295166,
    1.6211917400360107,
    -1.7812988758087158,
    -1.4327890872955322,
    4.152212142944336,
)


def _erf_small(e: Emitter, x: V) -> V:
    return e.add(e.mul(x, horner(e, e.mul(x, x), _ERF_R)), x)


def erf(e: Emitter, x: V) -> V:
    # |x| < 1: odd polynomial; else 1 - erfc(|x|) (1 from 4 on); sign of x.
    ax = e.abs(x)
    t = e.mul(e.sub(e.fmin(ax, 4.0), 2.5), 0.5)  # exact
    big = e.sub(1.0, horner(e, t, _ERFC_C))
    y = e.select(e.cmp("oge", ax, 1.0), big, _erf_small(e, ax))
    return e.copysign(y, x)


def erfc(e: Emitter, x: V) -> V:
    # |x| < 1/2: 1 - erf(x); else t exp(-x^2 + P(t)) for |x| (0 from 10.1
    # on), and 2 minus that for negative x. x^2 = xh^2 + xl (|x| + xh) with
    # xh the top 12 bits of |x| (xh^2 exact), so that the exponent keeps its
    # accuracy for large x; the scaling by 2^n comes last (subnormal results).
    abs_x = e.abs(x)
    ax = e.fmin(abs_x, 10.1)
    t = e.div(1.0, e.add(ax, 1.0))
    xh, xl = split(e, ax)
    a = e.mul(e.mul(xh, xh), -1.0)
    b = e.sub(horner(e, e.sub(t, 0.375), _ERFC_P), e.mul(xl, e.add(ax, xh)))
    nf, n = round_nearest(e, e.mul(e.add(a, b), LOG2E))
    r = e.add(e.sub(e.sub(a, e.mul(nf, LN2_HI)), e.mul(nf, LN2_LO)), b)
    big = ldexp(e, e.add(e.mul(t, expm1_poly(e, r)), t), n)
    big = e.select(e.cmp("olt", x, 0.0), e.sub(2.0, big), big)
    small = e.sub(1.0, _erf_small(e, x))
    return e.select(e.cmp("oge", abs_x, 0.5), big, small)


# cbrt(v) ~ G(v) on [2^-1.5, 2^1.5], minimax relative error 1.6e-2: the
# starting point of two Halley steps.
_CBRT_G = (0.5391474366188049, 0.5361893177032471, -0.08300238847732544)


def cbrt(e: Emitter, x: V) -> V:
    # |x| = 2^(3q + rem) m, m in [sqrt(1/2), sqrt(2)), rem in {-1, 0, 1}:
    # cbrt(|x|) = 2^q cbrt(v), v = 2^rem m, by Halley's iteration
    # y <- y - y (y^3 - v) / (2 y^3 + v) from a quadratic guess.
    ax = e.abs(x)
    k, f = log_parts(e, ax)
    qf, q = round_nearest(e, e.mul(k, 1.0 / 3.0))
    rem = e.sub(k, e.mul(qf, 3.0))  # exact, -1, 0 or 1
    v = e.mul(e.add(f, 1.0), e.add(e.mul(rem, e.add(e.mul(rem, 0.25), 0.75)), 1.0))
    y = horner(e, v, _CBRT_G)
    for _ in range(2):
        y3 = e.mul(e.mul(y, y), y)
        corr = e.div(e.mul(y, e.sub(y3, v)), e.add(e.add(y3, y3), v))
        y = e.sub(y, corr)
    y = e.copysign(e.mul(y, pow2(e, q)), x)
    special = e.either(e.cmp("oeq", ax, 0.0), e.cmp("uge", ax, float("inf")))
    return e.select(special, x, y)


# --------------------------------------------------------------------------
# hypot
# --------------------------------------------------------------------------


def hypot(e: Emitter, x: V, y: V) -> V:
    # max * sqrt(1 + (min / max)^2); +inf if either is infinite, else NaN if
    # either is NaN; 0 for (0, 0).
    ax, ay = e.abs(x), e.abs(y)
    big, small = e.fmax(ax, ay), e.fmin(ax, ay)
    r = e.div(small, big)
    h = e.mul(big, e.sqrt(e.add(e.mul(r, r), 1.0)))
    h = e.select(e.cmp("oeq", big, 0.0), 0.0, h)
    h = e.select(e.cmp("uno", x, y), float("nan"), h)
    inf = e.either(e.cmp("oeq", ax, float("inf")), e.cmp("oeq", ay, float("inf")))
    return e.select(inf, float("inf"), h)
