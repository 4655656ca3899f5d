"""Shared-memory promotion: rectangular boxes of read-only arrays.

A *scope* is a loop body, above every thread loop of its kernel, that holds
thread loops as ops of its own (`nests`): matmul's tile loop over `r_k`, or
the innermost block loop when the reduction is not tiled. For an array the
nests of a scope only read (and nothing in the kernel writes), each
`affine.load` of it in the nests gives, per subscript, the least and
greatest value over the loops between the load and the scope
(`linear.extreme`); when their offsets differ by numbers, the union is a
box `offset + [0, size)`. Its size is static when the differences are
numbers, else *dynamic*: a linear form, with no negative coefficient, of
values defined outside the kernel (the sizes), the same in every block of a
launch (an untiled member at generic sizes: `[0, K)`). A `Candidate` is
promoted when there is reuse (the nests' loads of it outnumber the box's
elements: an element is read by several threads or iterations; counted with
`NOMINAL` for each size when the box is dynamic) or a load is uncoalesced
(the thread-x IV in another subscript than the last, or with a stride); the
budget goes to the static boxes with the largest reuse first; dynamic
boxes (when asked for) are promoted after them, in dynamic shared memory,
where they fit (`dynamic.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.dialects import affine as taffine
from tcdialect.poly.codegen import GPU_PROCESSOR, GPU_SIZE
from tcdialect.transforms.affine_gpu_promote.kernel import (
    Kernel,
    element_bytes,
    thread_axis,
)
from tcdialect.transforms.affine_gpu_promote.linear import (
    MANY,
    Lin,
    Loop,
    enclosing_loops,
    extreme,
    is_loop,
    loop_range,
    subscripts,
    to_map,
)

#: Memory space of shared memory (docs/gpu.md).
SHARED_SPACE = 3
#: Shared-memory banks: a row of a multiple of this many elements gets one
#: more, so that a column's consecutive elements fall in different banks.
BANKS = 32
#: What a size (any SSA value in a dynamic extent or a loop's bounds) is
#: taken to be when the reuse of a dynamic box is estimated.
NOMINAL = 1024


@dataclass
class Candidate:
    """An array's box in one scope, and what promoting it takes."""

    kernel: Kernel
    scope: Block
    array: SSAValue
    #: the loads in the scope's nests, with their subscripts
    loads: list[tuple[affine.LoadOp, list[Lin]]]
    offset: list[Lin]
    #: the box's extents: numbers, or linear forms of sizes (dynamic)
    sizes: list[Lin]
    #: the first nest that reads the array: the copy goes before it
    first: Operation
    #: loads per element of the box
    reuse: float
    uncoalesced: bool

    @property
    def dynamic(self) -> bool:
        """Whether an extent is a run-time value."""
        return any(s.constant is None for s in self.sizes)

    @property
    def shape(self) -> list[int]:
        """The buffer's shape: the box (`DYNAMIC_INDEX` for a dynamic
        extent), the innermost extent padded by one when it is a multiple of
        `BANKS`, or even and read down a column by the threads along x
        (`read_down_columns`): an odd row puts consecutive elements of a
        column in different banks, where a row of 16 put 16 threads' reads
        in 2 banks, 8 to a bank. (A dynamic innermost extent is rounded up
        to an odd number in any case.)"""
        shape = [
            DYNAMIC_INDEX if s.constant is None else s.constant for s in self.sizes
        ]
        last = shape[-1]
        if (
            len(shape) > 1
            and last > 0
            and (last % BANKS == 0 or (last % 2 == 0 and self.read_down_columns))
        ):
            shape[-1] += 1
        return shape

    @property
    def read_down_columns(self) -> bool:
        """Whether a load of the box takes the index of a thread loop along x
        in a subscript other than the innermost: consecutive threads then
        read elements a row apart."""
        for load, subs in self.loads:
            xs: set[SSAValue] = set()
            parent = load.parent_op()
            while parent is not None:
                if thread_axis(parent) == "x":
                    xs.update(a for r in parent.regions for a in r.block.args)
                parent = parent.parent_op()
            if any(v in xs for lin in subs[:-1] for v in lin.coef):
                return True
        return False

    @property
    def bytes(self) -> int:
        """The static buffer's bytes (a dynamic one's are known at launch)."""
        t = self.array.type
        assert isinstance(t, MemRefType) and not self.dynamic
        per = element_bytes(t)
        assert per is not None
        return per * math.prod(self.shape)


