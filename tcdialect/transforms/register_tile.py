"""`register-tile{vector-width=0 rows=0 vectors=0 pack=auto pair-tails=true}`: reductions in vector registers.

An affine → affine pass (docs/pipeline.md: `affine` / `scheduled` stage
IR), meant to run after `affine-isl-schedule` (or right after
`convert-tc-to-affine`) and before `convert-affine-to-scf`. It rewrites the
innermost perfect loop nest of a reduction statement into a register tile: a
block of accumulators held in explicit vector values (`vector<VL x T>`),
loaded from the target once, updated by FMAs (or the reduction's combining
op) inside the reduction loops and stored once at the end (unroll-and-jam +
scalar replacement + vectorisation in one step), with packed operand panels
where they pay.

What it matches
---------------

A *band*: loops (`affine.for` without `iter_args`, `affine.parallel` without
reductions, every step 1), each one's body holding only the next loop, the
innermost holding exactly one statement::

    %a = affine.load %A[...]          // loads of arrays other than T
    ...                               // pure arith/math ops (see _VECTOR_OPS)
    %t = affine.load %T[f(i)]         // the accumulator, used only below
    %s = arith.addf %t, %e fastmath<reassoc> : f32
    affine.store %s, %T[f(i)]

`⊕` (here `addf`) is `addf mulf maximumf minimumf maxnumf minnumf` with
`fastmath<reassoc>` (what `convert-tc-to-affine` puts on reductions) or an
integer `addi muli maxsi minsi maxui minui andi ori xori` (i8 and wider).
`addf` of a `mulf` becomes an FMA. The band grows outwards from the
statement's loop while loops are perfectly nested and stops at a loop whose
induction variable appears in an inner loop's bounds (the isl scheduler's
tile loops stay outside, untouched; so do loops a triangle depends on). In
the band:

- T's subscripts (`f`) are affine, each uses at most one band IV, linearly,
  and each band IV appears in at most one subscript: `f` is injective in
  the *output* IVs (those appearing in it); the others are the reduction
  IVs `R` (at least one);
- e (the other operand of `⊕`) reads only arrays other than T, through
  `affine.load`s whose operands are band IVs or values from outside the
  band, and uses only `_VECTOR_OPS` and constants;
- no bound in the band uses a tiled or `R` IV (bounds may be `max`/`min`
  maps over symbols and outer IVs).

Mode 1 (vectors along an output loop `v`): `v` appears in T only in its last
subscript, with coefficient 1, and in every load either only in the last
subscript with coefficient 1 (a `vector.load` of VL contiguous elements), or
not at all (a scalar load + `vector.broadcast`, shared by the vectors of a
row), or (packing allowed) linearly in one other subscript (`W[n, k]` with
`v = n`: gathered into the packed panel, below). The unrolled loop `u` is
another output loop, preferably one the broadcast loads depend on (the
innermost such). The band's other output loops stay outside, in order.
Result (without packing)::

    outer output loops {
      affine.parallel %u0 = lb_u to u_end step MR {        // MR rows
        affine.parallel %v0 = lb_v to v_end step VL*NV {   // NV vectors
          %acc_ij = vector.load %T[.., %u0 + i, .., %v0 + j*VL]   // MR x NV
          %r:MR*NV = affine.for %k = lb_k to ub_k iter_args(%acc_ij...) {
            %b_j = vector.load %B[%k, %v0 + j*VL]             // per vector
            %a_i = affine.load %A[%u0 + i, %k]                // per row
            %x_i = vector.broadcast %a_i
            %acc'_ij = math.fma %x_i, %b_j, %acc_ij           // MR x NV
            affine.yield %acc'_ij...
          }
          vector.store %r_ij, %T[.., %u0 + i, .., %v0 + j*VL]
        }
        affine.parallel %v0 = v_end to v_vend step VL { ... 1 vector per row }
        affine.parallel %v0 = v_vend to ub_v step VL {  // at most once
          ... vector.maskedload / maskedstore, mask = create_mask(ub_v - v0)
        }
      }
      affine.parallel %u = u_end to ub_u { the same with 1 row }
    }

When `v`'s extent is a known number, the two remainder strips are one
instead: a strip of exactly the `ceil(rem / VL)` vectors left, only its last
vector masked (54 columns by 3 x 16: 48, then one masked vector; 45 by 2 x 8:
32, then 2 vectors with the second masked), so the remainder keeps MR x count
accumulators instead of MR x 1.

Pair tails (`pair-tails=true`): when the column extent is a known number
whose last vector uses at most half its lanes, the masked vectors of rows
`2i` and `2i + 1` of a strip are one vector, lanes `[0, VL/2)` for the first
row and `[VL/2, VL)` for the second (`_Kernel._pair_tails`); an odd last row
keeps its own. Each op of the body is lane-wise, so the pair needs one FMA
where the two rows needed two: group conv's 4 x 4 tile (3 full vectors and
6 of 16 lanes per row) runs 14 FMAs per step instead of 16::

    %b = vector.maskedload %B[%k, %n16], %m6 : ..., vector<8xi1>, vector<8xf32>
    %bb = vector.shuffle %b, %b [0, ..., 15]      // both rows read B's tail
    %aa = vector.shuffle %a0, %a1 [0, ..., 7, 24, ..., 31]  // A[m], A[m + 1]
    %acc' = math.fma %aa, %bb, %acc
    ...
    %lo = vector.shuffle %acc', %acc' [0, ..., 7]   // row m, then row m + 1
    vector.maskedstore %C[%m, %n16], %m6, %lo

(Paired, 2 threads, 20-30 rounds, against `pair-tails=false`: group conv
0.91-0.97x the time from cache and 0.96-0.97x after a cache flush; conv2d
0.99x and 0.95-0.96x.)

(`u_end = lb_u + ((ub_u - lb_u) floordiv MR) * MR` etc., with `ub` clamped
to `>= lb`; index arithmetic is `affine.apply` / `arith.maxsi/minsi`, folded
when the bounds are constants, and strips that are statically empty are not
emitted. Strips are `affine.parallel` when their loop was.)

Packing (mode 1 with a row loop `u`; `pack=auto|always|never`):

- the *panel* (vector loads that do not depend on `u`) is copied, per
  column strip, into `memref.alloc`'d `buf[r_1 - lb_1, ..., r_n - lb_n,
  0 .. NV*VL)` (gathered loads lane by lane, or, read contiguously along
  the one reduction loop (`W[n, k]`), by VL x VL blocks transposed in
  registers with `vector.shuffle`; the others by vectors; masked in the
  masked strip), and the column strips become the outer loop, so
  each copy serves every row strip. `auto` packs when the panel's rows are
  at least 1 KiB apart (4 KiB rows map to the same cache sets) and the row
  extent is unknown or at least 8 * MR; it gathers (instead of mode 2) when
  the row extent is unknown or at least 16 * MR. When the row strips were
  the parallel loop and there are at least as many full column strips as
  full row strips (static extents), the column strips become the parallel
  loop instead, each copying its own panel. When the panel does not vary
  along the band's kept output loops nor along enclosing serial loops that
  leave its arrays unwritten, it is copied once, before them, for every
  column strip: `buf[strip, r_1 - lb_1, ..., 0 .. NV*VL)`, one buffer per
  strip variant (`_hoist_point`; the copy then runs even when those loops
  run zero times, reading only the panel the strip and reduction loops
  span), and the row strips it serves, for the gathering rule above, are
  those of all their iterations;
- *rows* (broadcast loads of `u` that the innermost reduction loop walks
  with a non-unit stride, `A[k, m]`, or whose consecutive rows are a static
  multiple of 2 KiB apart, so that at least 4 of MR share an L1 set) are
  copied once, for all full row strips, into `buf[strip, r_1 - lb_1, ...,
  0 .. MR)` by a loop over the strips (parallel when `u` was), so that a
  kernel reads MR consecutive scalars per step (`auto`: when the column
  extent is unknown or at least 4 * NV * VL). When `u` moves the load along
  its last subscript (`A[k, m]`), the strip's MR rows are consecutive
  elements and each step copies them as one vector (as MR scalar copies,
  LLVM vectorised the copy along `r` into gathers: AᵀB 1024², 2 threads,
  paired, 0.94x the time with the vector copy).
  Buffers are freed after their last use.

Prefetching (mode 1): when all the columns fit one strip, the one reduction
loop `r` has a static extent and a broadcast load read in place walks rows of
at most `PREFETCH_ROW_BYTES` (512) along `r` that change with an outer loop
(`X(m, n, r)` under `m`), each full row strip first prefetches the next
strip's rows, one `memref.prefetch` per 64 bytes of a row plus its last
element::

    memref.prefetch %X[%m, %u0 + MR + i, lb_r + c], read, locality<3>, data

A kernel reading a packed panel of more than `PANEL_MIN_BYTES` (16 KiB, or
of unknown size), which will not stay in L1 from one row strip to the next,
prefetches it `PANEL_AHEAD_BYTES` (768) ahead, rounded up to whole steps,
once per 64-byte line (`_panel_ahead`): matmul 1024²'s 256 x 48 panel::

    %b0 = vector.load %panel[%k, %c0]
    memref.prefetch %panel[%k + 4, %c0], read, locality<3>, data

A vector load read in place from an array of at least `FAR_ARRAY_BYTES`
(1 MiB) that the innermost reduction loop moves by at least
`FAR_STEP_BYTES` (1 KiB) per step is prefetched `FAR_AHEAD_STEPS` (2) steps
ahead, for the first vector of each row (`_Kernel.prefetch_far`):
tensordot's `I0(n, c1, r_c2, h, w)`, a new 3136-byte plane at every step.

Short rows give the hardware prefetcher, which follows long streams, too
little to start on; with several column strips or rows that every outer
iteration reads again they come from cache anyway. Every mode-1 tile with at
least `PREFETCH_TARGET_STEPS` (16) reduction steps also prefetches for
writing its vectors of T at the next iteration of the innermost kept output
loop, when that is at most `PREFETCH_NEXT_BYTES` away (group conv's next
output row), so that the stores do not wait for their lines
(`_Kernel.prefetch_target`).

Prefetching (mode 2): when an enclosing loop `o` outside the band (step 1)
moves a load that walks `r` contiguously by at most `PREFETCH_NEXT_BYTES`
(16 KiB), the vector loops along `r` prefetch that load for `o + 1`, at
their own columns, once per 64 bytes; and, for writing, the stores of `o`'s
body to arrays from outside it whose last subscript is a loop with `r`'s
bounds (a row that a later nest of the same iteration writes)::

    affine.for %n = 0 to 4096 {          // mx, e, s, O share the row loop
      ... affine.for %d = 0 to 1024 step 64 iter_args(...) {
        %x = vector.load %I[%n, %d]
        memref.prefetch %I[%n + 1, %d], read, locality<0>, data
        memref.prefetch %O[%n + 1, %d], write, locality<3>, data
        ...

The hardware prefetcher stops at 4 KiB pages and idles while the row's
other nests work from cache, so without it every row starts with misses
(`_Kernel.next_rows`). Each array is prefetched for `o + 1` by the first
statement that does so (moments2's second row sum does not again). The
reads are prefetched non-temporally (`NEXT_ROW_LOCALITY`).

Folded initialisation and updates: a perfect nest right before the band
(or before the `affine.for` tile loops around it, constant bounds) that
stores one value `c` into T (`C = 0`), and the perfect nests right after
that update each element of T from itself, other arrays and constants
(`O = O + B[n]`, `O = max(O, 0)`), are folded into the kernels when isl
shows that every tile iteration writes exactly the elements the nest writes
(`tiles_cover`, with the reduction loops' extents left out: a kernel
loads and stores all its points). The kernels of the first tile start from
`c` instead of loading T, those of the last apply the updates before the
store (an `scf.if` on the tile IVs when there are tile loops), and the
nests are erased (`_initial`, `_final`)::

    %r:MR*NV = scf.if %kt_is_0 { yield %c... } else { vector.load %T ... }
    ... reduction loops ...
    %s:MR*NV = scf.if %kt_is_last { O + B, max(.., 0) per vector } else { %r }
    vector.store %s, %T[...]

Each element still sees the initialisation, the band's updates and the
nests' updates in their order.

Mode 2 (vectors along a reduction loop `r`, when no `v` exists, e.g.
`O(b,n) +=! X(b,r_k) * W(n,r_k)` with `pack=never`): `r` appears in every
load only in the last subscript with coefficient 1, or not at all. Up to two
output loops `u1`, `u2` are unrolled by `rows` x `vectors` (P x Q); each
point keeps a vector of partial sums along `r` (from the identity of `⊕`)
and a scalar accumulator (loaded from T); `r` runs innermost of `R`, its
main part by VL with vector loads, its remainder (< VL iterations) scalar;
after the reduction loops `vector.reduction <⊕>` folds each vector into its
scalar, which is stored. Remainders of `u1`/`u2` use 1 row/column. With fewer
than `SPLIT_CHAINS` (4) points, `r`'s main part runs by `S` vectors into `S`
partial vectors per point (S = 4 // points), folded with `⊕` after the loop,
so that at least 4 independent chains hide ⊕'s latency (`maximumf` is a
dependent sequence of ~6 instructions on x86, 3 with `nsz`: a row max over
16 MiB, 2 threads, without `nsz`, in L3 0.70-0.79 ms split vs 1.03 ms; from
memory 1.05 vs 1.15 ms).

Legality
--------

The band holds one statement, whose only write is `T[f(out)]`, and whose
other reads are of arrays not written in the band (distinct memrefs never
alias: docs/pipeline.md's buffer contract), so iterations with different
output IVs are independent (f is injective) and only the order of the
updates of each element matters. Mode 1 runs, for every element, the `R`
loops in their original relative order, so each element sees the same
sequence of `⊕` as before; the only difference is that `T + x * y` becomes
one `fma` (contraction, licensed by `reassoc`: TC leaves the order and
rounding of reductions unspecified). Mode 2 reorders each element's updates
(lane-wise partial sums, `r` moved innermost), which `reassoc` permits
(integers: exact). Loads only touch elements that the original iterations
read (every lane of a vector is an iteration in range, or masked), and the
packed copies read exactly the panel the kernels use, so no access goes out
of bounds; the copies are private to the strip (thread) that makes them.

Options (0 = automatic): `vector-width` = lanes of a 32-bit element
(elements of b bits get `vector-width * 32 / b` lanes); 0 asks the host
(`tcdialect.backend.cpu.host_vector_width`, imported lazily: 16 with
AVX-512, 8 with AVX2). `rows` = MR (mode 1) / P (mode 2); `vectors` = NV
(mode 1) / Q (mode 2). Defaults: 16 lanes → MR=8, NV=3 (24 accumulators
of 32 zmm; an in-L1 kernel measured here ran 8 x 2 at 63 GFLOP/s, 8 x 3
and 6 x 4 at 91, 12 x 2 at 73, 4 x 6 at 82: each step loads MR + NV
values for MR * NV FMAs), 8 lanes → MR=6, NV=2 (12 of 16 ymm), else
4 x 2; mode 2 uses 4 x 4 (16 lanes) or 3 x 3. They shrink to static extents
smaller than the tile (NV to the vectors that cover the extent, the last
one masked: 26 columns by 16 lanes keep NV = 2), and NV grows by one when
that covers a static extent in one strip and MR x NV accumulators still fit
in 24 of 32 zmm (12 of 16 ymm): 54 columns by 4 rows are 4 x 4, the last
vector masked, instead of 4 x 3 and a strip of 4 x 1 (gconv: 0.977x,
paired, 20 rounds). NV is 2 instead of 3 when strips of 3 would leave a
last strip of one vector and 2 divides the vector count (1024 columns: 32
strips of 2 vectors instead of 21 of 3 and one of 1, whose MR chains share
one column load per step and which, when the column strips are the parallel
loop, runs as a dispatch of its own on one thread; 56 columns: 2 strips of
2). Paired, 2 threads, 30-40 rounds: tmm 128 x 1024 x 1024 0.81-0.93x the
time, conv2d 0.88-0.90x, MLP 0.97-0.99x, matmul 1024 and AᵀB 0.99-1.01x;
with strips of 2 wherever 2 divides the vectors, bmm's 128 columns (2 x 3
and a strip of 2) ran 0.92-1.18x, so a last strip of 2 is kept. When the
columns are one vector (NV = 1) with 16 lanes
and the static row extent is a multiple of 16, MR is 16: 8 x 1 has just the
8 FMA chains that two pipes of 4-cycle FMAs need and a column load per 8
FMAs (Kronecker3's three mode products, 16 columns by 32 or 16 rows:
0.91-0.96x the time, paired, Zen 5). `pair-tails=false` keeps one masked
vector per row.

Mode 2 needs a reduction loop of at least VL iterations (or an unknown
number). Nests that do not match are left alone (non-reductions, several statements,
targets read elsewhere, no loop with unit stride in the target and the
operands, ops without vector forms such as comparisons and selects, float
reductions without `reassoc`).
"""

