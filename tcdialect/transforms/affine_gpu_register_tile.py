"""`affine-gpu-register-tile{max-registers=64}`: per-thread register tiles for the GPU.

An affine → affine pass on the output of `affine-gpu-promote` (mapped loops
are one-dimensional `affine.parallel`s with `tc.gpu_processor` and
`tc.gpu_size`), before `convert-affine-to-scf`. A thread loop that is
longer than its block, `E = c * B` iterations over `B` threads, runs cyclic:
thread `t` takes the iterations `t, t + B, ..., t + (c - 1) * B`, one after
the other, each with its own pass over the reduction below it (matmul's
`r_k`). Each such iteration reads its operands anew, so the loads per
multiply-add stay at two. This pass gives every thread its `c` iterations at
once: the loop is cut to `B` iterations (one per thread) and its body is
copied `c` times (the product of the factors for a nest of thread loops),
with the loop IV `v` replaced by `v + B * i` in copy `i`, and the copies'
reduction loops are *jammed*: one loop whose iteration runs one iteration of
every copy, carrying all their accumulators in `iter_args`. In matmul with
64x64 tiles on 16x16 threads each thread then holds a 4x4 tile of `C` in
registers and, per `r_k`, loads 4 elements of `A` and 4 of `B` for 16
multiply-adds (LLVM merges the loads that the copies share).

Contract. A nest of thread loops (each the only op of its parent's body,
along distinct axes, none a cross-thread reduction) is tiled when its
innermost body holds exactly one `affine.for` with `iter_args` and no other
loop, and the product of the factors `E / B` of its loops is more than one:
a loop with one lower and one upper bound `E` apart, `E` a multiple of its
`tc.gpu_size` `B`, has the factor `E / B`; any other (a tile clamped at the
edge of the problem, an extent that is not a multiple) has 1 and stays as
it is, cyclic. The copies of every other op run in program order, op by op
(copy-major inside each op); loops with `iter_args` below the jammed one are
jammed too when their bounds are the same in every copy. It computes what
the input computed: the iterations of a thread loop are independent
(`affine.parallel`), so any interleaving of them that keeps each
iteration's own order is the same computation. Nests with more than
`max-registers` accumulators in all (registers per thread are finite: 255
on every CUDA GPU, and spilling is slower than the cyclic loop), nests
whose loops are not multiples of their block, and everything outside thread
loops are left alone.

Example (64x64 tile of matmul, 16x16 threads)::

    affine.parallel %m = %c0 * 64 to %c0 * 64 + 64 {            // thread_y, 16
      affine.parallel %n = %c1 * 64 to %c1 * 64 + 64 {          // thread_x, 16
        %3 = affine.load %C[%m, %n]
        %4 = affine.for %r_k = ... iter_args(%5 = %3) { ... %A_shared[%m ...] ... }
        affine.store %4, %C[%m, %n]

becomes::

    affine.parallel %m = %c0 * 64 to %c0 * 64 + 16 {            // thread_y, 16
      affine.parallel %n = %c1 * 64 to %c1 * 64 + 16 {          // thread_x, 16
        %n1 = affine.apply (d0) -> (d0 + 16) (%n)  ...  %m3 = ... (d0 + 48) (%m)
        %3 = affine.load %C[%m, %n]  ...  16 loads
        %4:16 = affine.for %r_k = ... iter_args(%5 = %3, ...) { 16 bodies }
        affine.store %4#0, %C[%m, %n]  ...  16 stores
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, func
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.diagnostics import TCError
from tcdialect.poly.codegen import GPU_SIZE
from tcdialect.transforms.affine_gpu_promote.kernel import is_reduce, thread_axis
from tcdialect.transforms.affine_gpu_promote.linear import loop_range

#: The default cap on accumulators per thread: a quarter of the 255
#: registers a thread may have, leaving the rest to operands and addresses.
MAX_REGISTERS = 64

#: One copy of a nest's body: what each original value is in that copy.
Copy = dict[SSAValue, SSAValue]


def _loops_inside(op: Operation) -> bool:
    return any(
        isinstance(o, affine.ForOp | affine.ParallelOp)
        for o in op.walk()
        if o is not op
    )


def _body_ops(loop: Operation) -> list[Operation]:
    ops = list(loop.regions[0].blocks[0].ops)
    return ops[:-1]  # the terminator


def _factor(loop: affine.ParallelOp) -> int | None:
    """`E / B` for a thread loop of `E` iterations over `B` threads (None
    when the bounds are not one each, `E` apart, with `B` dividing `E`)."""
    if len(loop.lowerBoundsMap.data.results) != 1:
        return None
    if len(loop.upperBoundsMap.data.results) != 1:
        return None
    size = loop.attributes.get(GPU_SIZE)
    r = loop_range(loop)
    if not isinstance(size, IntegerAttr) or r is None or r.span + 1 != r.trips:
        return None
    b = size.value.data
    return r.trips // b if r.trips % b == 0 else None


@dataclass
class _Nest:
    loops: list[affine.ParallelOp]
    factors: list[int]

    @property
    def copies(self) -> int:
        n = 1
        for f in self.factors:
            n *= f
        return n


def _nest(top: affine.ParallelOp) -> _Nest | None:
    """The thread nest rooted at `top`, if it can be tiled (module doc)."""
    loops = [top]
    while True:
        ops = _body_ops(loops[-1])
        inner = ops[0] if len(ops) == 1 else None
        if inner is None or thread_axis(inner) is None:
            break
        assert isinstance(inner, affine.ParallelOp)
        loops.append(inner)
    axes = [thread_axis(loop) for loop in loops]
    if len(set(axes)) != len(axes) or any(is_reduce(loop) for loop in loops):
        return None
    # a loop whose extent is not a multiple of its block stays cyclic
    factors = [_factor(loop) or 1 for loop in loops]
    body = _body_ops(loops[-1])
    jammed = [o for o in body if isinstance(o, affine.ForOp) and o.results]
    if len(jammed) != 1:
        return None
    if any(
        _loops_inside(o) or isinstance(o, affine.ForOp | affine.ParallelOp)
        for o in body
        if o is not jammed[0]
    ):
        return None
    nest = _Nest(loops, factors)
    return nest if nest.copies > 1 else None


def _accumulators(nest: _Nest) -> int:
    body = _body_ops(nest.loops[-1])
    loop = next(o for o in body if isinstance(o, affine.ForOp) and o.results)
    return nest.copies * len(loop.results)


def _cut(loop: affine.ParallelOp) -> int:
    """Cut `loop` to one iteration per thread; its block size `B`."""
    size = loop.attributes[GPU_SIZE]
    assert isinstance(size, IntegerAttr)
    b = size.value.data
    lower = loop.lowerBoundsMap.data
    n = lower.num_dims + lower.num_symbols
    operands = list(loop.map_operands)[:n]
    upper = AffineMap(
        lower.num_dims, lower.num_symbols, (lower.results[0] + AffineExpr.constant(b),)
    )
    loop.properties["upperBoundsMap"] = AffineMapAttr(upper)
    loop.operands = [*operands, *operands]
    return b


def _clone_into(op: Operation, copies: list[Copy], at: InsertPoint) -> None:
    """Copies of `op` at `at`, one per copy, the jammable loops jammed."""
    if isinstance(op, affine.ForOp) and op.results and _same_bounds(op, copies):
        _jam(op, copies, at)
        return
    for m in copies:
        new = op.clone(value_mapper=m)
        Rewriter.insert_op(new, at)
        m.update(zip(op.results, new.results))


def _same_bounds(loop: affine.ForOp, copies: list[Copy]) -> bool:
    operands = [*loop.lowerBoundOperands, *loop.upperBoundOperands]
    first = [copies[0].get(v, v) for v in operands]
    return all([m.get(v, v) for v in operands] == first for m in copies[1:])


def _jam(loop: affine.ForOp, copies: list[Copy], at: InsertPoint) -> None:
    """One `affine.for` running an iteration of each copy of `loop` per
    iteration, the copies' `iter_args` side by side."""
    m0 = copies[0]
    inits = [m.get(v, v) for m in copies for v in loop.inits]
    types = [r.type for _ in copies for r in loop.results]
    body = Block(arg_types=[loop.body.block.args[0].type, *types])
    iv, *args = body.args
    iv.name_hint = loop.body.block.args[0].name_hint
    per = len(loop.results)
    inner: list[Copy] = []
    for i, m in enumerate(copies):
        c = dict(m)
        c[loop.body.block.args[0]] = iv
        c.update(zip(loop.body.block.args[1:], args[i * per : (i + 1) * per]))
        inner.append(c)
    end = InsertPoint.at_end(body)
    ops = list(loop.body.block.ops)
    for op in ops[:-1]:
        _clone_into(op, inner, end)
    yielded = [c.get(v, v) for c in inner for v in ops[-1].operands]
    Rewriter.insert_op(affine.YieldOp.get(*yielded), end)
    new = affine.ForOp.from_region(
        [m0.get(v, v) for v in loop.lowerBoundOperands],
        [m0.get(v, v) for v in loop.upperBoundOperands],
        inits,
        types,
        loop.lowerBoundMap,
        loop.upperBoundMap,
        Region(body),
        loop.step,
    )
    Rewriter.insert_op(new, at)
    for i, m in enumerate(copies):
        m.update(zip(loop.results, new.results[i * per : (i + 1) * per]))