def scopes(k: Kernel) -> list[Block]:
    """The loop bodies of `k` above its thread loops that hold thread loops
    directly, outermost first."""
    out: list[Block] = []

    def visit(op: Operation) -> None:
        if thread_axis(op) is not None:
            return
        for region in op.regions:
            for block in region.blocks:
                if is_loop(op) and any(thread_axis(o) for o in block.ops):
                    out.append(block)
                for inner in block.ops:
                    visit(inner)

    visit(k.top)
    return out


def streams(scope: Block) -> bool:
    """Whether `scope` is the body of an `affine.for` that may run more than
    once and tiles a loop that the threads run in order: some `affine.for`
    inside a thread loop of the scope has bounds that use the scope's IV
    (matmul's tile loop over `r_k`). Each iteration then brings a new slice
    of the operands, which many threads read many times."""
    loop = scope.parent_op()
    if not isinstance(loop, affine.ForOp):
        return False
    r = loop_range(loop)
    if r is not None and r.trips <= 1:
        return False
    iv = scope.args[0]
    for op in scope.walk():
        if not isinstance(op, affine.ForOp) or op is loop:
            continue
        bounds = [*op.lowerBoundOperands, *op.upperBoundOperands]
        inside = any(thread_axis(p) is not None for p in _parents_until(op, loop))
        if inside and iv in bounds:
            return True
    return False


def _parents_until(op: Operation, stop: Operation) -> list[Operation]:
    out: list[Operation] = []
    p = op.parent_op()
    while p is not None and p is not stop:
        out.append(p)
        p = p.parent_op()
    return out


def _available(v: SSAValue, scope: Block, first: Operation) -> bool:
    """Whether `v` can be used right before `first` (an op of `scope`)."""
    owner = v.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    if isinstance(owner, Operation) and block is scope:
        for op in scope.ops:
            if op is first:
                return False
            if op is owner:
                return True
    b: Block | None = scope
    while b is not None:
        if b is block:
            return True
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False


def nominal(lin: Lin) -> int:
    """`lin` with `NOMINAL` for each of its values (the estimate of a size)."""
    return lin.const + NOMINAL * sum(lin.coef.values())


def _trips(loop: Loop) -> float:
    """A loop's trip count, `NOMINAL` sizes for one without a `Range`."""
    if loop.range is not None:
        return loop.range.trips
    if loop.lo is None or loop.hi is None:
        return NOMINAL
    return max(1, nominal(loop.hi - loop.lo) + 1)


@dataclass
class _Box:
    """The box of one load over the loops between it and its scope."""

    offset: list[Lin]
    sizes: list[Lin]
    #: how many times the load runs per kernel block (`MANY` for loops
    #: without a `Range`), and that count with `NOMINAL` sizes
    runs: float
    nominal_runs: float
    uncoalesced: bool


def _box(load: affine.LoadOp, subs: list[Lin], scope: Block) -> _Box | None:
    """The `_Box` of one load over the loops between it and `scope`; None if
    it has no known bounds."""
    ancestor = load.parent_op()
    while ancestor is not None and ancestor is not scope.parent_op():
        if not (is_loop(ancestor) or isinstance(ancestor, affine.IfOp)):
            return None
        ancestor = ancestor.parent_op()
    loops = enclosing_loops(load, scope)
    limits = [loop.limits for loop in loops]
    offset: list[Lin] = []
    sizes: list[Lin] = []
    for sub in subs:
        lo = extreme(sub, limits, highest=False)
        hi = extreme(sub, limits, highest=True)
        if lo is None or hi is None:
            return None
        offset.append(lo)
        sizes.append(hi - lo + 1)
    runs = math.prod(
        loop.range.trips if loop.range is not None else MANY for loop in loops
    )
    x = [loop.iv for loop in loops if thread_axis(loop.op) == "x"]
    uncoalesced = False
    if x:
        coefs = [sub.coef.get(x[-1], 0) for sub in subs]
        uncoalesced = any(coefs[:-1]) or abs(coefs[-1]) > 1
    nominal_runs = math.prod(_trips(loop) for loop in loops)
    return _Box(offset, sizes, runs, nominal_runs, uncoalesced)


