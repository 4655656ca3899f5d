"""`gpu-double-buffer{max-shared-memory=49152}`: a streamed loop's next slice is copied while the current one is used.

A `gpu`-stage pass (docs/gpu.md), after `gpu-async-copies`. A tile loop that
streams a reduction through shared memory (matmul's loop over `r_k`) runs,
in every iteration, copies into shared buffers, a barrier, the work on the
buffers, and a barrier that keeps the next iteration's copies from
overwriting what slower threads still read. The copies' global loads are
then all waited for before any work starts: the SM idles for the latency of
global memory once per slice, unless other blocks fill it. With two copies
of each buffer, the slice of iteration `k + 1` is copied into one while
iteration `k` works on the other, and one barrier an iteration suffices.

In every kernel (`gpu.func` ... `kernel`), an `scf.for` whose body is

* `P`: ops that store into shared memory only by copies marked
  `tc.async_copy` (`cp.async`: they are in flight until the thread's next
  barrier), otherwise loads, loops, conditionals and side-effect-free ops,
  using the loop's induction variable and values defined outside the loop
  but none of its `iter_args`, reading no array the rest of the loop
  writes, with no value used after `P` but index arithmetic (which stays);
* a `gpu.barrier`;
* `Q`: no barrier, no write to shared memory;
* a `gpu.barrier`, then the `scf.yield`,

where each buffer `P` copies into is a static `memref.alloca` in shared
memory defined outside the loop, used only by `P`'s copies and by loads in
`Q`, becomes::

    P(lb) into half 0                       (under lb < ub unless known)
    scf.for %k = lb to ub step s {
      gpu.barrier
      scf.if (%k + s < ub) { P(%k + s) into half 1 - c }
      Q reading half c                      (c = ((%k - lb) / s) mod 2)
    }
    gpu.barrier                             (under lb < ub unless known)

each buffer `memref<D...>` becoming `memref<2xD...>`. Sound: the barrier
at the head of iteration `k` is where the copies of slice `k` land (the
lowering waits for a thread's `cp.async` copies before each barrier), and
every thread has finished iteration `k - 1`'s reads of half `1 - c`
before any thread copies slice `k + 1` into it; the barrier after the loop
keeps what follows from racing with the last iteration's reads, as the
removed trailing barrier did. Only where the doubled buffers, with the
kernel's other static shared memory, fit `max-shared-memory` bytes, and
where the loop may run twice (a constant trip count below 2 is left
alone). Left alone too: loops whose copies are not all asynchronous (a
synchronous copy would stall the thread before its work), that read an
`iter_arg` in `P`, write shared memory or hold a barrier in `Q`, or whose
buffers are used elsewhere; kernels with dynamic shared memory.

Example (matmul's slices of `A`, one buffer shown)::

    scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %zero) -> (f32) {
      scf.for %i = %ty to %c32 step %c8 {
        %v = memref.load %A[...]
        memref.store %v, %S[%i, %tx] {tc.async_copy} : memref<32x33xf32, 3 : i32>
      }
      gpu.barrier
      %r = scf.for %kk = ... { ... memref.load %S[%m, %kk] ... }
      gpu.barrier
      scf.yield %r : f32
    }

becomes, with `%S : memref<2x32x33xf32, 3 : i32>`::

    scf.for %i = %ty to %c32 step %c8 { ... memref.store %v, %S[%c0, %i, %tx] {tc.async_copy} }
    scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %zero) -> (f32) {
      gpu.barrier
      %c = arith.remui %k, %c2
      %n = arith.subi %c1, %c
      %next = arith.addi %k, %c1
      %more = arith.cmpi slt, %next, %c128
      scf.if %more {
        scf.for %i = %ty to %c32 step %c8 { ... memref.store %v, %S[%n, %i, %tx] {tc.async_copy} }
      }
      %r = scf.for %kk = ... { ... memref.load %S[%c, %m, %kk] ... }
      scf.yield %r : f32
    }
    gpu.barrier
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

if TYPE_CHECKING:
    from tcdialect.backend.base import TargetInfo
    from tcdialect.backend.cuda.options import CudaOptions

from tcdialect.conversion.gpu_dynamic_shared import ALIGNMENT
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.transforms.affine_gpu_promote import MAX_SHARED_MEMORY
from tcdialect.transforms.affine_gpu_promote.kernel import element_bytes
from tcdialect.transforms.affine_gpu_promote.shared import SHARED_SPACE
from tcdialect.transforms.gpu_async_copies import ASYNC_COPY, space_of
from tcdialect.transforms.ir_values import constant_index, defined_outside


def _shared(t: Attribute) -> bool:
    return space_of(t) == SHARED_SPACE


def _bytes(t: MemRefType) -> int:
    """The bytes a static shared buffer of type `t` takes, aligned as the
    LLVM lowering places shared buffers."""
    size = math.prod(t.get_shape()) * (element_bytes(t) or 8)
    return -(-size // ALIGNMENT) * ALIGNMENT


def _doubled(t: MemRefType) -> MemRefType:
    """`memref<D...>` → `memref<2xD...>` in the same memory space."""
    return MemRefType(t.element_type, [2, *t.get_shape()], memory_space=t.memory_space)


def _static_shared(kernel: gpu.FuncOp) -> tuple[int, bool]:
    """The bytes of `kernel`'s static shared buffers, and whether it has a
    dynamic one."""
    total, dynamic = 0, False
    for op in kernel.walk():
        if isinstance(op, memref.AllocaOp) and _shared(op.memref.type):
            if op.dynamic_sizes:
                dynamic = True
            else:
                total += _bytes(op.memref.type)
    return total, dynamic


def _copies_only(ops: list[Operation]) -> list[SSAValue] | None:
    """The shared buffers `ops` copy into, in order, when every write among
    them is a `tc.async_copy` store into shared memory (and there is one);
    else None."""
    buffers: dict[SSAValue, None] = {}
    for top in ops:
        for op in top.walk():
            if isinstance(op, memref.StoreOp):
                if ASYNC_COPY not in op.attributes or not _shared(op.memref.type):
                    return None
                buffers[op.memref] = None
            elif isinstance(op, memref.LoadOp | scf.ForOp | scf.IfOp | scf.YieldOp):
                continue
            elif isinstance(op, gpu.BarrierOp) or not is_side_effect_free(op):
                return None
    return list(buffers) or None


def _writes_shared(op: Operation) -> bool:
    return any(
        isinstance(o, memref.StoreOp | memref.AtomicRMWOp) and _shared(o.memref.type)
        for o in op.walk()
    )


def _buffer_uses_ok(buffer: SSAValue, loop: scf.ForOp, copies: list[Operation]) -> bool:
    """Whether `buffer` is a static shared alloca outside `loop` whose uses
    are all `copies`' stores or loads in the rest of `loop`."""
    alloca = buffer.owner
    if not isinstance(alloca, memref.AllocaOp) or alloca.dynamic_sizes:
        return False
    if not defined_outside(buffer, loop):
        return False
    for use in buffer.uses:
        user = use.operation
        if not loop.is_ancestor(user) or use.index != (
            1 if isinstance(user, memref.StoreOp) else 0
        ):
            return False
        in_copies = any(top.is_ancestor(user) for top in copies)
        if isinstance(user, memref.StoreOp) != in_copies:
            return False
        if not isinstance(user, memref.StoreOp | memref.LoadOp):
            return False
    return True


