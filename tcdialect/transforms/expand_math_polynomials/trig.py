"""Trigonometric functions: sin, cos, tan, atan, asin, acos, atan2, sinpi, cospi.

sin, cos and tan reduce x by j = round(x 2/pi) with pi/2 in seven parts
(accurate for |x| < 2^16 pi/2, about 102943; within an ulp of x up to 6.5e6,
NaN beyond), evaluate minimax polynomials of the remainder and pick the
quadrant from j's bits. atan, asin, acos and atan2 fold their argument into
a small interval (tan(pi/8), 1/2) around one odd polynomial. sinpi and cospi
reduce x exactly to s in [-1/4, 1/4] (period 2) and evaluate sin's and
cos's polynomials at pi s, kept in two parts. Each algorithm
takes an `Emitter` and the operand(s) and returns the result.
"""

from __future__ import annotations

from tcdialect.transforms.expand_math_polynomials.common import (
    hi_lo,
    horner,
    round_nearest,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, Num, V, f32
from tcdialect.transforms.expand_math_polynomials.exp_log import split

# pi/2 as a sum: six parts of at most 8 significant bits (j * part exact for
# |j| < 2^16) and the f32 rest; with them x - j pi/2 keeps its accuracy for
# |x| < 2^16 pi/2 (about 102943) even when it nearly cancels.
_PIO2_PARTS = (
    1.5703125,
    0.0004825592041015625,
    1.2665987014770508e-06,
    9.89530235528946e-10,
    2.5579538487363607e-12,
    5.384581669432009e-15,
    5.721188916458728e-18,
)
_2_OVER_PI = 0.6366197723675814
# sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4,
# minimax (relative error).
_SIN_S = (
    -0.1666666716337204,
    0.008333379402756691,
    -0.00019853065896313637,
    2.832539621522301e-06,
)
_COS_C = (
    0.0416666679084301,
    -0.0013888978864997625,
    2.4821507395245135e-05,
    -2.882629246414581e-07,
)


def _reduce_pio2(e: Emitter, x: V) -> tuple[V, V, V]:
    """(r, lo, j) with x = j pi/2 + r + lo, |r| <= pi/4 (|x| < 102943).

    The products j * part are exact; from the third part on, each
    subtraction's rounding error is recovered (Fast2Sum: |r| >= |j * part| in
    exponent there) and summed into `lo`.
    """
    jf, j = round_nearest(e, e.mul(x, _2_OVER_PI))
    r = e.sub(e.sub(x, e.mul(jf, _PIO2_PARTS[0])), e.mul(jf, _PIO2_PARTS[1]))
    lo: V | None = None
    for part in _PIO2_PARTS[2:]:
        p = e.mul(jf, part)
        t = e.sub(r, p)
        err = e.sub(e.sub(r, t), p)
        lo = err if lo is None else e.add(lo, err)
        r = t
    assert lo is not None
    return r, lo, j


def _sin_cos_poly(e: Emitter, r: V, lo: V) -> tuple[V, V]:
    """(sin(r + lo), cos(r + lo)) for |r| <= pi/4, |lo| tiny."""
    w = e.mul(r, r)
    sp = e.mul(e.mul(r, w), horner(e, w, _SIN_S))
    cp = e.mul(w, e.sub(e.mul(w, horner(e, w, _COS_C)), 0.5))
    s = e.add(e.add(sp, e.mul(lo, e.add(cp, 1.0))), r)
    c = e.add(e.sub(cp, e.mul(lo, r)), 1.0)
    return s, c


def _bit_select(e: Emitter, m: V, a: V, b: V) -> V:
    """`a` where integer mask `m` is all ones, `b` where it is zero."""
    ab, bb = e.bits(a), e.bits(b)
    return e.float(e.ixor(bb, e.iand(e.ixor(ab, bb), m)))


def _quadrant(e: Emitter, j: V, s: V, c: V) -> V:
    """sin(j pi/2 + r) from s = sin(r), c = cos(r)."""
    odd = e.ashr(e.shl(j, 31), 31)  # all ones when j is odd
    v = _bit_select(e, odd, c, s)
    return e.float(e.ixor(e.bits(v), e.shl(e.iand(j, 2), 30)))  # - for j&2


_TRIG_MAX = 6.5e6  # below 2^22 pi/2, where rounding x * 2/pi by round_nearest works


def _trig_domain(e: Emitter, x: V, y: V, odd: bool) -> V:
    """NaN beyond _TRIG_MAX; for odd functions x where |x| < 2^-12 (there
    f(x) = x + O(x^3) rounds to x; keeps -0)."""
    ax = e.abs(x)
    if odd:
        y = e.select(e.cmp("olt", ax, 2.0**-12), x, y)
    return e.select(e.cmp("ogt", ax, _TRIG_MAX), float("nan"), y)


def sin(e: Emitter, x: V) -> V:
    r, lo, j = _reduce_pio2(e, x)
    s, c = _sin_cos_poly(e, r, lo)
    return _trig_domain(e, x, _quadrant(e, j, s, c), odd=True)


def cos(e: Emitter, x: V) -> V:
    r, lo, j = _reduce_pio2(e, x)
    s, c = _sin_cos_poly(e, r, lo)
    return _trig_domain(e, x, _quadrant(e, e.iadd(j, 1), s, c), odd=False)


# tan(r) = r + r^3 T(r^2) on |r| <= pi/4, minimax (relative error).
_TAN_T = (
    0.33333349227905273,
    0.1333266943693161,
    0.05405997112393379,
    0.02127941884100437,
    0.0108476048335433,
    7.009371620370075e-05,
    0.004387655295431614,
)


def tan(e: Emitter, x: V) -> V:
    # t = tan(r + lo) = r + r^3 T(r^2) + lo (1 + t^2); -1/t for odd j.
    r, lo, j = _reduce_pio2(e, x)
    w = e.mul(r, r)
    tail = e.mul(e.mul(r, w), horner(e, w, _TAN_T))
    t0 = e.add(r, tail)
    t = e.add(e.add(tail, e.mul(lo, e.add(e.mul(t0, t0), 1.0))), r)
    odd = e.ashr(e.shl(j, 31), 31)
    return _trig_domain(e, x, _bit_select(e, odd, e.div(-1.0, t), t), odd=True)


# atan(z) = z + z^3 A(z^2) on |z| <= tan(pi/8), minimax (relative error).
_ATAN_A = (
    -0.33333316445350647,
    0.19998525083065033,
    -0.1424429714679718,
    0.10598265379667282,
    -0.0608733706176281,
)
_PIO4 = 0.7853981633974483
_PIO4_HI = f32(_PIO4)
_PIO4_LO = f32(_PIO4 - _PIO4_HI)
_PIO2_HI, _PIO2_LO = 2 * _PIO4_HI, 2 * _PIO4_LO


def atan(e: Emitter, x: V) -> V:
    # |x| > tan(3pi/8): pi/2 + atan(-1/|x|); > tan(pi/8): pi/4 + atan((|x|-1)/(|x|+1)).
    ax = e.abs(x)
    big = e.cmp("ogt", ax, 2.414213562373095)
    mid = e.cmp("ogt", ax, 0.41421356237309503)
    num = e.select(big, -1.0, e.select(mid, e.sub(ax, 1.0), ax))
    den = e.select(big, ax, e.select(mid, e.add(ax, 1.0), 1.0))
    z = e.div(num, den)
    q = e.select(big, 2.0, e.select(mid, 1.0, 0.0))  # multiple of pi/4
    w = e.mul(z, z)
    tail = e.add(e.mul(e.mul(z, w), horner(e, w, _ATAN_A)), e.mul(q, _PIO4_LO))
    y = e.add(e.mul(q, _PIO4_HI), e.add(z, tail))
    return e.copysign(y, x)


# asin(x) = x + x^3 B(x^2) on |x| <= 1/2, minimax (relative error).
_ASIN_B = (
    0.16666659712791443,
    0.07500521838665009,
    0.04451337456703186,
    0.03183908760547638,
    0.014314945787191391,
    0.03769643232226372,
)


def _asin_parts(e: Emitter, x: V) -> tuple[V, V, V]:
    """(|x| <= 1/2, asin(|x|) for |x| <= 1/2, asin(sqrt((1 - |x|)/2)) otherwise)."""
    ax = e.abs(x)
    small = e.cmp("ole", ax, 0.5)
    z = e.select(small, e.mul(ax, ax), e.mul(e.sub(1.0, ax), 0.5))
    s = e.select(small, ax, e.sqrt(z))
    p = e.add(e.mul(e.mul(s, z), horner(e, z, _ASIN_B)), s)
    return small, p, s


def asin(e: Emitter, x: V) -> V:
    # |x| > 1/2: asin(|x|) = pi/2 - 2 asin(sqrt((1 - |x|)/2)).
    small, p, _ = _asin_parts(e, x)
    big = e.sub(_PIO2_HI, e.sub(e.add(p, p), _PIO2_LO))
    return e.copysign(e.select(small, p, big), x)


def acos(e: Emitter, x: V) -> V:
    # |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s); x < -1/2: pi - 2 asin(s).
    small, p, _ = _asin_parts(e, x)
    sp = e.copysign(p, x)
    mid = e.sub(_PIO2_HI, e.sub(sp, _PIO2_LO))
    two_p = e.add(p, p)
    neg = e.sub(e.add(_PIO2_HI, _PIO2_HI), e.sub(two_p, e.add(_PIO2_LO, _PIO2_LO)))
    big = e.select(e.cmp("olt", x, 0.0), neg, two_p)
    return e.select(small, mid, big)


def atan2(e: Emitter, y: V, x: V) -> V:
    # w = min/max of |x|, |y| (or (min - max)/(min + max) above tan(pi/8));
    # the result is copysign(K pi/4 + s atan(w), y) with K in 0..4, s = +-1
    # from the octant: |y| > |x| gives 2 - K and -s, x < 0 (or -0) 4 - K, -s.
    ax, ay = e.abs(x), e.abs(y)
    swap = e.cmp("ogt", ay, ax)  # false with a NaN: then w is NaN
    scale = e.select(e.cmp("ogt", e.fmax(ax, ay), 1e38), 0.25, 1.0)  # no overflow
    num = e.mul(e.select(swap, ax, ay), scale)
    den = e.mul(e.select(swap, ay, ax), scale)
    mid = e.cmp("ogt", num, e.mul(den, 0.41421356237309503))
    w = e.div(e.select(mid, e.sub(num, den), num), e.select(mid, e.add(num, den), den))
    w = e.select(e.cmp("oeq", e.add(ax, ay), 0.0), 0.0, w)  # atan2(+-0, +-0)
    k = e.select(mid, 1.0, 0.0)
    sgn: Num = 1.0
    k = e.select(swap, e.sub(2.0, k), k)
    sgn = e.select(swap, -1.0, 1.0)
    xneg = e.cmp("olt", e.copysign(1.0, x), 0.0)
    k = e.select(xneg, e.sub(4.0, k), k)
    sgn = e.select(xneg, e.sub(0.0, sgn), sgn)
    v = e.mul(w, w)
    atan_w = e.add(e.mul(e.mul(w, v), horner(e, v, _ATAN_A)), w)
    r = e.add(e.mul(k, _PIO4_HI), e.add(e.mul(sgn, atan_w), e.mul(k, _PIO4_LO)))
    both_inf = e.both(e.cmp("oeq", ax, float("inf")), e.cmp("oeq", ay, float("inf")))
    r = e.select(both_inf, e.select(xneg, 3 * _PIO4, _PIO4), r)
    return e.copysign(r, y)


# --------------------------------------------------------------------------
# sinpi, cospi
# --------------------------------------------------------------------------

_PI_HI, _PI_LO = hi_lo(3.141592653589793, 12)  # s_hi * _PI_HI exact


def _reduce_pi(e: Emitter, x: V) -> tuple[V, V, V]:
    """(r, lo, j) with |x| = j/2 + s (mod 2), |s| <= 1/4, r + lo = pi s.

    Exact: subtracting 2^24 ... 2^21 (multiples of the period 2; every
    float from 2^24 on is even) brings |x| below 2^21, where 2|x| rounds to
    the integer j and s = |x| - j/2 exactly; pi s is a product of parts
    with its rounding error recovered (Dekker).
    """
    a = e.select(e.cmp("oge", e.abs(x), 2.0**24), 0.0, e.abs(x))
    for p in (2.0**23, 2.0**22, 2.0**21):
        a = e.select(e.cmp("oge", a, p), e.sub(a, p), a)
    jf, j = round_nearest(e, e.add(a, a))
    s = e.sub(a, e.mul(jf, 0.5))
    r = e.mul(s, _PI_HI + _PI_LO)
    sh, sl = split(e, s)
    lo = e.add(e.sub(e.mul(sh, _PI_HI), r), e.mul(sh, _PI_LO))
    lo = e.add(e.add(lo, e.mul(sl, _PI_HI)), e.mul(sl, _PI_LO))
    return r, lo, j


def sinpi(e: Emitter, x: V) -> V:
    # sin(pi |x|) with the sign of x (odd); NaN for +-inf
    r, lo, j = _reduce_pi(e, x)
    s, c = _sin_cos_poly(e, r, lo)
    y = _quadrant(e, j, s, c)
    y = e.float(e.ixor(e.bits(y), e.iand(e.bits(x), -(2**31))))
    return e.select(e.cmp("oeq", e.abs(x), float("inf")), float("nan"), y)


def cospi(e: Emitter, x: V) -> V:
    r, lo, j = _reduce_pi(e, x)
    s, c = _sin_cos_poly(e, r, lo)
    y = e.add(_quadrant(e, e.iadd(j, 1), s, c), 0.0)  # +0 at half-integers
    return e.select(e.cmp("oeq", e.abs(x), float("inf")), float("nan"), y)
