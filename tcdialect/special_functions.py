"""The TC builtins that NumPy lacks, in float64: the reference's definitions.

`BUILTINS` maps a builtin's name (``lgamma``, ``erfinv``, ``norm3d`` ...) to
a function of NumPy arrays of one float type that computes it in float64
and rounds the result to that type once (as the reference interpreter does
for ``erf``). `tcdialect.reference` interprets `tc.builtin` with it, the GPU
simulator C calls (``lgammaf``) through the reference, and
`tcdialect.testing.builtin_ulp` measures the targets' errors against it.

Sources, all within a few float64 ulps: Python's `math` (``lgamma``,
``gamma``, ``erfc``, ``remainder``), `statistics.NormalDist.inv_cdf`
(Wichura's AS241, relative error about 1e-16: ``normcdfinv``, ``erfcinv``
and ``erfinv``, the latter refined by Newton steps on `math.erf` near 0),
the C library's double ``j0 j1 y0 y1`` (glibc), power series with positive
terms for ``cyl_bessel_i0``/``i1`` (no cancellation) and the asymptotic
series beyond |x| = 700 where they overflow anyway; ``erfcx`` is
exp(x^2) erfc(x) below 25 and its asymptotic series above. ``nextafter`` steps
in the argument type itself; ``sinpi``/``cospi`` reduce exactly to
[-1/4, 1/4] first (exact zeros and ones at integers and half-integers).

Example: ``BUILTINS["erfinv"](np.float32([0.5]))`` is
``array([0.47693628], dtype=float32)``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections.abc import Callable
from functools import cache
from statistics import NormalDist
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

_SQRT2 = math.sqrt(2.0)
_STD = NormalDist()


def _scalar(fn: Callable[..., float]) -> Callable[..., Array]:
    """`fn` of Python floats applied elementwise in float64, rounded once to
    the first argument's type."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def f(*xs: Array) -> Array:
        with np.errstate(all="ignore"):
            return np.asarray(vec(*[x.astype(np.float64) for x in xs])).astype(
                xs[0].dtype
            )

    return f


def _wide(fn: Callable[..., Array]) -> Callable[..., Array]:
    """`fn` of float64 arrays, its result rounded once to the first argument's type."""

    def f(*xs: Array) -> Array:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*[x.astype(np.float64) for x in xs])).astype(
                xs[0].dtype
            )

    return f


# -- gamma ------------------------------------------------------------------


def _lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # poles, and overflow
        return math.inf


def _tgamma(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf
    except ValueError:  # 0 and the negative integers
        return math.copysign(math.inf, x) if x == 0 else math.nan


# -- error function family ----------------------------------------------------


def _normcdfinv(p: float) -> float:
    if math.isnan(p) or p < 0 or p > 1:
        return math.nan
    if p == 0 or p == 1:
        return math.copysign(math.inf, p - 0.5)
    return _STD.inv_cdf(p)


def _erfcinv(y: float) -> float:
    # erfc(z) = y  <=>  Phi(-z sqrt 2) = y / 2 (y / 2 exact)
    return 0.0 - _normcdfinv(y / 2) / _SQRT2


def _erfinv(x: float) -> float:
    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) >= 0.5:  # 1 - |x| exact
        return math.copysign(_erfcinv(1 - abs(x)), x)
    if x == 0:
        return x
    y = _STD.inv_cdf(0.5 + x / 2) / _SQRT2
    for _ in range(2):  # Newton on erf, accurate near 0
        y -= (math.erf(y) - x) / (2 / math.sqrt(math.pi) * math.exp(-y * y))
    return y


def _erfcx(x: float) -> float:
    if math.isnan(x):
        return x
    if x < 25:
        try:
            return math.exp(x * x) * math.erfc(x)
        except OverflowError:
            return math.inf
    # erfc(x) e^(x^2) ~ 1/(x sqrt(pi)) sum (-1)^n (2n-1)!! / (2x^2)^n
    s, term = 1.0, 1.0
    for n in range(1, 10):
        term *= -(2 * n - 1) / (2 * x * x)
        s += term
    return s / (x * math.sqrt(math.pi))


def _normcdf(x: float) -> float:
    return x if math.isnan(x) else 0.5 * math.erfc(-x / _SQRT2)


# -- Bessel functions ------------------------------------------------------------


