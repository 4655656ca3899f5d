"""`vector` → llvm: the handlers of `convert-to-llvm` for 1-D vector ops.

`populate_vector_to_llvm(handlers)` adds them to a handler table (see
`lowering.py`). Vector types are fixed 1-D vectors of integers or floats
(`type_converter`); arith and math ops on them are lowered by those modules.

- `vector.load/store` on a contiguous row-major memref are an
  `llvm.load/store` of the vector type at the element's address, aligned to
  the element size (unaligned access) or to a store's larger `alignment`
  attribute, `nontemporal = true` marking the `llvm.store` (LLVM's
  `!nontemporal`, as MLIR's vector-to-llvm does)::

      vector.store %v, %A[%i] {alignment = 64} : memref<?xf32>, vector<8xf32>

  becomes `llvm.store %v, %p {alignment = 64 : i64} : vector<8xf32>, !llvm.ptr`
  with `%p` the GEP of `%A[%i]`. Store addresses, and those of masked
  accesses, are split: constant addends of the indices become a second GEP
  (`memref_abi.element_ptr`). Accesses to `i1` memrefs are rejected.
- `vector.maskedload/maskedstore` are LLVM 22's `llvm.masked.load/store`
  (no alignment operand); `vector.create_mask` compares the lane indices with
  the bound. Of `bf16` vectors they move `i16` vectors, bit-cast: x86-64
  without AVX512-BF16 scalarises a masked `bfloat` access through float
  and rounds each lane back with `__truncsfbf2`, a library call the CPU
  JIT's process lacks (`soft_bfloat16`).
- `vector.broadcast` of a scalar is `insertelement` + a zero-mask
  `shufflevector` (of a 1-element vector, a `shufflevector`);
  `vector.shuffle` of 1-D vectors is `shufflevector`; `vector.fma` is
  `llvm.intr.fma`.
- `vector.reduction` is `llvm.vector.reduce.*`: `add`/`mul` on floats start
  from the accumulator or the identity and carry the op's fast-math flags, so
  `reassoc` gives a tree reduction and none an ordered one; other kinds
  combine the accumulator afterwards (`llvm.maxnum.f32`, `llvm.add`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.memref_abi import element_ptr
from tcdialect.conversion.convert_to_llvm.type_converter import (
    element_size,
    err,
    fastmath,
    float_suffix,
    int_suffix,
    scalar_type,
    vector_suffix,
)

# vector.reduction kinds on floats other than add/mul: (llvm.vector.reduce.<x>,
# the scalar intrinsic combining the result with the accumulator)
_FLOAT_REDUCTIONS: dict[str, tuple[str, str]] = {
    "maxnumf": ("fmax", "maxnum"),
    "minnumf": ("fmin", "minnum"),
    "maximumf": ("fmaximum", "maximum"),
    "minimumf": ("fminimum", "minimum"),
}

# vector.reduction kinds on integers: (llvm.vector.reduce.<x>, combine op or
# scalar intrinsic name)
_INT_REDUCTIONS: dict[str, tuple[str, str | Callable[..., Operation]]] = {
    "add": ("add", llvm.AddOp),
    "mul": ("mul", llvm.MulOp),
    "and": ("and", llvm.AndOp),
    "or": ("or", llvm.OrOp),
    "xor": ("xor", llvm.XOrOp),
    "maxsi": ("smax", "smax"),
    "minsi": ("smin", "smin"),
    "maxui": ("umax", "umax"),
    "minui": ("umin", "umin"),
}


def _vector_access(
    lw: FunctionLowering,
    op: Operation,
    base: SSAValue,
    indices: Sequence[SSAValue],
    *,
    split: bool = False,
) -> tuple[SSAValue, int]:
    """(address of the first element, alignment) of a contiguous vector access."""
    m = lw.get_memref(base, op)
    elem = scalar_type(m.type.get_element_type(), op)
    if elem == i1:
        raise err(op, "unsupported vector access to an i1 memref")
    return element_ptr(lw, m, indices, op, split=split), element_size(elem)


def lower_vector_load(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.LoadOp)
    t = scalar_type(op.result.type, op)
    ptr, align = _vector_access(lw, op, op.base, op.indices)
    lw.set(op.result, lw.emit_value(llvm.LoadOp(ptr, t, alignment=align)))


def lower_vector_store(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.StoreOp)
    ptr, align = _vector_access(lw, op, op.base, op.indices, split=True)
    alignment = op.attributes.get("alignment")
    if isinstance(alignment, IntegerAttr):
        align = max(align, alignment.value.data)
    nontemporal = op.nontemporal is not None and op.nontemporal.value.data != 0
    value = lw.get(op.vector, op)
    lw.emit(llvm.StoreOp(value, ptr, alignment=align, nontemporal=nontemporal))


def _bf16_bits(lw: FunctionLowering, x: SSAValue) -> SSAValue:
    """A vector of `bfloat` as the vector of `i16` of its bits (others as is)."""
    t = x.type
    if not (
        isinstance(t, VectorType) and isinstance(t.get_element_type(), BFloat16Type)
    ):
        return x
    return lw.emit_value(llvm.BitcastOp(x, VectorType(i16, t.get_shape())))


def lower_masked_load(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.MaskedLoadOp)
    t = scalar_type(op.result.type, op)
    ptr, _ = _vector_access(lw, op, op.base, op.indices, split=True)
    mask, passthru = lw.get(op.mask, op), lw.get(op.pass_thru, op)
    passthru = _bf16_bits(lw, passthru)
    bits = passthru.type
    # LLVM 22's form: no alignment operand (an optional `align` on the
    # pointer; without it the access may be unaligned, as here).
    name = f"llvm.masked.load.{vector_suffix(bits, op)}.p0"
    x = lw.call_intrinsic(name, [ptr, mask, passthru], bits)
    if bits != t:
        x = lw.emit_value(llvm.BitcastOp(x, t))
    lw.set(op.result, x)


def lower_masked_store(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.MaskedStoreOp)
    ptr, _ = _vector_access(  # LLVM 22's form
        lw, op, op.base, op.indices, split=True
    )
    value = _bf16_bits(lw, lw.get(op.value_to_store, op))
    name = f"llvm.masked.store.{vector_suffix(value.type, op)}.p0"
    args = [value, ptr, lw.get(op.mask, op)]
    lw.emit(llvm.CallIntrinsicOp(name, args, []))


def lower_create_mask(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.CreateMaskOp)
    t = op.results[0].type
    if not isinstance(t, VectorType) or t.get_num_dims() != 1:
        raise err(op, f"unsupported mask type {t}")
    (bound,) = (lw.get(v, op) for v in op.operands)
    n = t.get_shape()[0]
    lanes = DenseIntOrFPElementsAttr.from_list(VectorType(i64, [n]), list(range(n)))
    step = lw.emit_value(llvm.ConstantOp(lanes, VectorType(i64, [n])))
    splat = _splat(lw, bound, VectorType(i64, [n]))
    lw.set(op.results[0], lw.icmp("slt", step, splat))


def _splat(lw: FunctionLowering, x: SSAValue, t: VectorType[Attribute]) -> SSAValue:
    """`x` (a scalar) in every lane of a `t`: insertelement + shufflevector."""
    n = t.get_shape()[0]
    undef = lw.emit_value(llvm.UndefOp(t))
    first = lw.emit_value(llvm.InsertElementOp(undef, x, lw.const(0, i32)))
    mask = DenseArrayBase.from_list(i32, [0] * n)
    return lw.emit_value(llvm.ShuffleVectorOp(first, undef, mask, t))


def lower_broadcast(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.BroadcastOp)
    src = lw.get(op.source, op)
    t = scalar_type(op.vector.type, op)
    assert isinstance(t, VectorType)
    if src.type == t:
        lw.set(op.vector, src)
        return
    if isinstance(src.type, VectorType):
        if src.type.get_shape() != (1,):
            raise err(op, f"unsupported broadcast of {src.type}")
        mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
        lw.set(op.vector, lw.emit_value(llvm.ShuffleVectorOp(src, src, mask, t)))
        return
    lw.set(op.vector, _splat(lw, src, t))


def lower_shuffle(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.ShuffleOp)
    t = scalar_type(op.result.type, op)
    a, b = lw.get(op.v1, op), lw.get(op.v2, op)
    if not isinstance(t, VectorType) or len(t.get_shape()) != 1:
        raise err(op, f"unsupported shuffle to {op.result.type}")
    if not isinstance(a.type, VectorType) or not isinstance(b.type, VectorType):
        raise err(op, "unsupported shuffle of 0-d vectors")
    mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
    lw.set(op.result, lw.emit_value(llvm.ShuffleVectorOp(a, b, mask, t)))


def lower_vector_fma(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.FMAOp)
    a, b, c = (lw.get(v, op) for v in (op.lhs, op.rhs, op.acc))
    lw.set(op.res, lw.emit_value(llvm.FMAOp(a, b, c)))


def lower_reduction(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, vector.ReductionOp)
    vec = lw.get(op.vector, op)
    vt = vec.type
    assert isinstance(vt, VectorType)
    elem = vt.get_element_type()
    kind = op.kind.data.value
    acc = lw.get(op.acc, op) if op.acc is not None else None
    flags = fastmath(op)
    if isinstance(elem, AnyFloat):
        suffix = float_suffix(vt, op)
        if kind in ("add", "mul"):
            start = acc
            if start is None:
                start = lw.const(-0.0 if kind == "add" else 1.0, elem)
            name = f"llvm.vector.reduce.f{kind}.{suffix}"
            result = lw.call_intrinsic(name, [start, vec], elem, flags)
        elif kind in _FLOAT_REDUCTIONS:
            intr, combine = _FLOAT_REDUCTIONS[kind]
            name = f"llvm.vector.reduce.{intr}.{suffix}"
            result = lw.call_intrinsic(name, [vec], elem, flags)
            if acc is not None:
                name = f"llvm.{combine}.{float_suffix(elem, op)}"
                result = lw.call_intrinsic(name, [result, acc], elem, flags)
        else:
            raise err(op, f"unsupported reduction kind '{kind}' on floats")
    elif isinstance(elem, IntegerType):
        if kind not in _INT_REDUCTIONS:
            raise err(op, f"unsupported reduction kind '{kind}' on integers")
        intr, combine = _INT_REDUCTIONS[kind]
        name = f"llvm.vector.reduce.{intr}.{int_suffix(vt, op)}"
        result = lw.call_intrinsic(name, [vec], elem)
        if acc is not None:
            if isinstance(combine, str):
                name = f"llvm.{combine}.{int_suffix(elem, op)}"
                result = lw.call_intrinsic(name, [result, acc], elem)
            else:
                result = lw.emit_value(combine(result, acc))
    else:
        raise err(op, f"unsupported vector type {vt}")
    lw.set(op.dest, result)


def populate_vector_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of every supported `vector` op to `handlers`."""
    handlers.update(
        {
            "vector.load": lower_vector_load,
            "vector.store": lower_vector_store,
            "vector.maskedload": lower_masked_load,
            "vector.maskedstore": lower_masked_store,
            "vector.create_mask": lower_create_mask,
            "vector.broadcast": lower_broadcast,
            "vector.shuffle": lower_shuffle,
            "vector.fma": lower_vector_fma,
            "vector.reduction": lower_reduction,
        }
    )
