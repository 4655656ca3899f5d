"""`expand-math-polynomials`: f32 transcendentals as vectorisable arithmetic.

A C library call per element (`expf`, `tanhf`, ...) keeps a loop scalar; this
pass replaces f32 transcendentals by call-free `arith` code (plus `math.absf`,
`math.copysign` and `math.sqrt`, which LLVM lowers to instructions), so that
LLVM's loop vectoriser turns them into packed SIMD code.

Contract:

* Rewritten: the `math` ops in `EXPANDED_OPS` and the `func.call`s of the C
  functions in `EXPANDED_CALLS` (external declarations: what
  convert-tc-to-affine emits for `erfc`, `exp10`, `hypot`), when their
  operands and result are `f32` or `vector<...xf32>`. A declaration whose
  last call was expanded is erased.
* Left alone: every other type (f64 and f16 stay C library calls or LLVM
  intrinsics), every other op (`math.sqrt`, `fma`, `floor`, ...: LLVM
  instructions; `powf` and `fmodf`: C library calls), calls of functions
  with a body.
* The code uses only IEEE f32 operations with round-to-nearest; the one
  fast-math flag is `contract` on multiply-adds (`_Emitter.muladd`), which
  LLVM fuses into FMAs on targets that have them, scalar and vector alike,
  so scalar and vector code agree bit for bit (no reassociation). With
  `native_ldexp`, scaling by 2^n is an `llvm.call_intrinsic "llvm.ldexp.*"`,
  rounded once like the exponent-bit version: the same bits. Subnormal inputs
  and results are handled (no flush to zero).
* Conditions: for scalars `arith.cmpf` and `arith.select`. For vectors
  integer masks (xDSL 0.74's `cmpf`/`select` only have `i1` conditions): a
  comparison with a constant c is the sign bit of `x - c` (exact, never 0
  unless x == c), one of two values that of a difference of integer keys
  ordered like the floats, a NaN test the sign of
  `0x7f800000 - (bits & 0x7fffffff)`, a select `b ^ ((a ^ b) & mask)` on the
  bit patterns. The option `{mask_selects=true}` uses masks for scalars too
  (tests).

The building blocks (a few dozen ops each, see the functions): rounding to an
integer by adding and subtracting 1.5 * 2^23 (the integer is then in the
sum's low bits: no float-to-int conversion); Cody-Waite range reduction with
constants split so that the products are exact (ln 2 in two parts for exp,
pi/2 in seven for sin/cos/tan, with the rounding errors of the last
subtractions recovered); minimax polynomials in Horner form; scaling by 2^n
as two exponent-bit factors (correct overflow and subnormal results);
x = 2^k (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)) from the bits (subnormals
scaled by 2^23 first).

Expanded ops, their method and maximum error in ulps of the exact result (a
subnormal result's ulp is 2^-149), measured against float64 NumPy
(`math.erf`/`math.erfc` for erf and erfc) on every 97th f32 bit pattern (44
million inputs: both signs, subnormals, infinities, NaN) plus 2^22 random
inputs in the op's interesting range; exp, log and tanh on all 2^32 inputs,
erf on all with 0.5 <= |x| <= 4 (`MAX_ULP` is the bound the tests check, a
little above). Most figures predate letting LLVM contract each polynomial step
into an FMA (`fastmath<contract>` in `_horner`); with it the tests' sample
found log2 at 1.26 ulp, and every op within its `MAX_ULP`. exp and tanh were
measured again on all 2^32 inputs with their reduction in multiply-adds too:

op        ulp    method
exp       1.03   n = round(x/ln2), 1 + r + r^2 Q(r), Q degree 4
exp2      1.07   n = round(x), 1 + r Q(r), degree 5
expm1     1.28   2^n (expm1(r) + 1 - 2^-n), expm1(r) = r + r^2 Q(r)
exp10     1.21   n = round(x log2 10), r with log10 2 in two parts, 1 + r Q(r)
log       0.92   k ln2 (two parts) + f - f^2/2 + f^3 P(f), P degree 7
log2      1.12   k + (f + tail) log2(e), f log2(e) in two parts
log10     1.56   k log10(2) + (f + tail) log10(e), both in two parts
log1p     0.99   log(u) + c/u, u = 1 + x rounded, c = (1 + x) - u exact
sinh      1.61   |x| < 1: x + x^3 P(x^2); else h - 1/(4h), h = exp(|x|)/2
cosh      1.45   h + 1/(4h), h = exp(|x|)/2
tanh      1.49   |x| < 0.55: x + x^3 P(x^2); else 1 - 2/(exp(2|x|) + 1)
asinh     1.76   log1p(|x| + x^2/(1 + sqrt(1 + x^2))); |x| > 2^12:
                 log1p(|x| - 1) + ln2
acosh     2.13   log1p(t + sqrt(2t + t^2)), t = x - 1; x > 2^12: log1p(t) + ln2
atanh     1.73   log1p(2a + 2a^2/(1 - a))/2 for a = |x| < 1/2, else
                 log1p(2a/(1 - a))/2
erf       1.31   |x| < 1: x + x R(x^2); else 1 - C((min(|x|, 4) - 2.5)/2), C of
                 degree 14 (absolute error: erf is near 1 there)
erfc      3.11   |x| < 1/2: 1 - erf(x); else t exp(-x^2 + P(t - 3/8)),
                 t = 1/(1 + |x|), x^2 exact in two parts; 2 - that for x < 0
sin, cos  1.35   j = round(x 2/pi), r + lo = x - j pi/2; sin and cos polynomials
                 of r, lo a first-order correction, the quadrant from j's bits
tan       1.66   the same reduction, r + r^3 T(r^2), -1/that for odd j
asin      2.31   |x| <= 1/2: x + x^3 B(x^2); else pi/2 - 2 asin(s),
                 s = sqrt((1 - |x|)/2)
acos      1.08   the same pieces: pi/2 - asin(x), 2 asin(s), pi - 2 asin(s)
atan      1.85   |x| > tan(3pi/8): pi/2 + atan(-1/|x|); > tan(pi/8):
                 pi/4 + atan((|x| - 1)/(|x| + 1)); then z + z^3 A(z^2)
cbrt      0.94   |x| = 2^(3q + rem) m: 2^q cbrt(2^rem m), a quadratic guess and
                 two Halley steps y - y (y^3 - v)/(2y^3 + v)
atan2     2.15   copysign(K pi/4 + s atan(w), y): w = min/max of |x|, |y| (or
                 (min - max)/(min + max) above tan(pi/8)), K in 0..4, s = +-1
                 from the octant
hypot     1.97   max sqrt(1 + (min/max)^2)
(atan2 and hypot measured on 2^26 random pairs: random bit patterns and
normal numbers of similar magnitudes)

Special values are exact: +-inf, NaN (propagated), +-0 (odd functions keep
the sign), exp(large) = +inf and exp(very negative) = 0, log(0) = -inf,
log(x < 0) = NaN, log1p(-1) = -inf, tanh and erf saturate at +-1 (erf(+-inf)
= +-1), erfc(-inf) = 2, atan(+-inf) = +-pi/2 (rounded), asin/acos/acosh/atanh
outside their domain NaN, atan2 of zeros and infinities as C99 says,
hypot(+-inf, NaN) = +inf.

sin, cos and tan are accurate as above for |x| < 102943 (2^16 pi/2, where the
products j * part of the reduction are exact). Up to 6.5e6 the reduction is
off by at most about an ulp of x (the result is that of an argument within an
ulp of x; sin(1e6) is off by up to 0.03); beyond 6.5e6 the result is NaN
(a full-range reduction needs hundreds of bits of 2/pi, i.e. a table lookup
per element).

Coefficients: fitted offline in float64 with Lawson's algorithm (iteratively
reweighted least squares, converging to the minimax fit) on 3000 Chebyshev
points of the interval, against 40-digit mpmath values, for the weighted
(relative, or where stated absolute) error; then rounded to f32 one at a
time, lowest degree first, refitting the remaining ones after each rounding.
Leading terms are kept exact by the forms above (x + x^3 P, 1 + r + r^2 Q,
erf(x) = x + x R with R(0) = 2/sqrt(pi) - 1).

Cost (scalar f32; vectors, with masks, up to about twice as many): 17 (hypot)
to 90 (erfc) ops besides constants, about 35 for exp, 45 for log and tanh,
50 for erf, 75 for sin and cos; most are multiply-adds. `O(i) = tanh(I(i))`
on 16M floats (AVX-512 host, best of 5): 468 ms with the C library call,
36 ms expanded on one thread (13x); 350 ms and 20 ms on two. A kernel with
one expansion compiles cold in about 0.1-0.2 s. A vectorised exp loop on the
AVX-512 host is 18 instructions per vector of 16 (was 31 before the clamp
kept NaN, the reduction used multiply-adds and the scaling `vscalef`), and
its dependence chain is about half as long: out-of-order cores overlap few
enough iterations that the chain's latency, not the instruction count, set
the speed (an exp per element over 4M floats in L2, one thread: 38.6 -> 28.7
cycles per vector, call overhead included).

Example::

    %y = math.exp %x : f32

becomes (abridged)::

    %c = arith.cmpf olt, %x, %lo : f32
    %x1 = arith.select %c, %lo, %x : f32
    ...
    %t = arith.mulf %xc, %log2e fastmath<contract> : f32
    %tm = arith.addf %t, %magic fastmath<contract> : f32
    ...
    %y = arith.mulf %y1, %scale2 : f32

and with `native_ldexp` the scaling ends in::

    %y = llvm.call_intrinsic "llvm.ldexp.f32.i32"(%p, %n) : (f32, i32) -> f32
"""

