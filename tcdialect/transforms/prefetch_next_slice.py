"""`prefetch-next-slice{min-bytes=16384 max-bytes=262144 locality=3}`: fetch the next parallel iteration's input while other nests compute.

A loops → loops pass (docs/pipeline.md: `loops` stage), run after
`convert-affine-to-scf` and before `outline-parallel-loops`. An outermost
`scf.parallel` whose body runs several loop nests in turn often streams a
large input slice `A[o, ...]` in one nest and then computes on cached
temporaries in the others: Kronecker3 reads its 128 KiB `X(m, ...)` in the
first mode product, and the other two mode products touch no memory. The
memory system idles during those nests, and the next iteration's first nest
then waits for its slice. This pass spreads prefetches of `A[o + step, ...]`
over the innermost loops of the nests that do not read `A`, so that the
slice arrives while they compute. Measured on the Zen 5 host of bench/
(Kronecker3 256 x 16 x 32, 2 threads, paired against the pipeline without
the pass, 30 rounds): 0.82-0.85x the time with the caches flushed, 0.83x back
to back; L2-only prefetches (`locality=2`) did as well or slightly worse, and
using only the first quiet nests instead of spreading over all of them
0.84-0.91x. Among the 18 benchmark kernels only Kronecker3 changes.

Contract. For every outermost `scf.parallel` with a constant first step `s`
and first induction variable `%o`, and every memref `%A` defined outside it
such that

- `%A` has a static shape of rank >= 2, the identity layout and a slice
  `A[o]` (the product of its trailing extents times the element size) of
  `min-bytes` to `max-bytes` bytes (a slice that the L2 holds beside the
  nests' own working set);
- inside the loop, `%A` is only read, by `memref.load` and `vector.load`
  whose first subscript is `%o` (so the next iteration reads `A[o + s]`
  only), or named by `memref.prefetch`;
- the loop body holds top-level `scf.for` nests that read no `%A` ("quiet"
  nests) whose innermost loop is reached through loops that each hold exactly
  one `scf.for`, all with constant bounds and steps; their innermost
  iterations, `T` in all, are at least a quarter of the slice's 64-byte
  lines `L` (`per = ceil(L / T)` prefetches an iteration, at most 4);

each quiet nest's innermost loop body starts with `per` prefetches of
`A[o + s, ...]`: the quiet nests' innermost iterations, numbered `g = 0 ..
T - 1` in program order, cover the slots `g * per + q`, and slot `t` fetches
line `t * L floordiv (T * per)` of the slice, so the lines are spread evenly
and each is fetched at least once::

    scf.for %r = %c0 to %c32 step %c1 iter_args(...) {   // quiet nest, T = 32
      %t = (g0 + %r) * per + q
      %e = (%t * L floordiv (T * per)) * (64 / elem)      // element of A[o + s]
      memref.prefetch %A[%o + s, %e floordiv 1024, %e floordiv 32 mod 32,
                         %e mod 32], read, locality<3>, data : memref<256x32x32x32xf32>
      ...

The prefetches read nothing a program can observe (`memref.prefetch`); in the
last iteration `A[o + s]` may lie past `%A`'s end, which a prefetch allows.
Left alone: loops whose first step is not constant, arrays written in the
loop or read at another first subscript, slices outside the byte range,
nests that read the array, nests whose innermost loop is not a single chain
of constant loops, and arrays whose quiet nests are too short.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects.memref import PrefetchOp

LINE_BYTES = 64
"""Bytes one prefetch brings in (a cache line on x86 and Arm cores)."""

MAX_PER_ITERATION = 4
"""At most this many prefetches per innermost iteration of a quiet nest."""


def _const(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _outermost_parallel(op: Operation) -> list[scf.ParallelOp]:
    found: list[scf.ParallelOp] = []
    for inner in op.walk():
        if isinstance(inner, scf.ParallelOp) and not any(
            isinstance(p, scf.ParallelOp) for p in _ancestors(inner)
        ):
            found.append(inner)
    return found


def _ancestors(op: Operation) -> list[Operation]:
    out: list[Operation] = []
    p = op.parent_op()
    while p is not None:
        out.append(p)
        p = p.parent_op()
    return out


@dataclass
class _Chain:
    """The loops from a quiet nest's top to its innermost loop."""

    loops: list[scf.ForOp]
    trips: list[int]

    @property
    def iterations(self) -> int:
        return prod(self.trips)