from __future__ import annotations

import itertools
import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.dialects.affine import LoadOp, StoreOp, parallel_op
from tcdialect.dialects.memref import PrefetchOp
from tcdialect.poly.scop import Scop, extract_scop, tiles_cover
from tcdialect.transforms.ir_values import defined_outside

# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------

# ⊕ → (vector.reduction kind, identity: float for floats, int for integers)
_FLOAT_COMBINES: dict[str, tuple[str, float]] = {
    "arith.addf": ("add", -0.0),
    "arith.mulf": ("mul", 1.0),
    "arith.maximumf": ("maximumf", -pymath.inf),
    "arith.minimumf": ("minimumf", pymath.inf),
    "arith.maxnumf": ("maxnumf", -pymath.inf),
    "arith.minnumf": ("minnumf", pymath.inf),
}
_INT_COMBINES: dict[str, tuple[str, Callable[[int], int]]] = {
    "arith.addi": ("add", lambda w: 0),
    "arith.muli": ("mul", lambda w: 1),
    "arith.maxsi": ("maxsi", lambda w: -(1 << (w - 1))),
    "arith.minsi": ("minsi", lambda w: (1 << (w - 1)) - 1),
    "arith.maxui": ("maxui", lambda w: 0),
    "arith.minui": ("minui", lambda w: -1),
    "arith.andi": ("and", lambda w: -1),
    "arith.ori": ("or", lambda w: 0),
    "arith.xori": ("xor", lambda w: 0),
}

_VECTOR_OPS = frozenset(
    (
        "arith.addf arith.subf arith.mulf arith.divf arith.maximumf "
        "arith.minimumf arith.maxnumf arith.minnumf arith.negf arith.extf "
        "arith.truncf arith.addi arith.subi arith.muli arith.andi arith.ori "
        "arith.xori arith.maxsi arith.minsi arith.maxui arith.minui "
        "math.fma math.absf math.sqrt math.floor math.ceil"
    ).split()
)
"""Ops of `e` the pass clones onto vectors: elementwise ops that xDSL 0.74's
arith/math accept on vectors and `convert-to-llvm` lowers (no comparisons,
selects, int<->float casts: xDSL's arith has no vector forms of them)."""


SPLIT_CHAINS = 4
"""Mode 2 keeps at least this many independent vector chains along r (points
x partial vectors per point)."""
PREFETCH_ROW_BYTES = 512
"""Mode 1: the broadcast rows of the next row strip are prefetched when a
row spans at most this many bytes of the one reduction loop (`_Kernel.prefetch`)."""
PREFETCH_TARGET_STEPS = 16
"""Mode 1: T's vectors for the next kept iteration are prefetched only for
tiles with at least this many reduction steps (`_Kernel.prefetch_target`)."""
PANEL_MIN_BYTES = 16384
"""Mode 1: packed panels of more bytes than this are prefetched ahead in
the reduction loop (`_panel_ahead`)."""
PANEL_AHEAD_BYTES = 768
"""Mode 1: how far ahead, in bytes, a kernel prefetches its packed panel."""
FAR_STEP_BYTES = 1024
"""Mode 1: vector loads read in place that each reduction step moves by at
least this many bytes are prefetched `FAR_AHEAD_STEPS` steps ahead
(`_Kernel.prefetch_far`)."""
FAR_AHEAD_STEPS = 2
FAR_ARRAY_BYTES = 1 << 20
"""Mode 1: `_Kernel.prefetch_far` leaves arrays smaller than this (an L2)
alone: they stay in cache."""
PREFETCH_NEXT_BYTES = 16384
"""Accesses are prefetched for the next iteration of a loop only when it
moves them by at most this many bytes (`_Kernel.next_rows`,
`_Kernel.prefetch_target`)."""
NEXT_ROW_LOCALITY = 0
"""Locality of mode 2's read prefetches: 0, the non-temporal hint
(`prefetchnta` on x86). The next row (at most `PREFETCH_NEXT_BYTES`) is read
in the next iteration and not after it, so it need not be kept in the outer
caches (paired against `locality<3>`, 2 threads, 40 rounds, caches flushed,
together with `prefetch-next-slice`'s `nta-bytes`, in the host's slower
memory phase: softmax 0.90-1.0x the time, layernorm 0.87-1.02x, row sums
0.94-0.99x; in its faster one 0.97-1.01x; back to back 0.99-1.05x)."""


def _host_lanes() -> int:
    from tcdialect.backend.cpu import host_vector_width

    return host_vector_width(32)


# --------------------------------------------------------------------------
# Affine analysis
# --------------------------------------------------------------------------


def _linear(expr: AffineExpr, num_dims: int) -> tuple[dict[int, int], set[int]]:
    """(coefficient per operand position, positions inside non-linear parts)."""
    if isinstance(expr, AffineConstantExpr):
        return {}, set()
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, set()
    if isinstance(expr, AffineSymExpr):
        return {num_dims + expr.position: 1}, set()
    assert isinstance(expr, AffineBinaryOpExpr)
    lc, ln = _linear(expr.lhs, num_dims)
    rc, rn = _linear(expr.rhs, num_dims)
    if expr.kind == AffineBinaryOpKind.Add:
        out = dict(lc)
        for p, c in rc.items():
            out[p] = out.get(p, 0) + c
        return out, ln | rn
    if expr.kind == AffineBinaryOpKind.Mul:
        if isinstance(expr.rhs, AffineConstantExpr):
            return {p: c * expr.rhs.value for p, c in lc.items()}, ln
        if isinstance(expr.lhs, AffineConstantExpr):
            return {p: c * expr.lhs.value for p, c in rc.items()}, rn
    return {}, set(lc) | ln | set(rc) | rn


@dataclass
class _Access:
    """An affine access: per subscript, the band IVs it uses."""

    memref: SSAValue
    map: AffineMap
    operands: tuple[SSAValue, ...]
    coeffs: list[dict[SSAValue, int]]
    """Linear coefficients of band IVs, per subscript (no zeros)."""
    nonlinear: list[set[SSAValue]]
    """Band IVs inside non-linear parts (floordiv, mod, products), per subscript."""

    @staticmethod
    def of(
        memref: SSAValue,
        amap: AffineMap,
        operands: Sequence[SSAValue],
        band: set[SSAValue],
    ) -> _Access:
        coeffs: list[dict[SSAValue, int]] = []
        nonlinear: list[set[SSAValue]] = []
        for expr in amap.results:
            lin, nonlin = _linear(expr, amap.num_dims)
            cs: dict[SSAValue, int] = {}
            for p, c in lin.items():
                v = operands[p]
                if v in band:
                    cs[v] = cs.get(v, 0) + c
            coeffs.append({v: c for v, c in cs.items() if c != 0})
            nonlinear.append({operands[p] for p in nonlin if operands[p] in band})
        return _Access(memref, amap, tuple(operands), coeffs, nonlinear)

    def uses(self, k: int) -> set[SSAValue]:
        return set(self.coeffs[k]) | self.nonlinear[k]

    def deps(self) -> set[SSAValue]:
        out: set[SSAValue] = set()
        for k in range(len(self.coeffs)):
            out |= self.uses(k)
        return out

    def unit_last(self, iv: SSAValue) -> bool | None:
        """True: `iv` only in the last subscript, coefficient 1, linearly;
        None: `iv` not used; False: otherwise."""
        if iv not in self.deps():
            return None
        last = len(self.coeffs) - 1
        if last < 0 or self.coeffs[last].get(iv) != 1 or iv in self.nonlinear[last]:
            return False
        return all(iv not in self.uses(k) for k in range(last))


# --------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------

_Bound = tuple[AffineMap, tuple[SSAValue, ...]]
_Val = int | SSAValue
"""An index value being built: a known constant or an SSA value."""


@dataclass
class _Dim:
    """One dimension of the band."""

    iv: SSAValue
    parallel: bool
    lb: _Bound
    ub: _Bound

    def bound_values(self) -> set[SSAValue]:
        return set(self.lb[1]) | set(self.ub[1])

    def static_extent(self) -> int | None:
        """`ub - lb` when it is a constant (single-result bounds whose
        difference is constant, like the point loops of a full tile)."""
        lbm, ubm = self.lb[0], self.ub[0]
        if len(lbm.results) != 1 or len(ubm.results) != 1:
            return None
        lo = _affine_form(lbm.results[0], lbm.num_dims, self.lb[1])
        hi = _affine_form(ubm.results[0], ubm.num_dims, self.ub[1])
        if lo is None or hi is None or lo[0] != hi[0]:
            return None
        return max(0, hi[1] - lo[1])


def _affine_form(
    expr: AffineExpr, num_dims: int, operands: Sequence[SSAValue]
) -> tuple[dict[SSAValue, int], int] | None:
    """`expr` as (coefficient per operand value, constant), None if not linear."""
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineDimExpr | AffineSymExpr):
        pos = expr.position + (num_dims if isinstance(expr, AffineSymExpr) else 0)
        return {operands[pos]: 1}, 0
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs = _affine_form(expr.lhs, num_dims, operands)
    rhs = _affine_form(expr.rhs, num_dims, operands)
    if lhs is None or rhs is None:
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        coeffs = dict(lhs[0])
        for v, c in rhs[0].items():
            coeffs[v] = coeffs.get(v, 0) + c
        return {v: c for v, c in coeffs.items() if c}, lhs[1] + rhs[1]
    if expr.kind == AffineBinaryOpKind.Mul:
        if not rhs[0]:
            return {v: c * rhs[1] for v, c in lhs[0].items() if c * rhs[1]}, (
                lhs[1] * rhs[1]
            )
        if not lhs[0]:
            return {v: c * lhs[1] for v, c in rhs[0].items() if c * lhs[1]}, (
                lhs[1] * rhs[1]
            )
    return None


def _loop_dims(op: Operation) -> list[_Dim] | None:
    """The dimensions of a band loop, or None if it cannot be in a band."""
    if isinstance(op, xaffine.ForOp):
        if op.inits or op.step.value.data != 1:
            return None
        return [
            _Dim(
                op.body.block.args[0],
                False,
                (op.lowerBoundMap.data, tuple(op.lowerBoundOperands)),
                (op.upperBoundMap.data, tuple(op.upperBoundOperands)),
            )
        ]
    if isinstance(op, xaffine.ParallelOp):
        if op.reductions.data or op.res:
            return None
        if any(s.value.data != 1 for s in op.steps.data):
            return None
        lbm, ubm = op.lowerBoundsMap.data, op.upperBoundsMap.data
        n_lb = lbm.num_dims + lbm.num_symbols
        operands = tuple(op.map_operands)
        lb_ops, ub_ops = operands[:n_lb], operands[n_lb:]
        lb_groups = [int(g) for g in op.lowerBoundsGroups.get_values()]
        ub_groups = [int(g) for g in op.upperBoundsGroups.get_values()]
        args = op.body.block.args
        if not (len(lb_groups) == len(ub_groups) == len(args)):
            return None
        dims: list[_Dim] = []
        lo = hi = 0
        for arg, gl, gu in zip(args, lb_groups, ub_groups):
            lm = AffineMap(lbm.num_dims, lbm.num_symbols, lbm.results[lo : lo + gl])
            um = AffineMap(ubm.num_dims, ubm.num_symbols, ubm.results[hi : hi + gu])
            dims.append(_Dim(arg, True, (lm, lb_ops), (um, ub_ops)))
            lo, hi = lo + gl, hi + gu
        return dims
    return None


def _only_child(block: Block) -> Operation | None:
    """The single op of `block` besides an argument-less `affine.yield`."""
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], xaffine.YieldOp) or ops[1].operands:
        return None
    return ops[0]


@dataclass
class _Statement:
    store: xaffine.StoreOp
    target: _Access
    combine: Operation
    acc_index: int
    """Operand position of the accumulator load in `combine`."""
    expr: SSAValue
    fma: tuple[SSAValue, SSAValue] | None
    loads: dict[Operation, _Access]
    inner: set[Operation]
    """Ops of the innermost block (for telling e's values from outer ones)."""


@dataclass
class _Plan:
    outer: Operation
    dims: list[_Dim]
    stmt: _Statement
    mode: int
    vec_iv: SSAValue
    unrolled: list[SSAValue]
    red: list[SSAValue]
    kept: list[SSAValue]
    lanes: int
    factors: list[int]
    deps: dict[SSAValue, set[SSAValue]] = field(default_factory=dict)
    packed: list[Operation] = field(default_factory=list)
    """Mode 1: vector loads shared by all rows (the panel), copied per column
    strip into a contiguous buffer; non-empty makes the column strips outer."""
    gathers: list[Operation] = field(default_factory=list)
    """Packed loads that are strided in the vector IV (copied element-wise)."""
    anchor: Operation | None = None
    """Where the panel is copied once for every column strip (`_hoist_point`;
    None: once per column strip)."""
    row_packed: list[Operation] = field(default_factory=list)
    """Mode 1: broadcast loads of the rows that the innermost reduction loop
    walks with a non-unit stride (`A[k, m]`), copied once for all full row
    strips into `buf[strip, r_1 - lb_1, ..., i]` (MR consecutive scalars per
    reduction step)."""
    start: _Start | None = None
    """The loop nest that initialised T, folded into the first tile (`_initial`)."""
    finish: _Finish | None = None
    """The pointwise updates of T after the band, folded into the last tile
    (`_final`)."""
    pair_tails: bool = True
    """Mode 1: pack the masked tail vectors of two rows into one (`_Kernel`)."""
    prefetched: dict[tuple[SSAValue, SSAValue, bool], Operation] = field(
        default_factory=dict[tuple[SSAValue, SSAValue, bool], Operation]
    )
    """Shared by the plans of a module: (enclosing IV, memref, for writing)
    -> the store of the statement whose kernels prefetch it for the IV's
    next iteration (`_Kernel.next_rows`: one statement per row does)."""

    def dim(self, iv: SSAValue) -> _Dim:
        return next(d for d in self.dims if d.iv == iv)


def _is_reassoc(op: Operation) -> bool:
    flags = op.properties.get("fastmath")
    if not isinstance(flags, arith.FastMathFlagsAttr):
        return False
    return any(f.value in ("reassoc", "fast") for f in flags.data)


def _match_statement(store: xaffine.StoreOp, band: set[SSAValue]) -> _Statement | None:
    block = store.parent_block()
    if block is None:
        return None
    ops = list(block.ops)
    if not ops or not isinstance(ops[-1], xaffine.YieldOp) or ops[-1].operands:
        return None
    for op in ops[:-1]:
        if op is store:
            continue
        if isinstance(op, xaffine.LoadOp):
            continue
        if (
            op.name in _VECTOR_OPS
            or op.name in _FLOAT_COMBINES
            or (op.name in _INT_COMBINES)
        ):
            continue
        if isinstance(op, arith.ConstantOp):
            continue
        return None
    combine = store.value.owner
    if not isinstance(combine, Operation) or combine.parent_block() is not block:
        return None
    t = store.memref
    elem = store.value.type
    if isinstance(elem, AnyFloat):
        if combine.name not in _FLOAT_COMBINES or not _is_reassoc(combine):
            return None
    elif isinstance(elem, IntegerType):
        if combine.name not in _INT_COMBINES or elem.width.data < 8:
            return None
    else:
        return None
    if len(combine.operands) != 2 or not combine.results[0].has_one_use():
        return None
    acc_index = None
    for i, operand in enumerate(combine.operands):
        owner = operand.owner
        if (
            isinstance(owner, xaffine.LoadOp)
            and owner.memref == t
            and owner.map == store.map
            and tuple(owner.indices) == tuple(store.indices)
            and operand.has_one_use()
        ):
            acc_index = i
            break
    if acc_index is None:
        return None
    acc_load = combine.operands[acc_index].owner
    expr = combine.operands[1 - acc_index]
    # e: the ops of the block it depends on
    inner = set(ops)
    loads: dict[Operation, _Access] = {}
    seen: set[Operation] = set()
    stack = [expr]
    while stack:
        v = stack.pop()
        owner = v.owner
        if not isinstance(owner, Operation) or owner not in inner or owner in seen:
            continue
        seen.add(owner)
        if owner is acc_load or owner is combine or owner is store:
            return None
        if isinstance(owner, xaffine.LoadOp):
            if owner.memref == t:
                return None
            for idx in owner.indices:
                if isinstance(idx.owner, Operation) and idx.owner in inner:
                    return None
            loads[owner] = _Access.of(owner.memref, owner.map.data, owner.indices, band)
            continue
        if isinstance(owner, arith.ConstantOp):
            continue
        if owner.name not in _VECTOR_OPS:
            return None
        stack.extend(owner.operands)
    # no other read of T in the block
    for op in ops:
        if isinstance(op, xaffine.LoadOp) and op.memref == t and op is not acc_load:
            return None
    for idx in store.indices:
        if isinstance(idx.owner, Operation) and idx.owner in inner:
            return None
    fma = None
    if combine.name == "arith.addf":
        mul = expr.owner
        if (
            isinstance(mul, arith.MulfOp)
            and mul in inner
            and mul.result.has_one_use()
            and mul.result.type == elem
        ):
            fma = (mul.lhs, mul.rhs)
    return _Statement(
        store,
        _Access.of(t, store.map.data, store.indices, band),
        combine,
        acc_index,
        expr,
        fma,
        loads,
        inner,
    )