from __future__ import annotations

import math as pymath
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    VectorType,
    i32,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

# The values the algorithms below compute with: `SSAValue`s made by
# `_Emitter` (any object with the same methods can run them, e.g. a NumPy
# emulation of f32 arithmetic, which is how they were developed).
V = Any
Num = V | float | int


def _mangled(t: Attribute) -> str:
    """LLVM's intrinsic suffix for f32, i32 or a 1-D vector of them."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_mangled(t.element_type)}"
    return "f32" if isinstance(t, Float32Type) else "i32"


def _f32(v: float) -> float:
    """`v` rounded to the nearest f32."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _s32(v: int) -> int:
    """`v` modulo 2^32 as a signed 32-bit integer."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


# --------------------------------------------------------------------------
# The emitter: arith/math ops for one f32-like type (f32 or vector<...xf32>)
# --------------------------------------------------------------------------


class _Emitter:
    """Inserts ops before the op being rewritten, for float type `ftype`.

    Floats are `ftype`, integers `i32` or a vector of `i32` of the same shape.
    Conditions are `i1` from `arith.cmpf`, combined with `arith.andi/ori` and
    used by `arith.select`. With `masks` (always for vectors: xDSL 0.74's
    `arith.cmpf` and `arith.select` only have `i1` conditions) they are
    integer masks, all ones or zero: a comparison with a constant c is the
    sign of x - c (0 and +-inf have their own tests), one of two values the
    sign of the difference of integer keys ordered like the floats, NaN
    tests the sign of 0x7f800000 - (bits & 0x7fffffff); a select is
    `b ^ ((a ^ b) & mask)` on the bit patterns.

    Arguments that are Python numbers become constants of the right type
    (floats rounded to f32), shared by the expansions of one block.
    """

    def __init__(
        self,
        rewriter: PatternRewriter,
        ftype: Attribute,
        masks: bool,
        consts: dict[tuple[str, float | int], SSAValue] | None = None,
        native_ldexp: bool = False,
    ):
        self.rewriter = rewriter
        self.ftype = ftype
        self.native_ldexp = native_ldexp
        if isinstance(ftype, VectorType):
            self.itype: Attribute = VectorType(
                i32, ftype.get_shape(), ftype.scalable_dims
            )
            self.masks = True
        else:
            self.itype = i32
            self.masks = masks
        # Constants made so far, shared by the expansions in one block.
        self._consts = {} if consts is None else consts
        self._bits: dict[SSAValue, SSAValue] = {}
        self._mags: dict[SSAValue, SSAValue] = {}

    def _emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op)
        return op.results[0]

    # constants ------------------------------------------------------------
    def f(self, v: float) -> SSAValue:
        v = _f32(v)
        key = ("f", struct.unpack("<i", struct.pack("<f", v))[0])
        if key not in self._consts:
            t = self.ftype
            if isinstance(t, VectorType):
                attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [v])
            else:
                attr = FloatAttr(v, Float32Type())
            self._consts[key] = self._emit(arith.ConstantOp(attr))
        return self._consts[key]

    def i(self, v: int) -> SSAValue:
        v = _s32(v)
        key = ("i", v)
        if key not in self._consts:
            t = self.itype
            if isinstance(t, VectorType):
                attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [v])
            else:
                attr = IntegerAttr(v, i32)
            self._consts[key] = self._emit(arith.ConstantOp(attr))
        return self._consts[key]

    def _fv(self, a: Num) -> SSAValue:
        return self.f(a) if isinstance(a, float | int) else a

    def _iv(self, a: Num) -> SSAValue:
        if isinstance(a, int):
            return self.i(a)
        assert not isinstance(a, float), "an integer operand given as a float"
        return a

    # float arithmetic -------------------------------------------------------
    def add(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AddfOp(self._fv(a), self._fv(b)))

    def sub(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.SubfOp(self._fv(a), self._fv(b)))

    def mul(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.MulfOp(self._fv(a), self._fv(b)))

    def muladd(self, a: Num, b: Num, c: Num) -> SSAValue:
        """`a * b + c`, contractible into an FMA."""
        contract = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
        m = self._emit(arith.MulfOp(self._fv(a), self._fv(b), contract))
        return self._emit(arith.AddfOp(m, self._fv(c), contract))

    def div(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.DivfOp(self._fv(a), self._fv(b)))

    def fmin(self, a: Num, b: Num) -> SSAValue:
        """The smaller of `a` and `b`; a NaN operand gives the other one."""
        return self._emit(arith.MinnumfOp(self._fv(a), self._fv(b)))

    def fmax(self, a: Num, b: Num) -> SSAValue:
        """The larger of `a` and `b`; a NaN operand gives the other one."""
        return self._emit(arith.MaxnumfOp(self._fv(a), self._fv(b)))

    def clamp(self, a: V, lo: float, hi: float) -> SSAValue:
        """`a` limited to [lo, hi]; NaN stays NaN.

        Scalars: `a < lo ? lo : a`, then `> hi ? hi : ...` (x86: one
        min/max instruction each). Masks: minnum/maxnum, then the NaN back.
        """
        if not self.masks:
            a1 = self.select(self.cmp("olt", a, lo), lo, a)
            return self.select(self.cmp("ogt", a1, hi), hi, a1)
        c = self.fmin(self.fmax(a, lo), hi)
        return self.select(self.cmp("uno", a, a), a, c)

    def ldexp(self, a: V, n: V) -> SSAValue:
        """`a * 2^n` rounded once, by LLVM's `llvm.ldexp` intrinsic."""
        name = f"llvm.ldexp.{_mangled(self.ftype)}.{_mangled(self.itype)}"
        return self._emit(
            llvm.CallIntrinsicOp(name, [self._fv(a), self._iv(n)], [self.ftype])
        )

    def abs(self, a: V) -> SSAValue:
        return self._emit(math.AbsFOp(a))

    def copysign(self, a: Num, b: V) -> SSAValue:
        return self._emit(math.CopySignOp(self._fv(a), b))

    def sqrt(self, a: V) -> SSAValue:
        return self._emit(math.SqrtOp(a))

    # bits --------------------------------------------------------------------
    def bits(self, a: V) -> SSAValue:
        """The bit pattern of float `a` as an integer."""
        if a not in self._bits:
            self._bits[a] = self._emit(arith.BitcastOp(a, self.itype))
        return self._bits[a]

    def float(self, a: V) -> SSAValue:
        """The float whose bit pattern is integer `a`."""
        f = self._emit(arith.BitcastOp(a, self.ftype))
        self._bits[f] = a
        return f

    def iadd(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AddiOp(self._iv(a), self._iv(b)))

    def isub(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.SubiOp(self._iv(a), self._iv(b)))

    def shl(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.ShLIOp(self._iv(a), self._iv(b)))

    def ashr(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.ShRSIOp(self._iv(a), self._iv(b)))

    def iand(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AndIOp(self._iv(a), self._iv(b)))

    def ior(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.OrIOp(self._iv(a), self._iv(b)))

    def ixor(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.XOrIOp(self._iv(a), self._iv(b)))

    def imin(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.MinSIOp(self._iv(a), self._iv(b)))

    # conditions ------------------------------------------------------------
    def cmp(self, pred: str, a: V, b: Num) -> SSAValue:
        """`arith.cmpf` predicate `pred` (`olt`, `uge`, `uno`, ...) of `a`, `b`."""
        if not self.masks:
            return self._emit(arith.CmpfOp(a, self._fv(b), pred))
        return self._mask_cmp(pred, a, b)

    def both(self, c: V, d: V) -> SSAValue:
        if not self.masks:
            return self._emit(arith.AndIOp(c, d))
        return self.iand(c, d)

    def either(self, c: V, d: V) -> SSAValue:
        if not self.masks:
            return self._emit(arith.OrIOp(c, d))
        return self.ior(c, d)

    def select(self, c: V, a: Num, b: Num) -> SSAValue:
        """`a` where condition `c` holds, else `b` (floats)."""
        if not self.masks:
            return self._emit(arith.SelectOp(c, self._fv(a), self._fv(b)))
        ab, bb = self._float_bits(a), self._float_bits(b)
        return self.float(self.ixor(bb, self.iand(self.ixor(ab, bb), c)))

    # integer-mask conditions ---------------------------------------------------
    def _float_bits(self, a: Num) -> SSAValue:
        if isinstance(a, float | int):
            return self.i(struct.unpack("<i", struct.pack("<f", _f32(a)))[0])
        return self.bits(a)

    def _mag(self, a: V) -> SSAValue:
        """The bits of |a|."""
        if a not in self._mags:
            self._mags[a] = self.iand(self.bits(a), 0x7FFFFFFF)
        return self._mags[a]

    def _nonzero(self, v: V) -> SSAValue:
        """Mask of integer `v` != 0 (the sign of v | -v)."""
        return self.ashr(self.ior(v, self.isub(0, v)), 31)

    def _isnan_mask(self, a: V) -> SSAValue:
        return self.ashr(self.isub(0x7F800000, self._mag(a)), 31)

    def _key(self, a: V) -> SSAValue:
        """An integer ordered like float `a` (+-0 alike; meaningless for NaN)."""
        b = self.bits(a)
        sign = self.ashr(b, 31)
        return self.isub(self.ixor(self._mag(a), sign), sign)

    def _less(self, ka: V, kb: V) -> SSAValue:
        """Mask of signed `ka < kb` (the sign of `ka - kb`, overflow corrected)."""
        d = self.isub(ka, kb)
        wrong = self.iand(self.ixor(ka, kb), self.ixor(d, ka))
        return self.ashr(self.ixor(d, wrong), 31)

    def _mask_cmp(self, pred: str, a: V, b: Num) -> SSAValue:
        nan = self._isnan_mask(a)
        rel = pred[1:]
        lt: SSAValue | None = None  # a < b, a > b for ordered a (any value for NaN)
        gt: SSAValue | None = None
        if not isinstance(b, float | int):
            if b is not a:
                nan = self.ior(nan, self._isnan_mask(b))
            if pred in ("uno", "ord"):
                return nan if pred == "uno" else self.ixor(nan, -1)
            ka, kb = self._key(a), self._key(b)
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self._less(ka, kb)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self._less(kb, ka)
            return self._mask_relation(pred, lt, gt, nan)
        if pred in ("uno", "ord"):
            return nan if pred == "uno" else self.ixor(nan, -1)
        c = _f32(float(b))
        if c == 0:  # the sign, unless +-0
            nz = self._nonzero(self._mag(a))
            neg = self.ashr(self.bits(a), 31)
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self.iand(neg, nz)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self.iand(self.ixor(neg, -1), nz)
        elif pymath.isinf(c):  # a != c is a < +inf or a > -inf
            ne = self._nonzero(self.ixor(self.bits(a), self._float_bits(c)))
            lt, gt = (ne, self.i(0)) if c > 0 else (self.i(0), ne)
        else:  # the sign of a - c: exact, never 0 unless a == c
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self.ashr(self.bits(self.sub(a, c)), 31)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self.ashr(self.bits(self.sub(c, a)), 31)
        return self._mask_relation(pred, lt, gt, nan)

    def _mask_relation(
        self, pred: str, lt: SSAValue | None, gt: SSAValue | None, nan: SSAValue
    ) -> SSAValue:
        """Predicate `pred` from the masks of a < b, a > b and unordered."""
        rel = pred[1:]
        if rel in ("lt", "ge"):
            assert lt is not None
            m = lt
        elif rel in ("gt", "le"):
            assert gt is not None
            m = gt
        else:
            assert lt is not None and gt is not None
            m = self.ior(lt, gt)
        if rel in ("ge", "le", "eq"):
            m = self.ixor(m, -1)
        if pred[0] == "o":  # NaN makes o* false, u* true
            return self.iand(m, self.ixor(nan, -1))
        return self.ior(m, nan)