def _chain(nest: scf.ForOp) -> _Chain | None:
    loops: list[scf.ForOp] = []
    trips: list[int] = []
    loop: scf.ForOp | None = nest
    while loop is not None:
        lb, ub, step = _const(loop.lb), _const(loop.ub), _const(loop.step)
        if lb is None or ub is None or step is None or step <= 0:
            return None
        loops.append(loop)
        trips.append(max(0, -(-(ub - lb) // step)))
        inner = [o for o in loop.body.block.ops if isinstance(o, scf.ForOp)]
        if len(inner) > 1 or any(
            o.regions for o in loop.body.block.ops if not isinstance(o, scf.ForOp)
        ):
            return None
        loop = inner[0] if inner else None
    return _Chain(loops, trips)


def _slice_bytes(t: MemRefType) -> int | None:
    shape = t.get_shape()
    if len(shape) < 2 or any(d < 0 for d in shape):
        return None
    if not isinstance(t.layout, NoneAttr):
        return None
    elem = getattr(t.element_type, "bitwidth", 0) // 8
    if elem <= 0:
        return None
    return prod(shape[1:]) * elem


def _candidates(
    par: scf.ParallelOp, min_bytes: int, max_bytes: int
) -> dict[SSAValue, int]:
    """The arrays whose next slice the contract lets the pass prefetch."""
    o = par.body.block.args[0]
    uses: dict[SSAValue, list[Operation]] = {}
    for op in par.walk():
        for v in op.operands:
            if isinstance(v.type, MemRefType):
                uses.setdefault(v, []).append(op)
    found: dict[SSAValue, int] = {}
    for m, ops in uses.items():
        owner = m.owner
        where = owner if isinstance(owner, Operation) else owner.parent_op()
        if where is not None and par.is_ancestor(where):
            continue  # defined in the loop
        assert isinstance(m.type, MemRefType)
        size = _slice_bytes(m.type)
        if size is None or not min_bytes <= size <= max_bytes:
            continue
        ok = True
        for op in ops:
            if isinstance(op, PrefetchOp):
                continue
            if not isinstance(op, memref.LoadOp | vector.LoadOp):
                ok = False
                break
            indices = list(op.indices)
            if op.operands[0] != m or not indices or indices[0] != o:
                ok = False
                break
        if ok:
            found[m] = size
    return found


class _Builder(Builder):
    """xDSL's builder with index arithmetic that skips identities."""

    def val(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def index(self, value: int) -> SSAValue:
        return self.val(arith.ConstantOp.from_int_and_width(value, IndexType()))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if b == 0 or (isinstance(b, SSAValue) and _const(b) == 0):
            return a
        if _const(a) == 0 and isinstance(b, SSAValue):
            return b
        return self.val(
            arith.AddiOp(a, b if isinstance(b, SSAValue) else self.index(b))
        )

    def mul(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 1 else self.val(arith.MuliOp(a, self.index(b)))

    def div(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        if b == 1 or (isinstance(b, SSAValue) and _const(b) == 1):
            return a
        return self.val(
            arith.DivUIOp(a, b if isinstance(b, SSAValue) else self.index(b))
        )


def _prefetch_slice(
    par: scf.ParallelOp,
    m: SSAValue,
    quiet: list[_Chain],
    per: int,
    locality: int,
) -> None:
    t = m.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    elem = getattr(t.element_type, "bitwidth", 32) // 8
    size = prod(shape[1:]) * elem
    lines = -(-size // LINE_BYTES)
    total = sum(c.iterations for c in quiet)
    slots = total * per
    step = par.step[0]
    o = par.body.block.args[0]
    first = 0
    for chain in quiet:
        inner = chain.loops[-1]
        b = _Builder(InsertPoint.at_start(inner.body.block))
        # g = first + the nest's linear innermost iteration number
        g: SSAValue | None = None
        for level, loop in enumerate(chain.loops):
            iv = loop.body.block.args[0]
            k = iv if _const(loop.lb) == 0 else b.val(arith.SubiOp(iv, loop.lb))
            k = b.mul(b.div(k, loop.step), prod(chain.trips[level + 1 :]))
            g = k if g is None else b.add(g, k)
        assert g is not None
        g = b.add(g, first)
        nxt = b.add(o, step)
        for q in range(per):
            slot = b.add(b.mul(g, per), q)
            line = slot if slots == lines else b.div(b.mul(slot, lines), slots)
            e = b.mul(line, LINE_BYTES // elem)
            indices = [nxt]
            for d in range(1, len(shape)):
                x = b.div(e, prod(shape[d + 1 :]))
                if d > 1:
                    x = b.val(arith.RemUIOp(x, b.index(shape[d])))
                indices.append(x)
            b.insert(PrefetchOp(m, indices, locality=locality))
        first += chain.iterations


def prefetch_next_slice(
    module: ModuleOp,
    min_bytes: int = 16 << 10,
    max_bytes: int = 256 << 10,
    locality: int = 3,
) -> int:
    """Apply the contract (module docstring); the number of arrays prefetched."""
    if min_bytes < 0 or max_bytes < min_bytes or not 0 <= locality <= 3:
        raise TCError(
            "prefetch-next-slice: need 0 <= min-bytes <= max-bytes and "
            f"0 <= locality <= 3 (got {min_bytes}, {max_bytes}, {locality})"
        )
    count = 0
    for par in _outermost_parallel(module):
        if not par.step or _const(par.step[0]) is None:
            continue
        nests = [op for op in par.body.block.ops if isinstance(op, scf.ForOp)]
        for m, size in _candidates(par, min_bytes, max_bytes).items():
            quiet: list[_Chain] = []
            for nest in nests:
                if any(
                    isinstance(op, memref.LoadOp | vector.LoadOp)
                    and op.operands[0] == m
                    for op in nest.walk()
                ):
                    continue
                chain = _chain(nest)
                if chain is not None and chain.iterations > 0:
                    quiet.append(chain)
            lines = -(-size // LINE_BYTES)
            total = sum(c.iterations for c in quiet)
            if not total:
                continue
            per = -(-lines // total)
            if per > MAX_PER_ITERATION:
                continue
            _prefetch_slice(par, m, quiet, per, locality)
            count += 1
    return count


@dataclass(frozen=True)
class PrefetchNextSlicePass(ModulePass):
    """Prefetch the next parallel iteration's input slice from quiet nests.

    See the module docstring.
    """

    name = "prefetch-next-slice"

    min_bytes: int = 16 << 10
    max_bytes: int = 256 << 10
    locality: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        prefetch_next_slice(op, self.min_bytes, self.max_bytes, self.locality)


__all__ = ["PrefetchNextSlicePass", "prefetch_next_slice"]
