"""Dynamic shared memory: the boxes whose size is a run-time value.

A kernel's dynamic `Candidate`s (`shared.py`: extents that are sums of
sizes) are promoted only at the sizes where they fit: their buffers'
bytes (each rounded up to 16, as the launch counts them) are computed from
the sizes at the kernel's start, and `%fits` says whether they are within
what the static buffers left of the budget. Each scope with such boxes is
versioned on it, from the first nest that reads one to the end of the scope:
the nests reading the buffers when it holds, the nests as they were (reading
global memory) else. The buffers' extents are 0 when it does not hold, so
that the launch then asks for no dynamic shared memory at all; their copy
nests run under it, before the versions::

    %b = <bytes of the buffers, from %K>
    %fits = arith.cmpi ule, %b, %left : index
    %e = arith.select %fits, %K, %c0 : index
    %A_shared = memref.alloca(%e) : memref<?x33xf32, 3 : i32>
    ...
      scf.if %fits { <copy of A's box into %A_shared> }
      scf.if %fits { <the nests, reading %A_shared> }
      else { <the nests, reading %A> }

(Two `scf.if`s rather than one: `convert-parallel-loops-to-gpu` puts its
barriers between the top-level ops of a loop body: after the copy, and at
the end of the body before the next iteration's copy.) A scope whose
versioned ops define values used after them keeps its boxes in global
memory, as do the boxes of scopes in another block of the kernel's
top-level op than the first one's.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.conversion.gpu_dynamic_shared import ALIGNMENT
from tcdialect.transforms.affine_gpu_promote.kernel import element_bytes
from tcdialect.transforms.affine_gpu_promote.shared import (
    Candidate,
    allocate,
    copy_in,
    extents,
    kernel_start,
    redirect,
)


def promote_dynamic(cands: Sequence[Candidate], budget: int) -> None:
    """Promote the dynamic candidates `cands` of one kernel where they fit
    in `budget` bytes (see the module docstring)."""
    start = kernel_start(cands[0])
    tails: dict[Block, list[Operation]] = {}
    kept: list[Candidate] = []
    for c in cands:
        if kernel_start(c).block is not start.block:
            continue
        if c.scope not in tails:
            tail = _tail(c.scope, [d.first for d in cands if d.scope is c.scope])
            if tail is None:
                continue
            tails[c.scope] = tail
        kept.append(c)
    if not kept:
        return
    sizes = [extents(c, start) for c in kept]
    fits = _fits(kept, sizes, budget, start)
    at = {scope: _version(ops, fits) for scope, ops in tails.items()}
    first = start.insert_before
    if first is not None and first.parent_block() is not start.block:
        start = at[start.block]  # the start was the scope's first nest
    zero = _insert(arith.ConstantOp(IntegerAttr(0, IndexType())), start)
    for c, exts in zip(kept, sizes, strict=True):
        chosen = [_insert(arith.SelectOp(fits, e, zero), start) for e in exts]
        buffer = allocate(c, start, chosen)
        guard = scf.IfOp(fits, [], [*copy_in(c, buffer, start), scf.YieldOp()])
        Rewriter.insert_op(guard, at[c.scope])
        redirect(c, buffer)


def _insert(op: Operation, at: InsertPoint) -> SSAValue:
    Rewriter.insert_op(op, at)
    return op.results[0]


def _tail(scope: Block, firsts: list[Operation]) -> list[Operation] | None:
    """The ops of `scope` from the first of `firsts` to the end (its
    terminator excluded); None when a value they define is used after them."""
    ops: list[Operation] = []
    for op in scope.ops:
        if op is scope.last_op:
            break
        if ops or op in firsts:
            ops.append(op)
    inside = set(ops)
    for op in ops:
        for inner in op.walk():
            for r in inner.results:
                for use in r.uses:
                    user: Operation | None = use.operation
                    while user is not None and user.parent_block() is not scope:
                        user = user.parent_op()
                    if user not in inside:
                        return None
    return ops


def _fits(
    cands: list[Candidate],
    sizes: list[list[SSAValue]],
    budget: int,
    at: InsertPoint,
) -> SSAValue:
    """Whether the buffers of `cands` (dynamic extents `sizes`), each
    rounded up to `ALIGNMENT` bytes, fit in `budget` bytes (an `i1`
    computed at `at`)."""

    def const(n: int) -> SSAValue:
        return _insert(arith.ConstantOp(IntegerAttr(n, IndexType())), at)

    align = const(ALIGNMENT)
    total = const(0)
    for c, exts in zip(cands, sizes, strict=True):
        t = c.array.type
        assert isinstance(t, MemRefType)
        per = element_bytes(t)
        assert per is not None
        for d in c.shape:
            per *= d if d >= 0 else 1
        size = const(per)
        for e in exts:
            size = _insert(arith.MuliOp(size, e), at)
        blocks = _insert(arith.CeilDivUIOp(size, align), at)
        total = _insert(
            arith.AddiOp(total, _insert(arith.MuliOp(blocks, align), at)), at
        )
    return _insert(arith.CmpiOp(total, const(budget), "ule"), at)


def _version(ops: list[Operation], fits: SSAValue) -> InsertPoint:
    """Put `ops` (consecutive ops of a block) under `scf.if %fits`, a copy
    of them in its `else`; return the point before it."""
    mapper: dict[SSAValue, SSAValue] = {}
    clones = [op.clone(value_mapper=mapper) for op in ops]
    version = scf.IfOp(fits, [], [scf.YieldOp()], [*clones, scf.YieldOp()])
    Rewriter.insert_op(version, InsertPoint.before(ops[0]))
    then = version.true_region.block
    terminator = then.last_op
    assert terminator is not None
    for op in ops:
        op.detach()
        then.insert_op_before(op, terminator)
    return InsertPoint.before(version)