# --------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------


def _hi_lo(v: float, bits: int) -> tuple[float, float]:
    """`v` as hi + lo: hi its first `bits` significant bits, lo f32(v - hi)."""
    scale = 2.0 ** (bits - 1 - pymath.floor(pymath.log2(abs(v))))
    hi = pymath.floor(v * scale) / scale
    return hi, _f32(v - hi)


_MAGIC = 12582912.0  # 1.5 * 2^23: t + _MAGIC - _MAGIC rounds t to an integer
_MAGIC_BITS = 0x4B400000  # its bit pattern: bits(t + _MAGIC) - _MAGIC_BITS = n

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453
_LN2_HI, _LN2_LO = _hi_lo(_LN2, 16)  # n * _LN2_HI is exact for |n| < 256


def _horner(e: _Emitter, x: V, cs: Sequence[float]) -> V:
    """`cs[0] + cs[1] x + ... + cs[-1] x^(n-1)`, each step a multiply-add
    that LLVM may fuse into one FMA (`fastmath<contract>`)."""
    p: Num = cs[-1]
    for c in reversed(cs[:-1]):
        p = e.muladd(p, x, c)
    return p


def _round(e: _Emitter, t: V) -> tuple[V, V]:
    """`t` rounded to the nearest integer, as a float and as an integer.

    Valid for |t| < 2^22: adding 1.5 * 2^23 leaves the integer in the low
    mantissa bits (no float-to-int conversion, which vectorises badly).
    """
    tm = e.add(t, _MAGIC)
    return e.sub(tm, _MAGIC), e.isub(e.bits(tm), _MAGIC_BITS)


