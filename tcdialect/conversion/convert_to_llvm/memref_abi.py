"""The memref ABI of `convert-to-llvm`: bare element pointers, strides, GEPs.

A memref value lowers to a pointer to its first element plus one `i64` per
*dynamic* dimension (`MemRef`), everywhere: function arguments, call operands,
block arguments and `tcrt.parallel_for` captures. There is no descriptor
struct, no offset and no stride: only contiguous row-major memrefs (identity
layout) are accepted (`type_converter.check_memref`), so strides follow from
the extents, static ones becoming constants::

    memref<?x4xf32>  →  (%A: !llvm.ptr, %A_d0: i64)

An element `%A[%i, %j]` is at `getelementptr inbounds f32, %A, (%i * 4 + %j)`
(`element_ptr`; the products and sums are `nsw`).

The helpers here emit through a `FunctionLowering` (`lowering.py`) and know
nothing of allocation: `memref.alloc`/`dealloc` are the runtime's
(`cpu_runtime`), `memref.load`/`store`/... are lowered in `memref`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.ir import Attribute, Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.type_converter import (
    check_memref,
    err,
    scalar_type,
)
from tcdialect.transforms.ir_values import constant_index

if TYPE_CHECKING:
    from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering


@dataclass(frozen=True)
class MemRef:
    """A lowered memref value: element pointer and dynamic extents (i64)."""

    type: MemRefType[Attribute]
    ptr: SSAValue
    dyn_sizes: tuple[SSAValue, ...]

    def flat(self) -> list[SSAValue]:
        return [self.ptr, *self.dyn_sizes]


Lowered = SSAValue | MemRef
"""What an original SSA value lowers to: one llvm value, or a `MemRef`."""


def pack(t: Attribute, values: Sequence[SSAValue]) -> Lowered:
    """Group the expanded values of one original value of type `t`."""
    if isinstance(t, MemRefType):
        return MemRef(t, values[0], tuple(values[1:]))
    assert len(values) == 1
    return values[0]


def extent(lw: FunctionLowering, m: MemRef, dim: int) -> SSAValue:
    """The extent of dimension `dim` of `m`: a constant or its dynamic size."""
    shape = m.type.get_shape()
    if shape[dim] >= 0:
        return lw.const(shape[dim], i64)
    return m.dyn_sizes[sum(1 for d in shape[:dim] if d < 0)]


def gep(
    ptr: SSAValue, index: int | SSAValue, elem: Attribute, *, inbounds: bool = False
) -> llvm.GEPOp:
    """`getelementptr elem, ptr, index` (a single index), a pointer in the
    address space of `ptr`."""
    t = ptr.type
    assert isinstance(t, llvm.LLVMPointerType)
    return llvm.GEPOp.from_mixed_indices(
        ptr, [index], elem, result_type=t, inbounds=inbounds
    )


def inbounds_gep(ptr: SSAValue, index: int | SSAValue, elem: Attribute) -> llvm.GEPOp:
    """`getelementptr inbounds elem, ptr, index` (a single index)."""
    gep_ = gep(ptr, index, elem, inbounds=True)
    # MLIR reads `inbounds` from the no-wrap flags (inbounds | nusw).
    gep_.properties["noWrapFlags"] = IntegerAttr(3, 32)
    return gep_


def split_constants(
    indices: Sequence[SSAValue], shape: Sequence[int]
) -> tuple[list[SSAValue], int]:
    """`indices` without their constant addends (`arith.addi` with a
    constant operand, nested) along dimensions whose stride is static, and
    the linear offset those addends add up to."""
    out: list[SSAValue] = []
    offset = 0
    for dim, v in enumerate(indices):
        rest = shape[dim + 1 :]
        if any(e < 0 for e in rest):
            out.append(v)
            continue
        stride = 1
        for e in rest:
            stride *= e
        while isinstance(v.owner, arith.AddiOp):
            lhs, rhs = v.owner.lhs, v.owner.rhs
            if (c := constant_index(rhs)) is not None:
                v = lhs
            elif (c := constant_index(lhs)) is not None:
                v = rhs
            else:
                break
            offset += c * stride
        out.append(v)
    return out, offset


def element_ptr(
    lw: FunctionLowering,
    m: MemRef,
    indices: Sequence[SSAValue],
    op: Operation,
    *,
    inbounds: bool = True,
    split: bool = False,
) -> SSAValue:
    """The address of `m[indices]`, linearised row-major.

    With `split`, constant addends of the indices (`arith.addi %x, %c`) along
    dimensions of static stride become one constant offset after the
    linearised rest (a GEP without `inbounds`), which the backend folds into
    the instruction's displacement: a register tile's 16 row stores
    `T[%n0, %n1 + i, %d]` then share one base register instead of holding 16
    row indices across the tile. The conversion splits the addresses of vector
    stores and masked vector accesses only (docs/perf/lowering.md).
    """
    if len(indices) != m.type.get_num_dims():
        raise err(op, "wrong number of indices")
    if not indices:
        return m.ptr
    offset = 0
    if split:
        indices, offset = split_constants(indices, m.type.get_shape())
    nsw = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,))
    linear = lw.get(indices[0], op)
    for dim in range(1, len(indices)):
        scaled = lw.emit_value(llvm.MulOp(linear, extent(lw, m, dim), overflow=nsw))
        linear = lw.emit_value(
            llvm.AddOp(scaled, lw.get(indices[dim], op), overflow=nsw)
        )
    elem = scalar_type(m.type.get_element_type(), op)
    if offset:
        # `base + linear` alone may lie outside the array: no `inbounds`
        at = lw.emit_value(gep(m.ptr, linear, elem))
        return lw.emit_value(gep(at, offset, elem))
    if not inbounds:
        return lw.emit_value(gep(m.ptr, linear, elem))
    return lw.emit_value(inbounds_gep(m.ptr, linear, elem))


def alloc_shape(
    lw: FunctionLowering, op: memref.AllocOp | memref.AllocaOp
) -> tuple[MemRefType[Attribute], list[SSAValue], SSAValue]:
    """(type, dynamic sizes, element count) of an allocation."""
    t = op.memref.type
    assert isinstance(t, MemRefType)
    check_memref(t, op)
    if op.symbol_operands:
        raise err(op, "unsupported symbol operands")
    dyn = [lw.get(v, op) for v in op.dynamic_sizes]
    count: SSAValue | None = None
    static = 1
    it = iter(dyn)
    for d in t.get_shape():
        if d >= 0:
            static *= d
            continue
        size = next(it)
        count = size if count is None else lw.emit_value(llvm.MulOp(count, size))
    if count is None:
        count = lw.const(static, i64)
    elif static != 1:
        count = lw.emit_value(llvm.MulOp(count, lw.const(static, i64)))
    return t, dyn, count
