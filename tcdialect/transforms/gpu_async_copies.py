"""`gpu-async-copies`: copies from global into shared memory as `cp.async`.

A `gpu`-stage pass (docs/gpu.md) for GPUs of sm_80 and later. In every
kernel (`gpu.func` ... `kernel`), a ``memref.store %v, %S[...]`` into
shared memory (memory space 3) of a value ``%v = memref.load %G[...]``
loaded from global memory (a memref without a memory space) that the
kernel does not write, earlier in the same block, with only
side-effect-free ops between the two, of a 32- or 64-bit element, gets the unit attribute ``tc.async_copy`` when a
`gpu.barrier` follows it before anything reads `%S`: walking out from the
store to the op `T` that holds it in the block of such a barrier, neither
`T` nor an op between `T` and the barrier loads from `%S`.

The attribute changes nothing in the meaning of the program (a store of a
loaded value is a copy); it licenses the LLVM lowering to issue the copy
asynchronously, PTX's ``cp.async.ca.shared.global`` (the load's address
to the store's, without the value passing through a register), and
`convert-gpu-to-nvvm` to wait for a kernel's copies (``cp.async.commit_group;
cp.async.wait_group 0``) before each of its barriers: the copies are done
when any thread reads them, after the barrier. Why: a copy loop of
`affine-gpu-promote` loads, then stores what it loaded, so each of a
thread's loads waits for the one before (a matmul's 32 x 128 slice: a
thread's 20 loads one after the other per slice); asynchronous copies are
all in flight at once and wait together at the barrier.

Left alone: a store of any other value, a store into global or private
memory, a 8- or 16-bit element (cp.async copies 4, 8 or 16 bytes), a load
with something that may write memory between it and the store, a load from
an array the kernel writes (the copy might read the new value), and a store
with no barrier before a read of its buffer (or none at all in its kernel).
Example (a copy loop; the slice is read after the barrier)::

    scf.for %i = %ty to %c32 step %c8 {
      %v = memref.load %A[%i, %k] : memref<64x64xf32>
      memref.store %v, %A_shared[%i, %tx] : memref<32x33xf32, 3 : i32>
    }
    gpu.barrier

becomes::

    scf.for %i = %ty to %c32 step %c8 {
      %v = memref.load %A[%i, %k] : memref<64x64xf32>
      memref.store %v, %A_shared[%i, %tx] {tc.async_copy} : memref<32x33xf32, 3 : i32>
    }
    gpu.barrier
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, NoneAttr, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from tcdialect.dialects import gpu
from tcdialect.transforms.affine_gpu_promote.shared import SHARED_SPACE

#: The unit attribute of a store that may be a `cp.async` copy.
ASYNC_COPY = "tc.async_copy"
#: Element sizes (bits) that `cp.async` copies.
COPY_BITS = (32, 64)
#: The memory space `space_of` gives global memory (a memref without one).
GLOBAL = 0


def space_of(t: Attribute) -> int | None:
    """The memory space of memref type `t`: `GLOBAL` without one, `n` for
    `n : i32`; None for any other type or attribute."""
    if not isinstance(t, MemRefType):
        return None
    space = t.memory_space
    if isinstance(space, NoneAttr):
        return GLOBAL
    return int(space.value.data) if isinstance(space, IntegerAttr) else None


def copy_bytes(t: Attribute) -> int | None:
    """The bytes of an element of memref type `t` when `cp.async` can copy
    one (4 or 8), else None."""
    if not isinstance(t, MemRefType):
        return None
    width = getattr(t.get_element_type(), "bitwidth", None)
    return width // 8 if width in COPY_BITS else None


def _copied_load(store: memref.StoreOp) -> memref.LoadOp | None:
    """The global load whose value `store` writes into shared memory, when
    nothing between them in their block may write memory."""
    t = store.memref.type
    if space_of(t) != SHARED_SPACE or copy_bytes(t) is None:
        return None
    load = store.value.owner
    if not isinstance(load, memref.LoadOp) or load.parent is not store.parent:
        return None
    if space_of(load.memref.type) != GLOBAL:
        return None
    op = load.next_op
    while op is not None and op is not store:
        if not is_side_effect_free(op):
            return None
        op = op.next_op
    return load if op is store else None


def _reads(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` or an op inside it loads from `buffer`."""
    return any(
        isinstance(inner, memref.LoadOp) and inner.memref is buffer
        for inner in op.walk()
    )


def _barrier_follows(store: memref.StoreOp, kernel: gpu.FuncOp) -> bool:
    """Whether a `gpu.barrier` follows `store` before any read of its buffer
    (see the module docstring)."""
    buffer = store.memref
    holder: Operation = store
    while True:
        if holder is not store and _reads(holder, buffer):
            return False
        op = holder.next_op
        while op is not None:
            if isinstance(op, gpu.BarrierOp):
                return True
            if _reads(op, buffer):
                return False
            op = op.next_op
        parent = holder.parent_op()
        if parent is None or parent is kernel:
            return False
        holder = parent


def mark_async_copies(kernel: gpu.FuncOp) -> int:
    """Mark the stores of `kernel` that may be `cp.async` copies; return how many."""
    written = {
        op.memref
        for op in kernel.walk()
        if isinstance(op, memref.StoreOp | memref.AtomicRMWOp)
    }
    count = 0
    for op in kernel.walk():
        if (
            isinstance(op, memref.StoreOp)
            and (load := _copied_load(op)) is not None
            and load.memref not in written
            and _barrier_follows(op, kernel)
        ):
            op.attributes[ASYNC_COPY] = UnitAttr()
            count += 1
    return count


@dataclass(frozen=True)
class GpuAsyncCopiesPass(ModulePass):
    """Mark global-to-shared copies for `cp.async` (see the module docstring)."""

    name = "gpu-async-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for module in op.body.block.ops:
            if not isinstance(module, gpu.ModuleOp):
                continue
            for f in module.body.block.ops:
                if isinstance(f, gpu.FuncOp) and f.is_kernel:
                    mark_async_copies(f)
