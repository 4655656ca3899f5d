"""`prefetch-next-slice{min-bytes=4096 max-bytes=262144 locality=3 nta-bytes=16384 distance=1}`: fetch the next iteration's input slice while this one computes.

A loops → loops pass (docs/pipeline.md: `loops` stage), run after
`convert-affine-to-scf` and before `outline-parallel-loops`. A loop that
reads a fresh slice `A[..., i, *]` of a large input in each iteration `i`
leaves it to the hardware prefetcher, which follows long unit-stride streams
and restarts on every short one, and which does nothing while the iteration
computes on data it already has:

* Kronecker3 reads its 128 KiB `X(m, *)` in the first mode product; the other
  two touch only cached temporaries, so memory idles there and the next `m`
  waits for its slice;
* group convolution reads `I(n, g, *)` (4 planes of 56 x 56, 49 KiB) as 12
  short row streams per output row; each new `g` starts them cold.

This pass spreads prefetches of the next iteration's slice `A[..., i + s, *]`
over the iterations of loops in the body (measurements:
docs/perf/prefetch.md).

The prefetches go into every nest of the body, including those that read the
current slice, so that the next slice's lines are requested at an even rate
over the whole iteration: put only into the nests that do not read `%A`,
a large slice would have to arrive within the short part of the iteration
those take.

Contract. For every `scf.for` and every outermost `scf.parallel` (its first
dimension) with a constant step `s` and induction variable `%i`, and every
memref `%A` defined outside the loop such that

- inside the loop `%A` is only read, by `memref.load`, `vector.load` and
  `vector.maskedload` whose subscripts are the same loop-invariant values
  `%p...`, then `%i`, then any (or named by `memref.prefetch`): iteration
  `i` reads only the slice `A[%p..., i, *]`;
- `%A` has a static shape and the identity layout, and the slice (the product
  of the trailing extents times the element size) has `min-bytes` to
  `max-bytes` bytes (the L2 holds it beside the loop's own working set);
- no enclosing loop already prefetches `%A`;

the pass takes each top-level `scf.for` nest of the body (Kronecker3's
three mode products, group convolution's one nest), whether or not it
reads `%A`. In each it walks down from the top through
loops with constant bounds whose parent holds only that one `scf.for`, and
stops at the first level whose iterations (from the nest's top down to it)
number at least a quarter of the slice's 64-byte lines `L`. An innermost
loop on scalars is never a level: LLVM's loop vectoriser and
`nontemporal-stores` take those loops, and a prefetch in the body stops both
(softmax's division loop ran scalar). At the start of
that level's body it puts `per = ceil(L / T)` prefetches (`T`: the chosen
levels' iterations in all, numbered `g = 0 .. T - 1` in program order):
iteration `g` fetches slots `g * per + q`, `q < per`, and slot `t` is line
`t * L floordiv (T * per)` of the slice, so the lines are spread evenly and
each is fetched at least once. The line's first element `e` is addressed as
`A[%p..., i + s, 0, ..., 0, e]`: the last subscript runs on past its extent
into the slice's later rows, which costs no division, and a prefetch takes
any address (convert-to-llvm computes it without `inbounds`)::

    // A: memref<256x16x32xf32>, slice A[o] of 2 KiB: L = 32; T = 32
    scf.for %r = %c0 to %c32 step %c1 iter_args(...) {
      %e = %r * 16                           // line r's first element
      memref.prefetch %A[%o + 1, %c0, %e], read, locality<0>, data
          : memref<256x16x32xf32>
      ...

A nest without such a level (fewer iterations, a loop with variable bounds
on the way) gets none; when no nest has one, the array is left alone.

The prefetches of a slice of at most `nta-bytes` bytes (a third of the
48 KiB L1) carry the non-temporal hint, `locality<0>` (`prefetchnta` on
x86): the next iteration reads them from L1 and nothing reads them after it,
so they need not be kept in the outer caches. Larger slices, which will not
all stay in L1 until they are read (Kronecker3's 128 KiB `X(m, *)`), get
`locality`.

Each iteration fetches the whole of the next one's slice, so the loop's
read prefetches of its own iteration's slice, `A[%p..., i, ...]`, fetch
lines that are already on their way (in all but the first iteration of each
thread) and are erased: `register-tile` puts one before each row strip for
the next strip's short rows (its `prefetch.py`), which here only cost issue
slots. The prefetches read nothing a program can observe (`memref.prefetch`); after
the last iteration the slice `A[..., i + s, *]` is the next one in memory
(the next `n`'s first group, say) or lies past `%A`'s end, which a prefetch
allows. With `distance=d` the slice fetched is that of iteration `i + d * s`, `d`
iterations ahead, for iterations too short to hide the memory's latency
behind one (the autotuner searches `d`: `CpuOptions.prefetch_distance`).

Left alone: loops whose step is not a constant, arrays written in the
loop or read at other subscripts, dynamic shapes, other layouts, slices
outside the byte range.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    VectorType,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects.memref import PrefetchOp
from tcdialect.transforms.ir_values import constant_index, defined_outside

LINE_BYTES = 64
"""Bytes one prefetch brings in (a cache line on x86 and Arm cores)."""

_LOADS = (memref.LoadOp, vector.LoadOp, vector.MaskedLoadOp)
"""The reads a slice may come from (the memref is operand 0 of each)."""

NTA_BYTES = 16 << 10
"""Default `nta-bytes`: slices up to a third of the 48 KiB L1 are fetched
non-temporally (`locality<0>`), larger ones with `locality`; 0 gives every
slice `locality`."""

MAX_PER_ITERATION = 4
"""At most this many prefetches per iteration of the loop that holds them."""


@dataclass
class _Level:
    """A loop of a nest's chain and the iterations of the chain down to it."""

    loop: scf.ForOp
    trips: list[int]
    """Trip counts of the chain's loops, from the nest's top to this loop."""

    @property
    def iterations(self) -> int:
        return prod(self.trips)


