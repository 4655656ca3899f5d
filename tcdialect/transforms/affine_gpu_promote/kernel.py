"""The kernels of `affine-gpu-map`'s output, as promotion sees them.

A *kernel* is a top-level op of a function body (or of the body of a
recurrence's step loop, which stays on the host) that holds thread-mapped
loops (`affine.parallel` with `tc.gpu_processor = "thread_<axis>"`):
`convert-parallel-loops-to-gpu` outlines each such op into one `gpu.func`,
launched with, along each axis, the largest `tc.gpu_size` of its thread
loops of that axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from tcdialect.poly.codegen import GPU_PROCESSOR, GPU_REDUCE, GPU_SIZE

AXES = ("x", "y", "z")


def processor(op: Operation) -> str | None:
    """`block_x`, ..., `thread_z` for a mapped `affine.parallel`, else None."""
    if not isinstance(op, affine.ParallelOp):
        return None
    p = op.attributes.get(GPU_PROCESSOR)
    return p.data if isinstance(p, StringAttr) else None


def thread_axis(op: Operation) -> str | None:
    """The axis (`x`, `y`, `z`) of a thread-mapped loop, else None."""
    p = processor(op)
    if p is None or not p.startswith("thread_"):
        return None
    return p.removeprefix("thread_")


def is_reduce(op: Operation) -> bool:
    """A thread loop whose threads share a reduction (`tc.gpu_reduce`)."""
    return GPU_REDUCE in op.attributes


def _writes(op: Operation) -> SSAValue | None:
    """The memref `op` writes, if it is a store."""
    if isinstance(op, affine.StoreOp | memref.StoreOp | memref.AtomicRMWOp):
        return op.memref
    if isinstance(op, affine.VectorStoreOp):
        return op.memref
    return None


@dataclass
class Kernel:
    """A top-level op holding thread loops."""

    top: Operation
    #: the block size along each axis: the largest `tc.gpu_size` of the
    #: thread loops of that axis
    block: dict[str, int] = field(default_factory=dict[str, int])
    #: the memrefs some op in the kernel writes
    written: set[SSAValue] = field(default_factory=set[SSAValue])

    @property
    def axes(self) -> list[str]:
        """The axes with more than one thread, `x` first."""
        return [a for a in AXES if self.block.get(a, 1) > 1]


def loop_depth(op: Operation, k: Kernel) -> int:
    """The loops (`affine.for`, `affine.parallel`) from `k.top` down to
    `op`, `op` included: block loops, tile loops and thread loops alike."""
    n = 0
    current: Operation | None = op
    while current is not None:
        if isinstance(current, affine.ForOp | affine.ParallelOp):
            n += 1
        if current is k.top:
            break
        current = current.parent_op()
    return n


def _tops(fn: func.FuncOp) -> list[Operation]:
    """The top-level ops of `fn`'s body, those of a recurrence's step loop
    (`tc.recurrence`, a host loop around its kernels) in its place."""
    out: list[Operation] = []
    for top in fn.body.block.ops:
        if isinstance(top, affine.ForOp) and "tc.recurrence" in top.attributes:
            out.extend(top.body.block.ops)
        else:
            out.append(top)
    return out


def kernels(fn: func.FuncOp) -> list[Kernel]:
    """The kernels of `fn`'s body (and of its recurrences' step loops), in
    order."""
    out: list[Kernel] = []
    for top in _tops(fn):
        k = Kernel(top)
        for op in top.walk():
            axis = thread_axis(op)
            size = op.attributes.get(GPU_SIZE)
            if axis is not None and isinstance(size, IntegerAttr):
                k.block[axis] = max(k.block.get(axis, 1), size.value.data)
            written = _writes(op)
            if written is not None:
                k.written.add(written)
        if k.block:
            out.append(k)
    return out


def element_bytes(t: MemRefType[Attribute]) -> int | None:
    """Bytes per element of `t`, for integer and float elements; else None."""
    elem = t.get_element_type()
    if isinstance(elem, IntegerType):
        return max(1, elem.width.data // 8)
    if isinstance(elem, AnyFloat):
        return elem.bitwidth // 8
    return None
