"""`register-tile{vector-width=8 rows=0 vectors=0 pack=auto pair-tails=true fma16=false}`: reductions in vector registers.

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
`addf` of a `mulf` becomes an FMA; with `fma16=true`, so does `addf` of an
`extf` of a narrower `mulf` (a float16 or bfloat16 product accumulating in
f32, as `convert-tc-to-affine` emits it), on the factors extended to f32::

    %p = arith.mulf %a, %b : f16
    %w = arith.extf %p : f16 to f32
    %s = arith.addf %t, %w fastmath<reassoc> : f32

becomes `math.fma(extf a, extf b, acc)` on `vector<VL x f32>`, a factor
that does not depend on the vector IV extended as a scalar before its
broadcast, and factors that are loads used only by the product copied
extended where they are packed: their rows as well when the column extent
makes a copy pay or the copy can move before the kept loops (`pack.py`), so
that the inner loop is the f32 one. The band grows outwards from the
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

(`u_end = lb_u + ((ub_u - lb_u) floordiv MR) * MR` etc., with `ub` clamped
to `>= lb`; index arithmetic is `affine.apply` / `arith.maxsi/minsi`, folded
when the bounds are constants, and strips that are statically empty are not
emitted. Strips are `affine.parallel` when their loop was.)

Packing (mode 1 with a row loop `u`; `pack=auto|always|never`): operand
panels that every row strip reads again, and strided rows, are copied into
contiguous buffers where that pays (`pack.py` states when and how).

Prefetching: the kernels prefetch short rows of the next row strip, packed
panels ahead, far vector loads ahead and the target's next vectors (mode 1),
and the next row of an enclosing loop (mode 2). Every such decision is
`prefetch.py`'s, which states the conditions; the rest of the pass emits no
`memref.prefetch`.

Folded initialisation and updates: a nest that initialises T right before
the band, and pointwise updates of T right after it, are folded into the
first and last tiles' kernels when isl shows the tiles cover exactly their
elements (`fold.py`).

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
so that at least 4 independent chains hide ⊕'s latency.

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
rounding of reductions unspecified). With `fma16`, the contraction also
skips the product's rounding to 16 bits, which docs/language-notes.md
specifies ("a product `A * B` of `float16`s is rounded to `float16`
first"): each element is then the sum of exact products, rounded once,
never less accurate but not the reference interpreter's bits; hence the
option, off by default in the pass (the `cpu` target turns it on:
`CpuOptions.fma16`). Mode 2 reorders each element's updates
(lane-wise partial sums, `r` moved innermost), which `reassoc` permits
(integers: exact). Loads only touch elements that the original iterations
read (every lane of a vector is an iteration in range, or masked), and the
packed copies read exactly the panel the kernels use, so no access goes out
of bounds; the copies are private to the strip (thread) that makes them.

Options (0 = automatic): `vector-width` (default 8) = lanes of a 32-bit
element (elements of b bits get `vector-width * 32 / b` lanes), a positive
power of two; the default is 256-bit vectors, the x86-64-v3 baseline, so the
pass prints the same IR on every machine (the library passes the target's
width). `rows` = MR (mode 1) / P (mode 2); `vectors` = NV (mode 1) / Q
(mode 2): their defaults follow from the lanes (`policy.py`).
`pair-tails=false` keeps one masked vector per row. `fma16=true` contracts
16-bit products as above.

Mode 2 needs a reduction loop of at least VL iterations (or an unknown
number). Nests that do not match are left alone (non-reductions, several statements,
targets read elsewhere, no loop with unit stride in the target and the
operands, ops without vector forms such as comparisons and selects, float
reductions without `reassoc`).

The pass's modules, each stating its part of this contract: `match.py`
(which nests qualify, access analysis), `policy.py` (mode, unrolled loops,
tile sizes, packing choices), `fold.py` (initialisation and epilogue
folding), `rewrite.py` (strip loops and their bounds), `pack.py` (operand
copies), `kernel.py` (the micro-kernel: accumulators, reduction loops,
stores), `prefetch.py` (every prefetch the pass emits), `builder.py` (IR
building helpers). Names with a leading underscore are private to the
package. The measurements behind the heuristics are in
docs/perf/register-tile.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine as xaffine
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.poly.scop import Scop, extract_scop
from tcdialect.transforms.register_tile.fold import _final, _initial
from tcdialect.transforms.register_tile.policy import _plan
from tcdialect.transforms.register_tile.rewrite import _Rewriter

VECTOR_WIDTH = 8
"""Default `vector-width`: 8 lanes of a 32-bit element, 256-bit vectors (the
x86-64-v3 baseline), so that the pass prints the same IR on every machine; a
target passes its own width."""


def register_tile(
    module: ModuleOp,
    vector_width: int = VECTOR_WIDTH,
    rows: int = 0,
    vectors: int = 0,
    pack: str = "auto",
    pair_tails: bool = True,
    fma16: bool = False,
) -> int:
    """Apply the rewrite to every matching nest of `module`; the count rewritten."""
    if pack not in ("auto", "always", "never"):
        raise TCError(
            f"register-tile: pack must be auto, always or never, not '{pack}'"
        )
    if vector_width < 1 or vector_width & (vector_width - 1):
        raise TCError(
            "register-tile: vector-width must be a positive power of two, "
            f"not {vector_width}"
        )
    if rows < 0 or vectors < 0:
        raise TCError(
            f"register-tile: rows and vectors must be >= 0 (got {rows}, {vectors})"
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
    count = 0
    scops: dict[func.FuncOp, Scop | None] = {}
    prefetched: dict[tuple[SSAValue, SSAValue, bool], Operation] = {}
    for fn, store in stores:
        plan = _plan(store, vector_width, rows, vectors, pack, fma16)
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

    vector_width: int = VECTOR_WIDTH
    rows: int = 0
    vectors: int = 0
    pack: str = "auto"
    pair_tails: bool = True
    fma16: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        register_tile(
            op,
            self.vector_width,
            self.rows,
            self.vectors,
            self.pack,
            self.pair_tails,
            self.fma16,
        )


__all__ = ["VECTOR_WIDTH", "RegisterTilePass", "register_tile"]