def _levels(nest: scf.ForOp) -> list[_Level]:
    """The nest's loops from the top down while each loop has constant
    bounds and its parent holds no other `scf.for`, less innermost loops on
    scalars (`_vector_code`)."""
    levels: list[_Level] = []
    trips: list[int] = []
    loop: scf.ForOp | None = nest
    while loop is not None:
        lb, ub, step = (
            constant_index(loop.lb),
            constant_index(loop.ub),
            constant_index(loop.step),
        )
        if lb is None or ub is None or step is None or step <= 0:
            break
        trips = [*trips, max(0, -(-(ub - lb) // step))]
        inner = [o for o in loop.body.block.ops if isinstance(o, scf.ForOp)]
        if inner or _vector_code(loop):
            levels.append(_Level(loop, trips))
        loop = inner[0] if len(inner) == 1 else None
    return levels


def _vector_code(loop: scf.ForOp) -> bool:
    """Whether the loop computes on vectors already. An innermost loop on
    scalars is left to LLVM's loop vectoriser (and to nontemporal-stores),
    which a prefetch in its body would stop."""
    return any(
        isinstance(v.type, VectorType)
        for op in loop.walk()
        for v in (*op.operands, *op.results)
    )


@dataclass
class _Slice:
    """`A[prefix..., iv, *]`: the part of `A` that one iteration reads."""

    memref: SSAValue
    prefix: list[SSAValue]
    bytes: int


def _slice(
    loop: Operation, iv: SSAValue, m: SSAValue, ops: list[Operation]
) -> _Slice | None:
    """`m`'s slice when every use of `m` in `loop` is a load whose subscripts
    are the same loop-invariant values, then `iv` (or a prefetch)."""
    t = m.type
    if not isinstance(t, MemRefType) or not isinstance(t.layout, NoneAttr):
        return None
    shape = t.get_shape()
    elem = getattr(t.element_type, "bitwidth", 0) // 8
    if any(d < 0 for d in shape) or elem <= 0:
        return None
    prefix: list[SSAValue] | None = None
    for op in ops:
        if isinstance(op, PrefetchOp):
            continue
        if not isinstance(op, _LOADS) or op.operands[0] != m:
            return None
        indices = list(op.indices)
        if iv not in indices:
            return None
        d = indices.index(iv)
        if any(not defined_outside(v, loop) for v in indices[:d]):
            return None
        if prefix is None:
            prefix = indices[:d]
        elif indices[:d] != prefix:
            return None
    if prefix is None or len(prefix) + 1 >= len(shape):
        return None
    return _Slice(m, prefix, prod(shape[len(prefix) + 1 :]) * elem)


class _Builder(Builder):
    """xDSL's builder with index arithmetic that skips identities."""

    def val(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def index(self, value: int) -> SSAValue:
        return self.val(arith.ConstantOp.from_int_and_width(value, IndexType()))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if b == 0 or (isinstance(b, SSAValue) and constant_index(b) == 0):
            return a
        if constant_index(a) == 0 and isinstance(b, SSAValue):
            return b
        return self.val(
            arith.AddiOp(a, b if isinstance(b, SSAValue) else self.index(b))
        )

    def mul(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 1 else self.val(arith.MuliOp(a, self.index(b)))

    def div(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if b == 1 or (isinstance(b, SSAValue) and constant_index(b) == 1):
            return a
        return self.val(
            arith.DivUIOp(a, b if isinstance(b, SSAValue) else self.index(b))
        )


def _emit(
    sl: _Slice,
    nxt: tuple[SSAValue, SSAValue],
    levels: list[_Level],
    per: int,
    locality: int,
    distance: int,
) -> None:
    """The prefetches at the start of each chosen level's body (contract)."""
    t = sl.memref.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    rest = shape[len(sl.prefix) + 1 :]
    elem = getattr(t.element_type, "bitwidth", 32) // 8
    lines = -(-sl.bytes // LINE_BYTES)
    total = sum(lv.iterations for lv in levels)
    slots = total * per
    first = 0
    for lv in levels:
        b = _Builder(InsertPoint.at_start(lv.loop.body.block))
        # g = first + the linear number of this iteration of the chain
        chain: list[scf.ForOp] = []
        op: Operation | None = lv.loop
        while len(chain) < len(lv.trips):
            assert isinstance(op, scf.ForOp)
            chain.insert(0, op)
            op = op.parent_op()
        g: SSAValue | None = None
        for level, loop in enumerate(chain):
            iv = loop.body.block.args[0]
            k = iv if constant_index(loop.lb) == 0 else b.val(arith.SubiOp(iv, loop.lb))
            k = b.mul(b.div(k, loop.step), prod(lv.trips[level + 1 :]))
            g = k if g is None else b.add(g, k)
        assert g is not None
        g = b.add(g, first)
        iv, step = nxt
        following = b.add(iv, b.mul(step, distance))
        zeros = [b.index(0)] * (len(rest) - 1) if len(rest) > 1 else []
        for q in range(per):
            slot = b.add(b.mul(g, per), q)
            line = slot if slots == lines else b.div(b.mul(slot, lines), slots)
            e = b.mul(line, LINE_BYTES // elem)
            indices = [*sl.prefix, following, *zeros, e]
            b.insert(PrefetchOp(sl.memref, indices, locality=locality))
        first += lv.iterations


def _loops(module: ModuleOp) -> list[tuple[Operation, SSAValue, SSAValue]]:
    """Every `scf.for` and outermost `scf.parallel` (its first dimension) with
    its induction variable and step, outer loops first."""
    found: list[tuple[Operation, SSAValue, SSAValue]] = []
    for op in module.walk():
        if isinstance(op, scf.ForOp):
            found.append((op, op.body.block.args[0], op.step))
        elif isinstance(op, scf.ParallelOp) and op.step:
            p = op.parent_op()
            while p is not None and not isinstance(p, scf.ParallelOp):
                p = p.parent_op()
            if p is None:
                found.append((op, op.body.block.args[0], op.step[0]))
    return found


def prefetch_next_slice(
    module: ModuleOp,
    min_bytes: int = 4 << 10,
    max_bytes: int = 256 << 10,
    locality: int = 3,
    nta_bytes: int = NTA_BYTES,
    distance: int = 1,
) -> int:
    """Apply the contract (module docstring); the number of slices prefetched."""
    if distance < 1:
        raise TCError(f"prefetch-next-slice: distance must be >= 1 (got {distance})")
    if (
        min_bytes < 0
        or max_bytes < min_bytes
        or not 0 <= locality <= 3
        or nta_bytes < 0
    ):
        raise TCError(
            "prefetch-next-slice: need 0 <= min-bytes <= max-bytes, "
            "0 <= locality <= 3 and nta-bytes >= 0 (got "
            f"{min_bytes}, {max_bytes}, {locality}, {nta_bytes})"
        )
    count = 0
    done: list[tuple[Operation, SSAValue]] = []
    for loop, iv, step in _loops(module):
        if constant_index(step) is None:
            continue
        body = loop.regions[0].block
        uses: dict[SSAValue, list[Operation]] = {}
        for op in loop.walk():
            for v in op.operands:
                if isinstance(v.type, MemRefType) and defined_outside(v, loop):
                    uses.setdefault(v, []).append(op)
        nests = [op for op in body.ops if isinstance(op, scf.ForOp)]
        for m, ops in uses.items():
            if any(m == a and outer.is_ancestor(loop) for outer, a in done):
                continue  # an enclosing loop prefetches m's slices already
            sl = _slice(loop, iv, m, ops)
            if sl is None or not min_bytes <= sl.bytes <= max_bytes:
                continue
            lines = -(-sl.bytes // LINE_BYTES)
            if not lines:
                continue  # an empty slice (min-bytes=0)
            levels: list[_Level] = []
            for nest in nests:
                levels += [
                    lv
                    for lv in _levels(nest)
                    if lv.iterations * MAX_PER_ITERATION >= lines
                ][:1]
            total = sum(lv.iterations for lv in levels)
            if not total:
                continue
            hint = 0 if sl.bytes <= nta_bytes else locality
            _emit(sl, (iv, step), levels, -(-lines // total), hint, distance)
            _erase_own_prefetches(sl, iv, ops)
            done.append((loop, m))
            count += 1
    return count


def _erase_own_prefetches(sl: _Slice, iv: SSAValue, ops: list[Operation]) -> None:
    """Erase the reads' prefetches of the current iteration's slice
    (`A[prefix..., i, ...]`): the previous iteration fetched all of it."""
    for op in ops:
        if (
            isinstance(op, PrefetchOp)
            and not op.isWrite.value.data
            and list(op.indices[: len(sl.prefix) + 1]) == [*sl.prefix, iv]
        ):
            op.detach()
            op.erase()


@dataclass(frozen=True)
class PrefetchNextSlicePass(ModulePass):
    """Prefetch the next iteration's input slice while this one computes.

    See the module docstring.
    """

    name = "prefetch-next-slice"

    min_bytes: int = 4 << 10
    max_bytes: int = 256 << 10
    locality: int = 3
    nta_bytes: int = NTA_BYTES
    distance: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prefetch_next_slice(
            op,
            self.min_bytes,
            self.max_bytes,
            self.locality,
            self.nta_bytes,
            self.distance,
        )


__all__ = ["PrefetchNextSlicePass", "prefetch_next_slice"]
