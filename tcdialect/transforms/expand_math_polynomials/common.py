"""Building blocks of the expansions: rounding, scaling by 2^n, Horner.

Rounding to an integer adds and subtracts 1.5 * 2^23 (the integer is then in
the sum's low bits: no float-to-int conversion, which vectorises badly);
scaling by 2^n is two exponent-bit factors (correct overflow and subnormal
results) or, with `native_ldexp`, one `llvm.ldexp`; polynomials are Horner
chains of multiply-adds that LLVM may contract into FMAs.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, Num, V, f32


def hi_lo(v: float, bits: int) -> tuple[float, float]:
    """`v` as hi + lo: hi its first `bits` significant bits, lo f32(v - hi)."""
    scale = 2.0 ** (bits - 1 - pymath.floor(pymath.log2(abs(v))))
    hi = pymath.floor(v * scale) / scale
    return hi, f32(v - hi)


MAGIC = 12582912.0  # 1.5 * 2^23: t + MAGIC - MAGIC rounds t to an integer
MAGIC_BITS = 0x4B400000  # its bit pattern: bits(t + MAGIC) - MAGIC_BITS = n

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
LN2_HI, LN2_LO = hi_lo(LN2, 16)  # n * LN2_HI is exact for |n| < 256


def horner(e: Emitter, x: V, cs: Sequence[float]) -> V:
    """`cs[0] + cs[1] x + ... + cs[-1] x^(n-1)`, each step a multiply-add
    that LLVM may fuse into one FMA (`fastmath<contract>`)."""
    p: Num = cs[-1]
    for c in reversed(cs[:-1]):
        p = e.muladd(p, x, c)
    return p


def round_nearest(e: Emitter, t: V) -> tuple[V, V]:
    """`t` rounded to the nearest integer, as a float and as an integer.

    Valid for |t| < 2^22: adding 1.5 * 2^23 leaves the integer in the low
    mantissa bits (no float-to-int conversion, which vectorises badly).
    """
    tm = e.add(t, MAGIC)
    return e.sub(tm, MAGIC), e.isub(e.bits(tm), MAGIC_BITS)


def int_to_float(e: Emitter, k: V) -> V:
    """Integer `k` (|k| < 2^22) as a float."""
    return e.sub(e.float(e.iadd(k, MAGIC_BITS)), MAGIC)


def pow2(e: Emitter, n: V) -> V:
    """2^n for integer -126 <= n <= 127."""
    return e.float(e.shl(e.iadd(n, 127), 23))


def ldexp(e: Emitter, p: V, n: V) -> V:
    """`p * 2^n` for -252 <= n <= 254, rounded once.

    With `native_ldexp`, LLVM's `llvm.ldexp`. Else two factors 2^(n >> 1)
    and 2^(n - (n >> 1)), each a normal number, so that results near
    overflow and in the subnormal range come out right.
    """
    if e.native_ldexp:
        return e.ldexp(p, n)
    n1 = e.ashr(n, 1)
    return e.mul(e.mul(p, pow2(e, n1)), pow2(e, e.isub(n, n1)))


def isnan(e: Emitter, x: V) -> V:
    return e.cmp("uno", x, x)