def _int_to_float(e: _Emitter, k: V) -> V:
    """Integer `k` (|k| < 2^22) as a float."""
    return e.sub(e.float(e.iadd(k, _MAGIC_BITS)), _MAGIC)


def _pow2(e: _Emitter, n: V) -> V:
    """2^n for integer -126 <= n <= 127."""
    return e.float(e.shl(e.iadd(n, 127), 23))


def _ldexp(e: _Emitter, p: V, n: V) -> V:
    """`p * 2^n` for -252 <= n <= 254, rounded once.

    With `native_ldexp`, LLVM's `llvm.ldexp`. Else two factors 2^(n >> 1)
    and 2^(n - (n >> 1)), each a normal number, so that results near
    overflow and in the subnormal range come out right.
    """
    if e.native_ldexp:
        return e.ldexp(p, n)
    n1 = e.ashr(n, 1)
    return e.mul(e.mul(p, _pow2(e, n1)), _pow2(e, e.isub(n, n1)))


def _isnan(e: _Emitter, x: V) -> V:
    return e.cmp("uno", x, x)


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


def _expm1_poly(e: _Emitter, r: V) -> V:
    """exp(r) - 1 for |r| <= ln2/2."""
    return e.muladd(e.mul(r, r), _horner(e, r, _EXP_Q), r)


def _exp_poly(e: _Emitter, r: V) -> V:
    """exp(r) for |r| <= ln2/2."""
    return e.add(_expm1_poly(e, r), 1.0)


def _exp_parts(e: _Emitter, x: V) -> tuple[V, V]:
    """(p, n) with exp(x) = p * 2^n, p in [0.7, 1.42], for |x| <= 110.

    Multiply-adds throughout: n = round(x log2 e) rounds x log2 e + 1.5 * 2^23
    once, and r = x - n ln2_hi - n ln2_lo (n ln2_hi exact) is two FMAs.
    """
    tm = e.muladd(x, _LOG2E, _MAGIC)
    nf, n = e.sub(tm, _MAGIC), e.isub(e.bits(tm), _MAGIC_BITS)
    r = e.muladd(nf, -_LN2_LO, e.muladd(nf, -_LN2_HI, x))
    return _exp_poly(e, r), n