def _band(stmt_loop: Operation) -> tuple[Operation, list[_Dim]] | None:
    """The outermost op and the dims of the band around the statement's loop."""
    dims = _loop_dims(stmt_loop)
    if dims is None:
        return None
    outer = stmt_loop
    while True:
        parent_block = outer.parent_block()
        parent = parent_block.parent_op() if parent_block else None
        if (
            parent_block is None
            or parent is None
            or not isinstance(parent, xaffine.ForOp | xaffine.ParallelOp)
        ):
            break
        if (
            parent.body.block is not parent_block
            or _only_child(parent_block) is not outer
        ):
            break
        pdims = _loop_dims(parent)
        if pdims is None:
            break
        used: set[SSAValue] = set()
        for d in dims:
            used |= d.bound_values()
        if any(d.iv in used for d in pdims):
            break
        dims = pdims + dims
        outer = parent
    return outer, dims


def _plan(
    store: xaffine.StoreOp, lanes32: int, rows: int, vectors: int, pack: str
) -> _Plan | None:
    block = store.parent_block()
    loop = block.parent_op() if block is not None else None
    if loop is None or loop.regions[0].blocks[0] is not block:
        return None
    found = _band(loop)
    if found is None:
        return None
    outer, dims = found
    band = {d.iv for d in dims}
    if len(band) != len(dims):
        return None
    stmt = _match_statement(store, band)
    if stmt is None:
        return None
    target = stmt.target
    # injective target: each subscript linear in at most one band IV, each
    # band IV in at most one subscript
    out: list[SSAValue] = []
    for k in range(len(target.coeffs)):
        if target.nonlinear[k] or len(target.coeffs[k]) > 1:
            return None
        out.extend(target.coeffs[k])
    if len(set(out)) != len(out):
        return None
    order = [d.iv for d in dims]
    out_ivs = [iv for iv in order if iv in out]
    red = [iv for iv in order if iv not in out]
    if not red:
        return None
    accesses = list(stmt.loads.values())
    elem = store.value.type
    assert isinstance(elem, AnyFloat | IntegerType)
    width = elem.bitwidth if isinstance(elem, AnyFloat) else elem.width.data
    lanes = max(1, lanes32 * 32 // width)
    if lanes < 2:
        return None

    # mode 1: vector along an output loop; loads strided in it (`W[n, k]`
    # with `v = n`) are gathered into the packed panel
    extent = {d.iv: d.static_extent() for d in dims}
    last = len(target.coeffs) - 1
    mode = 0
    gathers: list[Operation] = []
    best: tuple[int, int, SSAValue, list[SSAValue], list[Operation]] | None = None
    for pos, iv in enumerate(out_ivs):
        if last < 0 or target.coeffs[last].get(iv) != 1:
            continue
        strided = [op for op, a in stmt.loads.items() if a.unit_last(iv) is False]
        if strided and (
            pack == "never"
            or not all(_gatherable(stmt.loads[op], iv) for op in strided)
        ):
            continue
        broadcast = [a for a in accesses if a.unit_last(iv) is None]
        others = [
            x
            for x in out_ivs
            if x != iv and not any(x in stmt.loads[op].deps() for op in strided)
        ]
        preferred = [x for x in others if any(x in a.deps() for a in broadcast)]
        u_list = (preferred or others)[-1:]
        if strided and not u_list:
            continue
        if strided and pack == "auto":
            # a gathered copy must serve enough row strips (measured: in a
            # 64 x 64 x 128 tile mode 2 is faster); a copy made once before
            # the kept loops serves the rows of all their iterations
            ext = extent[u_list[0]]
            kept_c = [x for x in out_ivs if x != iv and x not in u_list]
            panel_c = [op for op, a in stmt.loads.items() if _panel(a, iv, u_list[0])]
            moved_c = [*u_list, iv, *red]
            anchor, trips = _hoist_point(outer, dims, kept_c, moved_c, panel_c, stmt)
            if anchor is not None:
                ext = None if ext is None or trips is None else ext * trips
            if ext is not None and ext < 16 * (rows or _default_rows(lanes32)):
                continue
        key = (-len(strided), pos)
        if best is None or key > best[:2]:
            best = (key[0], key[1], iv, u_list, strided)
    if best is not None:
        mode = 1
        _, _, vec_iv, u_list, gathers = best
        unrolled = u_list + [vec_iv]
    else:
        r_candidates = [
            iv
            for iv in red
            if any(a.unit_last(iv) for a in accesses)
            and all(a.unit_last(iv) is not False for a in accesses)
            # a reduction shorter than a vector would run only its remainder
            and ((e := extent[iv]) is None or e >= lanes)
        ]
        if not r_candidates:
            return None
        mode = 2
        vec_iv = r_candidates[-1]
        # unroll the (up to two) innermost output loops that loads depend on
        used = [iv for iv in out_ivs if any(iv in a.deps() for a in accesses)]
        unrolled = (used or out_ivs)[-2:]
    kept = [iv for iv in out_ivs if iv not in unrolled]
    # rectangular: no bound in the band uses a tiled or reduction IV
    moved = set(unrolled) | set(red) | {vec_iv}
    for d in dims:
        if d.bound_values() & moved:
            return None
    plan = _Plan(outer, dims, stmt, mode, vec_iv, unrolled, red, kept, lanes, [])
    plan.factors = _factors(plan, lanes32, rows, vectors)
    _compute_deps(plan)
    if mode == 1 and len(unrolled) == 2 and pack != "never":
        u = unrolled[0]
        panel = [op for op, a in stmt.loads.items() if _panel(a, vec_iv, u)]
        if gathers or pack == "always" or _pack_pays(plan, panel):
            plan.packed = panel
            plan.anchor, _ = _hoist_point(
                outer, dims, kept, [*unrolled, *red], panel, stmt
            )
        if plan.factors[0] > 1:
            inner = red[-1]
            rows_packed = [
                op
                for op, a in stmt.loads.items()
                if u in a.deps()
                and vec_iv not in a.deps()
                and (
                    pack == "always"
                    or (inner in a.deps() and not a.unit_last(inner))
                    or _rows_alias(a, u, plan.factors[0])
                )
            ]
            if pack == "always" or _rows_pay(plan):
                plan.row_packed = rows_packed
    plan.gathers = gathers
    return plan


@dataclass
class _Start:
    """T's initialisation, folded into the kernels (`_initial`)."""

    nest: Operation
    """The loop nest that stored `value` into T: erased."""
    value: SSAValue
    """The stored value: an `arith.constant` of `nest` (cloned) or a value
    defined before it."""
    first: list[tuple[SSAValue, int]]
    """The tile loops around the band and their constant lower bounds: the
    kernels start from `value` when all are at them, else load T."""


def _nest_statement(nest: Operation) -> list[Operation] | None:
    """The innermost block's ops (its yield left out) of a perfect nest of
    step-1 `affine.for` / `affine.parallel` loops without results, when
    they end in an `affine.store`."""
    op = nest
    if not isinstance(op, xaffine.ForOp | xaffine.ParallelOp):
        return None
    while True:
        if _loop_dims(op) is None:
            return None
        child = _only_child(op.regions[0].blocks[0])
        if not isinstance(child, xaffine.ForOp | xaffine.ParallelOp):
            break
        op = child
    ops = list(op.regions[0].blocks[0].ops)[:-1]
    if not ops or not isinstance(ops[-1], xaffine.StoreOp):
        return None
    return ops


def _initial(plan: _Plan, scop: Scop | None) -> _Start | None:
    """Fold the nest that initialises T into the kernels' first tile.

    Matches a band whose outer op, after the perfectly nested `affine.for`
    tile loops `t` around it (constant lower bounds), directly follows a
    perfect nest storing one value `c` (a constant, or defined before it)
    into T, when `tiles_cover`: every tile iteration writes exactly
    the elements the nest wrote, and the first one runs whenever it wrote.
    The kernels of the first tile then start from `c` instead of loading T
    (an `scf.if` on `t == lb` selects between the two when there are tile
    loops), and the nest is erased: C is no longer zeroed in one pass and
    read back in another::

        affine.for %m ... { affine.for %n ... { affine.store %zero, %C[%m, %n] } }
        affine.for %kt = 0 to 4 { <band: C[m, n] += A[k, m] * B[k, n], k in tile kt> }
    """
    if scop is None:
        return None
    top, first = _tile_chain(plan, 0)
    if first is None:
        return None
    nest = top.prev_op
    while isinstance(nest, arith.ConstantOp):
        nest = nest.prev_op
    if nest is None:
        return None
    ops = _nest_statement(nest)
    if ops is None or not all(isinstance(o, arith.ConstantOp) for o in ops[:-1]):
        return None
    init_store = ops[-1]
    assert isinstance(init_store, xaffine.StoreOp)
    if init_store.memref != plan.stmt.store.memref:
        return None
    value = init_store.value
    owner = value.owner
    if isinstance(owner, Operation) and nest.is_ancestor(owner):
        if not isinstance(owner, arith.ConstantOp):
            return None
    if not _covers(scop, init_store, plan, first):
        return None
    return _Start(nest, value, first)


def _tile_chain(
    plan: _Plan, end: int
) -> tuple[Operation, list[tuple[SSAValue, int]] | None]:
    """The outermost of the perfectly nested `affine.for` loops (step 1)
    around the band (the band's outer op when none), and those loops,
    outermost first, with their first (`end` 0) or last (`end` -1)
    iteration; None when one of these is not a constant."""
    top = plan.outer
    chain: list[tuple[SSAValue, int]] | None = []
    while True:
        block = top.parent_block()
        parent = block.parent_op() if block is not None else None
        if not (
            isinstance(parent, xaffine.ForOp)
            and not parent.inits
            and parent.step.value.data == 1
            and _only_child(parent.body.block) is top
        ):
            return top, chain
        amap = parent.upperBoundMap.data if end else parent.lowerBoundMap.data
        r = amap.results
        one = r[0] if len(r) == 1 else None
        if chain is not None and isinstance(one, AffineConstantExpr):
            chain.insert(0, (parent.body.block.args[0], one.value + end))
        else:
            chain = None
        top = parent


def _covers(
    scop: Scop, other: Operation, plan: _Plan, tiles: list[tuple[SSAValue, int]]
) -> bool:
    """`tiles_cover` for the statement of the store `other` and the
    band's, the tile loops `tiles` at the given iteration."""
    target = plan.stmt.store
    reduction = set(plan.red)
    statements = {s.store: s for s in scop.statements.values()}
    near = statements.get(other)
    stmt = statements.get(target)
    if near is None or stmt is None:
        return False
    depth = 0
    while (
        depth < min(len(near.ivs), len(stmt.ivs)) and near.ivs[depth] == stmt.ivs[depth]
    ):
        depth += 1
    ivs = tuple(iv for iv, _ in tiles)
    if stmt.ivs[depth : depth + len(tiles)] != ivs:
        return False
    # the kernels load and store T at every point of the output loops, also
    # where the reduction loops run zero times
    free = [i for i, iv in enumerate(stmt.ivs) if iv in reduction]
    return tiles_cover(near, stmt, depth, [at for _, at in tiles], free)


@dataclass
class _Epilogue:
    """One pointwise update of T folded into the kernels (`_final`)."""

    nest: Operation
    ops: list[Operation]
    """The innermost block's ops, its `affine.store` of T last."""
    ivs: dict[SSAValue, SSAValue]
    """The nest's IVs → the band IVs that index the same subscript of T."""


@dataclass
class _Finish:
    """T's pointwise updates after the band, folded into the kernels."""

    epilogues: list[_Epilogue]
    last: list[tuple[SSAValue, int]]
    """The tile loops around the band and their last iterations: the
    kernels apply the updates before storing when all are at them."""


def _pointwise(nest: Operation, plan: _Plan, top: Operation) -> _Epilogue | None:
    """`nest` as a pointwise update of the band's target T: a perfect nest
    whose innermost block reads T only at the element it stores, other
    arrays through affine loads (along the vector IV in mode 1: only in the
    last subscript with coefficient 1, or not at all), and otherwise holds
    constants and `_VECTOR_OPS`. Each subscript of both stores is one value:
    an IV of the nest (one per subscript, all of them) where the band's is
    a band IV, else the band's same outer value."""
    target = plan.stmt.store
    ops = _nest_statement(nest)
    if ops is None:
        return None
    store = ops[-1]
    assert isinstance(store, xaffine.StoreOp)
    if store.memref != target.memref:
        return None

    def subscripts(m: AffineMap, operands: Sequence[SSAValue]) -> list[SSAValue]:
        out: list[SSAValue] = []
        for r in m.results:
            if not isinstance(r, AffineDimExpr | AffineSymExpr):
                return []
            pos = r.position + (m.num_dims if isinstance(r, AffineSymExpr) else 0)
            out.append(operands[pos])
        return out

    mine = subscripts(store.map.data, store.indices)
    band = subscripts(target.map.data, target.indices)
    if not mine or len(mine) != len(band) or len(set(mine)) != len(mine):
        return None
    nest_ivs: set[SSAValue] = set()
    for o in nest.walk():
        if isinstance(o, xaffine.ForOp | xaffine.ParallelOp):
            nest_ivs |= set(o.regions[0].blocks[0].args)
    # subscripts: the nest's IVs (one each) or the band's own outer values
    ivs: dict[SSAValue, SSAValue] = {}
    for a, b in zip(mine, band):
        if a in nest_ivs:
            ivs[a] = b
        elif a != b:
            return None
    if set(ivs) != nest_ivs:
        return None
    inner = set(ops)
    band_ivs = {d.iv for d in plan.dims}
    for o in ops[:-1]:
        for v in o.operands:
            owner = v.owner
            if (
                isinstance(owner, Operation)
                and owner not in inner
                and not isinstance(owner, arith.ConstantOp)
                and owner.parent_block() is top.parent_block()
            ):
                # defined after the band (constants are cloned)
                return None
        if isinstance(o, xaffine.LoadOp):
            indices = list(o.indices)
            if o.memref == target.memref:
                if o.map != store.map or indices != list(store.indices):
                    return None
                continue
            if any(v in inner for v in indices):
                return None
            mapped = [ivs.get(v, v) for v in indices]
            if any(v in nest_ivs and v not in ivs for v in indices):
                return None
            if plan.mode == 1:
                access = _Access.of(o.memref, o.map.data, mapped, band_ivs)
                if access.unit_last(plan.vec_iv) is False:
                    return None
            continue
        if isinstance(o, arith.ConstantOp):
            continue
        if o.name not in _VECTOR_OPS or len(o.results) != 1:
            return None
    if store.value.type != target.value.type:
        return None
    return _Epilogue(nest, ops, ivs)


def _final(plan: _Plan, scop: Scop | None) -> _Finish | None:
    """Fold the pointwise updates of T that follow the band into its last tile.

    Matches, after the band and the `affine.for` tile loops `t` around it
    (constant bounds), consecutive perfect nests that each update every
    element of T the band writes from that element, other arrays and
    constants (`_pointwise`), when `tiles_cover` holds for the last
    tile: every tile iteration writes exactly the elements the nest
    updates, and the last one runs whenever the nest does. The kernels of
    the last tile apply the updates to their accumulators before storing
    them (an `scf.if` on `t == last` when there are tile loops); the nests
    are erased, and with them a pass over T each (MLP's bias and ReLU)::

        affine.for %kt = 0 to 4 { <band: O[b, n] += I[b, k] * W[n, k]> }
        affine.for %b ... { affine.for %n ... { O[b, n] = O[b, n] + B[n] } }
        affine.for %b ... { affine.for %n ... { O[b, n] = max(O[b, n], 0) } }

    Each element still sees the band's updates, then the nests' in their
    order: a pointwise update reads and writes only its own element of T.
    """
    if scop is None:
        return None
    top, last = _tile_chain(plan, -1)
    if last is None:
        return None
    epilogues: list[_Epilogue] = []
    nest = top.next_op
    while True:
        while isinstance(nest, arith.ConstantOp):
            nest = nest.next_op
        if nest is None:
            break
        epi = _pointwise(nest, plan, top)
        if epi is None or not _covers(scop, epi.ops[-1], plan, last):
            break
        epilogues.append(epi)
        nest = nest.next_op
    if not epilogues:
        return None
    return _Finish(epilogues, last)


def _panel(a: _Access, v: SSAValue, u: SSAValue) -> bool:
    """Whether `a` belongs to the panel of vector IV `v` and row IV `u`: it
    varies along `v`, not along `u`."""
    return v in a.deps() and u not in a.deps()


def _hoist_point(
    outer: Operation,
    dims: list[_Dim],
    kept: list[SSAValue],
    moved: list[SSAValue],
    panel: list[Operation],
    stmt: _Statement,
) -> tuple[Operation | None, int | None]:
    """Where the panel can be copied once for all column strips, and how many
    times that saves: the op before which to copy (None: per column strip,
    as usual) and the product of the trip counts of the loops it hoists over
    (None when one is unknown).

    The copy moves before the kept loops (the band's output loops that are not
    unrolled) when no panel access and no bound of the strip and reduction
    loops (`moved`) uses their IVs, then on out of enclosing serial
    `affine.for` loops while the same holds for their IVs, every value these
    use is defined outside the loop, and nothing in the loop but loads uses
    a panel's memref (kronecker3's `XW2(m, n0, n1, d2) +=! X(m, n0, n1,
    r_n2) * W2(d2, r_n2)`: `W2` gathered once per thread, not per (m, n0))."""
    if not panel:
        return None, None
    uses: set[SSAValue] = set()
    for op in panel:
        uses |= set(stmt.loads[op].operands)
    for d in dims:
        if d.iv in moved:
            uses |= d.bound_values()
    if any(iv in uses for iv in kept):
        return None, None
    uses -= {d.iv for d in dims}
    trips: int | None = 1
    for iv in kept:
        ext = next(d for d in dims if d.iv == iv).static_extent()
        trips = None if ext is None or trips is None else trips * ext
    anchor = outer if kept else None
    memrefs = {op.operands[0] for op in panel}
    loop = outer
    while True:
        block = loop.parent_block()
        parent = block.parent_op() if block is not None else None
        if not isinstance(parent, xaffine.ForOp) or parent.inits:
            break
        if not all(defined_outside(v, parent) for v in uses):
            break
        if any(
            x in memrefs and not isinstance(op, LoadOp | xaffine.LoadOp)
            for op in parent.walk()
            if op is not parent
            for x in op.operands
        ):
            break
        (d,) = _loop_dims(parent) or [None]
        ext = d.static_extent() if d is not None else None
        trips = None if ext is None or trips is None else trips * ext
        anchor = loop = parent
    return anchor, trips


def _gatherable(a: _Access, iv: SSAValue) -> bool:
    """`iv` appears linearly in exactly one subscript of `a`, not the last."""
    ks = [k for k in range(len(a.coeffs)) if iv in a.uses(k)]
    return (
        len(ks) == 1
        and ks[0] != len(a.coeffs) - 1
        and iv in a.coeffs[ks[0]]
        and iv not in a.nonlinear[ks[0]]
    )


def _rows_pay(plan: _Plan) -> bool:
    """Whether copying strided rows pays: each copy serves at least 4 column
    strips (a static column extent of at least 4 * NV * VL, or an unknown one;
    measured: in a 64 x 64 tile the copy costs more than it saves)."""
    ext = plan.dim(plan.vec_iv).static_extent()
    return ext is None or ext >= 4 * plan.factors[1] * plan.lanes


def _stride(a: _Access, iv: SSAValue) -> int | None:
    """Elements between the addresses `a` reads at consecutive values of
    `iv` (any value, not only band IVs): None when that is not a static
    number (dynamic extents, `iv` inside a non-linear part)."""
    t = a.memref.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if any(d < 0 for d in shape[1:]):
        return None
    amap = a.map
    stride = 0
    for k, expr in enumerate(amap.results):
        lin, nonlin = _linear(expr, amap.num_dims)
        if any(a.operands[p] == iv for p in nonlin):
            return None
        trailing = 1
        for d in shape[k + 1 :]:
            trailing *= d
        stride += sum(c for p, c in lin.items() if a.operands[p] == iv) * trailing
    return stride


def _rows_alias(a: _Access, u: SSAValue, rows: int) -> bool:
    """Whether `rows` consecutive rows (values of `u`) of a broadcast load `a`
    crowd into at most two L1 sets: their distance in bytes, a static
    number, is a multiple of 2 KiB (addresses 4 KiB apart share a set of an
    8-way 32 KiB L1, so 8 rows of `A[m, k]` with 1024-float rows take a
    whole set and evict each other and the panel). Measured on matmul 1024²,
    2 threads, three runs of 30-40 paired rounds: 0.95x the time with the
    rows packed; einsum's 1 KiB-apart rows (4 sets) gained nothing."""
    t = a.memref.type
    assert isinstance(t, MemRefType)
    stride = _stride(a, u)
    if not stride:
        return False
    sets = 4096 // pymath.gcd(abs(stride) * _elem_bytes(t), 4096)
    return -(-rows // sets) >= 4


def _panel_ahead(buf: SSAValue, lead: int, offset: int) -> int:
    """Reduction steps ahead at which a kernel prefetches the vector at
    element `offset` of each step of its packed panel `buf` (`lead` leading
    dimensions select the strip); 0 for none.

    A panel (`[*lead, r_1, ..., r_n, count * VL]`, contiguous) that fits in
    half the L1 stays there for all the row strips that reuse it; a bigger
    one (matmul 1024²'s 256 x 48 floats, 48 KiB) streams from L2 at every
    strip, `count` vectors a step, and the L1's own prefetcher fetches them
    late. Prefetching `PANEL_AHEAD_BYTES` ahead (rounded up to whole steps)
    hides that. Paired, 2 threads, 25 rounds, against no prefetch: matmul
    1024² 0.87-0.95x the time, AᵀB 0.91, the MLP layer and einsum
    0.89-0.91; 512 and 1024 bytes ahead did as well as 768, 3072 lost half
    the gain. One prefetch per 64-byte line: only vectors that start one.
    Past the panel's end the addresses are the next strip's panel or past
    the buffer (a prefetch never faults)."""
    t = buf.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()[lead:]
    size = _elem_bytes(t)
    if offset * size % 64 or (
        DYNAMIC_INDEX not in shape and pymath.prod(shape) * size <= PANEL_MIN_BYTES
    ):
        return 0
    return -(-PANEL_AHEAD_BYTES // (shape[-1] * size))


def _next_pays(stride: int | None, t: MemRefType) -> bool:
    """Whether to prefetch the next iteration of a loop (step 1) for an
    access it moves by `stride` elements of `t`."""
    return (
        stride is not None and 0 < abs(stride) * _elem_bytes(t) <= PREFETCH_NEXT_BYTES
    )


@dataclass
class _Ahead:
    """A mode-2 prefetch for the next iteration of an enclosing loop: the
    access, the loop's IV and IV + 1, the access's column IV (replaced by
    the reduction loop's), and whether it is a store's."""

    access: _Access
    iv: SSAValue
    next: SSAValue
    column: SSAValue
    write: bool


def _elem_bytes(t: MemRefType) -> int:
    """Bytes per element of `t` (4 for index and other types without a width)."""
    elem = t.get_element_type()
    return elem.bitwidth // 8 if isinstance(elem, AnyFloat | IntegerType) else 4


def _pack_pays(plan: _Plan, panel: list[Operation]) -> bool:
    """Whether copying the panel pays: its rows are far apart in memory (at
    least 1 KiB: cache-set conflicts) and each copy serves at least 8 row
    strips (a static row extent of at least 8 * MR, or an unknown one)."""
    if not panel:
        return False
    u = plan.unrolled[0]
    ext = plan.dim(u).static_extent()
    if ext is not None and ext < 8 * plan.factors[0]:
        return False
    for op in panel:
        t = op.operands[0].type
        assert isinstance(t, MemRefType)
        shape = t.get_shape()
        if len(shape) < 2 or (shape[-1] >= 0 and shape[-1] * _elem_bytes(t) < 1024):
            return False
    return True


ROWS_ONE_VECTOR = 16
"""Mode 1 on 32-register hosts: MR when the columns are one vector (`_factors`)."""


def _default_rows(lanes32: int) -> int:
    """MR for mode 1: 8 x 3 accumulators of 32 zmm, 6 x 2 of 16 ymm, 4 x 2."""
    return 8 if lanes32 >= 16 else 6 if lanes32 >= 8 else 4


def _factors(plan: _Plan, lanes32: int, rows: int, vectors: int) -> list[int]:
    """Unroll factors of `plan.unrolled` (mode 1: [MR, NV] or [NV])."""
    big = lanes32 >= 16
    if plan.mode == 1:
        mr = rows or _default_rows(lanes32)
        if len(plan.unrolled) == 1:
            mr = 1
        elif not rows:
            ext = plan.dim(plan.unrolled[0]).static_extent()
            if ext is not None:
                mr = max(1, min(mr, ext))
        nv = vectors or (3 if big else 2)
        if not vectors:
            ext = plan.dim(plan.vec_iv).static_extent()
            if ext is not None:
                # a partial last vector is masked (26 columns: 16 + 10
                # masked); one vector more than NV covers the extent in one
                # strip when the accumulators still fit (gconv's 54 columns
                # by 4 rows: 4 x 4 instead of 4 x 3 and a strip of 4 x 1,
                # which had half the independent FMA chains for 6 columns)
                need = -(-ext // plan.lanes)
                if need == nv + 1 and mr * need <= (24 if big else 12):
                    nv = need
                nv = max(1, min(nv, need))
                if nv == 3 and need > nv and need % 3 == 1 and need % 2 == 0:
                    # strips of 2 vectors instead of 3 and a last strip of
                    # 1 (MR chains on one column load per step; when the
                    # column strips are the parallel loop, a dispatch of its
                    # own that one thread runs): 1024 columns are 32 strips
                    # of 2 vectors, 56 columns 2 (module docstring: Options)
                    nv = 2
                if nv == 1 and big and not rows and mr == _default_rows(lanes32):
                    # one vector of columns: MR = 8 gives 8 FMA chains, just
                    # enough for 2 pipes of 4-cycle FMAs, and a column load
                    # per 8 FMAs; 16 rows (when they divide the extent: no
                    # remainder strip) ran Kronecker3 0.91-0.96x the time
                    ext = plan.dim(plan.unrolled[0]).static_extent()
                    if ext is not None and ext % ROWS_ONE_VECTOR == 0:
                        mr = ROWS_ONE_VECTOR
        return [nv] if len(plan.unrolled) == 1 else [mr, nv]
    if len(plan.unrolled) == 2:
        defaults = [rows or (4 if big else 3), vectors or (4 if big else 3)]
    else:
        defaults = [rows or (8 if big else 6)][: len(plan.unrolled)]
    out = []
    for iv, f in zip(plan.unrolled, defaults):
        ext = plan.dim(iv).static_extent()
        out.append(max(1, min(f, ext)) if ext is not None else f)
    return out


def _compute_deps(plan: _Plan) -> None:
    """Band IVs each value of e depends on (loads: their subscripts)."""
    stmt = plan.stmt

    def deps(v: SSAValue) -> set[SSAValue]:
        if v in plan.deps:
            return plan.deps[v]
        owner = v.owner
        out: set[SSAValue] = set()
        if isinstance(owner, Operation) and owner in stmt.inner:
            if owner in stmt.loads:
                out = stmt.loads[owner].deps()
            elif not isinstance(owner, arith.ConstantOp):
                for operand in owner.operands:
                    out = out | deps(operand)
        plan.deps[v] = out
        return out

    deps(stmt.expr)
    if stmt.fma is not None:
        deps(stmt.fma[0])
        deps(stmt.fma[1])


# --------------------------------------------------------------------------
# Emission
# --------------------------------------------------------------------------


class _Emitter:
    """Appends ops to a block."""

    def __init__(self, block: Block):
        self.block = block

    def op(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def val(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def apply(self, amap: AffineMap, operands: Sequence[_Val]) -> _Val:
        """The single result of `amap` on `operands`, with constant operands
        folded in (an int when the result is constant)."""
        (expr,) = amap.results
        n = amap.num_dims
        values: list[SSAValue] = []
        dims: list[AffineExpr] = []
        syms: list[AffineExpr] = []
        for i, v in enumerate(operands):
            if isinstance(v, int):
                e = AffineExpr.constant(v)
            else:
                # every SSA operand becomes a symbol (its position among `values`)
                if v not in values:
                    values.append(v)
                e = AffineExpr.symbol(values.index(v))
            (dims if i < n else syms).append(e)
        expr = expr.replace_dims_and_symbols(dims, syms)
        if isinstance(expr, AffineConstantExpr):
            return expr.value
        if isinstance(expr, AffineSymExpr):
            return values[expr.position]
        # drop the operands the expression does not use
        lin, nonlin = _linear(expr, 0)
        used = sorted(set(lin) | nonlin)
        renumber = [
            AffineExpr.symbol(used.index(i)) if i in used else AffineExpr.constant(0)
            for i in range(len(values))
        ]
        expr = expr.replace_dims_and_symbols([], renumber)
        values = [values[i] for i in used]
        return self.val(
            xaffine.ApplyOp(values, AffineMapAttr(AffineMap(0, len(values), (expr,))))
        )

    def subscripts(self, amap: AffineMap, operands: Sequence[_Val]) -> list[SSAValue]:
        """Each result of `amap` on `operands`, as an index value."""
        return [
            self.index(
                self.apply(AffineMap(amap.num_dims, amap.num_symbols, (r,)), operands)
            )
            for r in amap.results
        ]

    def index(self, v: _Val) -> SSAValue:
        """`v` as an SSA value (an `arith.constant` for an int)."""
        if isinstance(v, SSAValue):
            return v
        return self.val(arith.ConstantOp(IntegerAttr(v, IndexType())))

    def sym(self, expr: Callable[..., AffineExpr], *values: _Val) -> _Val:
        """`expr(s0, s1, ...)` applied to `values` as symbols."""
        syms = [AffineExpr.symbol(i) for i in range(len(values))]
        return self.apply(AffineMap(0, len(values), (expr(*syms),)), values)

    def max(self, a: _Val, b: _Val) -> _Val:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self.val(arith.MaxSIOp(self.index(a), self.index(b)))

    def min(self, a: _Val, b: _Val) -> _Val:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.val(arith.MinSIOp(self.index(a), self.index(b)))

    def bound(self, b: _Bound, remap: dict[SSAValue, SSAValue], is_max: bool) -> _Val:
        amap, operands = b
        ops: list[_Val] = [remap.get(v, v) for v in operands]
        values = [
            self.apply(AffineMap(amap.num_dims, amap.num_symbols, (r,)), ops)
            for r in amap.results
        ]
        out = values[0]
        for v in values[1:]:
            out = self.max(out, v) if is_max else self.min(out, v)
        return out

    def constant(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, VectorType):
            n = t.get_shape()[0]
            attr = DenseIntOrFPElementsAttr.from_list(t, [value] * n)
            return self.val(arith.ConstantOp(attr, t))
        if isinstance(t, AnyFloat):
            return self.val(arith.ConstantOp(FloatAttr(float(value), t), t))
        assert isinstance(t, IntegerType | IndexType)
        return self.val(arith.ConstantOp(IntegerAttr(int(value), t), t))


def _loop(
    em: _Emitter,
    lb: _Val,
    ub: _Val,
    step: int,
    parallel: bool,
    name: str | None,
) -> tuple[Block, SSAValue]:
    """An empty 1-D loop `lb to ub step step`; returns its body and IV."""
    block = Block(arg_types=[IndexType()])
    iv = block.args[0]
    iv.name_hint = name
    block.add_op(xaffine.YieldOp.get())
    operands = [v for v in (lb, ub) if isinstance(v, SSAValue)]
    lb_map, ub_map = _bound_map(lb), _bound_map(ub)
    if parallel:
        em.op(
            parallel_op(
                operands, lb_map.data, [1], ub_map.data, [1], [step], Region(block)
            )
        )
    else:
        em.op(
            xaffine.ForOp.from_region(
                [lb] if isinstance(lb, SSAValue) else [],
                [ub] if isinstance(ub, SSAValue) else [],
                [],
                [],
                lb_map,
                ub_map,
                Region(block),
                step,
            )
        )
    return block, iv


def _bound_map(v: _Val) -> AffineMapAttr:
    """`()[s0] -> (s0)` for an SSA value, `() -> (c)` for a constant."""
    if isinstance(v, int):
        return AffineMapAttr(AffineMap(0, 0, (AffineExpr.constant(v),)))
    return AffineMapAttr(AffineMap(0, 1, (AffineExpr.symbol(0),)))


def _reduction_loop(
    em: _Emitter, lo: _Val, hi: _Val, step: int, init: list[SSAValue], body: Block
) -> list[SSAValue]:
    """`affine.for lo to hi step step iter_args(init)` around `body` (its
    first argument the IV, then one per `init`; it ends in its yield)."""
    loop = xaffine.ForOp.from_region(
        [lo] if isinstance(lo, SSAValue) else [],
        [hi] if isinstance(hi, SSAValue) else [],
        init,
        [a.type for a in init],
        _bound_map(lo),
        _bound_map(hi),
        Region(body),
        step,
    )
    em.op(loop)
    return list(loop.results)


def _detach_all(block: Block) -> list[Operation]:
    """The ops of `block`, detached from it."""
    ops = list(block.ops)
    for op in ops:
        op.detach()
    return ops


def _body_emitter(block: Block) -> _Emitter:
    """An emitter inserting before the block's terminator."""

    class _Before(_Emitter):
        def op(self, op: Operation) -> Operation:
            last = self.block.last_op
            assert last is not None
            self.block.insert_op_before(op, last)
            return op

        def val(self, op: Operation) -> SSAValue:
            self.op(op)
            return op.results[0]

    return _Before(block)


@dataclass
class _Variant:
    """One strip of a tiled dimension: `count` points `stride` apart."""

    count: int
    stride: int
    masked: bool = False

    @property
    def step(self) -> int:
        return self.count * self.stride


@dataclass
class _Strip:
    iv: SSAValue
    parallel: bool
    variants: list[_Variant]
    ranges: list[tuple[_Val, _Val]] = field(default_factory=list)
    ub: _Val = 0


def _empty(lo: _Val, hi: _Val) -> bool:
    """Whether the range [lo, hi) is known to be empty."""
    return lo == hi or (isinstance(lo, int) and isinstance(hi, int) and lo >= hi)


class _Rewriter:
    def __init__(self, plan: _Plan):
        self.plan = plan
        self.stmt = plan.stmt
        self.remap: dict[SSAValue, SSAValue] = {}
        self.elem = self.stmt.store.value.type
        self.vt = VectorType(self.elem, [plan.lanes])
        self.strips: list[_Strip] = []
        self.red_range: tuple[_Val, _Val, _Val, _Val] | None = None
        """Mode 2: r's lower bound, the ends of its `split`-vector and its
        one-vector parts, its upper bound."""
        self.split = 1
        """Mode 2: vector accumulators per point along r (independent chains:
        `maximumf` is ~6 dependent instructions on x86)."""
        self.red_bounds: dict[SSAValue, tuple[_Val, _Val]] = {}
        """Packing: (lower bound, extent) of each reduction loop."""
        self.row_buffers: dict[Operation, SSAValue] = {}
        self.row_base: _Val = 0
        self.panels: list[dict[Operation, SSAValue]] = []
        """Hoisted panels: per variant of the column strips, the buffer of
        each panel load (`_pack_all`)."""

    # -- driver --------------------------------------------------------------

    def run(self) -> None:
        plan = self.plan
        outer = plan.outer
        parent = outer.parent_block()
        assert parent is not None
        top = Block()
        em = _Emitter(top)
        hoisted = Block()
        if plan.anchor is not None:
            self.strips = self._strips(_Emitter(hoisted))
            self.panels = self._pack_all(_Emitter(hoisted))
        # kept output loops, in their original order
        for iv in plan.kept:
            d = plan.dim(iv)
            lb = em.bound(d.lb, self.remap, True)
            ub = em.bound(d.ub, self.remap, False)
            block, new_iv = _loop(em, lb, ub, 1, d.parallel, iv.name_hint)
            self.remap[iv] = new_iv
            em = _body_emitter(block)
        if plan.anchor is None:
            self.strips = self._strips(em)
        rows = self._pack_rows(em) if plan.row_packed else []
        self._emit_strips(em, self.strips, 0, {}, {})
        for buf in rows:
            em.op(memref.DeallocOp.get(buf))
        frees = [
            memref.DeallocOp.get(buf) for panel in self.panels for buf in panel.values()
        ]
        copies = _detach_all(hoisted)
        if plan.anchor is outer:
            parent.insert_ops_before([*copies, *_detach_all(top), *frees], outer)
        else:
            parent.insert_ops_before(_detach_all(top), outer)
            if plan.anchor is not None:
                anchor_block = plan.anchor.parent_block()
                assert anchor_block is not None
                anchor_block.insert_ops_before(copies, plan.anchor)
                anchor_block.insert_ops_after(frees, plan.anchor)
        outer.detach()
        outer.erase()
        folded = [] if plan.start is None else [plan.start.nest]
        if plan.finish is not None:
            folded += [epi.nest for epi in plan.finish.epilogues]
        for nest in folded:
            nest.detach()
            nest.erase()

    def _strips(self, em: _Emitter) -> list[_Strip]:
        plan = self.plan
        lanes = plan.lanes
        strips: list[_Strip] = []
        for iv, f in zip(plan.unrolled, plan.factors):
            d = plan.dim(iv)
            if plan.mode == 1 and iv == plan.vec_iv:
                variants = [_Variant(f, lanes)]
                ext = d.static_extent()
                if ext is not None:
                    # one strip of exactly the vectors left, the last masked
                    # when partial (54 = 3 x 16 + one strip of 1 masked
                    # vector; 26 = 16 + 10: a strip of 1 masked vector)
                    left = ext % (f * lanes)
                    if left:
                        count = -(-left // lanes)
                        variants.append(_Variant(count, lanes, left % lanes != 0))
                else:
                    if f > 1:
                        variants.append(_Variant(1, lanes))
                    variants.append(_Variant(1, lanes, masked=True))
            else:
                variants = [_Variant(f, 1)]
                ext = d.static_extent()
                if ext is not None:
                    # one strip of exactly the rows left (26 rows by 8: a
                    # strip of 2 rows, whose 2 x NV chains keep the FMA
                    # pipes busier than 2 strips of 1 row, one after the other)
                    if ext % f:
                        variants.append(_Variant(ext % f, 1))
                elif f > 1:
                    variants.append(_Variant(1, 1))
            strips.append(_Strip(iv, d.parallel, variants))
        if plan.packed:
            # column strips outside: one panel copy serves every row strip
            strips.reverse()
            cols, rows = strips
            if rows.parallel and not cols.parallel and self._columns_share(cols, rows):
                # the threads take column strips, each copying its own panels,
                # instead of waiting at every strip for one thread's copy
                cols.parallel, rows.parallel = True, False
        if plan.packed or plan.row_packed:
            for iv in plan.red:
                d = plan.dim(iv)
                lb = em.bound(d.lb, self.remap, True)
                ub = em.max(em.bound(d.ub, self.remap, False), lb)
                self.red_bounds[iv] = (lb, em.sym(lambda s0, s1: s1 - s0, lb, ub))
        bounded: list[tuple[SSAValue, _Strip | None]] = [(s.iv, s) for s in strips]
        if plan.mode == 2:
            bounded.append((plan.vec_iv, None))
        for iv, s in bounded:
            d = plan.dim(iv)
            lb = em.bound(d.lb, self.remap, True)
            ub = em.max(em.bound(d.ub, self.remap, False), lb)
            if s is None:
                ext = d.static_extent()
                points = pymath.prod(plan.factors)
                self.split = max(1, SPLIT_CHAINS // points)
                if ext is not None:
                    self.split = max(1, min(self.split, ext // lanes))
                ends: list[_Val] = []
                for step in (self.split * lanes, lanes):
                    if ext is None:
                        ends.append(self._strip_end(em, lb, ub, step))
                    else:
                        ends.append(em.sym(lambda s0, n=ext // step * step: s0 + n, lb))
                end = ends[1]
                self.red_range = (
                    lb,
                    ends[0],
                    end,
                    ub if ext is None or ext % lanes else end,
                )
                continue
            s.ub = ub
            start = lb
            left = d.static_extent()  # iterations left, when known
            for var in s.variants:
                if var.masked or (var is s.variants[-1] and var.step == 1):
                    s.ranges.append((start, start if left == 0 else ub))
                    break
                if left is None:
                    end = self._strip_end(em, start, ub, var.step)
                else:
                    size = left // var.step * var.step
                    end = start if size == 0 else em.sym(lambda s0: s0 + size, start)
                    left -= size
                s.ranges.append((start, end))
                start = end
        return strips

    def _columns_share(self, cols: _Strip, rows: _Strip) -> bool:
        """Whether packing should move the parallel loop from the row strips
        to the (outer) column strips: there are at least as many full column
        strips as full row strips (both extents known). `v` is an output loop
        of the band's single statement, so its iterations write disjoint
        elements of `T` and read nothing the band writes: any order is legal.
        Measured on `C(m, n) +=! A(m, r_k) * B(n, r_k)`, 128 x 1024 x 1024,
        2 threads: with the rows parallel the main thread gathered every
        panel while the other waited, and 84 parallel loops were dispatched
        per call."""
        ext_v = self.plan.dim(cols.iv).static_extent()
        ext_u = self.plan.dim(rows.iv).static_extent()
        if ext_v is None or ext_u is None:
            return False
        return ext_v // cols.variants[0].step >= ext_u // rows.variants[0].step

    @staticmethod
    def _strip_end(em: _Emitter, lb: _Val, ub: _Val, step: int) -> _Val:
        """`lb` + the largest multiple of `step` not above `ub - lb`."""
        return em.sym(lambda s0, s1: s0 + ((s1 - s0) // step) * step, lb, ub)

    def _emit_strips(
        self,
        em: _Emitter,
        strips: list[_Strip],
        k: int,
        env: dict[SSAValue, tuple[SSAValue, _Variant]],
        packed: dict[Operation, tuple[SSAValue, list[SSAValue]]],
    ) -> None:
        if k == len(strips):
            _Kernel(self, em, env, packed).emit()
            return
        s = strips[k]
        for n, (var, (lo, hi)) in enumerate(zip(s.variants, s.ranges)):
            if _empty(lo, hi):
                continue
            block, iv = _loop(em, lo, hi, var.step, s.parallel, s.iv.name_hint)
            inner = _body_emitter(block)
            inner_env = {**env, s.iv: (iv, var)}
            buffers = dict(packed)
            owned: list[SSAValue] = []
            if self.plan.packed and s.iv == self.plan.vec_iv:
                if self.panels:
                    at = inner.index(
                        inner.sym(lambda s0, s1, st=var.step: (s0 - s1) // st, iv, lo)
                    )
                    buffers.update({op: (b, [at]) for op, b in self.panels[n].items()})
                else:
                    own = self._panel_buffers(inner, var, [])
                    self._pack(inner, iv, var, s.ub, own, [])
                    buffers.update({op: (b, []) for op, b in own.items()})
                    owned = list(own.values())
            self._emit_strips(inner, strips, k + 1, inner_env, buffers)
            for buf in owned:
                inner.op(memref.DeallocOp.get(buf))

    def _pack_all(self, em: _Emitter) -> list[dict[Operation, SSAValue]]:
        """Hoisted panels: per variant of the column strips, copy the panel
        of each of its strips `i` into `buf[i, r_1 - lb_1, ..., 0 .. count *
        VL)`, one buffer per panel load."""
        cols = next(st for st in self.strips if st.iv == self.plan.vec_iv)
        panels: list[dict[Operation, SSAValue]] = []
        for var, (lo, hi) in zip(cols.variants, cols.ranges):
            if _empty(lo, hi):
                panels.append({})
                continue
            step = var.step
            n = em.sym(lambda s0, s1, st=step: (s1 - s0 + st - 1) // st, lo, hi)
            buffers = self._panel_buffers(em, var, [n])
            block, i = _loop(em, 0, n, 1, False, "strip")
            loop_em = _body_emitter(block)
            v0 = loop_em.index(loop_em.sym(lambda s0, s1, st=step: s0 + s1 * st, lo, i))
            self._pack(loop_em, v0, var, cols.ub, buffers, [i])
            panels.append(buffers)
        return panels

    def _panel_buffers(
        self, em: _Emitter, var: _Variant, lead: list[_Val]
    ) -> dict[Operation, SSAValue]:
        """`memref.alloc`s for the panel loads of strips of `var`: `lead`
        dimensions, then the reduction extents, then `count * VL`."""
        extents = [*lead, *(self.red_bounds[iv][1] for iv in self.plan.red)]
        shape = [e if isinstance(e, int) else DYNAMIC_INDEX for e in extents]
        dyn = [e for e in extents if isinstance(e, SSAValue)]
        return {
            op: em.val(
                memref.AllocOp(
                    dyn,
                    [],
                    MemRefType(
                        op.results[0].type, [*shape, var.count * self.plan.lanes]
                    ),
                )
            )
            for op in self.plan.packed
        }

    def _pack(
        self,
        em: _Emitter,
        v0: SSAValue,
        var: _Variant,
        ub: _Val,
        buffers: dict[Operation, SSAValue],
        prefix: list[SSAValue],
    ) -> None:
        """Copy the panel loads of one column strip into contiguous buffers
        `buf[*prefix, r_1 - lb_1, ..., r_n - lb_n, 0 .. count * VL)`."""
        plan = self.plan
        lanes = plan.lanes
        width = var.count * lanes
        mask = None
        zeros: dict[Attribute, SSAValue] = {}
        copies = [op for op in plan.packed if op not in plan.gathers]
        if var.masked and copies:
            last = (var.count - 1) * lanes
            n = em.index(em.sym(lambda s0, s1, o=last: s1 - s0 - o, v0, ub))
            mask = em.val(vector.CreateMaskOp([n], VectorType(IntegerType(1), [lanes])))
            for op in plan.packed:
                if op in plan.gathers:
                    continue
                t = VectorType(op.results[0].type, [lanes])
                if t not in zeros:
                    zeros[t] = em.constant(0, t)
        cols = [
            em.index(em.sym(lambda s0, o=j * lanes: s0 + o, v0))
            for j in range(var.count)
        ]
        for op in plan.gathers:
            count = em.min(width, em.sym(lambda s0, s1: s1 - s0, v0, ub))
            # register transposes in the main strip only: each is ~130 ops
            # (VL = 16), and the strips left over cover few columns
            main = next(st for st in self.strips if st.iv == plan.vec_iv)
            full = 0
            if var is main.variants[0]:
                full = var.count - 1 if var.masked else var.count
            self._gather(em, op, buffers[op], v0, count, full, prefix)
        if not copies:
            return
        # the copy loops: the reduction loops (original bounds), then the vectors
        loop_em, remap, rel = self._reduction_copy_loops(em)
        for op in copies:
            buf = buffers[op]
            access = self.stmt.loads[op]
            t = VectorType(op.results[0].type, [lanes])
            for j in range(var.count):
                col = cols[j]
                operands: list[SSAValue] = [
                    col if x == plan.vec_iv else remap.get(x, self.remap.get(x, x))
                    for x in access.operands
                ]
                indices = loop_em.subscripts(access.map, operands)
                if mask is not None and j == var.count - 1:
                    x = loop_em.val(
                        vector.MaskedLoadOp(access.memref, indices, mask, zeros[t], t)
                    )
                else:
                    x = loop_em.val(vector.LoadOp(access.memref, indices, t))
                at = [*prefix, *rel, loop_em.index(j * lanes)]
                loop_em.op(vector.StoreOp(x, buf, at))

    def _reduction_copy_loops(
        self, em: _Emitter
    ) -> tuple[_Emitter, dict[SSAValue, SSAValue], list[SSAValue]]:
        """Serial loops over the reduction IVs (their original bounds) at `em`.

        Returns the innermost body's emitter, old IV -> new IV, and each new
        IV relative to its lower bound (the packed buffers' subscripts)."""
        ivs: list[SSAValue] = []
        for iv in self.plan.red:
            lb, ext = self.red_bounds[iv]
            ub_r = em.sym(lambda s0, s1: s0 + s1, lb, ext)
            block, new_iv = _loop(em, lb, ub_r, 1, False, iv.name_hint)
            em = _body_emitter(block)
            ivs.append(new_iv)
        rel = [
            em.index(em.sym(lambda s0, s1: s0 - s1, i, self.red_bounds[iv][0]))
            for iv, i in zip(self.plan.red, ivs)
        ]
        return em, dict(zip(self.plan.red, ivs)), rel

    def _pack_rows(self, em: _Emitter) -> list[SSAValue]:
        """Copy the row-packed loads of every full row strip, in parallel over
        the strips: `buf[s, r - lb, i] = op(u = lb_u + s * MR + i, r)`."""
        plan = self.plan
        u = plan.unrolled[0]
        mr = plan.factors[0]
        strip = next(st for st in self.strips if st.iv == u)
        lb_u, u_end = strip.ranges[0]
        self.row_base = lb_u
        count = em.sym(lambda s0, s1: (s1 - s0) // mr, lb_u, u_end)
        extents = [self.red_bounds[iv][1] for iv in plan.red]
        dims = [count, *extents]
        shape = [e if isinstance(e, int) else DYNAMIC_INDEX for e in dims] + [mr]
        dyn = [e for e in dims if isinstance(e, SSAValue)]
        for op in plan.row_packed:
            t = MemRefType(op.results[0].type, shape)
            self.row_buffers[op] = em.val(memref.AllocOp(dyn, [], t))
        block, s_iv = _loop(em, 0, count, 1, plan.dim(u).parallel, "strip")
        loop_em = _body_emitter(block)
        u0 = loop_em.index(loop_em.sym(lambda s0, s1: s0 + s1 * mr, lb_u, s_iv))
        # a strip's MR rows are consecutive elements of loads that `u` moves
        # along their last subscript (AᵀB's `A[k, m]`): one vector copy each
        # (LLVM would turn MR scalar copies into gathers along `r`)
        contiguous = {
            op: self.stmt.loads[op].unit_last(u) is True for op in self.row_buffers
        }
        rows = [u0]
        if not all(contiguous.values()):
            rows += [
                loop_em.index(loop_em.sym(lambda s0, o=i: s0 + o, u0))
                for i in range(1, mr)
            ]
        loop_em, remap, rel = self._reduction_copy_loops(loop_em)
        for op, buf in self.row_buffers.items():
            access = self.stmt.loads[op]
            elem = op.results[0].type
            for i in range(1 if contiguous[op] else mr):
                operands = [
                    rows[i] if x == u else remap.get(x, self.remap.get(x, x))
                    for x in access.operands
                ]
                if contiguous[op]:
                    indices = loop_em.subscripts(access.map, operands)
                    t = VectorType(elem, [mr])
                    x = loop_em.val(vector.LoadOp(access.memref, indices, t))
                    loop_em.op(vector.StoreOp(x, buf, [s_iv, *rel, loop_em.index(0)]))
                    continue
                amap = AffineMapAttr(access.map)
                x = loop_em.val(LoadOp(access.memref, operands, amap, elem))
                loop_em.op(StoreOp(x, buf, [s_iv, *rel, loop_em.index(i)]))
        return list(self.row_buffers.values())

    def _gather(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        count: _Val,
        full: int,
        prefix: list[SSAValue],
    ) -> None:
        """Copy `op`'s elements for columns `v0 .. v0 + count` into
        `buf[*prefix, r - lb, l] = op(v = v0 + l, r)` (at most `full`
        blocks of VL columns are complete).

        With one reduction loop `r` that the source reads contiguously (its
        last subscript, coefficient 1: MLP's `W1[n, r_m]`), full VL x VL
        blocks are transposed in registers (`_transpose`); the rest, and
        other panels, are copied element by element (`_gather_elements`)."""
        plan = self.plan
        access = self.stmt.loads[op]
        lanes = plan.lanes
        r = plan.red[0]
        if (
            not full
            or len(plan.red) != 1
            or not access.unit_last(r)
            or lanes & (lanes - 1)
        ):
            self._gather_elements(em, op, buf, v0, (0, count), 0, prefix)
            return
        _, ext = self.red_bounds[r]
        blocks = em.min(full, em.sym(lambda s0: s0 // lanes, count))
        ext_v = em.sym(lambda s0: (s0 // lanes) * lanes, ext)
        lane_v = em.sym(lambda s0: (s0 // lanes) * lanes, count)
        self._transpose(em, op, buf, v0, blocks, ext_v, prefix)
        if not (isinstance(ext, int) and ext_v == ext):
            self._gather_elements(em, op, buf, v0, (0, lane_v), ext_v, prefix)
        self._gather_elements(em, op, buf, v0, (lane_v, count), 0, prefix)

    def _transpose(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        blocks: _Val,
        ext: _Val,
        prefix: list[SSAValue],
    ) -> None:
        """Per block of VL columns and VL steps of `r` (the first `ext`): VL
        vector loads along `r` (one per column), a transpose by log2(VL)
        stages of two-input `vector.shuffle`s (stage `s` swaps, in every 2s x
        2s block, the off-diagonal s x s blocks of the vector pairs `i, i +
        s`), VL vector stores along the lanes. x86 does each shuffle in one
        instruction (`vpermt2ps` at worst) where the element-wise copy takes a
        load and a store per element."""
        plan = self.plan
        lanes = plan.lanes
        access = self.stmt.loads[op]
        r = plan.red[0]
        lb, _ = self.red_bounds[r]
        t = VectorType(op.results[0].type, [lanes])
        block, b = _loop(em, 0, blocks, 1, False, "lanes")
        bem = _body_emitter(block)
        first = bem.index(bem.sym(lambda s0: s0 * lanes, b))
        end = bem.sym(lambda s0, s1: s0 + s1, lb, ext)
        block, k = _loop(bem, lb, end, lanes, False, r.name_hint)
        kem = _body_emitter(block)
        amap = access.map
        rows: list[SSAValue] = []
        for i in range(lanes):
            col = kem.index(kem.sym(lambda s0, s1, o=i: s0 + s1 + o, v0, first))
            operands = [
                col if x == plan.vec_iv else k if x == r else self.remap.get(x, x)
                for x in access.operands
            ]
            indices = [
                kem.index(
                    kem.apply(
                        AffineMap(amap.num_dims, amap.num_symbols, (e,)), operands
                    )
                )
                for e in amap.results
            ]
            rows.append(kem.val(vector.LoadOp(access.memref, indices, t)))
        s = lanes // 2
        while s:
            lo = [x if not x & s else lanes + x - s for x in range(lanes)]
            hi = [x + s if not x & s else lanes + x for x in range(lanes)]
            out = list(rows)
            for i in range(lanes):
                if i & s:
                    continue
                for at, mask in ((i, lo), (i + s, hi)):
                    out[at] = kem.val(
                        vector.ShuffleOp(
                            rows[i],
                            rows[i + s],
                            DenseArrayBase.from_list(i64, mask),
                            result_type=t,
                        )
                    )
            rows = out
            s //= 2
        rel = kem.sym(lambda s0, s1: s0 - s1, k, lb)
        for j, row in enumerate(rows):
            at = kem.index(kem.sym(lambda s0, o=j: s0 + o, rel))
            kem.op(vector.StoreOp(row, buf, [*prefix, at, first]))

    def _gather_elements(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        lanes: tuple[_Val, _Val],
        skip: _Val,
        prefix: list[SSAValue],
    ) -> None:
        """Copy the lanes `lanes` one by one, the lanes outermost (each lane
        reads a contiguous run of the source when `r` is its last subscript);
        with one reduction loop, only its steps from `lb + skip` on."""
        if _empty(*lanes):
            return
        plan = self.plan
        access = self.stmt.loads[op]
        block, lane = _loop(em, lanes[0], lanes[1], 1, False, "lane")
        loop_em = _body_emitter(block)
        col = loop_em.index(loop_em.sym(lambda s0, s1: s0 + s1, v0, lane))
        ivs: list[SSAValue] = []
        for iv in plan.red:
            lb, ext = self.red_bounds[iv]
            ub_r = loop_em.sym(lambda s0, s1: s0 + s1, lb, ext)
            lo = loop_em.sym(lambda s0, s1: s0 + s1, lb, skip) if skip != 0 else lb
            if _empty(lo, ub_r):
                return
            block, new_iv = _loop(loop_em, lo, ub_r, 1, False, iv.name_hint)
            loop_em = _body_emitter(block)
            ivs.append(new_iv)
        remap = dict(zip(plan.red, ivs))
        operands = [
            col if x == plan.vec_iv else remap.get(x, self.remap.get(x, x))
            for x in access.operands
        ]
        x = loop_em.val(
            LoadOp(
                access.memref, operands, AffineMapAttr(access.map), op.results[0].type
            )
        )
        rel = [
            loop_em.index(
                loop_em.sym(lambda s0, s1: s0 - s1, i, self.red_bounds[iv][0])
            )
            for iv, i in zip(plan.red, ivs)
        ]
        loop_em.op(StoreOp(x, buf, [*prefix, *rel, lane]))


class _Kernel:
    """One register tile: accumulators, the reduction loops, the stores."""

    def __init__(
        self,
        rw: _Rewriter,
        em: _Emitter,
        env: dict[SSAValue, tuple[SSAValue, _Variant]],
        packed: dict[Operation, tuple[SSAValue, list[SSAValue]]],
    ):
        self.rw = rw
        self.packed = packed
        self.plan = rw.plan
        self.stmt = rw.stmt
        self.em = em
        self.env = env
        self.dims = list(self.plan.unrolled)
        self.counts = [env[iv][1].count for iv in self.dims]
        self.points = list(itertools.product(*(range(c) for c in self.counts)))
        self.offsets: dict[tuple[SSAValue, int], SSAValue] = {}
        self.mask: SSAValue | None = None
        self.zeros: dict[Attribute, SSAValue] = {}
        mode1 = self.plan.mode == 1
        vvar = env[self.plan.vec_iv][1] if mode1 else None
        self.mask_point = -1
        """The vector (its index along the vector IV) that `mask` covers."""
        self.pairs: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        """Pair points -> their two rows' points (`_pair_tails`)."""
        self.half_mask: SSAValue | None = None
        self.pair_iv: SSAValue | None = None
        self.pair_tail = 0
        """Lanes of each row's masked vector in a pair point."""
        if vvar is not None and vvar.masked:
            self.mask_point = vvar.count - 1
            self._pair_tails()
        if any(self._masked(p) for p in self.points if p not in self.pairs):
            assert vvar is not None
            base = env[self.plan.vec_iv][0]
            last = (vvar.count - 1) * self.plan.lanes
            n = em.index(
                em.sym(lambda s0, s1, o=last: s1 - s0 - o, base, self._strip_ub())
            )
            self.mask = em.val(
                vector.CreateMaskOp([n], VectorType(IntegerType(1), [self.plan.lanes]))
            )
        # row-packed loads: only the full row strips have their copy
        self.full_rows = False
        self.strip_index: SSAValue | None = None
        if self.rw.row_buffers:
            u = self.plan.unrolled[0]
            base, var = env[u]
            if var.count == self.plan.factors[0]:
                mr = var.count
                self.full_rows = True
                self.strip_index = em.index(
                    em.sym(lambda s0, s1: (s0 - s1) // mr, base, self.rw.row_base)
                )
        # offsets of the unrolled IVs, hoisted out of the reduction loops
        for iv, c in zip(self.dims, self.counts):
            base, var = env[iv]
            for i in range(c):
                off = i * var.stride
                self.offsets[(iv, i)] = em.index(em.sym(lambda s0, o=off: s0 + o, base))
        if self.pairs:
            half = VectorType(IntegerType(1), [self.plan.lanes // 2])
            tail = em.constant(self.pair_tail, IndexType())
            self.half_mask = em.val(vector.CreateMaskOp([tail], half))
        self.flat_points = [
            q for p in self.points for q in (self.pairs[p] if p in self.pairs else (p,))
        ]
        """The points with each pair point as its two rows' points."""

    def _pair_tails(self) -> None:
        """Mode 1: when the masked vector of each row uses at most half of
        its lanes, the masked vectors of rows `2i` and `2i + 1` of the row
        loop `u` become one vector (a *pair point*), lanes `[0, VL/2)` for
        row `2i` and `[VL/2, VL)` for row `2i + 1`. Every op of the body is
        lane-wise, so the pair runs the same FMAs on half as many vectors:
        54 columns by 16 lanes are 3 full vectors and a masked one of 6
        lanes per row, and 4 rows take 14 FMAs per step instead of 16.

        A pair point has `u` coordinate `-1 - i`, `i` its first row. Its values (`_Body`): a
        vector load is two half-width loads masked to the tail's lanes (one,
        repeated, when `u` does not move it), a value that depends on `u`
        but not on the vector IV the blend of its two rows' broadcasts, and
        a value that depends on neither is the scalar. Its accumulator is
        split into the two rows' halves before the folded updates and the
        (masked) stores.

        Only with a static extent of the vector IV (so that the tail's lane
        count is known), one row loop, and no packed panels or rows."""
        plan = self.plan
        if (
            plan.mode != 1
            or not plan.pair_tails
            or self.packed
            or self.rw.row_buffers
            or len(self.dims) != 2
            or plan.lanes % 2
        ):
            return
        ext = plan.dim(plan.vec_iv).static_extent()
        tail = None if ext is None else ext % plan.lanes
        if tail is None or not 0 < tail <= plan.lanes // 2:
            return
        (u,) = [d for d in self.dims if d != plan.vec_iv]
        ui, vi = self.dims.index(u), self.dims.index(plan.vec_iv)
        rows = self.counts[ui]
        if rows < 2:
            return
        self.pair_iv = u
        self.pair_tail = tail
        points: list[tuple[int, ...]] = []
        for p in self.points:
            i = p[ui]
            if p[vi] != self.mask_point or i + 1 - i % 2 >= rows:
                points.append(p)  # a full vector, or the last of an odd count
            elif i % 2 == 0:
                pair = tuple(-1 - i if d == ui else x for d, x in enumerate(p))
                below = tuple(i + 1 if d == ui else x for d, x in enumerate(p))
                self.pairs[pair] = (p, below)
                points.append(pair)
        self.points = points

    def half_type(self, elem: Attribute) -> VectorType[Attribute]:
        return VectorType(elem, [self.plan.lanes // 2])

    def join(self, em: _Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
        """The vector of lanes `[0, VL/2)` of `a` and then `[0, VL/2)` of
        `b`, from two half vectors or (a blend) two full ones."""
        at = a.type
        assert isinstance(at, VectorType)
        n = at.get_shape()[0]
        h = self.plan.lanes // 2
        if n == h:
            mask = list(range(2 * h))
        else:
            mask = list(range(h)) + [n + h + i for i in range(h)]
        return em.val(
            vector.ShuffleOp(
                a,
                b,
                DenseArrayBase.from_list(i64, mask),
                result_type=VectorType(at.get_element_type(), [2 * h]),
            )
        )

    def halves(self, em: _Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The two rows' halves of a pair point's vector."""
        xt = x.type
        assert isinstance(xt, VectorType)
        h = self.plan.lanes // 2
        t = self.half_type(xt.get_element_type())
        lo, hi = (
            em.val(
                vector.ShuffleOp(
                    x,
                    x,
                    DenseArrayBase.from_list(i64, list(range(o, o + h))),
                    result_type=t,
                )
            )
            for o in (0, h)
        )
        return lo, hi

    def _strip_ub(self) -> _Val:
        return next(s.ub for s in self.rw.strips if s.iv == self.plan.vec_iv)

    # -- values --------------------------------------------------------------

    def iv_value(
        self, v: SSAValue, p: tuple[int, ...], red_iv: SSAValue | None
    ) -> SSAValue:
        if v in self.env:
            return self.offsets[(v, p[self.dims.index(v)])]
        if red_iv is not None and v == self.plan.vec_iv:
            return red_iv
        return self.rw.remap.get(v, v)

    def emit(self) -> None:
        plan, stmt, em = self.plan, self.stmt, self.em
        target = stmt.target
        mode1 = plan.mode == 1
        accs = self.accumulators(em)
        if not mode1:
            kind, ident = self._reduction_kind()
            init = em.constant(ident, self.rw.vt)
            accs = accs + [init] * len(self.points)
        red = [iv for iv in plan.red if not (plan.mode == 2 and iv == plan.vec_iv)]
        if mode1:
            self.prefetch(em)
            self.prefetch_target(em)
        results = self.reduction_nest(em, red, accs)
        n = len(self.points)
        if not mode1:
            scalars, vecs = results[:n], results[n:]
            kind, _ = self._reduction_kind()
            results = [
                em.val(
                    vector.ReductionOp.build(
                        operands=[v, [s]],
                        result_types=[self.rw.elem],
                        properties={
                            "kind": vector.CombiningKindAttr(
                                vector.CombiningKindFlag(kind)
                            ),
                            "fastmath": self._flags(),
                        },
                    )
                )
                for s, v in zip(scalars, vecs)
            ]
        if self.pairs:
            split: list[SSAValue] = []
            for p, value in zip(self.points, results):
                split += self.halves(em, value) if p in self.pairs else [value]
            results = split
        results = self.finish(em, results)
        for p, value in zip(self.flat_points, results):
            operands = [self.iv_value(v, p, None) for v in target.operands]
            if mode1:
                self.vector_store(em, value, target, operands, p)
            else:
                em.op(
                    StoreOp(value, target.memref, operands, AffineMapAttr(target.map))
                )

    def load_target(self, em: _Emitter) -> list[SSAValue]:
        """T at every point: vectors in mode 1, scalars in mode 2."""
        target = self.stmt.target
        out: list[SSAValue] = []
        for p in self.points:
            if p in self.pairs:
                a, b = (
                    self.vector_load(
                        em,
                        target,
                        [self.iv_value(v, q, None) for v in target.operands],
                        self.half_type(self.rw.elem),
                        q,
                    )
                    for q in self.pairs[p]
                )
                out.append(self.join(em, a, b))
                continue
            operands = [self.iv_value(v, p, None) for v in target.operands]
            if self.plan.mode == 1:
                out.append(self.vector_load(em, target, operands, self.rw.vt, p))
            else:
                out.append(
                    em.val(LoadOp(target.memref, operands, AffineMapAttr(target.map)))
                )
        return out

    def accumulators(self, em: _Emitter) -> list[SSAValue]:
        """The accumulators' first values: T, or the folded initial value
        (`_initial`) in the first tile."""
        start = self.plan.start
        if start is None:
            return self.load_target(em)
        owner = start.value.owner
        value = (
            em.val(owner.clone())
            if isinstance(owner, arith.ConstantOp) and start.nest.is_ancestor(owner)
            else start.value
        )
        if self.plan.mode == 1:
            value = em.val(vector.BroadcastOp(value, self.rw.vt))
        initial = [value] * len(self.points)
        if not start.first:
            return initial
        cond = self._at(em, start.first)
        then_block = Block([scf.YieldOp(*initial)])
        else_block = Block()
        loads = self.load_target(_Emitter(else_block))
        else_block.add_op(scf.YieldOp(*loads))
        branch = scf.IfOp(cond, [a.type for a in loads], [then_block], [else_block])
        em.op(branch)
        return list(branch.results)

    def _at(self, em: _Emitter, tiles: list[tuple[SSAValue, int]]) -> SSAValue:
        """Whether every tile IV is at its given iteration."""
        cond: SSAValue | None = None
        for iv, at in tiles:
            eq = em.val(arith.CmpiOp(iv, em.constant(at, IndexType()), "eq"))
            cond = eq if cond is None else em.val(arith.AndIOp(cond, eq))
        assert cond is not None
        return cond

    def finish(self, em: _Emitter, values: list[SSAValue]) -> list[SSAValue]:
        """The values to store: with the folded updates (`_final`) applied
        in the last tile."""
        fin = self.plan.finish
        if fin is None:
            return values
        if not fin.last:
            return self.updated(em, values)
        then_block = Block()
        then_block.add_op(scf.YieldOp(*self.updated(_Emitter(then_block), values)))
        else_block = Block([scf.YieldOp(*values)])
        branch = scf.IfOp(
            self._at(em, fin.last),
            [v.type for v in values],
            [then_block],
            [else_block],
        )
        em.op(branch)
        return list(branch.results)

    def updated(self, em: _Emitter, values: list[SSAValue]) -> list[SSAValue]:
        assert self.plan.finish is not None
        out: list[SSAValue] = []
        for p, value in zip(self.flat_points, values):
            for epi in self.plan.finish.epilogues:
                value = self._epilogue(em, epi, p, value)
            out.append(value)
        return out

    def _epilogue(
        self, em: _Emitter, epi: _Epilogue, p: tuple[int, ...], acc: SSAValue
    ) -> SSAValue:
        """One pointwise update at point `p` of the value `acc` of T (a
        vector of VL lanes, or VL/2 for a row of a pair point, in mode 1)."""
        plan = self.plan
        at = acc.type
        lanes = at.get_shape()[0] if isinstance(at, VectorType) else plan.lanes
        band = {d.iv for d in plan.dims}
        store = epi.ops[-1]
        assert isinstance(store, xaffine.StoreOp)
        env: dict[SSAValue, SSAValue] = {}

        def get(v: SSAValue) -> SSAValue:
            if v not in env and isinstance(v.owner, arith.ConstantOp):
                env[v] = em.val(v.owner.clone())
            return env.get(v, v)

        def widen(x: SSAValue) -> SSAValue:
            if plan.mode != 1 or isinstance(x.type, VectorType):
                return x
            return em.val(vector.BroadcastOp(x, VectorType(x.type, [lanes])))

        for o in epi.ops[:-1]:
            r = o.results[0]
            if isinstance(o, xaffine.LoadOp):
                if o.memref == store.memref:
                    env[r] = acc
                    continue
                mapped = [epi.ivs.get(v, v) for v in o.indices]
                access = _Access.of(o.memref, o.map.data, mapped, band)
                operands = [self.iv_value(v, p, None) for v in mapped]
                if plan.mode == 1 and access.unit_last(plan.vec_iv):
                    t = VectorType(r.type, [lanes])
                    env[r] = self.vector_load(em, access, operands, t, p)
                else:
                    env[r] = em.val(
                        LoadOp(o.memref, operands, AffineMapAttr(o.map.data), r.type)
                    )
                continue
            operands = [get(v) for v in o.operands]
            if isinstance(o, arith.ConstantOp):
                env[r] = get(r)
                continue
            vec = any(isinstance(x.type, VectorType) for x in operands)
            if vec:
                operands = [widen(x) for x in operands]
            env[r] = em.val(
                type(o).create(
                    operands=operands,
                    result_types=[VectorType(r.type, [lanes]) if vec else r.type],
                    properties=dict(o.properties),
                    attributes=dict(o.attributes),
                )
            )
        return widen(get(store.value))

    def prefetch(self, em: _Emitter) -> None:
        """Mode 1, a full row strip, one reduction loop `r` of static extent,
        all columns in one strip: prefetch the lines that the next row strip
        (rows `u0 + MR + i`) will broadcast from, one per cache line of each
        row, before this strip's reduction loop. (With several column strips
        the rows are read again by each, from cache.)

        Only loads read in place (not packed) whose last subscript is `r`
        (coefficient 1), whose other subscripts use `u` and some other value
        (the same rows at every outer iteration stay in cache: `W(d, r)`),
        with rows of at most `PREFETCH_ROW_BYTES`: short rows, each strip
        reading new lines that the hardware prefetcher, which follows long
        streams, fetches late (`XW2(m,n0,n1,d2) +=! X(m,n0,n1,r) * W2(d2,r)`:
        128-byte rows of X, 8 per strip; 4.45 -> 3.96 ms on its own, paired,
        2 threads). The addresses are linear, so past the last strip
        they are the next outer iteration's rows (or past the array: a
        prefetch never faults). `prefetch-next-slice` erases these again
        where it fetches the whole slice during other nests (Kronecker3)."""
        plan, rw = self.plan, self.rw
        rows = [iv for iv in self.dims if iv != plan.vec_iv]
        if len(plan.red) != 1 or len(rows) != 1:
            return
        (r,), (u,) = plan.red, rows
        extent = plan.dim(r).static_extent()
        columns = plan.dim(plan.vec_iv).static_extent()
        width = plan.factors[self.dims.index(plan.vec_iv)] * plan.lanes
        base, var = self.env[u]
        if (
            extent is None
            or columns is None
            or columns > width
            or var.count != plan.factors[self.dims.index(u)]
        ):
            return
        first: _Val | None = None
        p0 = self.flat_points[0]
        for op, access in self.stmt.loads.items():
            t = access.memref.type
            if (
                op in self.packed
                or op in rw.row_buffers
                or plan.vec_iv in access.deps()
                or not access.unit_last(r)
                or u not in access.deps() - access.uses(len(access.coeffs) - 1)
                or not set(access.operands) - {u, r}
                or not isinstance(t, MemRefType)
            ):
                continue
            size = _elem_bytes(t)
            if extent * size > PREFETCH_ROW_BYTES:
                continue
            if first is None:
                first = em.bound(plan.dim(r).lb, rw.remap, is_max=True)
            per_line = max(1, 64 // size)
            cols = [
                em.index(em.sym(lambda s0, o=c: s0 + o, first))
                for c in sorted({*range(0, extent, per_line), extent - 1})
            ]
            for i in range(var.count):
                row = em.sym(lambda s0, o=(var.count + i) * var.stride: s0 + o, base)
                for col in cols:
                    operands = [
                        row if x == u else col if x == r else self.iv_value(x, p0, None)
                        for x in access.operands
                    ]
                    indices = em.subscripts(access.map, operands)
                    em.op(PrefetchOp(access.memref, indices))

    def prefetch_target(self, em: _Emitter) -> None:
        """Mode 1: before the reduction loops, prefetch for writing the
        vectors of T that the next iteration of the innermost kept output
        loop `k` stores, when `k` moves T by at most `PREFETCH_NEXT_BYTES`.

        A tile's stores read their lines for ownership; the vectors of the
        next `k` lie a short stride away (group conv's next output row, 216
        bytes) and the hardware prefetcher, which follows the loads, does
        not fetch them, so every tile would end stalled on its stores
        (paired, 2 threads, 20 rounds: group conv 0.935x the time, conv2d
        0.95x). Only with at least `PREFETCH_TARGET_STEPS` reduction steps
        (unknown extents count as enough): a prefetch per vector costs about
        a step's issue slots, and tensordot's 8 steps ran 1.02x slower."""
        plan = self.plan
        steps = 1
        for r in plan.red:
            steps *= plan.dim(r).static_extent() or PREFETCH_TARGET_STEPS
        if not plan.kept or steps < PREFETCH_TARGET_STEPS:
            return
        k = plan.kept[-1]
        target = self.stmt.target
        t = target.memref.type
        assert isinstance(t, MemRefType)
        if not _next_pays(_stride(target, k), t):
            return
        nxt = em.index(
            em.sym(lambda s0: s0 + 1, self.iv_value(k, self.flat_points[0], None))
        )
        for p in self.flat_points:
            operands = [
                nxt if x == k else self.iv_value(x, p, None) for x in target.operands
            ]
            em.op(
                PrefetchOp(
                    target.memref, em.subscripts(target.map, operands), write=True
                )
            )

    def next_rows(self, em: _Emitter) -> list[_Ahead]:
        """Mode 2: what to prefetch for the next iteration of an enclosing
        loop `o` (outside the band, step 1), at the columns of `r`.

        Loads: those that walk `r` contiguously and that the nearest
        enclosing loop moving them moves by at most `PREFETCH_NEXT_BYTES`: a
        row loop around a row reduction that other statements share
        (softmax's `mx(n) max=! I(n, r_d)` next to `e(n, d)`, `s(n)`,
        `O(n, d)`). The hardware prefetcher follows a stream within a 4 KiB
        page and idles while the row's other statements work from cache, so
        each row would start with a miss per line; fetching the next row
        while this one streams overlaps the two (paired, 2 threads, 20-30
        rounds, against no prefetch: softmax 4096 x 1024 0.82-0.90x the
        time, layernorm 0.88-0.95x, row sums of 2048 floats 0.95-0.98x).

        Stores (for writing), when some load qualifies, with that load's
        `o`: the stores in `o`'s body to arrays from outside it, other than
        T, whose last subscript is the IV of an `affine.for` with the bounds
        of `r` (coefficient 1) and whose other subscripts use only `o` and
        values from outside its body, moved by at most as much: a row written
        later in the same iteration (layernorm's `O(t, b, c)`), whose lines
        would otherwise be read for ownership only when the fast store loop
        reaches them (layernorm: 0.83-0.86x the time of the reads alone;
        softmax, whose store loop divides, 0.94-1.06x: noise)."""
        r = self.plan.vec_iv
        out: list[_Ahead] = []
        nxt: dict[SSAValue, SSAValue] = {}
        loops: dict[SSAValue, Operation] = {}

        def ahead(a: _Access, o: SSAValue, column: SSAValue, write: bool) -> None:
            claim = self.plan.prefetched.setdefault(
                (o, a.memref, write), self.stmt.store
            )
            if claim is not self.stmt.store:
                return  # an earlier statement of the iteration prefetches it
            if o not in nxt:
                nxt[o] = em.index(em.sym(lambda s0: s0 + 1, o))
            out.append(_Ahead(a, o, nxt[o], column, write))

        for access in self.stmt.loads.values():
            t = access.memref.type
            if not access.unit_last(r) or not isinstance(t, MemRefType):
                continue
            op = self.plan.outer.parent_op()
            while op is not None and not isinstance(op, func.FuncOp):
                if isinstance(op, xaffine.ForOp | xaffine.ParallelOp):
                    moved = [
                        (iv, _stride(access, iv))
                        for iv in op.body.block.args
                        if iv in access.operands
                    ]
                    moved = [(iv, st) for iv, st in moved if st != 0]
                    if moved:
                        o, stride = moved[-1]
                        if _loop_dims(op) is not None and _next_pays(stride, t):
                            ahead(access, o, r, False)
                            loops[o] = op
                        break
                op = op.parent_op()
        for o, loop in loops.items():
            for store, c in self._row_stores(loop, o):
                ahead(store, o, c, True)
        return out

    def _row_stores(
        self, loop: Operation, o: SSAValue
    ) -> list[tuple[_Access, SSAValue]]:
        """The stores of `loop`'s body that `next_rows` prefetches, each with
        its column IV."""
        r = self.plan.dim(self.plan.vec_iv)
        out: list[tuple[_Access, SSAValue]] = []
        for op in loop.walk():
            if not isinstance(op, xaffine.StoreOp) or op is self.stmt.store:
                continue
            t = op.memref.type
            amap = op.map
            assert amap is not None
            last = amap.data.results[-1] if amap.data.results else None
            if (
                op.memref == self.stmt.target.memref
                or not isinstance(t, MemRefType)
                or not defined_outside(op.memref, loop)
                or not isinstance(last, AffineDimExpr | AffineSymExpr)
            ):
                continue
            operands = tuple(op.indices)
            c = operands[
                last.position
                + (amap.data.num_dims if isinstance(last, AffineSymExpr) else 0)
            ]
            cloop = c.owner.parent_op() if isinstance(c, BlockArgument) else None
            dims = _loop_dims(cloop) if isinstance(cloop, xaffine.ForOp) else None
            if dims is None or (dims[0].lb, dims[0].ub) != (r.lb, r.ub):
                continue
            a = _Access.of(op.memref, amap.data, operands, {c})
            if (
                a.unit_last(c)
                and all(x in (o, c) or defined_outside(x, loop) for x in operands)
                and _next_pays(_stride(a, o), t)
            ):
                out.append((a, c))
        return out

    def prefetch_next(
        self, em: _Emitter, ahead: list[_Ahead], at: SSAValue, offset: int
    ) -> None:
        """Mode 2: prefetch, at the column of the vector `offset` elements
        past `at`, what `next_rows` found, once per 64 bytes."""
        done: set[tuple[SSAValue, tuple[SSAValue, ...]]] = set()
        for x in ahead:
            a = x.access
            t = a.memref.type
            assert isinstance(t, MemRefType)
            if offset * _elem_bytes(t) % 64:
                continue
            for p in self.points:
                operands = tuple(
                    at
                    if v == x.column
                    else x.next
                    if v == x.iv
                    else self.iv_value(v, p, None)
                    for v in a.operands
                )
                if (a.memref, operands) in done:
                    continue
                done.add((a.memref, operands))
                indices = em.subscripts(a.map, operands)
                hint = 3 if x.write else NEXT_ROW_LOCALITY
                em.op(PrefetchOp(a.memref, indices, write=x.write, locality=hint))

    def _flags(self) -> arith.FastMathFlagsAttr:
        flags = self.stmt.combine.properties.get("fastmath")
        if isinstance(flags, arith.FastMathFlagsAttr):
            return flags
        return arith.FastMathFlagsAttr("none")

    def _reduction_kind(self) -> tuple[str, int | float]:
        name = self.stmt.combine.name
        if name in _FLOAT_COMBINES:
            return _FLOAT_COMBINES[name]
        kind, ident = _INT_COMBINES[name]
        elem = self.rw.elem
        assert isinstance(elem, IntegerType)
        return kind, ident(elem.width.data)

    def reduction_nest(
        self, em: _Emitter, red: list[SSAValue], accs: list[SSAValue]
    ) -> list[SSAValue]:
        if not red:
            if self.plan.mode == 1:
                return _Body(self, em, None, vector=True).update(accs)
            return self.split_reduction(em, accs)
        iv = red[0]
        d = self.plan.dim(iv)
        block = Block(arg_types=[IndexType(), *(a.type for a in accs)])
        new_iv = block.args[0]
        new_iv.name_hint = iv.name_hint
        self.rw.remap[iv] = new_iv
        inner = _Emitter(block)
        results = self.reduction_nest(inner, red[1:], list(block.args[1:]))
        block.add_op(xaffine.YieldOp.get(*results))
        remap = self.rw.remap
        loop = xaffine.ForOp.from_region(
            [remap.get(v, v) for v in d.lb[1]],
            [remap.get(v, v) for v in d.ub[1]],
            accs,
            [a.type for a in accs],
            AffineMapAttr(d.lb[0]),
            AffineMapAttr(d.ub[0]),
            Region(block),
            1,
        )
        em.op(loop)
        return list(loop.results)

    def split_reduction(self, em: _Emitter, accs: list[SSAValue]) -> list[SSAValue]:
        """Mode 2: the loop along r by `split` vectors (that many partial
        vectors per point, folded with ⊕ after it), then by one vector, then
        its scalar remainder."""
        n = len(self.points)
        scalars, vecs = accs[:n], accs[n:]
        assert self.rw.red_range is not None
        lb, end_split, end, ub = self.rw.red_range
        lanes = self.plan.lanes
        name = self.plan.vec_iv.name_hint
        split = self.rw.split
        ahead = self.next_rows(em)
        if split > 1 and not _empty(lb, end_split):
            _, ident = self._reduction_kind()
            init = vecs + [em.constant(ident, self.rw.vt)] * (n * (split - 1))
            block = Block(arg_types=[IndexType(), *(a.type for a in init)])
            iv = block.args[0]
            iv.name_hint = name
            body = _Emitter(block)
            results: list[SSAValue] = []
            for u in range(split):
                at = (
                    iv
                    if u == 0
                    else body.index(body.sym(lambda s0, o=u * lanes: s0 + o, iv))
                )
                results += _Body(self, body, at, vector=True).update(
                    list(block.args[1 + u * n : 1 + (u + 1) * n])
                )
                self.prefetch_next(body, ahead, at, u * lanes)
            block.add_op(xaffine.YieldOp.get(*results))
            parts = _reduction_loop(em, lb, end_split, split * lanes, init, block)
            combine = self.stmt.combine
            vecs = []
            for i in range(n):
                v = parts[i]
                for u in range(1, split):
                    v = em.val(
                        type(combine).create(
                            operands=[v, parts[u * n + i]],
                            result_types=[self.rw.vt],
                            properties=dict(combine.properties),
                            attributes=dict(combine.attributes),
                        )
                    )
                vecs.append(v)
            lb = end_split
        out: list[list[SSAValue]] = []
        for lo, hi, step, vec in ((lb, end, lanes, True), (end, ub, 1, False)):
            init = vecs if vec else scalars
            if _empty(lo, hi):
                out.append(init)
                continue
            block = Block(arg_types=[IndexType(), *(a.type for a in init)])
            iv = block.args[0]
            iv.name_hint = name
            body = _Emitter(block)
            results = _Body(self, body, iv, vector=vec).update(list(block.args[1:]))
            if vec:
                self.prefetch_next(body, ahead, iv, 0)
            block.add_op(xaffine.YieldOp.get(*results))
            out.append(_reduction_loop(em, lo, hi, step, init, block))
        return out[1] + out[0]

    # -- memory ------------------------------------------------------------

    def zero(self, em: _Emitter, t: Attribute) -> SSAValue:
        if t not in self.zeros:
            self.zeros[t] = self.em.constant(0, t)
        return self.zeros[t]

    def _masked(self, p: tuple[int, ...]) -> bool:
        """Whether the vector at point `p` is the masked one (`mask_point` is
        -1 without a mask, and in mode 2)."""
        if self.mask_point < 0:
            return False
        return p[self.dims.index(self.plan.vec_iv)] == self.mask_point

    def prefetch_far(
        self,
        body: _Body,
        access: _Access,
        operands: Sequence[SSAValue],
        p: tuple[int, ...],
    ) -> None:
        """Mode 1: prefetch a vector load read in place that the innermost
        reduction loop `r` moves by at least `FAR_STEP_BYTES` per step,
        `FAR_AHEAD_STEPS` steps ahead, for the first vector of each row.

        Such a load starts a new short stream at every step (tensordot's
        `I0(n, c1, r_c2, h, w)`: 28-float rows, planes 3136 bytes apart),
        which the hardware prefetcher, tracking each 4 KiB page on its own,
        picks up late. The row's next line is left to the L2's adjacent-line
        prefetcher. Paired, 2 threads, three runs of 25-40 rounds: tensordot
        0.89-0.96x the time (0.93 in the longest; 3 steps ahead did the
        same, 1 step lost); kronecker3, whose 8 MiB temporary `XW1` gets one
        such prefetch, 1.01x. Arrays below `FAR_ARRAY_BYTES` stay in cache
        (tensordot's `I1`: prefetching it too halved the gain). Past the last
        step the addresses are the next tile's or past the array (a
        prefetch never faults)."""
        plan = self.plan
        if plan.mode != 1 or not plan.red or p[self.dims.index(plan.vec_iv)]:
            return
        r = plan.red[-1]
        t = access.memref.type
        assert isinstance(t, MemRefType)
        shape, size = t.get_shape(), _elem_bytes(t)
        stride = _stride(access, r)
        if (
            stride is None
            or abs(stride) * size < FAR_STEP_BYTES
            or DYNAMIC_INDEX in shape  # of unknown size
            or pymath.prod(shape) * size < FAR_ARRAY_BYTES
        ):
            return
        new_r = self.rw.remap.get(r, r)
        nxt = body.steps_on(new_r, FAR_AHEAD_STEPS)
        ahead = [nxt if x == new_r else x for x in operands]
        body.em.op(PrefetchOp(access.memref, body.em.subscripts(access.map, ahead)))

    def vector_load(
        self,
        em: _Emitter,
        access: _Access,
        operands: Sequence[SSAValue],
        t: VectorType[Attribute],
        p: tuple[int, ...],
    ) -> SSAValue:
        indices = em.subscripts(access.map, operands)
        if self._masked(p):
            mask = self.half_mask if t.get_shape()[0] < self.plan.lanes else self.mask
            assert mask is not None
            return em.val(
                vector.MaskedLoadOp(access.memref, indices, mask, self.zero(em, t), t)
            )
        return em.val(vector.LoadOp(access.memref, indices, t))

    def vector_store(
        self,
        em: _Emitter,
        value: SSAValue,
        access: _Access,
        operands: Sequence[SSAValue],
        p: tuple[int, ...],
    ) -> None:
        indices = em.subscripts(access.map, operands)
        if self._masked(p):
            vt = value.type
            assert isinstance(vt, VectorType)
            half = vt.get_shape()[0] < self.plan.lanes
            mask = self.half_mask if half else self.mask
            assert mask is not None
            em.op(vector.MaskedStoreOp(access.memref, indices, mask, value))
        else:
            em.op(vector.StoreOp(value, access.memref, indices))


class _Body:
    """The innermost reduction body of a kernel: e at every point, ⊕."""

    def __init__(
        self, kernel: _Kernel, em: _Emitter, red_iv: SSAValue | None, vector: bool
    ):
        self.k = kernel
        self.em = em
        self.red_iv = red_iv
        self.vector = vector
        self.cache: dict[tuple[SSAValue, tuple[int, ...], bool], SSAValue] = {}
        self.bcast: dict[tuple[SSAValue, tuple[int, ...], bool], SSAValue] = {}
        self.rel: list[SSAValue] | None = None
        """Packed buffers: the reduction IVs relative to their lower bounds."""
        self.ahead: dict[tuple[SSAValue, int], SSAValue] = {}
        """A reduction IV (or `rel`'s innermost), so many steps on."""

    def key(
        self, v: SSAValue, p: tuple[int, ...]
    ) -> tuple[SSAValue, tuple[int, ...], bool]:
        deps = self.k.plan.deps.get(v, set())
        coords = tuple(o for o, d in zip(p, self.k.dims) if d in deps)
        # a pair point's vectors differ from its first row's; scalars that
        # depend on neither IV are shared
        return v, coords, p in self.k.pairs and bool(deps & set(self.k.dims))

    def is_vec(self, v: SSAValue) -> bool:
        return self.vector and self.k.plan.vec_iv in self.k.plan.deps.get(v, set())

    def value(self, v: SSAValue, p: tuple[int, ...]) -> SSAValue:
        """`v` at point `p`: a vector if it depends on the vector IV."""
        key = self.key(v, p)
        if key in self.cache:
            return self.cache[key]
        k, em = self.k, self.em
        owner = v.owner
        if not isinstance(owner, Operation) or owner not in k.stmt.inner:
            return v
        if p in k.pairs:
            out = self.paired(v, owner, p)
        elif owner in k.rw.row_buffers and k.full_rows:
            buf = k.rw.row_buffers[owner]
            if self.rel is None:
                self.rel = [
                    em.index(em.sym(lambda s0, s1: s0 - s1, k.rw.remap[iv], lb))
                    for iv, (lb, _) in k.rw.red_bounds.items()
                ]
            i = p[0]
            at = [k.strip_index, *self.rel, em.index(i)]
            out = em.val(LoadOp(buf, at, None, v.type))
        elif owner in k.packed:
            buf, prefix = k.packed[owner]
            if self.rel is None:
                self.rel = [
                    em.index(em.sym(lambda s0, s1: s0 - s1, k.rw.remap[iv], lb))
                    for iv, (lb, _) in k.rw.red_bounds.items()
                ]
            rel = self.rel
            j = p[k.dims.index(k.plan.vec_iv)]
            col = em.index(j * k.plan.lanes)
            out = em.val(
                vector.LoadOp(
                    buf, [*prefix, *rel, col], VectorType(v.type, [k.plan.lanes])
                )
            )
            ahead = _panel_ahead(buf, len(prefix), j * k.plan.lanes)
            if ahead:
                nxt = self.steps_on(rel[-1], ahead)
                em.op(PrefetchOp(buf, [*prefix, *rel[:-1], nxt, col]))
        elif owner in k.stmt.loads:
            access = k.stmt.loads[owner]
            operands = [k.iv_value(x, p, self.red_iv) for x in access.operands]
            if self.is_vec(v):
                t = VectorType(v.type, [k.plan.lanes])
                out = k.vector_load(em, access, operands, t, p)
                k.prefetch_far(self, access, operands, p)
            else:
                out = em.val(
                    LoadOp(access.memref, operands, AffineMapAttr(access.map), v.type)
                )
        elif isinstance(owner, arith.ConstantOp):
            out = em.val(owner.clone())
        else:
            vec = self.is_vec(v)
            operands = [
                self.vec_value(x, p) if vec else self.value(x, p)
                for x in owner.operands
            ]
            t = VectorType(v.type, [k.plan.lanes]) if vec else v.type
            new = type(owner).create(
                operands=operands,
                result_types=[t],
                properties=dict(owner.properties),
                attributes=dict(owner.attributes),
            )
            out = em.val(new)
        self.cache[key] = out
        return out

    def paired(self, v: SSAValue, owner: Operation, p: tuple[int, ...]) -> SSAValue:
        """`v` at pair point `p` (`_Kernel._pair_tails`): a VL-lane vector
        holding both rows, or the scalar when `v` depends on neither the
        vector IV nor the row IV."""
        k, em = self.k, self.em
        pa, pb = k.pairs[p]
        by_row = k.pair_iv in k.plan.deps.get(v, set())
        if not self.is_vec(v):
            if not by_row:
                return self.value(v, pa)
            return k.join(em, self.vec_value(v, pa), self.vec_value(v, pb))
        if owner in k.stmt.loads:
            access = k.stmt.loads[owner]
            t = k.half_type(v.type)
            halves = [
                k.vector_load(
                    em,
                    access,
                    [k.iv_value(x, q, self.red_iv) for x in access.operands],
                    t,
                    q,
                )
                for q in ((pa, pb) if by_row else (pa,))
            ]
            return k.join(em, halves[0], halves[-1])
        new = type(owner).create(
            operands=[self.vec_value(x, p) for x in owner.operands],
            result_types=[VectorType(v.type, [k.plan.lanes])],
            properties=dict(owner.properties),
            attributes=dict(owner.attributes),
        )
        return em.val(new)

    def steps_on(self, iv: SSAValue, steps: int) -> SSAValue:
        """`iv + steps`, once per body."""
        if (iv, steps) not in self.ahead:
            nxt = self.em.sym(lambda s0, d=steps: s0 + d, iv)
            self.ahead[(iv, steps)] = self.em.index(nxt)
        return self.ahead[(iv, steps)]

    def vec_value(self, v: SSAValue, p: tuple[int, ...]) -> SSAValue:
        """`v` at point `p` as a vector (broadcast if scalar)."""
        x = self.value(v, p)
        if isinstance(x.type, VectorType):
            return x
        key = self.key(v, p)
        if key not in self.bcast:
            t = VectorType(x.type, [self.k.plan.lanes])
            self.bcast[key] = self.em.val(vector.BroadcastOp(x, t))
        return self.bcast[key]

    def update(self, accs: list[SSAValue]) -> list[SSAValue]:
        k, em = self.k, self.em
        stmt = k.stmt
        out: list[SSAValue] = []
        get = self.vec_value if self.vector else self.value
        for p, acc in zip(k.points, accs):
            if stmt.fma is not None:
                x, y = (get(v, p) for v in stmt.fma)
                new = xmath.FmaOp.build(
                    operands=[x, y, acc],
                    result_types=[acc.type],
                    properties={"fastmath": k._flags()},
                )
            else:
                e = get(stmt.expr, p)
                operands = [acc, e] if stmt.acc_index == 0 else [e, acc]
                new = type(stmt.combine).create(
                    operands=operands,
                    result_types=[acc.type],
                    properties=dict(stmt.combine.properties),
                    attributes=dict(stmt.combine.attributes),
                )
            out.append(em.val(new))
        return out


# --------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------


def register_tile(
    module: ModuleOp,
    vector_width: int = 0,
    rows: int = 0,
    vectors: int = 0,
    pack: str = "auto",
    pair_tails: bool = True,
) -> int:
    """Apply the rewrite to every matching nest of `module`; the count rewritten."""
    if pack not in ("auto", "always", "never"):
        raise TCError(
            f"register-tile: pack must be auto, always or never, not '{pack}'"
        )
    if vector_width < 0 or rows < 0 or vectors < 0:
        raise TCError(
            "register-tile: vector-width, rows and vectors must be >= 0 "
            f"(got {vector_width}, {rows}, {vectors})"
        )
    stores = [
        (f, op)
        for f in module.ops
        if isinstance(f, func.FuncOp)
        for op in f.walk()
        if isinstance(op, xaffine.StoreOp)
    ]
    if not stores:
        return 0
    lanes32 = vector_width or _host_lanes()
    count = 0
    scops: dict[func.FuncOp, Scop | None] = {}
    prefetched: dict[tuple[SSAValue, SSAValue, bool], Operation] = {}
    for fn, store in stores:
        plan = _plan(store, lanes32, rows, vectors, pack)
        if plan is None:
            continue
        plan.prefetched = prefetched
        plan.pair_tails = pair_tails
        if fn not in scops:
            # the model of the function as scheduled (before any rewrite):
            # the statements that `_initial` compares are left untouched by
            # the rewrites of other bands; with the buffers that
            # `contract-temporaries` made local (kronecker's XW2 and XW1)
            try:
                scops[fn] = extract_scop(fn, local_arrays=True)
            except TCError:
                scops[fn] = None
        plan.start = _initial(plan, scops[fn])
        plan.finish = _final(plan, scops[fn])
        _Rewriter(plan).run()
        count += 1
    return count


@dataclass(frozen=True)
class RegisterTilePass(ModulePass):
    """Register tiles of reductions in explicit vector accumulators.

    See the module docstring.
    """

    name = "register-tile"

    vector_width: int = 0
    rows: int = 0
    vectors: int = 0
    pack: str = "auto"
    pair_tails: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        register_tile(
            op, self.vector_width, self.rows, self.vectors, self.pack, self.pair_tails
        )


__all__ = ["RegisterTilePass", "register_tile"]