def _outside(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined outside `op` (and its regions)."""
    owner = v.owner
    at: Operation | None = owner if isinstance(owner, Operation) else owner.parent_op()
    while at is not None:
        if at is op:
            return False
        at = at.parent_op()
    return True


def _launch_uniform(size: Lin, k: Kernel) -> bool:
    """Whether an extent is static, or a sum of sizes with positive
    coefficients, all defined outside the kernel (the same in every block)."""
    return all(c > 0 and _outside(v, k.top) for v, c in size.coef.items())


def candidates(k: Kernel, scope: Block, dynamic: bool = False) -> list[Candidate]:
    """The arrays of `scope` worth promoting, with their boxes (also the
    dynamic ones when `dynamic`)."""
    loads: dict[SSAValue, list[affine.LoadOp]] = {}
    first: dict[SSAValue, Operation] = {}
    other: set[SSAValue] = set()
    for nest in [op for op in scope.ops if thread_axis(op) is not None]:
        for op in nest.walk():
            if isinstance(op, affine.LoadOp):
                loads.setdefault(op.memref, []).append(op)
                first.setdefault(op.memref, nest)
                continue
            other.update(v for v in op.operands if isinstance(v.type, MemRefType))
    out: list[Candidate] = []
    for array, uses in loads.items():
        t = array.type
        if (
            array in other
            or array in k.written
            or not isinstance(t, MemRefType)
            or not t.get_shape()
            or element_bytes(t) is None
        ):
            continue
        c = _candidate(k, scope, array, uses, first[array])
        if c is not None and (dynamic or not c.dynamic):
            out.append(c)
    return out


def _candidate(
    k: Kernel,
    scope: Block,
    array: SSAValue,
    loads: Sequence[affine.LoadOp],
    first: Operation,
) -> Candidate | None:
    boxes: list[_Box] = []
    accesses: list[tuple[affine.LoadOp, list[Lin]]] = []
    for load in loads:
        subs = subscripts(load)
        box = None if subs is None else _box(load, subs, scope)
        if subs is None or box is None:
            return None
        if any(not _available(v, scope, first) for o in box.offset for v in o.coef):
            return None
        boxes.append(box)
        accesses.append((load, subs))
    # the union: the offsets must differ by numbers, and so must the ends
    base = boxes[0].offset
    lows = [0] * len(base)
    highs = list(boxes[0].sizes)
    for box in boxes[1:]:
        for d, (o, s) in enumerate(zip(box.offset, box.sizes, strict=True)):
            shift = (o - base[d]).constant
            if shift is None:
                return None
            lows[d] = min(lows[d], shift)
            longer = (s + shift - highs[d]).constant
            if longer is None:
                return None
            if longer > 0:
                highs[d] = s + shift
    offset = [b + lo for b, lo in zip(base, lows, strict=True)]
    sizes = [hi - lo for lo, hi in zip(lows, highs, strict=True)]
    if not all(_launch_uniform(s, k) for s in sizes):
        return None
    static = all(s.constant is not None for s in sizes)
    volume = math.prod(max(1, nominal(s)) for s in sizes)
    if (static and volume == 1) or not k.axes:
        return None  # nothing for the threads to share the copy of
    runs = sum(b.runs if static else b.nominal_runs for b in boxes)
    uncoalesced = any(b.uncoalesced for b in boxes)
    reuse = runs / volume
    if reuse <= 1 and not uncoalesced:
        return None
    return Candidate(
        k, scope, array, accesses, offset, sizes, first, reuse, uncoalesced
    )


# -- the rewrite ------------------------------------------------------------------------


def kernel_start(c: Candidate) -> InsertPoint:
    """Where the buffers and extents go: in the block of the kernel's
    top-level op that holds the scope, after the buffers (and their
    extents) already there."""
    block = c.scope
    while (parent := block.parent_op()) is not c.kernel.top:
        assert parent is not None and parent.parent_block() is not None
        block = parent.parent_block()
        assert block is not None
    op = block.first_op
    while isinstance(
        op,
        memref.AllocaOp
        | memref.DimOp
        | arith.ConstantOp
        | affine.ApplyOp
        | arith.MaxSIOp,
    ):
        op = op.next_op
    assert op is not None
    return InsertPoint.before(op)


def extents(c: Candidate, start: InsertPoint) -> list[SSAValue]:
    """The dynamic extents of the buffer of `c`, computed at `start`: each
    box extent that is a run-time value, at least 0; the innermost one (of
    a box of more than one dimension) rounded up to an odd number against
    bank conflicts::

        %0 = affine.apply affine_map<()[s0] -> ((s0 floordiv 2) * 2 + 1)>()[%K]
    """
    out: list[SSAValue] = []
    rank = len(c.sizes)
    for d, size in enumerate(c.sizes):
        if size.constant is not None:
            continue
        m, operands = to_map([size])
        if d == rank - 1 and rank > 1:
            (e,) = m.results
            m = AffineMap(m.num_dims, m.num_symbols, ((e // 2) * 2 + 1,))
        ops: list[Operation] = [apply := affine.ApplyOp(operands, AffineMapAttr(m))]
        value = apply.result
        if size.const < 0:
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            ops += [zero, most := arith.MaxSIOp(value, zero)]
            value = most.result
        Rewriter.insert_op(ops, start)
        out.append(value)
    return out


def allocate(
    c: Candidate, start: InsertPoint, dynamic_sizes: Sequence[SSAValue] = ()
) -> SSAValue:
    """The buffer of `c` in shared memory, allocated at `start`."""
    t = c.array.type
    assert isinstance(t, MemRefType)
    alloca = memref.AllocaOp.get(
        t.get_element_type(),
        shape=c.shape,
        dynamic_sizes=dynamic_sizes,
        memory_space=IntegerAttr(SHARED_SPACE, i32),
    )
    if c.array.name_hint:
        alloca.memref.name_hint = f"{c.array.name_hint}_shared"
    Rewriter.insert_op(alloca, start)
    return alloca.memref


def redirect(c: Candidate, buffer: SSAValue) -> None:
    """Make the loads of `c` read `buffer`, at their subscripts minus the
    box's offset."""
    for load, subs in c.loads:
        m, operands = to_map(s - o for s, o in zip(subs, c.offset, strict=True))
        new = taffine.LoadOp(buffer, operands, AffineMapAttr(m), load.result.type)
        Rewriter.replace_op(load, new)


def promote(c: Candidate) -> None:
    """Allocate the static box in shared memory, copy it in before its
    first nest with the kernel's threads, and make the nests' loads read it
    (a dynamic one: `dynamic.promote_dynamic`)."""
    start = kernel_start(c)
    buffer = allocate(c, start)
    Rewriter.insert_op(copy_in(c, buffer, start), InsertPoint.before(c.first))
    redirect(c, buffer)


def _clamps(
    c: Candidate, t: MemRefType, d: int, start: InsertPoint
) -> tuple[list[Lin], list[Lin]]:
    """The lower and upper bounds of the copy loop along box dimension `d`:
    `max(0, -offset)` to `min(size, extent - offset)`, without the clamps
    the loops around the scope show are not needed."""
    outer = [loop.limits for loop in enclosing_loops(c.first)]
    o, size = c.offset[d], c.sizes[d]
    lbs, ubs = [Lin()], [size]
    least = extreme(o, outer, highest=False)
    if least is None or least.constant is None or least.constant < 0:
        lbs.append(o.scale(-1))
    n = t.get_shape()[d]
    most = extreme(o, outer, highest=True)
    if n >= 0:
        end = None if most is None else (most + size).constant
        if end is None or end > n:
            ubs.append(Lin(const=n) - o)
        return lbs, ubs
    index = arith.ConstantOp(IntegerAttr(d, IndexType()))
    dim = memref.DimOp(c.array, index)
    Rewriter.insert_op([index, dim], start)
    ubs.append(Lin.of(dim.result) - o)
    return lbs, ubs


def copy_in(c: Candidate, shared: SSAValue, start: InsertPoint) -> list[Operation]:
    """The copy nest: one loop per box dimension (none for a dimension of
    size 1 that needs no clamping), the innermost ones of more than one
    element mapped to the kernel's thread axes (the innermost to x, so that
    the reads coalesce), each clamped to the array (`_clamps`)."""
    t = c.array.type
    assert isinstance(t, MemRefType)
    rank = len(c.sizes)
    bounds = [_clamps(c, t, d, start) for d in range(rank)]
    several = [s.constant is None or s.constant > 1 for s in c.sizes]
    looped = [
        d
        for d in range(rank)
        if several[d] or len(bounds[d][0]) + len(bounds[d][1]) > 2
    ]
    axes = iter(c.kernel.axes)
    mapped: dict[int, str] = {}
    for d in reversed(looped):
        if several[d] and (axis := next(axes, None)) is not None:
            mapped[d] = axis
    blocks = {d: Block(arg_types=[IndexType()]) for d in looped}
    index = [Lin.of(blocks[d].args[0]) if d in blocks else Lin() for d in range(rank)]
    src, src_ops = to_map(o + i for o, i in zip(c.offset, index, strict=True))
    dst, dst_ops = to_map(index)
    load = taffine.LoadOp(c.array, src_ops, AffineMapAttr(src), t.get_element_type())
    store = taffine.StoreOp(load.result, shared, dst_ops, AffineMapAttr(dst))
    body: list[Operation] = [load, store]
    for d in reversed(looped):
        block = blocks[d]
        block.args[0].name_hint = f"i{d}"
        block.add_ops([*body, affine.YieldOp.get()])
        lbs, ubs = bounds[d]
        lmap, lops = to_map(lbs)
        umap, uops = to_map(ubs)
        if d in mapped:
            loop = taffine.parallel_op(
                [*lops, *uops], lmap, [len(lbs)], umap, [len(ubs)], [1], Region(block)
            )
            loop.attributes[GPU_PROCESSOR] = StringAttr(f"thread_{mapped[d]}")
            loop.attributes[GPU_SIZE] = IntegerAttr(c.kernel.block[mapped[d]], 64)
        else:
            loop = affine.ForOp.from_region(
                lops,
                uops,
                [],
                [],
                AffineMapAttr(lmap),
                AffineMapAttr(umap),
                Region(block),
            )
        body = [loop]
    return body


def select(cands: list[Candidate], budget: int) -> list[Candidate]:
    """The static boxes greedy within `budget` bytes per kernel, the largest
    reuse first (uncoalesced boxes without reuse last), in program order on
    ties; then every dynamic box, in the same order (`dynamic.py` versions
    the kernel on whether they fit what the static ones left)."""
    order = sorted(
        range(len(cands)),
        key=lambda i: (-(cands[i].reuse if cands[i].reuse > 1 else 0), i),
    )
    used: dict[int, int] = {}
    out: list[Candidate] = []
    for i in order:
        c = cands[i]
        key = id(c.kernel)
        if not c.dynamic and used.get(key, 0) + c.bytes <= budget:
            used[key] = used.get(key, 0) + c.bytes
            out.append(c)
    return out + [cands[i] for i in order if cands[i].dynamic]