def _exp(e: _Emitter, x: V) -> V:
    # beyond the clamp: 0 and +inf by scaling; a NaN goes through everything
    p, n = _exp_parts(e, e.clamp(x, -104.0, 89.0))
    return _ldexp(e, p, n)


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


def _log1p_tail(e: _Emitter, f: V) -> V:
    """log(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1]."""
    return e.mul(e.mul(f, f), e.sub(e.mul(f, _horner(e, f, _LOG_P)), 0.5))


def _log_reduce(e: _Emitter, x: V) -> tuple[V, V]:
    """(k, f) with x = 2^k (1 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1), for
    positive normal x; k as a float (exact)."""
    ix = e.isub(e.bits(x), _SQRT_HALF_BITS)
    m = e.float(e.iadd(e.iand(ix, 0x007FFFFF), _SQRT_HALF_BITS))
    return _int_to_float(e, e.ashr(ix, 23)), e.sub(m, 1.0)


def _log_parts(e: _Emitter, x: V) -> tuple[V, V]:
    """`_log_reduce` for any positive finite x (subnormals scaled by 2^23)."""
    tiny = e.cmp("olt", x, 2.0**-126)
    k, f = _log_reduce(e, e.select(tiny, e.mul(x, 2.0**23), x))
    return e.sub(k, e.select(tiny, 23.0, 0.0)), f


def _log_specials(e: _Emitter, x: V, y: V) -> V:
    """log-like results for x <= 0 (-inf at 0, NaN below), +inf and NaN."""
    y = e.select(e.cmp("olt", x, 0.0), float("nan"), y)
    y = e.select(e.cmp("oeq", x, 0.0), float("-inf"), y)
    return e.select(e.cmp("uge", x, float("inf")), x, y)


def _log(e: _Emitter, x: V) -> V:
    k, f = _log_parts(e, x)
    q = _log1p_tail(e, f)
    y = e.add(e.mul(k, _LN2_HI), e.add(f, e.add(q, e.mul(k, _LN2_LO))))
    return _log_specials(e, x, y)


def _split(e: _Emitter, f: V) -> tuple[V, V]:
    """f = hi + lo with hi holding the top 12 significant bits (exact)."""
    hi = e.float(e.iand(e.bits(f), -4096))
    return hi, e.sub(f, hi)


_LOG2E_HI, _LOG2E_LO = _hi_lo(_LOG2E, 11)


def _log2(e: _Emitter, x: V) -> V:
    # log2(x) = k + (f + q) log2(e), with f * log2(e) in two parts.
    k, f = _log_parts(e, x)
    q = _log1p_tail(e, f)
    fh, fl = _split(e, f)
    hi = e.mul(fh, _LOG2E_HI)  # exact
    lo = e.add(e.add(e.mul(fl, _LOG2E_HI), e.mul(f, _LOG2E_LO)), e.mul(q, _LOG2E))
    return _log_specials(e, x, e.add(e.add(k, hi), lo))


_LOG10E = 0.4342944819032518
_LOG10_2_HI, _LOG10_2_LO = _hi_lo(0.3010299956639812, 13)  # k * hi exact
_LOG10E_HI, _LOG10E_LO = _hi_lo(_LOG10E, 11)


def _log10(e: _Emitter, x: V) -> V:
    # log10(x) = k log10(2) + (f + q) log10(e), products in two parts.
    k, f = _log_parts(e, x)
    q = _log1p_tail(e, f)
    fh, fl = _split(e, f)
    hi = e.add(e.mul(k, _LOG10_2_HI), e.mul(fh, _LOG10E_HI))
    lo = e.add(
        e.add(e.mul(fl, _LOG10E_HI), e.mul(f, _LOG10E_LO)),
        e.add(e.mul(q, _LOG10E), e.mul(k, _LOG10_2_LO)),
    )
    return _log_specials(e, x, e.add(hi, lo))


def _log1p_core(e: _Emitter, x: V) -> V:
    """log1p(x) for finite x > -1 (NaN stays NaN)."""
    # u = 1 + x rounded; log1p(x) = log(u) + c/u with c = (1 + x) - u exact.
    u = e.add(x, 1.0)
    k, f = _log_reduce(e, u)
    c = e.select(e.cmp("oge", u, 2.0), e.sub(1.0, e.sub(u, x)), e.sub(x, e.sub(u, 1.0)))
    lo = e.add(e.div(c, u), e.mul(k, _LN2_LO))
    return e.add(e.mul(k, _LN2_HI), e.add(f, e.add(_log1p_tail(e, f), lo)))


def _log1p(e: _Emitter, x: V) -> V:
    y = _log1p_core(e, x)
    y = e.select(e.cmp("ult", x, -1.0), float("nan"), y)
    y = e.select(e.cmp("oeq", x, -1.0), float("-inf"), y)
    y = e.select(e.cmp("oeq", x, float("inf")), x, y)
    return e.select(e.cmp("oeq", x, 0.0), x, y)  # keeps -0


def _expm1(e: _Emitter, x: V) -> V:
    # expm1(x) = 2^n (expm1(r) + 1 - 2^-n), 1 - 2^-n exact for |n| <= 24.
    xc = e.fmin(e.fmax(x, -30.0), 89.0)
    nf, n = _round(e, e.mul(xc, _LOG2E))
    r = e.sub(e.sub(xc, e.mul(nf, _LN2_HI)), e.mul(nf, _LN2_LO))
    c = e.sub(1.0, _pow2(e, e.isub(0, e.imin(n, 100))))
    q = e.mul(e.mul(r, r), _horner(e, r, _EXP_Q))
    y = _ldexp(e, e.add(e.add(c, r), q), n)
    y = e.select(_isnan(e, x), x, y)
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


def _exp2(e: _Emitter, x: V) -> V:
    xc = e.fmin(e.fmax(x, -151.0), 129.0)
    nf, n = _round(e, xc)
    r = e.sub(xc, nf)
    p = e.add(e.mul(r, _horner(e, r, _EXP2_Q)), 1.0)
    y = _ldexp(e, p, n)
    return e.select(_isnan(e, x), x, y)


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
_LOG10_2_HI16, _LOG10_2_LO16 = _hi_lo(0.3010299956639812, 16)


