"""erfinv, erfcinv and normcdfinv: one polynomial of w = -log(y (2 - y)).

With y = 1 - |x| (erfinv) or y itself (erfcinv, the smaller of y and 2 - y,
both exact), erfinv(x) = x p(w), w = -log((1 - x)(1 + x)), and p is smooth
in w (Giles, "Approximating the erfinv function", GPU Computing Gems, 2011):
a polynomial of w for w < 5 (Giles has w - 5/2: more cancellation near
0), of sqrt(w) - 3 up to w = 16.8 (every erfinv argument below 1), and of
sqrt(w) - 7 up to w = 104 (erfcinv of the smallest subnormals).
normcdfinv(p) = -sqrt(2) erfcinv(2p), with polynomials fitted for sqrt(2)
p(w). w and sqrt(w) are kept in two parts (`log_hi_lo`, a Dekker square),
which saves about half an ulp each. Each algorithm takes an `Emitter` and the
operand and returns the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcdialect.transforms.expand_math_polynomials.common import horner
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, V
from tcdialect.transforms.expand_math_polynomials.exp_log import log_hi_lo, split

# erfinv(x) / x as a polynomial of w (w < 5), sqrt(w) - 3 (sqrt(w) <= 4.1)
# and sqrt(w) - 7 (sqrt(w) <= 10.2), minimax (relative error); _N*: the
# same times sqrt(2), fitted as such.
_A = (
    0.8862268924713135,
    0.23201483488082886,
    0.011542693711817265,
    -0.0023210658691823483,
    -0.00014200872101355344,
    5.3437830501934513e-05,
    8.246635729847185e-07,
    -1.3252280268716277e-06,
    1.4899343625529582e-07,
    -5.484850351678006e-09,
)
_B = (
    2.832976818084717,
    1.001675009727478,
    0.009444826282560825,
    -0.0076378108933568,
    0.00568957207724452,
    -0.0035965703427791595,
    0.0014793636510148644,
    -5.5484641052316874e-05,
    -0.00030519740539602935,
    0.00011325884406687692,
)
_NA = (
    1.2533141374588013,
    0.3281170129776001,
    0.016332492232322693,
    -0.003301507793366909,
    -0.00018005695892497897,
    6.292937905527651e-05,
    5.6560120356152765e-06,
    -2.798144805638003e-06,
    3.1276806566893356e-07,
    -1.2435195984039638e-08,
)
_NB = (
    4.006434440612793,
    1.4165828227996826,
    0.01334852259606123,
    -0.010808557271957397,
    0.008103037253022194,
    -0.005071114748716354,
    0.0019625681452453136,
    -5.8725563576444983e-05,
    -0.0003334538487251848,
    0.00011448435543570668,
)
_NC = (
    9.714261054992676,
    1.4263696670532227,
    -0.0007261818973347545,
    8.748742402531207e-06,
    9.302036232838873e-06,
    -2.2444394289777847e-06,
    2.8427055553947866e-07,
    -7.715971861443904e-08,
    2.5564766303887154e-08,
    -2.627283501865918e-09,
)
_C = (
    6.869019508361816,
    1.008595585823059,
    -0.0005124732851982117,
    6.3997599681897555e-06,
    6.0793381635448895e-06,
    -1.683546656749968e-06,
    2.810801333907875e-07,
    -4.061543990019345e-08,
    1.4013803451007334e-08,
    -2.4800264064595012e-09,
)


Tables = tuple[Sequence[float], Sequence[float], Sequence[float]]
_ERFINV: Tables = (_A, _B, _C)
_NORMCDFINV: Tables = (_NA, _NB, _NC)


def _p(e: Emitter, w: V, wl: V, tables: Tables, tails: bool) -> V:
    """erfinv(x)/x (times sqrt(2) with `_NORMCDFINV`) from
    w + wl = -log((1 - x)(1 + x)); `tails`: also w > 16.8. sqrt(w + wl) is
    kept in two parts too (its rounding would cost about half an ulp)."""
    a = horner(e, e.add(w, wl), tables[0])
    sw = e.sqrt(w)
    sh, sl = split(e, sw)
    sq = e.add(e.add(e.sub(e.mul(sh, sh), w), e.mul(e.mul(sh, sl), 2.0)), e.mul(sl, sl))
    swl = e.div(e.sub(wl, sq), e.add(sw, sw))  # sw + swl = sqrt(w + wl)
    b = horner(e, e.add(e.sub(sw, 3.0), swl), tables[1])
    if tails:
        c = horner(e, e.add(e.sub(sw, 7.0), swl), tables[2])
        b = e.select(e.cmp("olt", sw, 4.0), b, c)
    return e.select(e.cmp("olt", w, 5.0), a, b)


def _inverse(e: Emitter, y: V, x: V, tables: Tables, tails: bool) -> V:
    """x p(w) for w = -log(y (2 - y)), y = 1 - |x| in [0, 1] (+-inf at
    y = 0, NaN outside [0, 2])."""
    lh, ll = log_hi_lo(e, e.mul(y, e.sub(2.0, y)))
    r = e.mul(_p(e, e.mul(lh, -1.0), e.mul(ll, -1.0), tables, tails), x)
    return e.select(e.cmp("oeq", y, 0.0), e.copysign(float("inf"), x), r)


def erfinv(e: Emitter, x: V) -> V:
    return _inverse(e, e.sub(1.0, e.abs(x)), x, _ERFINV, False)


def erfcinv(e: Emitter, y: V) -> V:
    return _inverse(e, e.fmin(y, e.sub(2.0, y)), e.sub(1.0, y), _ERFINV, True)


def normcdfinv(e: Emitter, p: V) -> V:
    # -sqrt(2) erfcinv(2p): sqrt(2) in the tables, 2p - 1 for -(1 - 2p)
    y = e.add(p, p)
    return _inverse(e, e.fmin(y, e.sub(2.0, y)), e.sub(y, 1.0), _NORMCDFINV, True)
