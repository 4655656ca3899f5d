"""The CUDA device part of `convert-to-llvm`: `nvvm` ops, `gpu.return`, shared memory.

`populate_nvvm_to_llvm(handlers)` adds the handlers that the `cuda` target's
table (`cuda_handlers`) has on top of the dialect modules' ones, for the
functions of a `gpu.module` after `convert-gpu-to-nvvm` (see
`tcdialect.conversion.convert_gpu_to_nvvm`); memrefs there are global
memory (`!llvm.ptr<1>`) unless in memory space 3 (`type_converter.CUDA_SPACES`).

- `nvvm.*` ops are kept, their operands remapped: they are part of the
  llvm stage, and the backend translates them to `llvm.nvvm.*` intrinsics
  (as `mlir-translate` does);
- `gpu.return` is `llvm.return`;
- a `memref.alloca` in memory space 3 (shared memory: one buffer per block)
  is a global of the module, addressed where the alloca stood::

      %s = memref.alloca() : memref<32x33xf32, 3 : i32>     // in gpu.func @k

  becomes::

      llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<1056 x f32>
      ...
      %s = llvm.mlir.addressof @__wg_k_0 : !llvm.ptr<3>

  One with dynamic extents is dynamic shared memory, a part of the
  extern array `@__dynamic_shmem` (`dynamic_shared`). Other
  allocas (private to each thread) are `llvm.alloca`s as in `memref`, but
  16-byte aligned (a GPU thread's stack is small; `memref` aligns static
  CPU buffers to 64 bytes for AVX-512);
- a `memref.store` marked `tc.async_copy` (`gpu-async-copies`) copies
  from its value's load address: `nvvm.cp.async.shared.global`; the load
  is left to LLVM's dead-code elimination;
- `memref.prefetch` is not supported (its intrinsic is the CPU's).
"""

from __future__ import annotations

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Attribute, Operation

from tcdialect.conversion.convert_to_llvm.dynamic_shared import lower_dynamic_shared
from tcdialect.conversion.convert_to_llvm.func_cf import lower_return
from tcdialect.conversion.convert_to_llvm.lowering import (
    FunctionLowering,
    Handler,
    lower_llvm_passthrough,
)
from tcdialect.conversion.convert_to_llvm.memref import lower_alloca, lower_store
from tcdialect.conversion.convert_to_llvm.memref_abi import MemRef, element_ptr
from tcdialect.conversion.convert_to_llvm.type_converter import (
    CUDA_SPACES,
    check_memref,
    err,
    memory_space,
    memref_pointer,
    scalar_type,
)
from tcdialect.dialects import nvvm
from tcdialect.dialects.nvvm import NVVM
from tcdialect.transforms.gpu_async_copies import ASYNC_COPY, copy_bytes

SHARED_SPACE = 3
"""The memref memory space (and LLVM address space) of shared memory."""
SHARED_ALIGNMENT = 16
"""Bytes: a shared buffer may be read with 16-byte vector loads."""
PRIVATE_ALIGNMENT = 16
"""Bytes: the alignment of a thread's private buffer."""


def shared_buffer_name(lw: FunctionLowering) -> str:
    """`__wg_<function>_<i>`: the first such name the module does not have."""
    symbols = lw.parent.symbols
    prefix = f"__wg_{lw.func.sym_name.data}_"
    i = 0
    while f"{prefix}{i}" in symbols:
        i += 1
    return f"{prefix}{i}"


def lower_device_alloca(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.AllocaOp)
    t = op.memref.type
    assert isinstance(t, MemRefType)
    if memory_space(t) != SHARED_SPACE:
        _private_alloca(lw, op, t)
        return
    if op.dynamic_sizes:
        lower_dynamic_shared(lw, op)  # a part of `@__dynamic_shmem`
        return
    if op.symbol_operands:
        raise err(op, f"unsupported dynamic shape of shared memory {t}")
    ptr_type = memref_pointer(t, op, CUDA_SPACES)
    elem = scalar_type(t.get_element_type(), op)
    buffer = llvm.GlobalOp(
        llvm.LLVMArrayType(max(1, t.element_count()), elem),
        shared_buffer_name(lw),
        "internal",
        addr_space=SHARED_SPACE,
        alignment=SHARED_ALIGNMENT,
    )
    name = lw.parent.add_global(buffer, op)
    ptr = lw.emit_value(llvm.AddressOfOp(name, ptr_type))
    lw.set(op.memref, MemRef(t, ptr, ()))


def _private_alloca(
    lw: FunctionLowering, op: memref.AllocaOp, t: MemRefType[Attribute]
) -> None:
    if op.dynamic_sizes or op.symbol_operands:
        lower_alloca(lw, op)  # where it stands, 16-byte aligned
        return
    check_memref(t, op)
    elem = scalar_type(t.get_element_type(), op)
    # in the entry block: inside a loop, it would grow the stack each iteration
    count = llvm.ConstantOp(IntegerAttr(max(1, t.element_count()), i64), i64)
    alloca = llvm.AllocaOp(count, elem, alignment=PRIVATE_ALIGNMENT)
    lw.at_entry([count, alloca])
    lw.set(op.memref, MemRef(t, alloca.res, ()))


def lower_device_store(lw: FunctionLowering, op: Operation) -> None:
    """A store marked `tc.async_copy` (`gpu-async-copies`: a global load's
    value into shared memory) is `nvvm.cp.async.shared.global` from the
    load's address; any other store is `llvm.store`."""
    assert isinstance(op, memref.StoreOp)
    load = op.value.owner
    size = copy_bytes(op.memref.type)
    if (
        ASYNC_COPY not in op.attributes
        or not isinstance(load, memref.LoadOp)
        or size is None
    ):
        lower_store(lw, op)
        return
    src = element_ptr(lw, lw.get_memref(load.memref, load), load.indices, load)
    dst = element_ptr(lw, lw.get_memref(op.memref, op), op.indices, op)
    lw.emit(nvvm.CpAsyncSharedGlobalOp(dst, src, size))


def _unsupported(lw: FunctionLowering, op: Operation) -> None:
    raise err(op, "unsupported operation on the GPU")


def populate_nvvm_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of `nvvm` ops, `gpu.return` and shared memory to
    `handlers`, and take `memref.prefetch` out."""
    handlers.update({op.name: lower_llvm_passthrough for op in NVVM.operations})
    handlers.update(
        {
            "gpu.return": lower_return,
            "memref.alloca": lower_device_alloca,
            "memref.store": lower_device_store,
            "memref.prefetch": _unsupported,
        }
    )