def _exp10(e: _Emitter, x: V) -> V:
    xc = e.fmin(e.fmax(x, -46.0), 39.0)
    nf, n = _round(e, e.mul(xc, _LOG2_10))
    r = e.sub(e.sub(xc, e.mul(nf, _LOG10_2_HI16)), e.mul(nf, _LOG10_2_LO16))
    p = e.add(e.mul(r, _horner(e, r, _EXP10_Q)), 1.0)
    y = _ldexp(e, p, n)
    return e.select(_isnan(e, x), x, y)


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


def _odd(e: _Emitter, x: V, cs: Sequence[float]) -> V:
    """x + x^3 P(x^2), P with coefficients `cs`."""
    s = e.mul(x, x)
    return e.add(e.mul(e.mul(x, s), _horner(e, s, cs)), x)


def _tanh(e: _Emitter, x: V) -> V:
    # |x| < 0.55: odd polynomial; else 1 - 2 / (exp(2|x|) + 1) (1 beyond 9.1).
    ax = e.abs(x)
    axc = e.fmin(ax, 9.1)
    p, n = _exp_parts(e, e.add(axc, axc))
    big = e.sub(1.0, e.div(2.0, e.add(e.mul(p, _pow2(e, n)), 1.0)))
    y = e.select(e.cmp("oge", ax, 0.55), big, _odd(e, ax, _TANH_P))
    return e.copysign(y, x)


def _half_exp(e: _Emitter, ax: V) -> V:
    """exp(ax) / 2 for 0 <= ax, +inf from 89.42 on (NaN: anything)."""
    p, n = _exp_parts(e, e.fmin(ax, 90.0))
    return _ldexp(e, p, e.isub(n, 1))


def _sinh(e: _Emitter, x: V) -> V:
    # |x| < 1: odd polynomial; else h - 1/(4h), h = exp(|x|)/2.
    ax = e.abs(x)
    h = _half_exp(e, ax)
    big = e.sub(h, e.div(0.25, h))
    y = e.select(e.cmp("oge", ax, 1.0), big, _odd(e, ax, _SINH_P))
    return e.copysign(y, x)


def _cosh(e: _Emitter, x: V) -> V:
    ax = e.abs(x)
    h = _half_exp(e, ax)
    return e.select(_isnan(e, x), x, e.add(h, e.div(0.25, h)))


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


def _erf_small(e: _Emitter, x: V) -> V:
    return e.add(e.mul(x, _horner(e, e.mul(x, x), _ERF_R)), x)


def _erf(e: _Emitter, x: V) -> V:
    # |x| < 1: odd polynomial; else 1 - erfc(|x|) (1 from 4 on); sign of x.
    ax = e.abs(x)
    t = e.mul(e.sub(e.fmin(ax, 4.0), 2.5), 0.5)  # exact
    big = e.sub(1.0, _horner(e, t, _ERFC_C))
    y = e.select(e.cmp("oge", ax, 1.0), big, _erf_small(e, ax))
    return e.copysign(y, x)


def _erfc(e: _Emitter, x: V) -> V:
    # |x| < 1/2: 1 - erf(x); else t exp(-x^2 + P(t)) for |x| (0 from 10.1
    # on), and 2 minus that for negative x. x^2 = xh^2 + xl (|x| + xh) with
    # xh the top 12 bits of |x| (xh^2 exact), so that the exponent keeps its
    # accuracy for large x; the scaling by 2^n comes last (subnormal results).
    abs_x = e.abs(x)
    ax = e.fmin(abs_x, 10.1)
    t = e.div(1.0, e.add(ax, 1.0))
    xh, xl = _split(e, ax)
    a = e.mul(e.mul(xh, xh), -1.0)
    b = e.sub(_horner(e, e.sub(t, 0.375), _ERFC_P), e.mul(xl, e.add(ax, xh)))
    nf, n = _round(e, e.mul(e.add(a, b), _LOG2E))
    r = e.add(e.sub(e.sub(a, e.mul(nf, _LN2_HI)), e.mul(nf, _LN2_LO)), b)
    big = _ldexp(e, e.add(e.mul(t, _expm1_poly(e, r)), t), n)
    big = e.select(e.cmp("olt", x, 0.0), e.sub(2.0, big), big)
    small = e.sub(1.0, _erf_small(e, x))
    return e.select(e.cmp("oge", abs_x, 0.5), big, small)


# --------------------------------------------------------------------------
# trigonometric functions
# --------------------------------------------------------------------------

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


def _reduce_pio2(e: _Emitter, x: V) -> tuple[V, V, V]:
    """(r, lo, j) with x = j pi/2 + r + lo, |r| <= pi/4 (|x| < 102943).

    The products j * part are exact; from the third part on, each
    subtraction's rounding error is recovered (Fast2Sum: |r| >= |j * part| in
    exponent there) and summed into `lo`.
    """
    jf, j = _round(e, e.mul(x, _2_OVER_PI))
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


def _sin_cos_poly(e: _Emitter, r: V, lo: V) -> tuple[V, V]:
    """(sin(r + lo), cos(r + lo)) for |r| <= pi/4, |lo| tiny."""
    w = e.mul(r, r)
    sp = e.mul(e.mul(r, w), _horner(e, w, _SIN_S))
    cp = e.mul(w, e.sub(e.mul(w, _horner(e, w, _COS_C)), 0.5))
    s = e.add(e.add(sp, e.mul(lo, e.add(cp, 1.0))), r)
    c = e.add(e.sub(cp, e.mul(lo, r)), 1.0)
    return s, c


def _bit_select(e: _Emitter, m: V, a: V, b: V) -> V:
    """`a` where integer mask `m` is all ones, `b` where it is zero."""
    ab, bb = e.bits(a), e.bits(b)
    return e.float(e.ixor(bb, e.iand(e.ixor(ab, bb), m)))


def _quadrant(e: _Emitter, j: V, s: V, c: V) -> V:
    """sin(j pi/2 + r) from s = sin(r), c = cos(r)."""
    odd = e.ashr(e.shl(j, 31), 31)  # all ones when j is odd
    v = _bit_select(e, odd, c, s)
    return e.float(e.ixor(e.bits(v), e.shl(e.iand(j, 2), 30)))  # - for j&2


_TRIG_MAX = 6.5e6  # below 2^22 pi/2, where rounding x * 2/pi by _round works


def _trig_domain(e: _Emitter, x: V, y: V, odd: bool) -> V:
    """NaN beyond _TRIG_MAX; for odd functions x where |x| < 2^-12 (there
    f(x) = x + O(x^3) rounds to x; keeps -0)."""
    ax = e.abs(x)
    if odd:
        y = e.select(e.cmp("olt", ax, 2.0**-12), x, y)
    return e.select(e.cmp("ogt", ax, _TRIG_MAX), float("nan"), y)