@cache
def _libm() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for name in ("j0", "j1", "y0", "y1"):
        f = getattr(lib, name)
        f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
    return lib


def _c_bessel(name: str) -> Callable[[float], float]:
    def f(x: float) -> float:
        return float(getattr(_libm(), name)(x))

    return f


def _bessel_i(order: int) -> Callable[[Array], Array]:
    """I0 or I1 of float64 `x`: sum (x/2)^(2k + order) / (k! (k + order)!)
    (positive terms) for |x| <= 700, e^|x| / sqrt(2 pi |x|) beyond."""

    def f(x: Array) -> Array:
        ax = np.minimum(np.abs(np.nan_to_num(x, nan=0.0)), 700.0)
        q = ax * ax / 4
        term = (ax / 2) ** order
        total = term.copy()
        k = 0
        while np.any(term > 1e-18 * total):
            k += 1
            term = term * q / (k * (k + order))
            total = total + term
        big = np.abs(x) > 700
        total = np.where(big, np.inf, total)
        if order == 1:
            total = np.copysign(total, x)
        return np.where(np.isnan(x), x, total)

    return f


# -- elementary ------------------------------------------------------------------


def _pi_parts(x: Array) -> tuple[Array, Array]:
    """(s, j): x = j/2 + s (mod 2) with |s| <= 1/4, j in 0..3, exactly."""
    r = np.fmod(x, 2.0)  # exact
    j = np.rint(2 * r)
    s = r - j / 2  # exact
    return s, np.mod(j, 4)


def _sinpi(x: Array) -> Array:
    s, j = _pi_parts(x)
    sin, cos = np.sin(np.pi * s), np.cos(np.pi * s)
    y = np.select([j == 0, j == 1, j == 2], [sin, cos, -sin], -cos)
    return np.where(x == 0, x, y)  # sinpi(-0) = -0


def _cospi(x: Array) -> Array:
    s, j = _pi_parts(x)
    sin, cos = np.sin(np.pi * s), np.cos(np.pi * s)
    y = np.select([j == 0, j == 1, j == 2], [cos, -sin, -cos], sin)
    return np.where(np.isinf(x), np.nan, y + 0.0)  # no -0


def _logb(x: Array) -> Array:
    _, e = np.frexp(x)
    y = (e - 1).astype(np.float64)
    y = np.where(x == 0, -np.inf, y)
    return np.where(np.isfinite(x), y, np.abs(x))


def _remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:  # remainder(inf, y), remainder(x, 0)
        return math.nan


def _norm(*xs: Array) -> Array:
    # hypot of hypots: no overflow, +inf if any is infinite even with a NaN
    h = xs[0]
    for x in xs[1:]:
        h = np.hypot(h, x)
    return h


def _nextafter(x: Array, y: Array) -> Array:
    return np.nextafter(x, y.astype(x.dtype))


#: builtin name -> its reference implementation (module docstring).
BUILTINS: dict[str, Callable[..., Array]] = {
    "cospi": _wide(_cospi),
    "sinpi": _wide(_sinpi),
    "lgamma": _scalar(_lgamma),
    "tgamma": _scalar(_tgamma),
    "erfinv": _scalar(_erfinv),
    "erfcinv": _scalar(_erfcinv),
    "erfcx": _scalar(_erfcx),
    "normcdf": _scalar(_normcdf),
    "normcdfinv": _scalar(_normcdfinv),
    "logb": _wide(_logb),
    "j0": _scalar(_c_bessel("j0")),
    "j1": _scalar(_c_bessel("j1")),
    "y0": _scalar(_c_bessel("y0")),
    "y1": _scalar(_c_bessel("y1")),
    "cyl_bessel_i0": _wide(_bessel_i(0)),
    "cyl_bessel_i1": _wide(_bessel_i(1)),
    "rcbrt": _wide(lambda x: 1 / np.cbrt(x)),
    "nextafter": _nextafter,
    "remainder": _scalar(_remainder),
    "rhypot": _wide(lambda x, y: 1 / np.hypot(x, y)),
    "norm3d": _wide(_norm),
    "rnorm3d": _wide(lambda *xs: 1 / _norm(*xs)),
    "norm4d": _wide(_norm),
    "rnorm4d": _wide(lambda *xs: 1 / _norm(*xs)),
}
