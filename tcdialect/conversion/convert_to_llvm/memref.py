"""`memref` → llvm: element accesses, stack buffers, extents, prefetches.

`populate_memref_to_llvm(handlers)` adds the handlers of `convert-to-llvm`
for the memref ops that need no runtime (see `lowering.py`); memrefs are
lowered as `memref_abi` says (element pointer + dynamic extents):

- `memref.load/store` linearise the indices row-major (static extents become
  constants) and use `llvm.getelementptr inbounds` + `llvm.load/store`::

      %x = memref.load %A[%n, %c0] : memref<?x4xf32>

  becomes::

      %0 = llvm.mlir.constant(4) : i64
      %1 = llvm.mul %n, %0 overflow<nsw> : i64
      %2 = llvm.add %1, %c0 overflow<nsw> : i64
      %3 = llvm.getelementptr inbounds %A[%2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %x = llvm.load %3 : !llvm.ptr -> f32

- `memref.alloca` is an `llvm.alloca` (one of static shape is placed in the
  entry block, 64-byte aligned; a dynamic one where it stands, 16-byte
  aligned);
- `memref.dim` reads a constant or the dynamic extent (the dimension must be
  a constant);
- `memref.atomic_rmw` is `llvm.atomicrmw` (`tcdialect.dialects.llvm`,
  ordering `monotonic`) at the element's address: ``addf`` → ``fadd``,
  ``addi`` → ``add``, and the other kinds LLVM has (``assign`` → ``xchg``,
  ``maxs`` → ``max``, ``andi`` → ``and``, ...; not ``mulf``/``muli``)::

      %old = "memref.atomic_rmw"(%v, %A, %i) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32

  becomes ``%old = llvm.atomicrmw fadd %0, %v monotonic : !llvm.ptr, f32``
  (``%0`` the element's GEP);
- `memref.prefetch` is `llvm.prefetch` at the element's address (a GEP
  without `inbounds`: the address may lie outside the memref);
- `memref.extract_aligned_pointer_as_index` is a `ptrtoint` of the element
  pointer.

`memref.alloc`/`dealloc` need an allocator, which is the target's
(`cpu_runtime`: `malloc`/`free`). Other memref ops (`memref.copy`, views,
subviews) are rejected.
"""

from __future__ import annotations

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i32, i64
from xdsl.ir import Operation

from tcdialect.conversion.convert_to_llvm.lowering import (
    FunctionLowering,
    Handler,
    int_constant_of,
)
from tcdialect.conversion.convert_to_llvm.memref_abi import (
    MemRef,
    alloc_shape,
    element_ptr,
    extent,
)
from tcdialect.conversion.convert_to_llvm.type_converter import (
    check_memref,
    err,
    scalar_type,
)
from tcdialect.dialects.llvm import AtomicRMWOp
from tcdialect.dialects.memref import ATOMIC_RMW_KINDS, PrefetchOp

#: `memref.atomic_rmw` kinds → `llvm.atomicrmw` operations (no multiply).
ATOMIC_OPERATIONS = {
    "addf": "fadd",
    "addi": "add",
    "andi": "and",
    "assign": "xchg",
    "maximumf": "fmaximum",
    "maxnumf": "fmax",
    "maxs": "max",
    "maxu": "umax",
    "minimumf": "fminimum",
    "minnumf": "fmin",
    "mins": "min",
    "minu": "umin",
    "ori": "or",
    "xori": "xor",
}


def lower_load(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.LoadOp)
    m = lw.get_memref(op.memref, op)
    ptr = element_ptr(lw, m, op.indices, op)
    t = scalar_type(op.res.type, op)
    lw.set(op.res, lw.emit_value(llvm.LoadOp(ptr, t)))


def lower_store(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.StoreOp)
    m = lw.get_memref(op.memref, op)
    ptr = element_ptr(lw, m, op.indices, op)
    lw.emit(llvm.StoreOp(lw.get(op.value, op), ptr))


def lower_atomic_rmw(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.AtomicRMWOp)
    k = op.kind.value.data
    kind = ATOMIC_RMW_KINDS[k] if 0 <= k < len(ATOMIC_RMW_KINDS) else str(k)
    if kind not in ATOMIC_OPERATIONS:
        raise err(op, f"no LLVM atomic operation for kind '{kind}'")
    m = lw.get_memref(op.memref, op)
    ptr = element_ptr(lw, m, op.indices, op)
    rmw = AtomicRMWOp(ATOMIC_OPERATIONS[kind], ptr, lw.get(op.value, op))
    lw.set(op.result, lw.emit_value(rmw))


def lower_prefetch(lw: FunctionLowering, op: Operation) -> None:
    # The address may lie outside the memref: no `inbounds`, and the
    # intrinsic never faults.
    assert isinstance(op, PrefetchOp)
    m = lw.get_memref(op.memref, op)
    ptr = element_ptr(lw, m, op.indices, op, inbounds=False)
    write, data = (a.value.data != 0 for a in (op.isWrite, op.isDataCache))
    flags = (int(write), op.locality, int(data))
    args = [ptr, *(lw.const(f, i32) for f in flags)]
    lw.emit(llvm.CallIntrinsicOp("llvm.prefetch.p0", args, []))


def lower_alloca(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.AllocaOp)
    t = op.memref.type
    assert isinstance(t, MemRefType)
    elem = scalar_type(t.get_element_type(), op)
    if not op.dynamic_sizes and not op.symbol_operands:
        # A static alloca goes to the entry block: inside a loop, LLVM
        # would grow the stack on every iteration.
        check_memref(t, op)
        count = llvm.ConstantOp(IntegerAttr(max(1, t.element_count()), i64), i64)
        alloca = llvm.AllocaOp(count, elem, alignment=64)
        lw.at_entry([count, alloca])
        lw.set(op.memref, MemRef(t, alloca.res, ()))
        return
    t, dyn, count = alloc_shape(lw, op)
    ptr = lw.emit_value(llvm.AllocaOp(count, elem, alignment=16))
    lw.set(op.memref, MemRef(t, ptr, tuple(dyn)))


def lower_dim(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.DimOp)
    m = lw.get_memref(op.source, op)
    dim = int_constant_of(op.index)
    if dim is None or not 0 <= dim < m.type.get_num_dims():
        raise err(op, "the dimension must be a constant in range")
    lw.set(op.result, extent(lw, m, dim))


def lower_extract_aligned_pointer(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.ExtractAlignedPointerAsIndexOp)
    ptr = lw.get_memref(op.source, op).ptr
    lw.set(op.aligned_pointer, lw.emit_value(llvm.PtrToIntOp(ptr, i64)))


def populate_memref_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of the memref ops that need no allocator to `handlers`."""
    handlers.update(
        {
            "memref.load": lower_load,
            "memref.store": lower_store,
            "memref.atomic_rmw": lower_atomic_rmw,
            "memref.alloca": lower_alloca,
            "memref.dim": lower_dim,
            "memref.prefetch": lower_prefetch,
            "memref.extract_aligned_pointer_as_index": (lower_extract_aligned_pointer),
        }
    )