def _tile(nest: _Nest) -> None:
    body = _body_ops(nest.loops[-1])
    at = InsertPoint.before(body[0])
    # copy i of a loop's IV `v` is `v + B * i`
    shifted: list[list[SSAValue]] = []
    for loop, f in zip(nest.loops, nest.factors):
        iv = loop.regions[0].blocks[0].args[0]
        if f == 1:
            shifted.append([iv])
            continue
        b = _cut(loop)
        values: list[SSAValue] = [iv]
        for i in range(1, f):
            step = AffineMap(1, 0, (AffineExpr.dimension(0) + b * i,))
            apply = affine.ApplyOp([iv], AffineMapAttr(step))
            Rewriter.insert_op(apply, at)
            values.append(apply.result)
        shifted.append(values)
    ivs = [loop.regions[0].blocks[0].args[0] for loop in nest.loops]
    copies: list[Copy] = [
        dict(zip(ivs, combo)) for combo in itertools.product(*shifted)
    ]
    for op in body:
        _clone_into(op, copies, at)
    for op in reversed(body):
        Rewriter.erase_op(op, safe_erase=False)


@dataclass(frozen=True)
class AffineGpuRegisterTilePass(ModulePass):
    name = "affine-gpu-register-tile"

    #: the most accumulators one thread holds
    max_registers: int = MAX_REGISTERS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_registers < 1:
            raise TCError(
                "affine-gpu-register-tile: max-registers must be >= 1, not "
                f"{self.max_registers}"
            )
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            tops = [
                o
                for o in fn.walk()
                if isinstance(o, affine.ParallelOp)
                and thread_axis(o) is not None
                and not any(thread_axis(p) for p in _parents(o))
            ]
            for top in tops:
                nest = _nest(top)
                if nest is not None and _accumulators(nest) <= self.max_registers:
                    _tile(nest)


def _parents(op: Operation) -> list[Operation]:
    out: list[Operation] = []
    p = op.parent_op()
    while p is not None:
        out.append(p)
        p = p.parent_op()
    return out


__all__ = ["AffineGpuRegisterTilePass"]
