"""`contract-temporaries`: a temporary used only inside one parallel loop shrinks.

An affine → affine pass (docs/pipeline.md: `scheduled` stage IR), run after
`affine-isl-schedule`. When fusion puts every access to a temporary into one
iteration of a parallel loop, the temporary needs only that iteration's
slice: the slice is allocated inside the loop body and freed at its end,
instead of a whole array that goes through memory (array contraction).

Contract. A `memref.alloc` `%t` in a function's entry block is contracted
when:

- its only users are `affine.load` / `affine.store` ops and `memref.dealloc`
  ops in the entry block;
- one `affine.parallel` `P` in the entry block (not inside a loop), with a
  single dimension (IV `%p`), holds every load and store of `%t`, and no
  `affine.parallel` inside `P` holds one;
- one subscript position `j` of every access is exactly `%p` (the map result
  is the dimension bound to `%p`), and `%p` appears in no other subscript.

Then `%t` is replaced by a buffer without dimension `j`, allocated first in
`P`'s body: a `memref.alloca` when its shape is static and the function's
contracted buffers fit in `STACK_BYTES` together (convert-to-llvm puts a
static alloca in the entry block, so a loop reuses it), else a `memref.alloc`
(its dynamic sizes are the old ones, which dominate `P`) freed just before
`P`'s terminator. Every access drops subscript `j`, and the old
`memref.dealloc`s are erased. Iterations of `P` touch disjoint slices of
`%t` (subscript `j` is `%p`) and no dependence is carried by a parallel loop,
so each value read from `%t` was written in the same iteration: the result
is the same.

The new buffer then shrinks again, one dimension at a time, while one loop
of its block (`affine.for` or a one-dimensional `affine.parallel`) holds
every access and one subscript of every access is exactly that loop's IV
(and the IV is in no other): each iteration touches only its own slice and
nothing outside the loop touches the buffer, so even a sequential loop
carries no value through it (layernorm's `cen(t, b, c)`: one row per
iteration of `b` inside the parallel loop over `t`).

Everything else (arguments, temporaries that escape into calls or other
loops, accesses with `%p` in a computed subscript) is left alone.

Example (softmax after max fusion; `e` was `memref<4096x1024xf32>`)::

    "affine.parallel"() <{... upperBoundsMap = affine_map<() -> (4096)> ...}> ({
    ^bb0(%n: index):
      %e = memref.alloca() : memref<1024xf32>
      affine.for %d = 0 to 1024 {
        ...
        affine.store %x, %e[%d] : memref<1024xf32>
      }
      affine.for %r_d = 0 to 1024 {
        %y = affine.load %e[%r_d] : memref<1024xf32>
        ...
      }
      affine.yield
    }) : () -> ()
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine as xaffine
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.dialects.affine import LoadOp, StoreOp, exact_subscript

_Access = xaffine.LoadOp | xaffine.StoreOp


def _parallel_ancestors(op: Operation) -> list[xaffine.ParallelOp]:
    """The `affine.parallel` ops around `op`, innermost first."""
    out: list[xaffine.ParallelOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, xaffine.ParallelOp):
            out.append(parent)
        parent = parent.parent_op()
    return out


def temporary_uses(
    alloc: memref.AllocOp, entry: Block
) -> tuple[list[_Access], list[memref.DeallocOp]] | None:
    """The `affine.load` / `affine.store` ops of `alloc`'s buffer and its
    `memref.dealloc`s in block `entry`, when those are all its uses and it
    has an access; else None."""
    accesses: list[_Access] = []
    deallocs: list[memref.DeallocOp] = []
    for use in alloc.memref.uses:
        user = use.operation
        if isinstance(user, memref.DeallocOp) and user.parent_block() is entry:
            deallocs.append(user)
        elif isinstance(user, _Access) and user.memref is alloc.memref:
            accesses.append(user)
        else:
            return None
    return (accesses, deallocs) if accesses else None


def _contractible(
    alloc: memref.AllocOp, entry: Block
) -> tuple[xaffine.ParallelOp, int, list[_Access], list[memref.DeallocOp]] | None:
    uses = temporary_uses(alloc, entry)
    if uses is None:
        return None
    accesses, deallocs = uses
    chains = [_parallel_ancestors(a) for a in accesses]
    if any(not c for c in chains):
        return None
    loop = chains[0][0]  # innermost parallel loop around the first access
    if any(c[0] is not loop for c in chains):
        return None
    # A loop around P would carry values between P's runs.
    if loop.parent_block() is not entry or len(loop.body.block.args) != 1:
        return None
    iv = loop.body.block.args[0]
    positions = {exact_subscript(a, iv) for a in accesses}
    if len(positions) != 1:
        return None
    (j,) = positions
    if j is None:
        return None
    return loop, j, accesses, deallocs


def _drop_result(amap: AffineMap, j: int) -> AffineMap:
    results = amap.results[:j] + amap.results[j + 1 :]
    return AffineMap(amap.num_dims, amap.num_symbols, results)


def _contract(
    buffer: memref.AllocOp | memref.AllocaOp,
    loop: xaffine.ParallelOp | xaffine.ForOp,
    j: int,
    accesses: list[_Access],
    deallocs: list[memref.DeallocOp],
    stack_left: int,
) -> tuple[memref.AllocOp | memref.AllocaOp, list[_Access], int]:
    """Contract `buffer` along `loop`'s IV (subscript `j` of every access).

    Returns the new buffer, its accesses and the stack bytes it takes."""
    old = buffer.memref.type
    assert isinstance(old, MemRefType)
    shape = list(old.get_shape())
    dynamic = list(buffer.dynamic_sizes)
    if shape[j] == DYNAMIC_INDEX:  # drop that dimension's size operand
        dynamic.pop(sum(1 for s in shape[:j] if s == DYNAMIC_INDEX))
    del shape[j]
    new_type = MemRefType(old.element_type, shape)
    body = loop.body.block
    first = body.first_op
    assert first is not None
    on_stack = not dynamic and _bytes(new_type) <= stack_left
    new_buffer: memref.AllocOp | memref.AllocaOp
    if on_stack:
        new_buffer = memref.AllocaOp.get(new_type.element_type, shape=shape)
    else:
        new_buffer = memref.AllocOp(dynamic, [], new_type)
    if buffer.memref.name_hint:
        new_buffer.memref.name_hint = buffer.memref.name_hint
    Rewriter.insert_op(new_buffer, InsertPoint.before(first))
    if not on_stack:
        terminator = body.last_op
        assert terminator is not None
        dealloc = memref.DeallocOp.get(new_buffer)
        Rewriter.insert_op(dealloc, InsertPoint.before(terminator))
    new_accesses: list[_Access] = []
    for a in accesses:
        amap = AffineMapAttr(_drop_result(a.map.data, j))
        new: LoadOp | StoreOp
        if isinstance(a, xaffine.StoreOp):
            new = StoreOp(a.value, new_buffer.memref, a.indices, amap)
        else:
            new = LoadOp(new_buffer.memref, a.indices, amap, a.result.type)
        Rewriter.replace_op(a, new)
        new_accesses.append(new)
    for d in deallocs:
        Rewriter.erase_op(d)
    Rewriter.erase_op(buffer)
    return new_buffer, new_accesses, _bytes(new_type) if on_stack else 0


def _inner_loop(
    buffer: memref.AllocOp | memref.AllocaOp, accesses: list[_Access]
) -> tuple[xaffine.ParallelOp | xaffine.ForOp, int] | None:
    """The loop, in `buffer`'s block, around every access of a buffer that
    was just contracted, when one subscript of every access is exactly its IV.

    Each iteration of that loop then touches its own slice and nothing
    outside the loop touches the buffer, so a value read in an iteration was
    written in the same iteration (whether the loop is parallel or not):
    the slice is all the buffer needs (layernorm: `cen(t, b, c)`, written
    and read for one row `b` at a time, becomes one row)."""
    block = buffer.parent_block()
    if block is None or not accesses:
        return None
    loop: Operation | None = None
    for a in accesses:
        op: Operation | None = a
        while op is not None and op.parent_block() is not block:
            op = op.parent_op()
        if op is None or (loop is not None and op is not loop):
            return None
        loop = op
    if not isinstance(loop, xaffine.ParallelOp | xaffine.ForOp):
        return None
    ivs = loop.body.block.args
    if isinstance(loop, xaffine.ParallelOp) and len(ivs) != 1:
        return None
    positions = {exact_subscript(a, ivs[0]) for a in accesses}
    if len(positions) != 1:
        return None
    (j,) = positions
    return None if j is None else (loop, j)


#: Stack bytes a function's contracted buffers may take together; larger
#: (and dynamically sized) buffers are heap-allocated in each iteration.
STACK_BYTES = 64 * 1024


def _bytes(t: MemRefType) -> int:
    elem = t.element_type
    bits = elem.bitwidth if isinstance(elem, AnyFloat) else 0
    if isinstance(elem, IntegerType):
        bits = elem.width.data
    if isinstance(elem, IndexType):
        bits = 64
    return max(1, t.element_count()) * max(1, bits // 8) if bits else STACK_BYTES + 1


def contract_temporaries(fn: func.FuncOp) -> int:
    """Contract every temporary of `fn` the contract allows; returns how many."""
    entry = fn.body.blocks.first
    if entry is None:
        return 0
    count = 0
    stack_left = STACK_BYTES
    for op in list(entry.ops):
        if isinstance(op, memref.AllocOp) and not op.symbol_operands:
            found = _contractible(op, entry)
            if found is None:
                continue
            loop, j, accesses, deallocs = found
            buffer, accesses, taken = _contract(
                op, loop, j, accesses, deallocs, stack_left
            )
            count += 1
            while (inner := _inner_loop(buffer, accesses)) is not None:
                freed = [u.operation for u in buffer.memref.uses]
                deallocs = [d for d in freed if isinstance(d, memref.DeallocOp)]
                stack_left += taken
                buffer, accesses, taken = _contract(
                    buffer, *inner, accesses, deallocs, stack_left
                )
            stack_left -= taken
    return count


@dataclass(frozen=True)
class ContractTemporariesPass(ModulePass):
    """Temporaries used in one parallel iteration become per-iteration buffers.

    See the module docstring.
    """

    name = "contract-temporaries"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if isinstance(fn, func.FuncOp):
                contract_temporaries(fn)


__all__ = ["ContractTemporariesPass", "contract_temporaries"]
