"""Dynamic shared memory on the CUDA target: `memref.alloca`s in space 3 with dynamic extents.

A kernel's dynamic shared buffers (from `affine-gpu-promote`, hoisted to the
kernel's entry block by `convert-parallel-loops-to-gpu`:
`tcdialect.conversion.gpu_dynamic_shared`) are parts of the one region of
shared memory that the launch sizes (`gpu.launch_func ...
dynamic_shared_memory_size %bytes`): the external global
`@__dynamic_shmem` of the `gpu.module` (an empty array in address space 3,
16-byte aligned: CUDA's ``extern __shared__``, MLIR's
`gpu.dynamic_shared_memory`). Each buffer starts where the ones before it
end, every buffer's bytes rounded up to 16 (as the host counts them)::

    %a = memref.alloca(%n) : memref<32x?xf32, 3 : i32>
    %b = memref.alloca(%k) : memref<?x33xf32, 3 : i32>

becomes::

    llvm.mlir.global external @__dynamic_shmem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    ...
    %a = llvm.mlir.addressof @__dynamic_shmem : !llvm.ptr<3>
    %0 = llvm.mul %n, 128 : i64 ; %1 = (%0 + 15) & -16
    %2 = llvm.getelementptr %a[%1] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8

(`%a`'s extents are `%n`, `%b`'s `%k`, as for any memref). A dynamic
shared buffer outside the entry block is an error: its offset needs the
extents of the buffers before it.
"""

from __future__ import annotations

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import MemRefType, i8, i64
from xdsl.ir import Attribute, SSAValue

from tcdialect.arguments import numpy_dtype
from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering
from tcdialect.conversion.convert_to_llvm.memref_abi import MemRef, gep
from tcdialect.conversion.convert_to_llvm.type_converter import (
    CUDA_SPACES,
    err,
    memref_pointer,
)
from tcdialect.conversion.gpu_dynamic_shared import ALIGNMENT, is_dynamic_shared

#: The extern array of dynamic shared memory (MLIR's name).
DYNAMIC_SHARED_NAME = "__dynamic_shmem"
SHARED_SPACE = 3


def _bytes(
    lw: FunctionLowering, t: MemRefType[Attribute], dyn: list[SSAValue]
) -> SSAValue:
    """The bytes of a buffer of type `t` with dynamic extents `dyn`, rounded
    up to `ALIGNMENT`."""
    static = numpy_dtype(t.element_type).itemsize
    for d in t.get_shape():
        static *= d if d >= 0 else 1
    size = lw.const(static, i64)
    for v in dyn:
        size = lw.emit_value(llvm.MulOp(size, v))
    up = lw.emit_value(llvm.AddOp(size, lw.const(ALIGNMENT - 1, i64)))
    return lw.emit_value(llvm.AndOp(up, lw.const(-ALIGNMENT, i64)))


def lower_dynamic_shared(lw: FunctionLowering, op: memref.AllocaOp) -> None:
    """`op`, a dynamic shared buffer, as a part of `@__dynamic_shmem` (see
    the module docstring)."""
    t = op.memref.type
    assert isinstance(t, MemRefType)
    block = op.parent_block()
    if block is None or block is not lw.func.body.blocks.first:
        raise err(op, "dynamic shared memory allocated outside the entry block")
    if op.symbol_operands:
        raise err(op, "unsupported symbol operands")
    ptr_type = memref_pointer(t, op, CUDA_SPACES)
    if DYNAMIC_SHARED_NAME not in lw.parent.symbols:
        lw.parent.add_global(
            llvm.GlobalOp(
                llvm.LLVMArrayType(0, i8),
                DYNAMIC_SHARED_NAME,
                "external",
                addr_space=SHARED_SPACE,
                alignment=ALIGNMENT,
            ),
            op,
        )
    base = lw.emit_value(llvm.AddressOfOp(DYNAMIC_SHARED_NAME, ptr_type))
    offset: SSAValue | None = None
    for before in block.ops:
        if before is op:
            break
        if not is_dynamic_shared(before):
            continue
        assert isinstance(before, memref.AllocaOp)
        m = lw.get_memref(before.memref, before)
        size = _bytes(lw, m.type, list(m.dyn_sizes))
        offset = size if offset is None else lw.emit_value(llvm.AddOp(offset, size))
    ptr = base if offset is None else lw.emit_value(gep(base, offset, i8))
    dyn = tuple(lw.get(v, op) for v in op.dynamic_sizes)
    lw.set(op.memref, MemRef(t, ptr, dyn))
