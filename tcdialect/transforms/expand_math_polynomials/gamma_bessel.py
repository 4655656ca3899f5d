"""lgamma and the modified Bessel functions cyl_bessel_i0, cyl_bessel_i1.

lgamma: t P1(t) around 1 (t = x - 1, or x itself minus log x below 0.6),
t P2(t) around 2 (t = y - 2, with y = x - m in [1.5, 3] and the log of the
product y (y + 1) ... (y + m - 1) added up to x = 8), Stirling's
(x - 1/2) log(x/e) + Q(1/x) beyond; negative x by the reflection
log(pi) - log|x sinpi(x)| - lgamma(|x|). cyl_bessel_i0/i1: their power
series fitted as polynomials of u = x^2 (with a first-order correction for
the rounding of u) up to |x| = 8, e^|x| / sqrt(|x|) Q(1/|x|) beyond. Each
algorithm takes an `Emitter` and the operand and returns the result.
"""

from __future__ import annotations

from tcdialect.transforms.expand_math_polynomials.common import (
    horner,
    ldexp,
    round_nearest,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, V
from tcdialect.transforms.expand_math_polynomials.exp_log import (
    exp_parts,
    log,
    split,
)
from tcdialect.transforms.expand_math_polynomials.trig import sinpi

# lgamma(1 + t) = t P1(t) on [-0.4, 0.6], lgamma(2 + t) = t P2(t) on
# [-1/2, 1], minimax (relative error); lgamma(x) = (x - 1/2) log(x/e) +
# Q(1/x) for x >= 8, minimax (absolute error).
_LGAMMA_1 = (
    -0.5772156715393066,
    0.822467029094696,
    -0.4006839692592621,
    0.27057868242263794,
    -0.20745164155960083,
    0.16969932615756989,
    -0.14322258532047272,
    0.12291411310434341,
    -0.11372263729572296,
    0.11659543216228485,
    -0.10608477890491486,
    0.0634198784828186,
    -0.01768704503774643,
)
_LGAMMA_2 = (
    0.42278432846069336,
    0.32246702909469604,
    -0.06735166907310486,
    0.020580904558300972,
    -0.00739537226036191,
    0.002894357545301318,
    -0.0011415843619033694,
    0.0004634620272554457,
    -0.00030505488393828273,
    0.0002219165617134422,
    -7.112733146641403e-05,
)
_LGAMMA_Q = (
    0.418938547372818,
    0.0833313912153244,
    3.950876998715103e-05,
    -0.0029716643039137125,
)
_INV_E = 0.36787944117144233
_LOG_PI = 1.1447298858494002


def _lgamma_positive(e: Emitter, x: V) -> V:
    """lgamma(x) for x >= -1/4."""
    # x < 1.5: t P1(t), t = x - 1; below 0.6 t = x and - log|x|
    near0 = e.cmp("olt", x, 0.6)
    t1 = e.select(near0, x, e.sub(x, 1.0))
    l1 = e.muladd(t1, horner(e, t1, _LGAMMA_1), 0.0)  # +0 at x = 1
    l1 = e.select(near0, e.sub(l1, log(e, e.abs(x))), l1)
    # 1.5 <= x < 8: y = x - m in [1.5, 3], t P2(t), t = y - 2, plus
    # log(y (y + 1) ... (y + m - 1)) (exact factors, m <= 5)
    xm = e.fmin(e.fmax(x, 1.5), 8.0)
    mf = e.fmax(round_nearest(e, e.sub(xm, 2.5))[0], 0.0)
    y = e.sub(xm, mf)
    t2 = e.sub(y, 2.0)
    prod = y
    for i in range(1, 5):
        prod = e.mul(
            prod, e.select(e.cmp("ogt", mf, float(i)), e.add(y, float(i)), 1.0)
        )
    prod = e.select(e.cmp("ogt", mf, 0.0), prod, 1.0)
    l2 = e.add(e.mul(t2, horner(e, t2, _LGAMMA_2)), log(e, prod))
    # x >= 8: Stirling
    l3 = e.muladd(
        e.sub(x, 0.5), log(e, e.mul(x, _INV_E)), horner(e, e.div(1.0, x), _LGAMMA_Q)
    )
    return e.select(e.cmp("olt", x, 1.5), l1, e.select(e.cmp("olt", x, 8.0), l2, l3))


def lgamma(e: Emitter, x: V) -> V:
    # x < -1/4: log(pi) - log|x sinpi(x)| - lgamma(|x|); +inf at the poles
    neg = e.cmp("olt", x, -0.25)
    g = _lgamma_positive(e, e.select(neg, e.abs(x), x))
    s = e.abs(sinpi(e, x))
    refl = e.sub(e.sub(_LOG_PI, log(e, e.mul(e.abs(x), s))), g)
    pole = e.either(e.cmp("oeq", s, 0.0), e.cmp("oge", e.abs(x), 2.0**23))
    refl = e.select(pole, float("inf"), refl)
    return e.select(neg, refl, g)


# I0(x) = P0(x^2), I1(x) = x/2 P1(x^2) for |x| <= 8, minimax (relative error);
# I0(x) = e^x / sqrt(x) Q0(1/x), I1 likewise, beyond.
_I0_P = (
    1.0,
    0.2500000298023224,
    0.015624962747097015,
    0.0004340411687735468,
    6.7795681388815865e-06,
    6.799167806548212e-08,
    4.627484784247571e-10,
    2.6274696394296138e-12,
    5.875647326536795e-15,
    5.694186267106424e-17,
)
_I1_P = (
    1.0,
    0.125,
    0.005208331160247326,
    0.00010850799299078062,
    1.3561549394580652e-06,
    1.1318333825727223e-08,
    6.654336109912506e-11,
    3.204888069339995e-13,
    7.292041527254451e-16,
    5.393744921486243e-18,
)
_I0_Q = (
    0.3989422917366028,
    0.04986436665058136,
    0.028208253905177116,
    0.027215464040637016,
    0.04386168718338013,
    0.2089233547449112,
)
_I1_Q = (
    0.3989422917366028,
    -0.14960850775241852,
    -0.046369828283786774,
    -0.050975602120161057,
    0.05543655529618263,
    -0.603463888168335,
)


def _bessel_i(e: Emitter, x: V, order: int) -> V:
    ax = e.abs(x)
    # |x| <= 8: P(u_hi) corrected for u_lo/u_hi (x^2 = u_hi + u_lo exact):
    # P0' = P1/4 and P1' = (P0 - P1)/u
    xh, xl = split(e, e.fmin(ax, 8.0))
    uh, ul = e.mul(xh, xh), e.mul(xl, e.add(e.fmin(ax, 8.0), xh))
    u = e.add(uh, ul)
    p0, p1 = horner(e, u, _I0_P), horner(e, u, _I1_P)
    c = e.div(e.sub(ul, e.sub(u, uh)), e.add(u, 2.0**-100))
    # |x| > 8: e^|x| Q(1/|x|) / sqrt(|x|), the e^|x| scaling by 2^n last
    xc = e.fmin(e.fmax(ax, 8.0), 100.0)
    p, n = exp_parts(e, xc)
    q = horner(e, e.div(1.0, xc), _I1_Q if order else _I0_Q)
    big = ldexp(e, e.mul(p, e.div(q, e.sqrt(xc))), n)
    if order == 0:
        small = e.muladd(e.mul(c, e.mul(u, p1)), 0.25, p0)
    else:
        small = e.mul(e.mul(ax, 0.5), e.muladd(c, e.sub(p0, p1), p1))
    y = e.select(e.cmp("ogt", ax, 8.0), big, small)
    y = e.select(e.cmp("uno", x, x), x, y)
    return e.copysign(y, x) if order else y


def cyl_bessel_i0(e: Emitter, x: V) -> V:
    return _bessel_i(e, x, 0)


def cyl_bessel_i1(e: Emitter, x: V) -> V:
    return _bessel_i(e, x, 1)