@dataclass
class _Candidate:
    loop: scf.ForOp
    copies: list[Operation]
    #: the ops of `copies` whose values the rest of the loop uses
    kept: list[Operation]
    head: gpu.BarrierOp
    tail: gpu.BarrierOp
    buffers: list[SSAValue]


def _kept(copies: list[Operation]) -> list[Operation] | None:
    """The ops of `copies` (top level) whose results ops after them use, and
    the ops of `copies` those use, in order, when all are side-effect-free
    ops without regions (index arithmetic: they stay in the loop); else None."""
    tops = set(copies)
    wanted: set[Operation] = set()
    for top in copies:
        for result in top.results:
            if any(
                not any(t.is_ancestor(u.operation) for t in tops) for u in result.uses
            ):
                wanted.add(top)
    for top in reversed(copies):
        if top in wanted:
            if top.regions or not is_side_effect_free(top):
                return None
            wanted.update(
                v.owner
                for v in top.operands
                if isinstance(v.owner, Operation) and v.owner in tops
            )
    return [op for op in copies if op in wanted]


def _candidate(loop: scf.ForOp) -> _Candidate | None:
    """`loop` when it has the form the module docstring describes."""
    ops = list(loop.body.block.ops)
    heads = [i for i, op in enumerate(ops) if isinstance(op, gpu.BarrierOp)]
    if len(ops) < 4 or not heads or not isinstance(ops[-2], gpu.BarrierOp):
        return None
    h = heads[0]
    copies, work = ops[:h], ops[h + 1 : -2]
    if not copies or h == len(ops) - 2:
        return None
    found = _copies_only(copies)
    if found is None:
        return None
    carried = set(loop.body.block.args[1:])
    for top in copies:
        if any(v in carried for op in top.walk() for v in op.operands):
            return None
    # the next slice is copied while other threads still work on this one:
    # nothing the copies read may be written in the loop
    written = {
        o.memref
        for o in loop.walk()
        if isinstance(o, memref.StoreOp | memref.AtomicRMWOp)
        and not any(top.is_ancestor(o) for top in copies)
    }
    if any(
        isinstance(o, memref.LoadOp) and o.memref in written
        for top in copies
        for o in top.walk()
    ):
        return None
    kept = _kept(copies)
    if kept is None:
        return None
    for op in work:
        if any(isinstance(o, gpu.BarrierOp) for o in op.walk()) or _writes_shared(op):
            return None
    buffers = found
    if not all(_buffer_uses_ok(b, loop, copies) for b in buffers):
        return None
    head, tail = ops[h], ops[-2]
    assert isinstance(head, gpu.BarrierOp) and isinstance(tail, gpu.BarrierOp)
    return _Candidate(loop, copies, kept, head, tail, buffers)


