"""The exp and log families and the functions built on them.

exp, exp2, exp10, expm1: n = round(x / ln 2) (or of x, x log2 10), a
Cody-Waite reduction r = x - n ln2 with ln 2 in two parts, a minimax
polynomial of r, scaled by 2^n. log, log2, log10, log1p: x = 2^k (1 + f)
with 1 + f in [sqrt(1/2), sqrt(2)) from the bits, f - f^2/2 + f^3 P(f).
sinh, cosh, tanh from an odd polynomial near 0 and exp beyond; asinh, acosh,
atanh from log1p. Each algorithm takes an `Emitter` and the operand(s) and
returns the result (the methods and error bounds: the package docstring).
"""

from __future__ import annotations

from collections.abc import Sequence

from tcdialect.transforms.expand_math_polynomials.common import (
    LN2,
    LN2_HI,
    LN2_LO,
    LOG2E,
    MAGIC,
    MAGIC_BITS,
    hi_lo,
    horner,
    int_to_float,
    isnan,
    ldexp,
    pow2,
    round_nearest,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, V

# --------------------------------------------------------------------------
# exp family
# --------------------------------------------------------------------------

# exp(r) = 1 + r + r^2 Q(r) on |r| <= ln2/2: minimax for the relative error
# of expm1(r) = r + r^2 Q(r) (and so of exp(r) too).
_EXP_Q = (
    0.4999999701976776,
    0.1666654646396637,
    0.04166743531823158,
    0.008366272784769535,
    0.0013870705151930451,
)


def expm1_poly(e: Emitter, r: V) -> V:
    """exp(r) - 1 for |r| <= ln2/2."""
    return e.muladd(e.mul(r, r), horner(e, r, _EXP_Q), r)


def _exp_poly(e: Emitter, r: V) -> V:
    """exp(r) for |r| <= ln2/2."""
    return e.add(expm1_poly(e, r), 1.0)


def exp_parts(e: Emitter, x: V) -> tuple[V, V]:
    """(p, n) with exp(x) = p * 2^n, p in [0.7, 1.42], for |x| <= 110.

    Multiply-adds throughout: n = round(x log2 e) rounds x log2 e + 1.5 * 2^23
    once, and r = x - n ln2_hi - n ln2_lo (n ln2_hi exact) is two FMAs.
    """
    tm = e.muladd(x, LOG2E, MAGIC)
    nf, n = e.sub(tm, MAGIC), e.isub(e.bits(tm), MAGIC_BITS)
    r = e.muladd(nf, -LN2_LO, e.muladd(nf, -LN2_HI, x))
    return _exp_poly(e, r), n


def exp(e: Emitter, x: V) -> V:
    # beyond the clamp: 0 and +inf by scaling; a NaN goes through everything
    p, n = exp_parts(e, e.clamp(x, -104.0, 89.0))
    return ldexp(e, p, n)


# --------------------------------------------------------------------------
# log family
# --------------------------------------------------------------------------

# log(1 + f) = f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1]: minimax
# for relative error.
_LOG_P = (
    0.3333333134651184,
    -0.2500081956386566,
    0.20001240074634552,
    -0.16623401641845703,
    0.14201609790325165,
    -0.13159754872322083,
    0.12762115895748138,
    -0.07635887712240219,
)
_SQRT_HALF_BITS = 0x3F3504F3  # f32(sqrt(1/2))


def _log1p_tail(e: Emitter, f: V) -> V:
    """log(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1]."""
    return e.mul(e.mul(f, f), e.sub(e.mul(f, horner(e, f, _LOG_P)), 0.5))


def _log_reduce(e: Emitter, x: V) -> tuple[V, V]:
    """(k, f) with x = 2^k (1 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1), for
    positive normal x; k as a float (exact)."""
    ix = e.isub(e.bits(x), _SQRT_HALF_BITS)
    m = e.float(e.iadd(e.iand(ix, 0x007FFFFF), _SQRT_HALF_BITS))
    return int_to_float(e, e.ashr(ix, 23)), e.sub(m, 1.0)


def log_parts(e: Emitter, x: V) -> tuple[V, V]:
    """`_log_reduce` for any positive finite x (subnormals scaled by 2^23)."""
    tiny = e.cmp("olt", x, 2.0**-126)
    k, f = _log_reduce(e, e.select(tiny, e.mul(x, 2.0**23), x))
    return e.sub(k, e.select(tiny, 23.0, 0.0)), f


def _log_specials(e: Emitter, x: V, y: V) -> V:
    """log-like results for x <= 0 (-inf at 0, NaN below), +inf and NaN."""
    y = e.select(e.cmp("olt", x, 0.0), float("nan"), y)
    y = e.select(e.cmp("oeq", x, 0.0), float("-inf"), y)
    return e.select(e.cmp("uge", x, float("inf")), x, y)


def log(e: Emitter, x: V) -> V:
    k, f = log_parts(e, x)
    q = _log1p_tail(e, f)
    y = e.add(e.mul(k, LN2_HI), e.add(f, e.add(q, e.mul(k, LN2_LO))))
    return _log_specials(e, x, y)


def log_hi_lo(e: Emitter, x: V) -> tuple[V, V]:
    """log(x) as hi + lo, hi = `log`(x) (with its special values), lo the
    rounding errors of its last two additions (Fast2Sum each: |k ln2_hi| >
    |f + q| unless k = 0, |f| > |q|)."""
    k, f = log_parts(e, x)
    a = e.mul(k, LN2_HI)  # exact
    q = e.add(_log1p_tail(e, f), e.mul(k, LN2_LO))
    s = e.add(f, q)
    hi = e.add(a, s)
    lo = e.add(e.add(e.sub(a, hi), s), e.add(e.sub(f, s), q))
    return _log_specials(e, x, hi), lo


def split(e: Emitter, f: V) -> tuple[V, V]:
    """f = hi + lo with hi holding the top 12 significant bits (exact)."""
    hi = e.float(e.iand(e.bits(f), -4096))
    return hi, e.sub(f, hi)


_LOG2E_HI, _LOG2E_LO = hi_lo(LOG2E, 11)


def log2(e: Emitter, x: V) -> V:
    # log2(x) = k + (f + q) log2(e), with f * log2(e) in two parts.
    k, f = log_parts(e, x)
    q = _log1p_tail(e, f)
    fh, fl = split(e, f)
    hi = e.mul(fh, _LOG2E_HI)  # exact
    lo = e.add(e.add(e.mul(fl, _LOG2E_HI), e.mul(f, _LOG2E_LO)), e.mul(q, LOG2E))
    return _log_specials(e, x, e.add(e.add(k, hi), lo))


_LOG10E = 0.4342944819032518
_LOG10_2_HI, _LOG10_2_LO = hi_lo(0.3010299956639812, 13)  # k * hi exact
_LOG10E_HI, _LOG10E_LO = hi_lo(_LOG10E, 11)


def log10(e: Emitter, x: V) -> V:
    # log10(x) = k log10(2) + (f + q) log10(e), products in two parts.
    k, f = log_parts(e, x)
    q = _log1p_tail(e, f)
    fh, fl = split(e, f)
    hi = e.add(e.mul(k, _LOG10_2_HI), e.mul(fh, _LOG10E_HI))
    lo = e.add(
        e.add(e.mul(fl, _LOG10E_HI), e.mul(f, _LOG10E_LO)),
        e.add(e.mul(q, _LOG10E), e.mul(k, _LOG10_2_LO)),
    )
    return _log_specials(e, x, e.add(hi, lo))


def log1p_core(e: Emitter, x: V) -> V:
    """log1p(x) for finite x > -1 (NaN stays NaN)."""
    # u = 1 + x rounded; log1p(x) = log(u) + c/u with c = (1 + x) - u exact.
    u = e.add(x, 1.0)
    k, f = _log_reduce(e, u)
    c = e.select(e.cmp("oge", u, 2.0), e.sub(1.0, e.sub(u, x)), e.sub(x, e.sub(u, 1.0)))
    lo = e.add(e.div(c, u), e.mul(k, LN2_LO))
    return e.add(e.mul(k, LN2_HI), e.add(f, e.add(_log1p_tail(e, f), lo)))


def log1p(e: Emitter, x: V) -> V:
    y = log1p_core(e, x)
    y = e.select(e.cmp("ult", x, -1.0), float("nan"), y)
    y = e.select(e.cmp("oeq", x, -1.0), float("-inf"), y)
    y = e.select(e.cmp("oeq", x, float("inf")), x, y)
    return e.select(e.cmp("oeq", x, 0.0), x, y)  # keeps -0


def expm1(e: Emitter, x: V) -> V:
    # expm1(x) = 2^n (expm1(r) + 1 - 2^-n), 1 - 2^-n exact for |n| <= 24.
    xc = e.fmin(e.fmax(x, -30.0), 89.0)
    nf, n = round_nearest(e, e.mul(xc, LOG2E))
    r = e.sub(e.sub(xc, e.mul(nf, LN2_HI)), e.mul(nf, LN2_LO))
    c = e.sub(1.0, pow2(e, e.isub(0, e.imin(n, 100))))
    q = e.mul(e.mul(r, r), horner(e, r, _EXP_Q))
    y = ldexp(e, e.add(e.add(c, r), q), n)
    y = e.select(isnan(e, x), x, y)
    return e.select(e.cmp("oeq", x, 0.0), x, y)  # keeps -0


# 2^r = 1 + r Q(r) on |r| <= 1/2, minimax (relative error).
_EXP2_Q = (
    0.6931471824645996,
    0.24022647738456726,
    0.05550359934568405,
    0.009618505835533142,
    0.0013390806270763278,
    0.0001532646274426952,
)


def exp2(e: Emitter, x: V) -> V:
    xc = e.fmin(e.fmax(x, -151.0), 129.0)
    nf, n = round_nearest(e, xc)
    r = e.sub(xc, nf)
    p = e.add(e.mul(r, horner(e, r, _EXP2_Q)), 1.0)
    y = ldexp(e, p, n)
    return e.select(isnan(e, x), x, y)


# 10^r = 1 + r Q(r) on |r| <= log10(2)/2, minimax (relative error).
_EXP10_Q = (
    2.3025851249694824,
    2.6509487628936768,
    2.034656047821045,
    1.171295166015625,
    0.5418264269828796,
    0.20616647601127625,
)
_LOG2_10 = 3.321928094887362
_LOG10_2_HI16, _LOG10_2_LO16 = hi_lo(0.3010299956639812, 16)


def exp10(e: Emitter, x: V) -> V:
    xc = e.fmin(e.fmax(x, -46.0), 39.0)
    nf, n = round_nearest(e, e.mul(xc, _LOG2_10))
    r = e.sub(e.sub(xc, e.mul(nf, _LOG10_2_HI16)), e.mul(nf, _LOG10_2_LO16))
    p = e.add(e.mul(r, horner(e, r, _EXP10_Q)), 1.0)
    y = ldexp(e, p, n)
    return e.select(isnan(e, x), x, y)


# --------------------------------------------------------------------------
# hyperbolic functions
# --------------------------------------------------------------------------

# tanh(x) = x + x^3 P(x^2) on |x| <= 0.55, minimax (relative error).
_TANH_P = (
    -0.33333316445350647,
    0.13332544267177582,
    -0.0538475476205349,
    0.02105071395635605,
    -0.00624284939840436,
)
# sinh(x) = x + x^3 P(x^2) on |x| <= 1, minimax (relative error).
_SINH_P = (
    0.1666666716337204,
    0.00833331048488617,
    0.0001984289410756901,
    2.782230239972705e-06,
)


def _odd(e: Emitter, x: V, cs: Sequence[float]) -> V:
    """x + x^3 P(x^2), P with coefficients `cs`."""
    s = e.mul(x, x)
    return e.add(e.mul(e.mul(x, s), horner(e, s, cs)), x)


def tanh(e: Emitter, x: V) -> V:
    # |x| < 0.55: odd polynomial; else 1 - 2 / (exp(2|x|) + 1) (1 beyond 9.1).
    ax = e.abs(x)
    axc = e.fmin(ax, 9.1)
    p, n = exp_parts(e, e.add(axc, axc))
    big = e.sub(1.0, e.div(2.0, e.add(e.mul(p, pow2(e, n)), 1.0)))
    y = e.select(e.cmp("oge", ax, 0.55), big, _odd(e, ax, _TANH_P))
    return e.copysign(y, x)


def _half_exp(e: Emitter, ax: V) -> V:
    """exp(ax) / 2 for 0 <= ax, +inf from 89.42 on (NaN: anything)."""
    p, n = exp_parts(e, e.fmin(ax, 90.0))
    return ldexp(e, p, e.isub(n, 1))


def sinh(e: Emitter, x: V) -> V:
    # |x| < 1: odd polynomial; else h - 1/(4h), h = exp(|x|)/2.
    ax = e.abs(x)
    h = _half_exp(e, ax)
    big = e.sub(h, e.div(0.25, h))
    y = e.select(e.cmp("oge", ax, 1.0), big, _odd(e, ax, _SINH_P))
    return e.copysign(y, x)


def cosh(e: Emitter, x: V) -> V:
    ax = e.abs(x)
    h = _half_exp(e, ax)
    return e.select(isnan(e, x), x, e.add(h, e.div(0.25, h)))


# --------------------------------------------------------------------------
# inverse hyperbolic functions
# --------------------------------------------------------------------------


def asinh(e: Emitter, x: V) -> V:
    # log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); from 2^12 on log(|x|) + ln 2.
    ax = e.abs(x)
    big = e.cmp("ogt", ax, 4096.0)
    t = e.mul(ax, ax)
    small = e.add(ax, e.div(t, e.add(e.sqrt(e.add(t, 1.0)), 1.0)))
    y = log1p_core(e, e.select(big, e.sub(ax, 1.0), small))
    y = e.add(y, e.select(big, LN2, 0.0))
    y = e.select(e.cmp("oeq", ax, float("inf")), ax, y)
    return e.copysign(y, x)


def acosh(e: Emitter, x: V) -> V:
    # log1p(t + sqrt(2t + t^2)), t = x - 1; from 2^12 on log(x) + ln 2.
    big = e.cmp("ogt", x, 4096.0)
    t = e.sub(x, 1.0)
    small = e.add(t, e.sqrt(e.add(e.add(t, t), e.mul(t, t))))
    y = log1p_core(e, e.select(big, t, small))
    y = e.add(y, e.select(big, LN2, 0.0))
    y = e.select(e.cmp("oeq", x, float("inf")), x, y)
    return e.select(e.cmp("olt", x, 1.0), float("nan"), y)


def atanh(e: Emitter, x: V) -> V:
    # 1/2 log1p(2a + 2a^2/(1 - a)) for a = |x| < 1/2, else 1/2 log1p(2a/(1 - a)).
    ax = e.abs(x)
    small = e.cmp("olt", ax, 0.5)
    a2 = e.add(ax, ax)
    w = e.div(e.select(small, e.mul(a2, ax), a2), e.sub(1.0, ax))
    y = e.mul(log1p_core(e, e.select(small, e.add(a2, w), w)), 0.5)
    y = e.select(e.cmp("oeq", ax, 1.0), float("inf"), y)
    y = e.select(e.cmp("ogt", ax, 1.0), float("nan"), y)
    return e.copysign(y, x)