def _sin(e: _Emitter, x: V) -> V:
    r, lo, j = _reduce_pio2(e, x)
    s, c = _sin_cos_poly(e, r, lo)
    return _trig_domain(e, x, _quadrant(e, j, s, c), odd=True)


def _cos(e: _Emitter, x: V) -> V:
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


def _tan(e: _Emitter, x: V) -> V:
    # t = tan(r + lo) = r + r^3 T(r^2) + lo (1 + t^2); -1/t for odd j.
    r, lo, j = _reduce_pio2(e, x)
    w = e.mul(r, r)
    tail = e.mul(e.mul(r, w), _horner(e, w, _TAN_T))
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
_PIO4_HI = _f32(_PIO4)
_PIO4_LO = _f32(_PIO4 - _PIO4_HI)
_PIO2_HI, _PIO2_LO = 2 * _PIO4_HI, 2 * _PIO4_LO


def _atan(e: _Emitter, x: V) -> V:
    # |x| > tan(3pi/8): pi/2 + atan(-1/|x|); > tan(pi/8): pi/4 + atan((|x|-1)/(|x|+1)).
    ax = e.abs(x)
    big = e.cmp("ogt", ax, 2.414213562373095)
    mid = e.cmp("ogt", ax, 0.41421356237309503)
    num = e.select(big, -1.0, e.select(mid, e.sub(ax, 1.0), ax))
    den = e.select(big, ax, e.select(mid, e.add(ax, 1.0), 1.0))
    z = e.div(num, den)
    q = e.select(big, 2.0, e.select(mid, 1.0, 0.0))  # multiple of pi/4
    w = e.mul(z, z)
    tail = e.add(e.mul(e.mul(z, w), _horner(e, w, _ATAN_A)), e.mul(q, _PIO4_LO))
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


def _asin_parts(e: _Emitter, x: V) -> tuple[V, V, V]:
    """(|x| <= 1/2, asin(|x|) for |x| <= 1/2, asin(sqrt((1 - |x|)/2)) otherwise)."""
    ax = e.abs(x)
    small = e.cmp("ole", ax, 0.5)
    z = e.select(small, e.mul(ax, ax), e.mul(e.sub(1.0, ax), 0.5))
    s = e.select(small, ax, e.sqrt(z))
    p = e.add(e.mul(e.mul(s, z), _horner(e, z, _ASIN_B)), s)
    return small, p, s


def _asin(e: _Emitter, x: V) -> V:
    # |x| > 1/2: asin(|x|) = pi/2 - 2 asin(sqrt((1 - |x|)/2)).
    small, p, _ = _asin_parts(e, x)
    big = e.sub(_PIO2_HI, e.sub(e.add(p, p), _PIO2_LO))
    return e.copysign(e.select(small, p, big), x)


def _acos(e: _Emitter, x: V) -> V:
    # |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s); x < -1/2: pi - 2 asin(s).
    small, p, _ = _asin_parts(e, x)
    sp = e.copysign(p, x)
    mid = e.sub(_PIO2_HI, e.sub(sp, _PIO2_LO))
    two_p = e.add(p, p)
    neg = e.sub(e.add(_PIO2_HI, _PIO2_HI), e.sub(two_p, e.add(_PIO2_LO, _PIO2_LO)))
    big = e.select(e.cmp("olt", x, 0.0), neg, two_p)
    return e.select(small, mid, big)


# --------------------------------------------------------------------------
# inverse hyperbolic functions, cbrt
# --------------------------------------------------------------------------


def _asinh(e: _Emitter, x: V) -> V:
    # log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); from 2^12 on log(|x|) + ln 2.
    ax = e.abs(x)
    big = e.cmp("ogt", ax, 4096.0)
    t = e.mul(ax, ax)
    small = e.add(ax, e.div(t, e.add(e.sqrt(e.add(t, 1.0)), 1.0)))
    y = _log1p_core(e, e.select(big, e.sub(ax, 1.0), small))
    y = e.add(y, e.select(big, _LN2, 0.0))
    y = e.select(e.cmp("oeq", ax, float("inf")), ax, y)
    return e.copysign(y, x)


def _acosh(e: _Emitter, x: V) -> V:
    # log1p(t + sqrt(2t + t^2)), t = x - 1; from 2^12 on log(x) + ln 2.
    big = e.cmp("ogt", x, 4096.0)
    t = e.sub(x, 1.0)
    small = e.add(t, e.sqrt(e.add(e.add(t, t), e.mul(t, t))))
    y = _log1p_core(e, e.select(big, t, small))
    y = e.add(y, e.select(big, _LN2, 0.0))
    y = e.select(e.cmp("oeq", x, float("inf")), x, y)
    return e.select(e.cmp("olt", x, 1.0), float("nan"), y)


def _atanh(e: _Emitter, x: V) -> V:
    # 1/2 log1p(2a + 2a^2/(1 - a)) for a = |x| < 1/2, else 1/2 log1p(2a/(1 - a)).
    ax = e.abs(x)
    small = e.cmp("olt", ax, 0.5)
    a2 = e.add(ax, ax)
    w = e.div(e.select(small, e.mul(a2, ax), a2), e.sub(1.0, ax))
    y = e.mul(_log1p_core(e, e.select(small, e.add(a2, w), w)), 0.5)
    y = e.select(e.cmp("oeq", ax, 1.0), float("inf"), y)
    y = e.select(e.cmp("ogt", ax, 1.0), float("nan"), y)
    return e.copysign(y, x)


# cbrt(v) ~ G(v) on [2^-1.5, 2^1.5], minimax relative error 1.6e-2: the
# starting point of two Halley steps.
_CBRT_G = (0.5391474366188049, 0.5361893177032471, -0.08300238847732544)


