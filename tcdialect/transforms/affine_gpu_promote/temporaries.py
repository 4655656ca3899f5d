"""Temporaries that live within one block's iteration, in shared memory.

A temporary (`memref.alloc` in the function's entry block, used only by
`affine.load` / `affine.store` and `memref.dealloc`) whose every access
lies in one kernel, under the same chain of block-mapped `affine.parallel`s
(`tc.gpu_processor = "block_<axis>"`, IVs `b_1 .. b_r`, outermost first),
with subscripts `b_1 .. b_r` first, exactly, and those IVs in no other
subscript, is used by each block's iteration on its own slice: iterations
touch disjoint slices and a block loop carries no dependence, so every
value read was written in the same iteration (as in `contract-temporaries`
on the CPU). When the slice's extents are static and it fits the budget,
it becomes a `memref.alloca` of the slice in memory space 3 (shared
memory) at the start of the innermost block loop's body, each access
dropping the first `r` subscripts; the alloc and its deallocs go.

Not in the kernels of a recurrence's step loop (on the host): a value
there may pass from one step's launch to the next.

Why: softmax's `e(n, d) = exp(I(n, d) - mx(n))` in a kernel with a block
per row (`gpu_mapping._fuse_rows`) would go to global memory and come
back, a write and two reads of a tensor as large as the input; in shared
memory it costs a row (16 KiB at 4096 columns) per block. The barriers
are `convert-parallel-loops-to-gpu`'s, as for every shared buffer: one
between a nest that writes and a later one that reads, and one at the end
of the block loop's body, before the next row overwrites it. Example::

    %e = memref.alloc() : memref<16384x4096xf32>
    affine.parallel %n = 0 to 16384 {                       // block_x
      affine.parallel %d = 0 to 4096 {                      // thread_x
        affine.store %x, %e[%n, %d] : memref<16384x4096xf32>
      ...
        %y = affine.load %e[%n, %r] : memref<16384x4096xf32>

becomes::

    affine.parallel %n = 0 to 16384 {                       // block_x
      %e_shared = memref.alloca() : memref<4096xf32, 3 : i32>
      affine.parallel %d = 0 to 4096 {                      // thread_x
        affine.store %x, %e_shared[%d] : memref<4096xf32, 3 : i32>
      ...
        %y = affine.load %e_shared[%r] : memref<4096xf32, 3 : i32>
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, MemRefType, i32
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.transforms.affine_gpu_promote.kernel import Kernel, processor
from tcdialect.transforms.affine_gpu_promote.shared import SHARED_SPACE
from tcdialect.transforms.contract_temporaries import temporary_uses

_Access = affine.LoadOp | affine.StoreOp


@dataclass
class Temporary:
    """A temporary of one kernel's block iterations (see the module docstring)."""

    alloc: memref.AllocOp
    #: the block-mapped loops above every access, outermost first
    blocks: list[affine.ParallelOp]
    accesses: list[_Access]
    deallocs: list[memref.DeallocOp]
    #: the slice: the extents after the first `len(blocks)`
    shape: list[int]
    bytes: int


def _blocks(op: Operation, top: Operation) -> list[affine.ParallelOp] | None:
    """The block-mapped loops from `top` down to `op`, outermost first;
    None when `op` is not inside `top`."""
    chain: list[affine.ParallelOp] = []
    node: Operation | None = op
    while node is not None and node is not top:
        node = node.parent_op()
        if isinstance(node, affine.ParallelOp) and (processor(node) or "").startswith(
            "block_"
        ):
            chain.append(node)
    if node is not top:
        return None
    return chain[::-1]


def _leads_with(access: _Access, ivs: Sequence[SSAValue]) -> bool:
    """Whether the subscripts of `access` start with `ivs`, exactly, and no
    other subscript uses them."""
    m = access.map.data
    operands = list(access.indices)
    if m.num_symbols or len(m.results) < len(ivs):
        return False
    for pos, iv in enumerate(ivs):
        e = m.results[pos]
        if not isinstance(e, AffineDimExpr) or operands[e.position] is not iv:
            return False
    used = {i for i, v in enumerate(operands) if v in ivs}
    return not any(e.used_dims() & used for e in m.results[len(ivs) :])


def _temporary(alloc: memref.AllocOp, k: Kernel) -> Temporary | None:
    t = alloc.memref.type
    if not isinstance(t, MemRefType) or alloc.dynamic_sizes:
        return None
    entry = alloc.parent_block()
    uses = None if entry is None else temporary_uses(alloc, entry)
    if uses is None:
        return None
    accesses, deallocs = uses
    chain = _blocks(accesses[0], k.top)
    if not chain:
        return None
    for a in accesses[1:]:
        other = _blocks(a, k.top)
        if other is None or [id(b) for b in other] != [id(b) for b in chain]:
            return None
    ivs = [b.body.block.args[0] for b in chain]
    if any(len(b.body.block.args) != 1 for b in chain):
        return None
    if not all(_leads_with(a, ivs) for a in accesses):
        return None
    shape = list(t.get_shape())[len(ivs) :]
    width = getattr(t.get_element_type(), "bitwidth", None)
    if not shape or any(d < 0 for d in shape) or not isinstance(width, int):
        return None
    size = math.prod(shape) * max(1, width // 8)
    return Temporary(alloc, chain, accesses, deallocs, shape, size)


def temporaries(fn: func.FuncOp, k: Kernel) -> list[Temporary]:
    """The temporaries of `fn` that live within one iteration of `k`'s
    block loops (see the module docstring)."""
    found: list[Temporary] = []
    if k.top.parent_block() is not fn.body.block:
        return found  # a recurrence's step kernel: a value may pass between steps
    for op in fn.body.block.ops:
        if isinstance(op, memref.AllocOp) and (t := _temporary(op, k)) is not None:
            found.append(t)
    return found


def localize(t: Temporary) -> None:
    """Replace `t` by a shared buffer of its slice in the innermost block
    loop's body."""
    old = t.alloc.memref.type
    assert isinstance(old, MemRefType)
    buffer = memref.AllocaOp.get(
        old.get_element_type(),
        shape=t.shape,
        memory_space=IntegerAttr(SHARED_SPACE, i32),
    )
    hint = t.alloc.memref.name_hint
    if hint:
        buffer.memref.name_hint = f"{hint}_shared"
    body = t.blocks[-1].body.block
    Rewriter.insert_op(buffer, InsertPoint.at_start(body))
    r = len(t.blocks)
    for a in t.accesses:
        m = a.map.data
        dropped = AffineMap(m.num_dims, m.num_symbols, m.results[r:])
        indices = list(a.indices)
        if isinstance(a, affine.LoadOp):
            new: Operation = affine.LoadOp(
                buffer.memref, indices, AffineMapAttr(dropped), a.result.type
            )
        else:
            new = affine.StoreOp(
                a.value, buffer.memref, indices, AffineMapAttr(dropped)
            )
        Rewriter.replace_op(a, new)
    for d in t.deallocs:
        Rewriter.erase_op(d)
    Rewriter.erase_op(t.alloc)