def _trips_below_two(loop: scf.ForOp) -> bool:
    lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return False
    return -(-(ub - lb) // step) < 2


def _clone(ops: list[Operation], iv: SSAValue, value: SSAValue) -> list[Operation]:
    """Copies of `ops` with `iv` replaced by `value` (and the results of
    earlier ones by their copies')."""
    mapper: dict[SSAValue, SSAValue] = {iv: value}
    clones = [op.clone(value_mapper=mapper) for op in ops]
    # the copies of values only the rest of the loop used are dead here
    for op in reversed(clones):
        if (
            not op.regions
            and is_side_effect_free(op)
            and not any(r.uses for r in op.results)
        ):
            clones.remove(op)
            op.erase()
    return clones


def _double(c: _Candidate) -> None:
    """Rewrite `c` as the module docstring shows."""
    loop = c.loop
    index = IndexType()

    def const(n: int, where: InsertPoint) -> SSAValue:
        op = arith.ConstantOp.from_int_and_width(n, index)
        Rewriter.insert_op(op, where)
        return op.result

    # the buffers, doubled
    doubled: dict[SSAValue, SSAValue] = {}
    for b in c.buffers:
        alloca = b.owner
        assert isinstance(alloca, memref.AllocaOp)
        t = alloca.memref.type
        assert isinstance(t, MemRefType)
        new_t = _doubled(t)
        new = memref.AllocaOp.build(
            operands=[[], []],
            result_types=[new_t],
            properties=dict(alloca.properties),
        )
        Rewriter.insert_op(new, InsertPoint.before(alloca))
        new.memref.name_hint = b.name_hint
        doubled[b] = new.memref

    def retarget(ops: list[Operation], half: SSAValue) -> None:
        for top in ops:
            for op in list(top.walk()):
                if isinstance(op, memref.StoreOp) and op.memref in doubled:
                    new = memref.StoreOp.get(
                        op.value, doubled[op.memref], [half, *op.indices]
                    )
                    new.attributes.update(op.attributes)
                    Rewriter.replace_op(op, new)
                elif isinstance(op, memref.LoadOp) and op.memref in doubled:
                    new = memref.LoadOp.get(doubled[op.memref], [half, *op.indices])
                    Rewriter.replace_op(op, new)

    iv = loop.body.block.args[0]
    before = InsertPoint.before(loop)

    # the prologue: slice lb into half 0
    zero = const(0, before)
    prologue = _clone(c.copies, iv, loop.lb)
    lb, ub = constant_index(loop.lb), constant_index(loop.ub)
    runs: arith.CmpiOp | None = None  # whether the loop runs, when not known
    if lb is not None and ub is not None and lb < ub:
        Rewriter.insert_op(prologue, before)
    else:
        runs = arith.CmpiOp(loop.lb, loop.ub, "slt")
        Rewriter.insert_op(runs, before)
        Rewriter.insert_op(
            scf.IfOp(runs.result, [], [*prologue, scf.YieldOp()]), before
        )
    retarget(prologue, zero)

    # the body: barrier, prefetch of the next slice, the work on this one
    c.head.detach()
    Rewriter.insert_op(c.head, InsertPoint.at_start(loop.body.block))
    one, two = const(1, before), const(2, before)
    at = InsertPoint.after(c.head)
    trip: SSAValue = iv
    if lb != 0:
        offset = arith.SubiOp(iv, loop.lb)
        Rewriter.insert_op(offset, at)
        trip = offset.result
    if constant_index(loop.step) != 1:
        div = arith.DivUIOp(trip, loop.step)
        Rewriter.insert_op(div, at)
        trip = div.result
    cur = arith.RemUIOp(trip, two)
    nxt = arith.SubiOp(one, cur.result)
    upcoming = arith.AddiOp(iv, loop.step)
    more = arith.CmpiOp(upcoming.result, loop.ub, "slt")
    Rewriter.insert_op([cur, nxt, upcoming, more], at)
    prefetch = _clone(c.copies, iv, upcoming.result)
    Rewriter.insert_op(
        scf.IfOp(more.result, [], [*prefetch, scf.YieldOp()]),
        InsertPoint.after(more),
    )
    retarget(prefetch, nxt.result)
    at = InsertPoint.after(c.head)
    for op in c.copies:
        if op in c.kept:
            op.detach()
            Rewriter.insert_op(op, at)
            at = InsertPoint.after(op)
    for op in reversed(c.copies):
        if op not in c.kept:
            op.detach()
            op.erase()
    work = list(loop.body.block.ops)
    retarget(work, cur.result)
    # the trailing barrier after the loop, unless one follows it already
    after = loop.next_op
    while after is not None and not after.regions and is_side_effect_free(after):
        after = after.next_op
    c.tail.detach()
    if isinstance(after, gpu.BarrierOp):
        c.tail.erase()
    else:
        # (where the loop may run no iteration, under the prologue's
        # condition: the input executed no barrier then)
        tail: Operation = c.tail
        if runs is not None:
            tail = scf.IfOp(runs.result, [], [c.tail, scf.YieldOp()])
        Rewriter.insert_op(tail, InsertPoint.after(loop))
    for b in c.buffers:
        alloca = b.owner
        assert isinstance(alloca, Operation) and not b.uses
        alloca.detach()
        alloca.erase()


def double_buffer(kernel: gpu.FuncOp, budget: int) -> int:
    """Double the buffers of `kernel`'s streamed loops within `budget` bytes
    of static shared memory; return how many loops were rewritten."""
    total, dynamic = _static_shared(kernel)
    if dynamic:
        return 0
    count = 0
    for op in list(kernel.walk()):
        if (
            not isinstance(op, scf.ForOp)
            or op.parent is None  # erased with the copies of a rewritten loop
            or _trips_below_two(op)
        ):
            continue
        c = _candidate(op)
        if c is None:
            continue
        extra = sum(
            _bytes(_doubled(b.type)) - _bytes(b.type)
            for b in c.buffers
            if isinstance(b.type, MemRefType)
        )
        if total + extra > budget:
            continue
        _double(c)
        total += extra
        count += 1
    return count


@dataclass(frozen=True)
class GpuDoubleBufferPass(ModulePass):
    """Double-buffer streamed shared-memory slices (see the module docstring)."""

    name = "gpu-double-buffer"

    #: bytes of static shared memory a kernel may have in all
    max_shared_memory: int = MAX_SHARED_MEMORY

    @classmethod
    def from_options(
        cls, options: CudaOptions, info: TargetInfo
    ) -> GpuDoubleBufferPass:
        """The pass under `options.max_shared_memory`, else the GPU's
        static shared memory per block (as `affine-gpu-promote`)."""
        budget = options.max_shared_memory
        if budget is None:
            budget = info.limits.get("max_shared_memory", MAX_SHARED_MEMORY)
        return cls(max_shared_memory=int(budget))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_shared_memory < 0:
            raise TCError(
                "gpu-double-buffer: max-shared-memory must be >= 0, not "
                f"{self.max_shared_memory}"
            )
        for module in op.body.block.ops:
            if not isinstance(module, gpu.ModuleOp):
                continue
            for f in module.body.block.ops:
                if isinstance(f, gpu.FuncOp) and f.is_kernel:
                    double_buffer(f, self.max_shared_memory)


__all__ = ["GpuDoubleBufferPass", "double_buffer"]
