"""`nontemporal-stores{vector-width=8 min-bytes=8388608}`: large outputs bypass the caches.

A loops → loops pass (docs/pipeline.md: `loops` stage), run after
`outline-parallel-loops` and before `expand-math-polynomials`. A loop that
streams a large array out, one element per iteration, also reads it in: an
ordinary store first fetches the line it writes (read for ownership), and
the line is written back later (a copy moves 3 bytes per byte copied). A
non-temporal store writes whole lines straight to memory. x86's
non-temporal vector stores need addresses aligned to the vector's size (LLVM
splits an unaligned one into scalar stores, slower than ordinary ones),
hence the peeled loop below; stores that cannot be aligned are left alone.
Measurements: docs/perf/nontemporal-stores.md.

Contract. An innermost `scf.for %i = %lb to %ub step 1` without
`iter_args` is rewritten when

- its body holds one `memref.store %v, %M[%j..., %i]` with `%i` the last
  subscript and every other subscript defined outside the loop;
- `%M` has the identity layout, a `f32` or `f64` element type and at least
  `min-bytes` bytes (an array that size does not survive in the caches a
  core shares until it is read again): known from a static shape, else
  checked at run time from its extents (`memref.dim`), the vector loop
  running only for arrays that large;
- the rest of the body is `memref.load`s of other arrays (subscripted like
  the store, with the identity layout, or not by `%i` at all), scalar
  `arith.constant`s and elementwise float ops (`_ELEMENTWISE`; with `f32`
  also the math ops that `expand-math-polynomials` expands), whose results
  have `%M`'s element type, and `%i` appears nowhere else;
- its trip count, when known, is at least `4 * VL` (`VL` = vector-width
  lanes of a 32-bit element, scaled to the element type; `vector-width`
  must be a positive power of two, default 8: 256-bit vectors, the
  x86-64-v3 baseline, the same on every machine; a target passes its own).

It becomes three loops: the original body up to the first element of
`%M[%j..., *]` whose address is a multiple of `VL * element size` (at most
`VL - 1` iterations; all of them when the address is not a multiple of the
element size), the body on `vector<VL x T>` values, with loads along `%i`
as `vector.load`s, the others broadcast, and the store
`vector.store ... {alignment = VL * size, nontemporal = true}`, and the
original body for the at most `VL - 1` iterations left::

    scf.for %d = %c0 to %c1024 step %c1 {
      %x = memref.load %e[%d] : memref<1024xf32>
      %s = memref.load %sum[] : memref<f32>
      %q = arith.divf %x, %s : f32
      memref.store %q, %O[%n, %d] : memref<4096x1024xf32>
    }

becomes (16 lanes)::

    %p = memref.extract_aligned_pointer_as_index %O : ... -> index
    ... %vs = first aligned %d (or %c1024), %ve = %vs + 16 * ((1024 - %vs) / 16)
    scf.for %d = %c0 to %vs step %c1 { <the body> }
    scf.for %d = %vs to %ve step %c16 {
      %x = vector.load %e[%d] : memref<1024xf32>, vector<16xf32>
      %s = memref.load %sum[] : memref<f32>
      %b = vector.broadcast %s : f32 to vector<16xf32>
      %q = arith.divf %x, %b : vector<16xf32>
      vector.store %q, %O[%n, %d] {alignment = 64 : i64, nontemporal = true} : ...
    }
    scf.for %d = %ve to %c1024 step %c1 { <the body> }

(`%vs` is `%ub`, so that the first loop does all the work, when the
address is not a multiple of the element size or, with dynamic extents,
the array is smaller than `min-bytes`.)

Then, in each function where every store to such an `%M` lies in a loop the
pass rewrote, the `memref.prefetch ... write` hints of `%M` (register-tile's
next-row prefetches) are erased: they would fetch the lines the stores
bypass. The values stored are the same: the ops are the same elementwise
ops, on vectors. Non-temporal stores are weakly ordered; the threads of
`tcrt.parallel_for` publish them at the join, whose locked instructions
order them on x86. Loops that store elsewhere too, carry values, read `%M`
or compute with `%i` are left alone, as are arrays below `min-bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    BoolAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    VectorType,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects.memref import PrefetchOp
from tcdialect.transforms.expand_math_polynomials import EXPANDED_OPS
from tcdialect.transforms.ir_values import constant_index, defined_outside

_ELEMENTWISE = frozenset(
    (
        "arith.addf arith.subf arith.mulf arith.divf arith.maximumf "
        "arith.minimumf arith.maxnumf arith.minnumf arith.negf "
        "math.fma math.absf math.sqrt math.rsqrt math.floor math.ceil"
    ).split()
)
"""Float ops cloned onto vectors as they are (convert-to-llvm lowers each on
vectors: an LLVM instruction or intrinsic)."""

VECTOR_WIDTH = 8
"""Default `vector-width`: 8 lanes of a 32-bit element, 256-bit vectors (the
x86-64-v3 baseline), the same on every machine; a target passes its own."""

MIN_BYTES = 8 << 20
"""Default `min-bytes`: a quarter of the host's 32 MiB L3, which its cores
share."""


def _is_float(t: object) -> bool:
    return isinstance(t, Float32Type | Float64Type)


@dataclass
class _Match:
    loop: scf.ForOp
    store: memref.StoreOp
    lanes: int
    min_bytes: int
    """The size from which `%M` is streamed, checked at run time (0: none)."""


def _match(loop: scf.ForOp, lanes32: int, min_bytes: int) -> _Match | None:
    if loop.iter_args or constant_index(loop.step) != 1:
        return None
    iv = loop.body.block.args[0]
    ops = list(loop.body.block.ops)[:-1]
    stores = [o for o in ops if isinstance(o, memref.StoreOp)]
    if len(stores) != 1:
        return None
    store = stores[0]
    m = store.memref.type
    if not isinstance(m, MemRefType) or not _is_float(m.element_type):
        return None
    if not isinstance(m.layout, NoneAttr):
        return None
    elem = m.element_type.bitwidth // 8
    if all(d >= 0 for d in m.get_shape()):
        if prod(m.get_shape()) * elem < min_bytes:
            return None
        min_bytes = 0  # no run-time check
    idx = list(store.indices)
    if not idx or idx[-1] != iv or any(not defined_outside(v, loop) for v in idx[:-1]):
        return None
    lanes = max(1, lanes32 * 32 // m.element_type.bitwidth)
    lb, ub = constant_index(loop.lb), constant_index(loop.ub)
    if lb is not None and ub is not None and ub - lb < 4 * lanes:
        return None
    for o in ops:
        if o is store:
            continue
        if o.regions or len(o.results) != 1:
            return None
        if isinstance(o, memref.LoadOp):
            if o.memref == store.memref:
                return None
            sub = list(o.indices)
            if any(v == iv for v in sub[:-1]):
                return None
            if any(v != iv and not defined_outside(v, loop) for v in sub):
                return None
            t = o.memref.type
            if sub[-1:] == [iv] and not (
                isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)
            ):
                return None  # a vector load needs contiguous elements
            continue
        if isinstance(o, arith.ConstantOp):
            if isinstance(o.result.type, VectorType):
                return None
            continue
        elementwise = o.name in _ELEMENTWISE or (
            o.name in EXPANDED_OPS and isinstance(m.element_type, Float32Type)
        )
        if not elementwise or o.results[0].type != m.element_type:
            return None
        if any(v == iv for v in o.operands):
            return None
    if store.value.type != m.element_type:
        return None
    return _Match(loop, store, lanes, min_bytes)


class _Builder(Builder):
    """xDSL's builder, returning the result of each op it inserts."""

    def val(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def index(self, value: int) -> SSAValue:
        return self.val(arith.ConstantOp.from_int_and_width(value, IndexType()))


def _vector_loop(
    match: _Match, lo: SSAValue, hi: SSAValue, step: SSAValue
) -> scf.ForOp:
    """The body of `match.loop` on vectors, from `lo` to `hi` by `step`."""
    loop, lanes = match.loop, match.lanes
    old_iv = loop.body.block.args[0]
    block = Block(arg_types=[IndexType()])
    iv = block.args[0]
    iv.name_hint = old_iv.name_hint
    scalar: dict[SSAValue, SSAValue] = {old_iv: iv}
    vec: dict[SSAValue, SSAValue] = {}

    def emit(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    def scalar_of(v: SSAValue) -> SSAValue:
        return scalar.get(v, v)

    def vector_of(v: SSAValue) -> SSAValue:
        if v not in vec:
            x = scalar_of(v)
            vec[v] = emit(vector.BroadcastOp(x, VectorType(x.type, [lanes])))
        return vec[v]

    for o in list(loop.body.block.ops)[:-1]:
        if o is match.store:
            st = vector.StoreOp(
                vector_of(o.operands[0]),
                o.operands[1],
                [scalar_of(v) for v in o.operands[2:]],
                nontemporal=BoolAttr.from_bool(True),
            )
            elem = o.operands[0].type.bitwidth // 8  # type: ignore[union-attr]
            st.attributes["alignment"] = IntegerAttr(lanes * elem, i64)
            block.add_op(st)
            continue
        res = o.results[0]
        if isinstance(o, memref.LoadOp) and list(o.indices)[-1:] == [old_iv]:
            t = VectorType(res.type, [lanes])
            sub = [scalar_of(v) for v in o.indices]
            vec[res] = emit(vector.LoadOp(o.memref, sub, t))
        elif any(v in vec for v in o.operands):
            new = type(o).create(
                operands=[vector_of(v) for v in o.operands],
                result_types=[VectorType(res.type, [lanes])],
                properties=dict(o.properties),
                attributes=dict(o.attributes),
            )
            vec[res] = emit(new)
        else:  # loads not along %i, constants, ops on them
            new = o.clone()
            for i, v in enumerate(o.operands):
                new.operands[i] = scalar_of(v)
            scalar[res] = emit(new)
        (vec.get(res) or scalar[res]).name_hint = res.name_hint
    block.add_op(scf.YieldOp())
    return scf.ForOp(lo, hi, step, [], Region(block))


def _rewrite(match: _Match) -> list[scf.ForOp]:
    """Peel, vector and remainder loops in place of `match.loop`."""
    loop, store, lanes = match.loop, match.store, match.lanes
    m = store.memref.type
    assert isinstance(m, MemRefType)
    elem = m.element_type.bitwidth // 8  # type: ignore[union-attr]
    width = lanes * elem
    b = _Builder(InsertPoint.before(loop))
    # the address of %M[%j..., %lb]
    shape = m.get_shape()
    extents: dict[int, SSAValue] = {}

    def extent(k: int) -> SSAValue:
        if k in extents:
            return extents[k]
        if shape[k] >= 0:
            extents[k] = b.index(shape[k])
        else:
            dim = memref.DimOp(store.memref, b.index(k))
            extents[k] = b.val(dim)
        return extents[k]

    linear: SSAValue | None = None
    for k, v in enumerate([*store.indices][:-1] + [loop.lb]):
        linear = v if linear is None else b.val(arith.AddiOp(linear, v))
        if k + 1 < len(shape):
            linear = b.val(arith.MuliOp(linear, extent(k + 1)))
    assert linear is not None
    base = b.val(memref.ExtractAlignedPointerAsIndexOp.get(store.memref))
    addr = b.val(arith.AddiOp(base, b.val(arith.MuliOp(linear, b.index(elem)))))
    # elements up to the next multiple of `width` bytes, if it is reachable
    misaligned = b.val(arith.AndIOp(addr, b.index(width - 1)))
    gap = b.val(arith.SubiOp(b.index(width), misaligned))
    gap = b.val(arith.AndIOp(gap, b.index(width - 1)))
    peel = b.val(arith.DivUIOp(gap, b.index(elem)))
    start = b.val(arith.MinSIOp(b.val(arith.AddiOp(loop.lb, peel)), loop.ub))
    odd = b.val(arith.AndIOp(addr, b.index(elem - 1)))
    ok = b.val(arith.CmpiOp(odd, b.index(0), "eq"))
    if match.min_bytes:  # dynamic extents: is %M as large as min-bytes?
        size = b.index(elem)
        for k in range(len(shape)):
            size = b.val(arith.MuliOp(size, extent(k)))
        big = b.val(arith.CmpiOp(size, b.index(match.min_bytes), "uge"))
        ok = b.val(arith.AndIOp(ok, big))
    vs = b.val(arith.SelectOp(ok, start, loop.ub))
    span = b.val(arith.SubiOp(loop.ub, vs))
    full = b.val(arith.DivUIOp(span, b.index(lanes)))
    ve = b.val(arith.AddiOp(vs, b.val(arith.MuliOp(full, b.index(lanes)))))
    step = b.index(lanes)
    ub = loop.ub
    rest = loop.clone()
    rest.operands[0] = ve
    rest.operands[1] = ub
    loop.operands[1] = vs
    main = _vector_loop(match, vs, ve, step)
    parent = loop.parent_block()
    assert parent is not None
    parent.insert_ops_after([main, rest], loop)
    return [loop, main, rest]


def _stores_of(fn: func.FuncOp, m: SSAValue) -> list[Operation]:
    return [
        o
        for o in fn.walk()
        if m in o.operands
        and o.name
        in ("memref.store", "vector.store", "vector.maskedstore", "affine.store")
    ]


def nontemporal_stores(
    module: ModuleOp, vector_width: int = VECTOR_WIDTH, min_bytes: int = MIN_BYTES
) -> int:
    """Rewrite every loop the contract allows; the number rewritten."""
    if vector_width < 1 or vector_width & (vector_width - 1):
        raise TCError(
            "nontemporal-stores: vector-width must be a positive power of two, "
            f"not {vector_width}"
        )
    if min_bytes < 0:
        raise TCError(f"nontemporal-stores: min-bytes must be >= 0, not {min_bytes}")
    count = 0
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp)]:
        matches = [
            mt
            for o in fn.walk()
            if isinstance(o, scf.ForOp)
            and (mt := _match(o, vector_width, min_bytes)) is not None
        ]
        streamed: dict[SSAValue, list[scf.ForOp]] = {}
        for mt in matches:
            streamed.setdefault(mt.store.memref, []).extend(_rewrite(mt))
            count += 1
        for m, loops in streamed.items():
            if all(any(lp.is_ancestor(s) for lp in loops) for s in _stores_of(fn, m)):
                for o in list(fn.walk()):
                    if (
                        isinstance(o, PrefetchOp)
                        and o.memref == m
                        and o.isWrite.value.data != 0
                    ):
                        o.detach()
                        o.erase()
    return count


@dataclass(frozen=True)
class NontemporalStoresPass(ModulePass):
    """Stream large arrays out with aligned non-temporal vector stores.

    See the module docstring.
    """

    name = "nontemporal-stores"

    vector_width: int = VECTOR_WIDTH
    min_bytes: int = MIN_BYTES

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        nontemporal_stores(op, self.vector_width, self.min_bytes)


__all__ = ["NontemporalStoresPass", "nontemporal_stores"]
