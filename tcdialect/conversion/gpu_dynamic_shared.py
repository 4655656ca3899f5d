"""Dynamic shared memory for `convert-parallel-loops-to-gpu`.

A `memref.alloca` in memory space 3 with dynamic extents (a box of
`affine-gpu-promote` whose size is a run-time value) is *dynamic shared
memory*: its bytes are known when the kernel is launched, not when it is
compiled. For each kernel that has such buffers, `convert-parallel-loops-to-gpu`
calls

- `launch_bytes` on the host: the bytes of every dynamic buffer of the
  segment (element size times extents, the extents computed from host
  values), each rounded up to `ALIGNMENT`, summed, as the `i32` operand
  `dynamic_shared_memory_size` of the `gpu.launch_func` (capped at
  `2**31 - 1`: more is beyond every device, which the launch reports);
- `hoist` in the kernel: the dynamic buffers move to the kernel's entry
  block, in program order, before the first top-level op that held one, their
  extents recomputed there from the kernel's arguments. One launch gives the
  kernel one region of dynamic shared memory, and each buffer is a part of
  it at the offset of the buffers before it (`convert-to-llvm` lays them out
  so: `convert_to_llvm.dynamic_shared`); hoisted, every buffer's extents are
  defined before any buffer is placed. Example::

      gpu.func @k(%A: memref<?x?xf32>, %K: index) kernel {
        scf.for %b = ... {                                   // block_y
          %n = arith.addi %K, %c1 : index
          %s = memref.alloca(%n) : memref<32x?xf32, 3 : i32>
          ...

  becomes::

      gpu.func @k(%A: memref<?x?xf32>, %K: index) kernel {
        %n = arith.addi %K, %c1 : index
        %s = memref.alloca(%n) : memref<32x?xf32, 3 : i32>
        scf.for %b = ... {
          ...

  with ``%bytes = (32 * (%K + 1) * 4 + 15) / 16 * 16`` (as `i32`) passed
  by the launch. The extents are the same in every block (they are
  functions of the sizes only): an extent that is not a pure function of
  the kernel's arguments is an internal error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    i32,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from tcdialect.arguments import numpy_dtype
from tcdialect.diagnostics import TCError

#: Memory space of shared memory.
SHARED_SPACE = 3
#: Bytes: every dynamic buffer starts at a multiple of this (16-byte vector
#: accesses), as the extern array `convert-to-llvm` declares.
ALIGNMENT = 16
#: The largest byte count the `i32` launch operand holds.
MAX_BYTES = 2**31 - 1


def is_dynamic_shared(op: Operation) -> bool:
    """Whether `op` is a `memref.alloca` of dynamic shared memory."""
    if not isinstance(op, memref.AllocaOp) or not op.dynamic_sizes:
        return False
    space = op.memref.type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_SPACE


def dynamic_allocas(ops: Iterable[Operation]) -> list[memref.AllocaOp]:
    """The dynamic shared buffers in `ops` and their regions, in program order."""
    return [
        o
        for op in ops
        for o in op.walk()
        if is_dynamic_shared(o) and isinstance(o, memref.AllocaOp)
    ]


def element_bytes(t: MemRefType) -> int:
    return numpy_dtype(t.element_type).itemsize


def launch_bytes(
    allocas: list[memref.AllocaOp],
    host_value: Callable[[SSAValue], SSAValue | None],
    at: InsertPoint,
    kernel: str,
) -> SSAValue:
    """The `i32` bytes of dynamic shared memory the buffers `allocas` take
    (see the module docstring), computed at `at` on the host; `host_value`
    gives the host's version of a value of the segment (None: it has none)."""

    def emit(op: Operation) -> SSAValue:
        Rewriter.insert_op(op, at)
        return op.results[0]

    def const(n: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(n, IndexType())))

    total: SSAValue | None = None
    for alloca in allocas:
        t = alloca.memref.type
        assert isinstance(t, MemRefType)
        static = element_bytes(t)
        for d in t.get_shape():
            static *= d if d >= 0 else 1
        size = const(static)
        for v in alloca.dynamic_sizes:
            h = host_value(v)
            if h is None:
                raise TCError(
                    f"internal error: convert-parallel-loops-to-gpu: an extent of "
                    f"the dynamic shared buffer {t} of kernel @{kernel} is not "
                    "computed from the sizes"
                )
            size = emit(arith.MuliOp(size, h))
        aligned = emit(arith.CeilDivUIOp(size, const(ALIGNMENT)))
        aligned = emit(arith.MuliOp(aligned, const(ALIGNMENT)))
        total = aligned if total is None else emit(arith.AddiOp(total, aligned))
    assert total is not None
    capped = emit(arith.MinUIOp(total, const(MAX_BYTES)))
    return emit(arith.IndexCastOp(capped, i32))


def hoist(entry: Block, kernel: str) -> None:
    """Move the dynamic shared buffers of the kernel whose body is `entry` to
    its start (see the module docstring)."""
    allocas = dynamic_allocas(entry.ops)
    if not allocas:
        return
    top: Operation = allocas[0]  # the top-level op that holds the first one
    while (parent := top.parent_op()) is not None and top.parent_block() is not entry:
        top = parent
    at = InsertPoint.before(top)
    before: set[SSAValue] = set(entry.args)
    for op in entry.ops:
        if op is top:
            break
        before.update(op.results)
    for alloca in allocas:
        sizes = [_entry_value(v, before, at, kernel) for v in alloca.dynamic_sizes]
        alloca.detach()
        Rewriter.insert_op(alloca, at)
        for i, v in enumerate(sizes):
            alloca.operands[i] = v
        before.add(alloca.memref)


def _entry_value(
    v: SSAValue, before: set[SSAValue], at: InsertPoint, kernel: str
) -> SSAValue:
    """`v` available at `at` (in `before`, or recomputed there from values
    that are)."""
    if v in before:
        return v
    owner = v.owner
    if (
        isinstance(owner, Operation)
        and not owner.regions
        and is_side_effect_free(owner)
    ):
        operands = [_entry_value(o, before, at, kernel) for o in owner.operands]
        clone = owner.clone(
            value_mapper=dict(zip(owner.operands, operands, strict=True))
        )
        Rewriter.insert_op(clone, at)
        before.update(clone.results)
        return clone.results[owner.results.index(v)]  # pyright: ignore[reportArgumentType]
    raise TCError(
        f"internal error: convert-parallel-loops-to-gpu: an extent of a dynamic "
        f"shared buffer of kernel @{kernel} is not computed from its arguments"
    )
