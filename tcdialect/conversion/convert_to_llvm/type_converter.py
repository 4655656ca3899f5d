"""The type converter of `convert-to-llvm`: builtin types → llvm dialect types.

Contract (shared by every dialect module of this package):

- `index` becomes `i64`; signless integers and floats stay as they are, and
  so do fixed 1-D vectors of them (`vector<8xf32>`; `vector<4xindex>` →
  `vector<4xi64>`); types the llvm dialect already accepts (`!llvm.ptr`) are
  kept. Anything else (signed/unsigned integers, n-D or scalable vectors,
  tensors) is rejected with a `TCError` naming the operation.
- A memref is expanded into several values (`lowered_types`): an element
  pointer and one `i64` per dynamic dimension (see `memref_abi`). Only
  contiguous row-major memrefs (identity layout) are accepted, in the
  memory spaces the target maps to LLVM address spaces (`AddressSpaces`):
  on the CPU (`CPU_SPACES`) only the default one, whose pointer is the
  opaque `!llvm.ptr`; on a GPU (`CUDA_SPACES`) the default space is global
  memory (`!llvm.ptr<1>`) and `3 : i32` shared memory (`!llvm.ptr<3>`).

It also holds the LLVM intrinsic name mangling of types (`f32`, `v8f32`,
`v8i32`) and the conversion of `arith` fast-math flags to `llvm` ones. Nothing
here emits IR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineMap

from tcdialect.diagnostics import TCError

PTR = llvm.LLVMPointerType()
"""The opaque pointer (address space 0) a memref's elements are addressed by."""

AddressSpaces = Mapping[int | None, int | None]
"""The LLVM address space of a memref's element pointer by the memref's
memory space (None: the default space, or `3` for `3 : i32`); None is the
opaque `!llvm.ptr`. A memory space missing from the map is rejected."""

CPU_SPACES: AddressSpaces = {None: None}
"""The CPU's memrefs: the default memory space only, as `!llvm.ptr`."""

CUDA_SPACES: AddressSpaces = {None: 1, 3: 3}
"""A CUDA kernel's memrefs: global memory (the default space) as
`!llvm.ptr<1>`, shared memory (`3 : i32`) as `!llvm.ptr<3>`."""


def err(op: Operation, what: str) -> TCError:
    """The error for `op` the conversion cannot lower, saying `what` is wrong."""
    return TCError(f"convert-to-llvm: {what} in '{op.name}'")


def fastmath(op: Operation) -> llvm.FastMathAttr:
    """The fast-math flags of an `arith` float op, as `llvm` flags."""
    flags = op.properties.get("fastmath")
    if isinstance(flags, arith.FastMathFlagsAttr):
        return llvm.FastMathAttr(flags.data)
    return llvm.FastMathAttr(None)


def memory_space(t: MemRefType[Attribute]) -> int | None:
    """The memory space of `t`: None for the default one, `n` for `n : i32`
    (-1 for any other attribute, which no target maps)."""
    space = t.memory_space
    if isinstance(space, NoneAttr):
        return None
    if isinstance(space, IntegerAttr):
        return space.value.data
    return -1


def check_memref(
    t: MemRefType[Attribute], where: Operation, spaces: AddressSpaces = CPU_SPACES
) -> None:
    """Reject a memref type the ABI cannot represent (layout, memory space)."""
    layout = t.layout
    if not isinstance(layout, NoneAttr) and not (
        isinstance(layout, AffineMapAttr)
        and layout.data == AffineMap.identity(t.get_num_dims())
    ):
        raise err(where, f"unsupported memref layout {t}")
    if memory_space(t) not in spaces:
        raise err(where, f"unsupported memref memory space {t}")
    scalar_type(t.get_element_type(), where)


def memref_pointer(
    t: MemRefType[Attribute], where: Operation, spaces: AddressSpaces = CPU_SPACES
) -> llvm.LLVMPointerType:
    """The type of the element pointer of a memref of type `t`."""
    check_memref(t, where, spaces)
    space = spaces[memory_space(t)]
    return PTR if space is None else llvm.LLVMPointerType(IntAttr(space))


def scalar_type(t: Attribute, where: Operation) -> Attribute:
    """The llvm type of a non-memref value."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, IntegerType):
        if t.signedness.data != Signedness.SIGNLESS:
            raise err(where, f"unsupported non-signless integer type {t}")
        return t
    if isinstance(t, AnyFloat):
        return t
    if isinstance(t, VectorType):
        if t.get_num_dims() != 1 or t.get_num_scalable_dims():
            raise err(where, f"unsupported vector type {t} (only fixed 1-D vectors)")
        elem = t.get_element_type()
        if not isinstance(elem, IndexType | IntegerType | AnyFloat):
            raise err(where, f"unsupported vector type {t}")
        return VectorType(scalar_type(elem, where), t.get_shape())
    if llvm.is_compatible_type(t):
        return t
    raise err(where, f"unsupported type {t}")


def lowered_types(
    t: Attribute, where: Operation, spaces: AddressSpaces = CPU_SPACES
) -> list[Attribute]:
    """The llvm types a value of type `t` expands to (several for a memref)."""
    if isinstance(t, MemRefType):
        ptr = memref_pointer(t, where, spaces)
        dyn = sum(1 for d in t.get_shape() if d < 0)
        return [ptr, *[i64] * dyn]
    return [scalar_type(t, where)]


def element_size(t: Attribute) -> int:
    """Bytes per memref element of (lowered) type `t`; `i1` takes a byte."""
    if isinstance(t, IntegerType):
        return max(1, (t.width.data + 7) // 8)
    if isinstance(t, Float16Type | BFloat16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float64Type):
        return 8
    if isinstance(t, llvm.LLVMPointerType):
        return 8
    raise TCError(f"convert-to-llvm: no element size for {t}")


def float_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM intrinsic mangling of a float (vector) type (`f32`, `v8f32`, ...)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{float_suffix(t.get_element_type(), where)}"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    raise err(where, f"unsupported float type {t}")


def int_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM intrinsic mangling of an integer (vector) type (`i32`, `v8i32`)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{int_suffix(t.get_element_type(), where)}"
    if not isinstance(t, IntegerType):
        raise err(where, f"expected an integer type, got {t}")
    return f"i{t.width.data}"


def vector_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM mangling of a vector type of floats or integers (`v8f32`)."""
    if isinstance(t, VectorType) and isinstance(t.get_element_type(), IntegerType):
        return int_suffix(t, where)
    return float_suffix(t, where)


def int_width(t: Attribute) -> int:
    """The bit width of an integer type or of the elements of an integer vector."""
    if isinstance(t, VectorType):
        t = t.get_element_type()
    assert isinstance(t, IntegerType)
    return t.width.data


def is_vector(t: Attribute) -> bool:
    return isinstance(t, VectorType)


def func_type(
    inputs: Sequence[Attribute], outputs: Sequence[Attribute]
) -> llvm.LLVMFunctionType:
    """The llvm function type of (lowered) `inputs` → at most one output."""
    return llvm.LLVMFunctionType(inputs, outputs[0] if outputs else None)