def _cbrt(e: _Emitter, x: V) -> V:
    # |x| = 2^(3q + rem) m, m in [sqrt(1/2), sqrt(2)), rem in {-1, 0, 1}:
    # cbrt(|x|) = 2^q cbrt(v), v = 2^rem m, by Halley's iteration
    # y <- y - y (y^3 - v) / (2 y^3 + v) from a quadratic guess.
    ax = e.abs(x)
    k, f = _log_parts(e, ax)
    qf, q = _round(e, e.mul(k, 1.0 / 3.0))
    rem = e.sub(k, e.mul(qf, 3.0))  # exact, -1, 0 or 1
    v = e.mul(e.add(f, 1.0), e.add(e.mul(rem, e.add(e.mul(rem, 0.25), 0.75)), 1.0))
    y = _horner(e, v, _CBRT_G)
    for _ in range(2):
        y3 = e.mul(e.mul(y, y), y)
        corr = e.div(e.mul(y, e.sub(y3, v)), e.add(e.add(y3, y3), v))
        y = e.sub(y, corr)
    y = e.copysign(e.mul(y, _pow2(e, q)), x)
    special = e.either(e.cmp("oeq", ax, 0.0), e.cmp("uge", ax, float("inf")))
    return e.select(special, x, y)


def _atan2(e: _Emitter, y: V, x: V) -> V:
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
    atan_w = e.add(e.mul(e.mul(w, v), _horner(e, v, _ATAN_A)), w)
    r = e.add(e.mul(k, _PIO4_HI), e.add(e.mul(sgn, atan_w), e.mul(k, _PIO4_LO)))
    both_inf = e.both(e.cmp("oeq", ax, float("inf")), e.cmp("oeq", ay, float("inf")))
    r = e.select(both_inf, e.select(xneg, 3 * _PIO4, _PIO4), r)
    return e.copysign(r, y)


# --------------------------------------------------------------------------
# hypot
# --------------------------------------------------------------------------


def _hypot(e: _Emitter, x: V, y: V) -> V:
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
# The pass
# --------------------------------------------------------------------------

Algorithm = Callable[..., V]  # (emitter, *operands) -> result

#: math ops expanded on f32 (scalars and vectors), and their algorithms.
EXPANDED_OPS: dict[str, Algorithm] = {
    "math.exp": _exp,
    "math.exp2": _exp2,
    "math.expm1": _expm1,
    "math.log": _log,
    "math.log2": _log2,
    "math.log10": _log10,
    "math.log1p": _log1p,
    "math.sin": _sin,
    "math.cos": _cos,
    "math.tan": _tan,
    "math.atan": _atan,
    "math.asin": _asin,
    "math.acos": _acos,
    "math.sinh": _sinh,
    "math.cosh": _cosh,
    "math.tanh": _tanh,
    "math.erf": _erf,
    "math.cbrt": _cbrt,
    "math.asinh": _asinh,
    "math.acosh": _acosh,
    "math.atanh": _atanh,
    "math.atan2": _atan2,
}
#: C functions (`func.call` of an external declaration, as
#: convert-tc-to-affine emits them) expanded on f32.
EXPANDED_CALLS: dict[str, Algorithm] = {
    "erfcf": _erfc,
    "exp10f": _exp10,
    "hypotf": _hypot,
}


#: Maximum error in f32 ulps (module docstring: how it was measured).
MAX_ULP: dict[str, float] = {
    "math.exp": 1.25,
    "math.exp2": 1.25,
    "math.expm1": 1.5,
    "exp10f": 1.5,
    "math.log": 1.0,
    "math.log2": 1.3,
    "math.log10": 1.75,
    "math.log1p": 1.25,
    "math.sinh": 1.75,
    "math.cosh": 1.75,
    "math.tanh": 1.75,
    "math.asinh": 2.0,
    "math.acosh": 2.5,
    "math.atanh": 2.0,
    "math.erf": 1.5,
    "erfcf": 3.5,
    "math.sin": 1.5,
    "math.cos": 1.5,
    "math.tan": 2.0,
    "math.asin": 2.5,
    "math.acos": 1.25,
    "math.atan": 2.0,
    "math.atan2": 2.5,
    "math.cbrt": 1.25,
    "hypotf": 2.25,
}


def _is_f32_like(t: Attribute) -> bool:
    if isinstance(t, VectorType):
        return isinstance(t.element_type, Float32Type)
    return isinstance(t, Float32Type)


@dataclass
class _ExpandMath(RewritePattern):
    masks: bool
    native_ldexp: bool
    externals: frozenset[str]
    expanded_calls: set[str]
    # constants already made, per block and type (reused: the walk goes
    # forward, so they come before later expansions in the block)
    consts: dict[tuple[Block, Attribute], dict[tuple[str, float | int], SSAValue]]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, func.CallOp):
            name = op.callee.string_value()
            algorithm = EXPANDED_CALLS.get(name)
            if algorithm is None or name not in self.externals:
                return
            self.expanded_calls.add(name)
        else:
            algorithm = EXPANDED_OPS.get(op.name)
            if algorithm is None:
                return
        if len(op.results) != 1:
            return
        t = op.results[0].type
        if not _is_f32_like(t) or any(a.type != t for a in op.operands):
            return
        block = op.parent_block()
        assert block is not None
        consts = self.consts.setdefault((block, t), {})
        e = _Emitter(rewriter, t, self.masks, consts, self.native_ldexp)
        y = algorithm(e, *op.operands)
        rewriter.replace(op, (), (y,))


@dataclass(frozen=True)
class ExpandMathPolynomialsPass(ModulePass):
    """Expand f32 transcendentals into vectorisable arithmetic (module docstring)."""

    name = "expand-math-polynomials"

    #: encode conditions as integer masks (always done for vectors); for tests
    mask_selects: bool = False

    #: scale by 2^n with LLVM's `llvm.ldexp` instead of exponent-bit
    #: arithmetic: for targets where it is one instruction (x86 AVX-512's
    #: vscalef; the CPU pipeline sets it from the host); elsewhere LLVM makes
    #: it a C library call per element
    native_ldexp: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externals = frozenset(
            f.sym_name.data
            for f in op.body.block.ops
            if isinstance(f, func.FuncOp) and f.is_declaration
        )
        expanded: set[str] = set()
        PatternRewriteWalker(
            _ExpandMath(self.mask_selects, self.native_ldexp, externals, expanded, {}),
            apply_recursively=False,
        ).rewrite_module(op)
        if not expanded:
            return
        # Drop the declarations of C functions no longer called.
        called = {
            c.callee.string_value() for c in op.walk() if isinstance(c, func.CallOp)
        }
        for f in list(op.body.block.ops):
            if (
                isinstance(f, func.FuncOp)
                and f.sym_name.data in expanded
                and f.sym_name.data not in called
            ):
                op.body.block.erase_op(f)
