"""erf, erfc, normcdf, erfcx, cbrt, hypot, rcbrt and the norms.

erf: an odd polynomial for |x| < 1, else 1 - a polynomial of (|x| - 2.5)/2;
erfc: t exp(-x^2 + P(t - 3/8)), t = 1/(1 + |x|), with x^2 in two parts;
normcdf: the same for z = -x/sqrt(2), z^2 = x^2/2 from the split x and
t = 1/(1 + z) in two parts; erfcx: t exp(P(t - 3/8)) (erfc without the
-x^2, t in two parts), an asymptotic series from 10.1, 2 exp(x^2) -
erfcx(-x) below -1/2; cbrt: a quadratic guess and two Halley
steps on the mantissa; hypot: max sqrt(1 + (min/max)^2); norm3d, norm4d:
2^k sqrt(sum (x 2^-k)^2), 2^k the largest operand's binade; rhypot, rnorm3d,
rnorm4d, rcbrt: 1 divided by the same. Each algorithm takes an `Emitter` and
the operand(s) and returns the result.
"""

from __future__ import annotations

from tcdialect.transforms.expand_math_polynomials.common import (
    LN2_HI,
    LN2_LO,
    LOG2E,
    hi_lo,
    horner,
    ldexp,
    pow2,
    round_nearest,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, Num, V, f32
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


def _recip_one_plus(e: Emitter, z: V, z_lo: Num) -> tuple[V, V]:
    """(t, tl) with t + tl = 1/(1 + z + z_lo) to about 2^-40, z >= 0:
    1 + z in two parts (Fast2Sum), 1 - t (1 + z) from 12-bit halves (exact
    products), then t + t (1 - t (1 + z) - t dl)."""
    d = e.add(z, 1.0)
    dl = e.add(e.add(e.sub(e.fmax(z, 1.0), d), e.fmin(z, 1.0)), z_lo)
    t = e.div(1.0, d)
    th, tl = split(e, t)
    dh, dm = split(e, d)
    r = e.sub(e.sub(1.0, e.mul(th, dh)), e.mul(th, dm))  # the first exact
    r = e.sub(e.sub(r, e.mul(tl, dh)), e.mul(tl, dm))
    return t, e.mul(t, e.sub(r, e.mul(t, dl)))


def _erfc_parts(
    e: Emitter, z: V, a: Num, b: Num, z_lo: Num | None = None
) -> tuple[V, V]:
    """(m, n) with erfc(z) = m 2^n, for 1/2 <= z <= 10.1 and -z^2 = a + b,
    |b| small (a exact): t exp(-z^2 + P(t - 3/8)), t = 1/(1 + z). With
    `z_lo` (z's rounding error), t in two parts (`_recip_one_plus`): about
    an ulp better."""
    if z_lo is None:
        t, tl = e.div(1.0, e.add(z, 1.0)), None
    else:
        t, tl = _recip_one_plus(e, z, z_lo)
    b = e.add(horner(e, e.sub(t, 0.375), _ERFC_P), b)
    nf, n = round_nearest(e, e.mul(e.add(a, b), LOG2E))
    r = e.add(e.sub(e.sub(a, e.mul(nf, LN2_HI)), e.mul(nf, LN2_LO)), b)
    em1 = expm1_poly(e, r)
    if tl is None:
        return e.add(e.mul(t, em1), t), n
    # (t + tl)(1 + em1), tl (1 + em1) kept
    return e.add(e.add(e.mul(em1, t), e.add(e.mul(em1, tl), tl)), t), n


def erfc(e: Emitter, x: V) -> V:
    # |x| < 1/2: 1 - erf(x); else t exp(-x^2 + P(t)) for |x| (0 from 10.1
    # on), and 2 minus that for negative x. x^2 = xh^2 + xl (|x| + xh) with
    # xh the top 12 bits of |x| (xh^2 exact), so that the exponent keeps its
    # accuracy for large x; the scaling by 2^n comes last (subnormal results).
    abs_x = e.abs(x)
    ax = e.fmin(abs_x, 10.1)
    xh, xl = split(e, ax)
    a = e.mul(e.mul(xh, xh), -1.0)
    m, n = _erfc_parts(e, ax, a, e.mul(e.mul(xl, e.add(ax, xh)), -1.0))
    big = ldexp(e, m, n)
    big = e.select(e.cmp("olt", x, 0.0), e.sub(2.0, big), big)
    small = e.sub(1.0, _erf_small(e, x))
    return e.select(e.cmp("oge", abs_x, 0.5), big, small)


_SQRT_HALF = 0.7071067811865476
_SQRT_HALF_HI, _SQRT_HALF_LO = hi_lo(_SQRT_HALF, 12)  # x_hi * hi exact


def normcdf(e: Emitter, x: V) -> V:
    # Phi(x) = erfc(z)/2, z = -x/sqrt(2): for |z| >= 1/2 the erfc algorithm
    # with z^2 = x^2/2 from the exact split of x (not from the rounded z);
    # 1 minus that for x > 0 (1 from x = 14.3 on); |z| < 1/2: 1/2 + erf(-z)/2.
    ax = e.abs(x)
    axc = e.fmin(ax, 14.3)  # z = 10.1
    xh, xl = split(e, axc)
    a = e.mul(e.mul(xh, xh), -0.5)
    b = e.mul(e.mul(xl, e.add(axc, xh)), -0.5)
    z = e.mul(axc, _SQRT_HALF)
    zl = e.sub(e.mul(xh, _SQRT_HALF_HI), z)  # exact
    zl = e.add(zl, e.add(e.mul(xh, _SQRT_HALF_LO), e.mul(xl, _SQRT_HALF_HI)))
    zl = e.add(zl, e.mul(xl, _SQRT_HALF_LO))  # z + zl = |x|/sqrt(2)
    m, n = _erfc_parts(e, z, a, b, zl)
    tail = ldexp(e, m, e.isub(n, 1))
    big = e.select(e.cmp("ogt", x, 0.0), e.sub(1.0, tail), tail)
    small = e.muladd(_erf_small(e, e.mul(x, _SQRT_HALF)), 0.5, 0.5)
    return e.select(e.cmp("oge", ax, 0.5 / _SQRT_HALF), big, small)


# erfcx(x) ~ 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8))
# from x = 10.1 on (the next term is below 3e-9).
# The series times 1/sqrt(pi) = _RSQRT_PI + _RSQRT_PI_LO: the f32 constant's
# rounding error (0.44 ulp) is added to the small terms.
_RSQRT_PI = 0.5641895835477563
_RSQRT_PI_LO = _RSQRT_PI - f32(_RSQRT_PI)
_ERFCX_ASYMPTOTIC = tuple(c * _RSQRT_PI for c in (-0.5, 0.75, -1.875, 6.5625))


def erfcx(e: Emitter, x: V) -> V:
    # exp(x^2) erfc(x): t exp(P(t - 3/8)) for 1/2 <= x <= 10.1 (erfc's
    # polynomial without the -x^2), the asymptotic series beyond,
    # exp(x^2) (1 - erf(x)) for |x| < 1/2, 2 exp(x^2) - erfcx(-x) below -1/2
    # (x^2 exact in two parts; +inf from x = -9.4 on).
    ax = e.abs(x)
    axc = e.fmin(ax, 10.1)
    m, n = _erfc_parts(e, axc, 0.0, 0.0, 0.0)
    mid = ldexp(e, m, n)
    big = e.fmax(ax, 10.1)
    u = e.div(1.0, big)
    u2 = e.mul(u, u)
    series = e.add(
        e.muladd(u2, horner(e, u2, _ERFCX_ASYMPTOTIC), _RSQRT_PI_LO), _RSQRT_PI
    )
    asym = e.div(series, big)
    pos = e.select(e.cmp("ogt", ax, 10.1), asym, mid)
    # exp(x^2) as p 2^k, |x| clamped to 9.5 (exp(90.25) overflows anyway)
    xs = e.fmin(ax, 9.5)
    xh, xl = split(e, xs)
    sq_hi, sq_lo = e.mul(xh, xh), e.mul(xl, e.add(xs, xh))
    kf, k = round_nearest(e, e.mul(e.add(sq_hi, sq_lo), LOG2E))
    r = e.add(e.sub(e.sub(sq_hi, e.mul(kf, LN2_HI)), e.mul(kf, LN2_LO)), sq_lo)
    p = e.add(expm1_poly(e, r), 1.0)
    neg = e.sub(ldexp(e, p, e.iadd(k, 1)), pos)
    small = ldexp(e, e.mul(p, e.sub(1.0, _erf_small(e, x))), k)
    y = e.select(e.cmp("olt", x, 0.0), neg, pos)
    y = e.select(e.cmp("olt", ax, 0.5), small, y)
    return e.select(e.cmp("uno", x, x), x, y)


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


# --------------------------------------------------------------------------
# rcbrt = 1/cbrt; norm3d, norm4d: 2^k sqrt(sum (x 2^-k)^2); rhypot, rnorm3d,
# rnorm4d: 2^-k / that sqrt
# --------------------------------------------------------------------------


def rcbrt(e: Emitter, x: V) -> V:
    return e.div(1.0, cbrt(e, x))


def _scaled(e: Emitter, xs: tuple[V, ...]) -> tuple[V, V, V]:
    """(sum of (x 2^-k)^2, 2^k, 2^-k) with 2^k the binade of the largest
    |x| (k limited to [-100, 100]): no overflow or harmful underflow."""
    m = e.abs(xs[0])
    for x in xs[1:]:
        m = e.fmax(m, e.abs(x))
    k = e.isub(e.ashr(e.bits(m), 23), 127)
    k = e.isub(0, e.imin(e.isub(0, e.imin(k, 100)), 100))
    down = pow2(e, e.isub(0, k))
    total: V | None = None
    for x in xs:
        xd = e.mul(x, down)
        total = e.mul(xd, xd) if total is None else e.muladd(xd, xd, total)
    return total, pow2(e, k), down


def _inf_or(e: Emitter, xs: tuple[V, ...], y: V, inf: float) -> V:
    """`inf` where an operand is infinite (even with a NaN), else y."""
    for x in xs:
        y = e.select(e.cmp("oeq", e.abs(x), float("inf")), inf, y)
    return y


def _norm(e: Emitter, xs: tuple[V, ...]) -> V:
    total, up, _ = _scaled(e, xs)
    return _inf_or(e, xs, e.mul(e.sqrt(total), up), float("inf"))


def _rnorm(e: Emitter, xs: tuple[V, ...]) -> V:
    total, _, down = _scaled(e, xs)
    return _inf_or(e, xs, e.mul(e.div(1.0, e.sqrt(total)), down), 0.0)


def norm3d(e: Emitter, a: V, b: V, c: V) -> V:
    return _norm(e, (a, b, c))


def norm4d(e: Emitter, a: V, b: V, c: V, d: V) -> V:
    return _norm(e, (a, b, c, d))


def rhypot(e: Emitter, x: V, y: V) -> V:
    return _rnorm(e, (x, y))


def rnorm3d(e: Emitter, a: V, b: V, c: V) -> V:
    return _rnorm(e, (a, b, c))


def rnorm4d(e: Emitter, a: V, b: V, c: V, d: V) -> V:
    return _rnorm(e, (a, b, c, d))
