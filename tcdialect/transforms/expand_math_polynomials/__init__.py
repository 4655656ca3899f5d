"""`expand-math-polynomials`: f32 transcendentals as vectorisable arithmetic.

A C library call per element (`expf`, `tanhf`, ...) keeps a loop scalar; this
pass replaces f32 transcendentals by call-free `arith` code (plus `math.absf`,
`math.copysign` and `math.sqrt`, which LLVM lowers to instructions), so that
LLVM's loop vectoriser turns them into packed SIMD code.

Contract:

* Rewritten: the `math` ops in `EXPANDED_OPS` and the `func.call`s of the C
  functions in `EXPANDED_CALLS` (external declarations: what
  convert-tc-to-affine emits for `erfc`, `exp10`, `hypot` and the builtins
  of docs/builtins.md that the C library lacks or that must vectorise:
  `lgammaf`, `erfinvf`, `normcdff`, `norm3df` ...), when their operands and
  result are `f32` or `vector<...xf32>`. A declaration whose last call was
  expanded is erased.
* Left alone: every other type (f64 and f16 stay C library calls or LLVM
  intrinsics), every other op (`math.sqrt`, `fma`, `floor`, ...: LLVM
  instructions; `powf` and `fmodf`: C library calls), calls of functions
  with a body.
* The code uses only IEEE f32 operations with round-to-nearest; the one
  fast-math flag is `contract` on multiply-adds (`Emitter.muladd`), which
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
(`math.erf`/`math.erfc` for erf and erfc) on a sample of the whole f32 range
plus random inputs in the op's interesting range (how, and the figures'
history: docs/perf/expand-math-polynomials.md); `MAX_ULP` is the bound the
tests check, a little above:

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

The builtins' C functions (`lgammaf` ...): their methods and errors, measured
by `tcdialect.testing.builtin_ulp` against `tcdialect.special_functions`, are
the table of docs/builtins.md; in short: cospif, sinpif (exact reduction to
[-1/4, 1/4], the sin/cos polynomials at pi s in two parts), lgammaf
(polynomials around 1 and 2, a product down to [1.5, 3], Stirling from 8,
reflection below -1/4), erfinvf, erfcinvf, normcdfinvf (polynomials of
w = -log(y (2 - y)) in three ranges), normcdff and erfcxf (erfc's pieces:
x^2 in two parts, t exp(P(t))), cyl_bessel_i0f/i1f (series polynomials to
8, e^x Q(1/x) / sqrt(x) beyond), rcbrtf (1/cbrt), norm3df, norm4df
(2^k sqrt(sum (x 2^-k)^2)) and rhypotf, rnorm3df, rnorm4df (1/that).

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
50 for erf, 75 for sin and cos; most are multiply-adds, which also keep the
dependence chains short (their latency, more than the instruction count,
sets the speed of a vectorised loop). Timings: docs/perf/expand-math-polynomials.md.

Layout: `emitter` (`Emitter`: the ops for one f32-like type, conditions as
`i1` or integer masks), `common` (rounding to an integer, scaling by 2^n,
Horner), the algorithms by family in `exp_log` (exp, log, hyperbolic and
inverse hyperbolic), `trig` (sin ... atan2, sinpi, cospi), `special` (erf,
erfc, normcdf, erfcx, cbrt, hypot, rcbrt and the norms), `inverse_erf`
(erfinv, erfcinv, normcdfinv) and `gamma_bessel` (lgamma,
cyl_bessel_i0/i1), and `expand` (the tables of expanded ops and the pass).

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

from tcdialect.transforms.expand_math_polynomials.expand import (
    EXPANDED_CALLS,
    EXPANDED_OPS,
    MAX_ULP,
    Algorithm,
    ExpandMathPolynomialsPass,
)

__all__ = [
    "EXPANDED_CALLS",
    "EXPANDED_OPS",
    "MAX_ULP",
    "Algorithm",
    "ExpandMathPolynomialsPass",
]
