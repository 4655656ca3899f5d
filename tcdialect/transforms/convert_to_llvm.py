"""`convert-to-llvm`: func, cf, arith, math, memref, vector, tcrt → the llvm dialect.

The last real lowering of the CPU pipeline (see docs/pipeline.md, "llvm stage
ABI"). Each `func.func` is translated directly, block by block, into an
`llvm.func` of the same name with a value map from the old SSA values to the new
ones (no piecemeal patterns, no unrealized casts left behind). Types:

- `index` becomes `i64`; signless integers and floats stay as they are, and
  so do fixed 1-D vectors of them (`vector<8xf32>`, `vector<4xindex>` →
  `vector<4xi64>`);
- a memref value becomes a pointer to its first element plus one `i64` per
  *dynamic* dimension, everywhere: function arguments, call operands, block
  arguments and `tcrt.parallel_for` captures. Only contiguous row-major memrefs
  (identity layout, default memory space) are accepted. A function may return
  at most one value, and not a memref.

Operations:

- `memref.load/store` linearise the indices row-major (static extents become
  constants) and use `llvm.getelementptr inbounds` + `llvm.load/store`;
  `memref.alloc` calls `malloc(size in bytes)` (an `i1` element takes a byte),
  `memref.dealloc` calls `free`, `memref.alloca` is an `llvm.alloca` (one of
  static shape is placed in the entry block, 64-byte aligned),
  `memref.dim` reads a constant or the dynamic extent; `memref.prefetch` is
  `llvm.prefetch` at the element's address (a GEP without `inbounds`: the
  address may lie outside the memref).
- Integer division and remainder never trap: a zero divisor gives 0 and
  `INT_MIN / -1` wraps (the divisor is guarded with selects, unless it is a
  constant other than 0 and -1); `floordivsi`/`ceildivsi`/`ceildivui` round
  towards -inf/+inf.
- `fptosi`/`fptoui` become the saturating `llvm.fpto[su]i.sat.*` intrinsics
  (NaN gives 0), `uitofp` a zero extension (or, from `i64`, a halving
  sequence) and `sitofp`.
- `math` ops become `llvm.intr.*` ops where xDSL has them, `llvm.call_intrinsic`
  for other LLVM intrinsics (`llvm.log10`, `llvm.tanh`, ...), and calls to the
  C math library otherwise (`expm1f`/`expm1`, ...; `f` suffix for `f32`);
  `rsqrt` is `1 / sqrt`.
- Vectors: arith/math ops on vectors become the same llvm ops or intrinsics
  mangled by the vector type (`llvm.maximum.v8f32`, `llvm.smax.v8i32` for
  integer min/max, `llvm.abs.v8i32`); a dense `arith.constant` becomes an
  `llvm.mlir.constant`; `arith.select` with a scalar condition selects whole
  vectors. `vector.load/store` on a contiguous row-major memref are an
  `llvm.load/store` of the vector type at the element's address, aligned to
  the element size (unaligned access) or to a store's larger `alignment`
  attribute, `nontemporal = true` marking the `llvm.store` (LLVM's
  `!nontemporal`, as MLIR's vector-to-llvm does);
  `memref.extract_aligned_pointer_as_index` is a `ptrtoint` of the element
  pointer; `vector.broadcast` of a scalar is
  `insertelement` + a zero-mask `shufflevector`; `vector.shuffle` of 1-D
  vectors is `shufflevector`; `vector.fma` and `math.fma`
  are `llvm.intr.fma`; `vector.reduction` is `llvm.vector.reduce.*` (`fadd`
  / `fmul` start from the accumulator or the identity and carry the op's
  fast-math flags, so `reassoc` gives a tree reduction and none an ordered
  one; other kinds combine the accumulator afterwards);
  `vector.create_mask` compares the lane indices with the bound;
  `vector.maskedload/maskedstore` are LLVM 22's `llvm.masked.load/store`
  (no alignment operand). Vector comparisons, selects on a vector
  condition, integer divisions, `uitofp` and C-library math on vectors are
  rejected: xDSL 0.74's llvm dialect has no vector `llvm.fcmp` and no
  vector-condition `llvm.select` (and its arith types vector comparisons
  as `i1`).
- `tcrt.parallel_for @body(%n) (captures)` stores the (expanded) captures into
  a stack context, one 8-byte slot each (an `llvm.alloca` of `!llvm.ptr`s in
  the entry block; a null pointer without captures), and calls
  `__tc_parallel_for(@body__thunk, ctx, n)`; the generated internal thunk
  `void @body__thunk(ptr ctx, i64 begin, i64 end)` loads them and calls
  `@body(begin, end, captures...)`. Slots rather than a struct keep every GEP
  typed by the value it addresses, which xDSL's llvmlite translator needs.
- `func.func private` definitions become `internal`; declarations and public
  functions `external`. `malloc`, `free`, `__tc_parallel_for` and the C math
  functions are declared once (an existing declaration of the same type is
  reused). Leftover `llvm.*` ops are kept; `builtin.unrealized_conversion_cast`
  disappears when its types agree after conversion.
- Blocks are emitted in reverse post-order (definitions before uses);
  unreachable blocks are dropped.

Example::

    func.func @scale(%A: memref<?x4xf32>, %n: index) -> f32 {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%n, %c0] : memref<?x4xf32>
      func.return %x : f32
    }

becomes::

    llvm.func @scale(%A: !llvm.ptr, %A_d0: i64, %n: i64) -> f32 {
      %c0 = llvm.mlir.constant(0) : i64
      %0 = llvm.mlir.constant(4) : i64
      %1 = llvm.mul %n, %0 overflow<nsw> : i64
      %2 = llvm.add %1, %c0 overflow<nsw> : i64
      %3 = llvm.getelementptr inbounds %A[%2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %x = llvm.load %3 : !llvm.ptr -> f32
      llvm.return %x : f32
    }

Unsupported input raises `TCError` naming the operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, memref, vector
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    Signedness,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.dialects.memref import PrefetchOp
from tcdialect.dialects.tcrt import ParallelForOp
from tcdialect.transforms.ir_values import constant_index

PARALLEL_FOR_SYMBOL = "__tc_parallel_for"
THUNK_SUFFIX = "__thunk"

_PTR = llvm.LLVMPointerType()


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------

_INT_BINARY: dict[str, Callable[..., Operation]] = {
    "arith.addi": llvm.AddOp,
    "arith.subi": llvm.SubOp,
    "arith.muli": llvm.MulOp,
    "arith.andi": llvm.AndOp,
    "arith.ori": llvm.OrOp,
    "arith.xori": llvm.XOrOp,
    "arith.shli": llvm.ShlOp,
    "arith.shrsi": llvm.AShrOp,
    "arith.shrui": llvm.LShrOp,
}


def _fastmath(op: Operation) -> llvm.FastMathAttr:
    """The fast-math flags of an `arith` float op, as `llvm` flags."""
    flags = op.properties.get("fastmath")
    if isinstance(flags, arith.FastMathFlagsAttr):
        return llvm.FastMathAttr(flags.data)
    return llvm.FastMathAttr(None)


_FLOAT_BINARY: dict[str, type[llvm.AbstractFloatArithOp]] = {
    "arith.addf": llvm.FAddOp,
    "arith.subf": llvm.FSubOp,
    "arith.mulf": llvm.FMulOp,
    "arith.divf": llvm.FDivOp,
    "arith.remf": llvm.FRemOp,
}

# op → the icmp predicate under which the result is the left operand
_INT_MINMAX: dict[str, str] = {
    "arith.minsi": "slt",
    "arith.maxsi": "sgt",
    "arith.minui": "ult",
    "arith.maxui": "ugt",
}

# the same on vectors, as intrinsics
_INT_MINMAX_INTRINSIC: dict[str, str] = {
    "arith.minsi": "smin",
    "arith.maxsi": "smax",
    "arith.minui": "umin",
    "arith.maxui": "umax",
}

_CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip

_INT_CASTS: dict[str, Callable[..., Operation]] = {
    "arith.extsi": llvm.SExtOp,
    "arith.extui": llvm.ZExtOp,
    "arith.trunci": llvm.TruncOp,
    "arith.extf": llvm.FPExtOp,
    "arith.truncf": llvm.FPTruncOp,
    "arith.sitofp": llvm.SIToFPOp,
    "arith.bitcast": llvm.BitcastOp,
}

# math ops with a typed llvm.intr.* op in xDSL taking (arg).
_MATH_TYPED_UNARY: dict[str, Callable[..., Operation]] = {
    "math.exp": llvm.FExpOp,
    "math.exp2": llvm.FExp2Op,
    "math.log": llvm.FLogOp,
    "math.log2": llvm.FLog2Op,
    "math.sqrt": llvm.FSqrtOp,
    "math.sin": llvm.FSinOp,
    "math.cos": llvm.FCosOp,
    "math.floor": llvm.FFloorOp,
    "math.ceil": llvm.FCeilOp,
}

_MATH_TYPED_BINARY: dict[str, Callable[..., Operation]] = {
    "math.powf": llvm.FPowOp,
    "math.copysign": llvm.FCopySignOp,
    "arith.maxnumf": llvm.VectorFMaxOp,
    "arith.minnumf": llvm.VectorFMinOp,
}

# Other LLVM 22 intrinsics, called as llvm.call_intrinsic "<name>.<fty>".
_MATH_INTRINSIC: dict[str, str] = {
    "math.log10": "llvm.log10",
    "math.trunc": "llvm.trunc",
    "math.round": "llvm.round",
    "math.roundeven": "llvm.roundeven",
    "math.tan": "llvm.tan",
    "math.asin": "llvm.asin",
    "math.acos": "llvm.acos",
    "math.atan": "llvm.atan",
    "math.sinh": "llvm.sinh",
    "math.cosh": "llvm.cosh",
    "math.tanh": "llvm.tanh",
    "math.atan2": "llvm.atan2",
    "arith.minimumf": "llvm.minimum",
    "arith.maximumf": "llvm.maximum",
}

# C math library functions (name for f64; `f` suffix for f32).
_MATH_LIBM: dict[str, str] = {
    "math.expm1": "expm1",
    "math.log1p": "log1p",
    "math.cbrt": "cbrt",
    "math.erf": "erf",
    "math.erfc": "erfc",
    "math.asinh": "asinh",
    "math.acosh": "acosh",
    "math.atanh": "atanh",
}

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

# Handlers that do not support vector operands or results (the lowering
# needs a vector `llvm.select`/`llvm.fcmp`, which xDSL 0.74's llvm dialect
# cannot express, or a C library call).
_SCALAR_ONLY = frozenset(
    (
        "arith.cmpi arith.cmpf arith.divsi arith.remsi arith.divui arith.remui "
        "arith.floordivsi arith.ceildivsi arith.ceildivui arith.uitofp "
        "arith.index_cast arith.index_castui"
    ).split()
)

_INT_INTRINSIC: dict[str, str] = {
    "math.ctlz": "llvm.ctlz",
    "math.cttz": "llvm.cttz",
    "math.ctpop": "llvm.ctpop",
}


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


def _err(op: Operation, what: str) -> TCError:
    return TCError(f"convert-to-llvm: {what} in '{op.name}'")


def _check_memref(t: MemRefType[Attribute], where: Operation) -> None:
    layout = t.layout
    if not isinstance(layout, NoneAttr) and not (
        isinstance(layout, AffineMapAttr)
        and layout.data == AffineMap.identity(t.get_num_dims())
    ):
        raise _err(where, f"unsupported memref layout {t}")
    if not isinstance(t.memory_space, NoneAttr):
        raise _err(where, f"unsupported memref memory space {t}")
    _scalar_type(t.get_element_type(), where)


def _scalar_type(t: Attribute, where: Operation) -> Attribute:
    """The llvm type of a non-memref value."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, IntegerType):
        if t.signedness.data != Signedness.SIGNLESS:
            raise _err(where, f"unsupported non-signless integer type {t}")
        return t
    if isinstance(t, AnyFloat):
        return t
    if isinstance(t, VectorType):
        if t.get_num_dims() != 1 or t.get_num_scalable_dims():
            raise _err(where, f"unsupported vector type {t} (only fixed 1-D vectors)")
        elem = t.get_element_type()
        if not isinstance(elem, IndexType | IntegerType | AnyFloat):
            raise _err(where, f"unsupported vector type {t}")
        return VectorType(_scalar_type(elem, where), t.get_shape())
    if llvm.is_compatible_type(t):
        return t
    raise _err(where, f"unsupported type {t}")


def _lowered_types(t: Attribute, where: Operation) -> list[Attribute]:
    """The llvm types a value of type `t` expands to (several for a memref)."""
    if isinstance(t, MemRefType):
        _check_memref(t, where)
        dyn = sum(1 for d in t.get_shape() if d < 0)
        return [_PTR, *[i64] * dyn]
    return [_scalar_type(t, where)]


def _element_size(t: Attribute) -> int:
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


def _float_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM intrinsic mangling of a float (vector) type (`f32`, `v8f32`, ...)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_float_suffix(t.get_element_type(), where)}"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float64Type):
        return "f64"
    raise _err(where, f"unsupported float type {t}")


def _int_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM intrinsic mangling of an integer (vector) type (`i32`, `v8i32`)."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_int_suffix(t.get_element_type(), where)}"
    if not isinstance(t, IntegerType):
        raise _err(where, f"expected an integer type, got {t}")
    return f"i{t.width.data}"


def _int_width(t: Attribute) -> int:
    if isinstance(t, VectorType):
        t = t.get_element_type()
    assert isinstance(t, IntegerType)
    return t.width.data


def _vector_suffix(t: Attribute, where: Operation) -> str:
    """The LLVM mangling of a vector type of floats or integers (`v8f32`)."""
    if isinstance(t, VectorType) and isinstance(t.get_element_type(), IntegerType):
        return _int_suffix(t, where)
    return _float_suffix(t, where)


def _is_vector(t: Attribute) -> bool:
    return isinstance(t, VectorType)


def _func_type(
    inputs: Sequence[Attribute], outputs: Sequence[Attribute]
) -> llvm.LLVMFunctionType:
    return llvm.LLVMFunctionType(inputs, outputs[0] if outputs else None)


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _MemRef:
    """A lowered memref value: element pointer and dynamic extents (i64)."""

    type: MemRefType[Attribute]
    ptr: SSAValue
    dyn_sizes: tuple[SSAValue, ...]

    def flat(self) -> list[SSAValue]:
        return [self.ptr, *self.dyn_sizes]


_Lowered = SSAValue | _MemRef


def _pack(t: Attribute, values: Sequence[SSAValue]) -> _Lowered:
    """Group the expanded values of one original value of type `t`."""
    if isinstance(t, MemRefType):
        return _MemRef(t, values[0], tuple(values[1:]))
    assert len(values) == 1
    return values[0]


def _copy_name(old: SSAValue, new: _Lowered) -> None:
    """Carry `old`'s name hint over (`%A` → `%A`, `%A_d0`, ... for a memref)."""
    hint = old.name_hint
    if hint is None:
        return
    if isinstance(new, _MemRef):
        if new.ptr.name_hint is None:
            new.ptr.name_hint = hint
        dims = [i for i, d in enumerate(new.type.get_shape()) if d < 0]
        for dim, size in zip(dims, new.dyn_sizes, strict=True):
            if size.name_hint is None:
                size.name_hint = f"{hint}_d{dim}"
    elif new.name_hint is None:
        # A shared constant is named only after a constant.
        if isinstance(new.owner, llvm.ConstantOp) and not isinstance(
            old.owner, arith.ConstantOp
        ):
            return
        new.name_hint = hint


def _int_constant_of(value: SSAValue) -> int | None:
    """The value of an `arith.constant` integer/index, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


# --------------------------------------------------------------------------
# Module-level state: symbols, declarations, thunks
# --------------------------------------------------------------------------


class _ModuleLowering:
    def __init__(self, module: ModuleOp):
        self.module = module
        # symbol → llvm function type, for every function of the output
        self.signatures: dict[str, llvm.LLVMFunctionType] = {}
        self.declarations: list[llvm.FuncOp] = []
        self.thunks: list[llvm.FuncOp] = []
        self.thunk_types: dict[str, tuple[Attribute, ...]] = {}

    def declare(
        self, name: str, ftype: llvm.LLVMFunctionType, where: Operation
    ) -> None:
        """Make sure `@name` exists with type `ftype` (declare it if needed)."""
        known = self.signatures.get(name)
        if known is not None:
            if known != ftype:
                raise _err(where, f"'@{name}' has type {known}, needed {ftype}")
            return
        self.signatures[name] = ftype
        self.declarations.append(
            llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
        )

    def thunk(
        self, callee: str, capture_types: tuple[Attribute, ...], where: Operation
    ) -> str:
        """The name of the thunk calling `@callee` with `capture_types` from a ctx."""
        name = callee + THUNK_SUFFIX
        if name in self.thunk_types:
            assert self.thunk_types[name] == capture_types
            return name
        if name in self.signatures:
            raise _err(where, f"'@{name}' is already defined")
        self.thunk_types[name] = capture_types
        ftype = llvm.LLVMFunctionType([_PTR, i64, i64])
        self.signatures[name] = ftype
        block = Block(arg_types=[_PTR, i64, i64])
        ctx, begin, end = block.args
        ctx.name_hint, begin.name_hint, end.name_hint = "ctx", "begin", "end"
        args: list[SSAValue] = [begin, end]
        for i, t in enumerate(capture_types):
            gep = _slot_gep(ctx, i, t)
            load = llvm.LoadOp(gep, t)
            block.add_ops([gep, load])
            args.append(load.dereferenced_value)
        block.add_ops([llvm.CallOp(callee, *args), llvm.ReturnOp()])
        self.thunks.append(
            llvm.FuncOp(
                name, ftype, linkage=llvm.LinkageAttr("internal"), body=Region(block)
            )
        )
        return name

    def run(self) -> None:
        funcs: list[func.FuncOp] = []
        for op in self.module.ops:
            if isinstance(op, func.FuncOp):
                funcs.append(op)
            elif isinstance(op, llvm.FuncOp):
                self.signatures[op.sym_name.data] = op.function_type
            elif not isinstance(op, llvm.GlobalOp):
                raise _err(op, "unsupported top-level operation")
        for f in funcs:
            inputs = [
                t for a in f.function_type.inputs.data for t in _lowered_types(a, f)
            ]
            outputs = f.function_type.outputs.data
            if len(outputs) > 1 or any(isinstance(o, MemRefType) for o in outputs):
                shown = ", ".join(str(o) for o in outputs)
                raise _err(
                    f,
                    f"unsupported results ({shown}) of @{f.sym_name.data}: a "
                    "function returns at most one value, and not a memref",
                )
            lowered_outputs = [_scalar_type(o, f) for o in outputs]
            self.signatures[f.sym_name.data] = _func_type(inputs, lowered_outputs)

        for f in funcs:
            new = _FunctionLowering(self, f).run()
            self.module.body.block.insert_op_before(new, f)
            f.detach()
            f.erase()
        self.module.body.block.add_ops([*self.thunks, *self.declarations])


# --------------------------------------------------------------------------
# Function translation
# --------------------------------------------------------------------------


class _FunctionLowering:
    def __init__(self, parent: _ModuleLowering, f: func.FuncOp):
        self.parent = parent
        self.func = f
        self.values: dict[SSAValue, _Lowered] = {}
        self.blocks: dict[Block, Block] = {}
        self.block: Block = Block()
        self.entry: Block = Block()
        self.constants: dict[tuple[Attribute, Attribute], SSAValue] = {}

    # -- helpers -----------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def emit_value(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """An `llvm.mlir.constant` of type `t`, shared within the current block.

        For a vector type `t`, a splat of `value`.
        """
        attr: Attribute
        if isinstance(t, VectorType):
            elem = t.get_element_type()
            n = t.get_shape()[0]
            if isinstance(elem, AnyFloat):
                attr = DenseIntOrFPElementsAttr.from_list(t, [float(value)] * n)
            else:
                v = _wrap_int(int(value), _int_width(elem))
                attr = DenseIntOrFPElementsAttr.from_list(t, [v] * n)
        elif isinstance(t, AnyFloat):
            attr = FloatAttr(float(value), t)
        else:
            assert isinstance(t, IntegerType)
            attr = IntegerAttr(_wrap_int(int(value), _int_width(t)), t)
        key = (attr, t)
        if (found := self.constants.get(key)) is not None:
            return found
        result = self.emit_value(llvm.ConstantOp(attr, t))
        self.constants[key] = result
        return result

    def get(self, v: SSAValue, where: Operation) -> SSAValue:
        lowered = self.values.get(v)
        if lowered is None:
            raise _err(
                where, f"operand {v.name_hint or ''} defined by an unsupported op"
            )
        if isinstance(lowered, _MemRef):
            raise _err(where, "unexpected memref operand")
        return lowered

    def get_memref(self, v: SSAValue, where: Operation) -> _MemRef:
        lowered = self.values.get(v)
        if not isinstance(lowered, _MemRef):
            raise _err(where, "expected a lowered memref operand")
        return lowered

    def flat(self, values: Sequence[SSAValue], where: Operation) -> list[SSAValue]:
        out: list[SSAValue] = []
        for v in values:
            lowered = self.values.get(v)
            if lowered is None:
                raise _err(where, "operand defined by an unsupported op")
            out.extend(lowered.flat() if isinstance(lowered, _MemRef) else [lowered])
        return out

    def set(self, result: SSAValue, value: _Lowered) -> None:
        self.values[result] = value
        _copy_name(result, value)

    def icmp(self, pred: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(pred)
        return self.emit_value(llvm.ICmpOp(lhs, rhs, IntegerAttr(flag.to_int(), i64)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit_value(llvm.SelectOp(cond, a, b))

    def call_intrinsic(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute,
        flags: llvm.FastMathAttr | None = None,
    ) -> SSAValue:
        call = llvm.CallIntrinsicOp(name, args, [result])
        if flags is not None and flags.data:
            call.fastmathFlags = flags  # no constructor argument in xDSL 0.74
        return self.emit_value(call)

    def call(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute | None,
        where: Operation,
    ) -> Operation:
        ftype = _func_type([a.type for a in args], [result] if result else [])
        self.parent.declare(name, ftype, where)
        return self.emit(llvm.CallOp(name, *args, return_type=result))

    # -- driver ------------------------------------------------------------

    def run(self) -> llvm.FuncOp:
        f = self.func
        name = f.sym_name.data
        ftype = self.parent.signatures[name]
        private = f.sym_visibility is not None and f.sym_visibility.data == "private"
        if not f.body.blocks:
            return llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))

        order = _reverse_post_order(f.body.blocks[0])
        for old in order:
            arg_types = [t for a in old.args for t in _lowered_types(a.type, f)]
            new = Block(arg_types=arg_types)
            self.blocks[old] = new
            it = iter(new.args)
            for a in old.args:
                n = len(_lowered_types(a.type, f))
                self.set(a, _pack(a.type, [next(it) for _ in range(n)]))
        self.entry = self.blocks[order[0]]

        for old in order:
            self.block = self.blocks[old]
            self.constants = {}
            for op in old.ops:
                self.lower(op)

        return llvm.FuncOp(
            name,
            ftype,
            linkage=llvm.LinkageAttr("internal" if private else "external"),
            body=Region([self.blocks[b] for b in order]),
        )

    def lower(self, op: Operation) -> None:
        name = op.name
        if (cls := _INT_BINARY.get(name)) is not None:
            lhs, rhs = (self.get(v, op) for v in op.operands)
            self.set(op.results[0], self.emit_value(cls(lhs, rhs)))
        elif (fcls := _FLOAT_BINARY.get(name)) is not None:
            lhs, rhs = (self.get(v, op) for v in op.operands)
            self.set(op.results[0], self.emit_value(fcls(lhs, rhs, _fastmath(op))))
        elif (pred := _INT_MINMAX.get(name)) is not None:
            lhs, rhs = (self.get(v, op) for v in op.operands)
            if _is_vector(lhs.type):
                # llvm.select takes a scalar condition in xDSL: use intrinsics.
                intr = f"llvm.{_INT_MINMAX_INTRINSIC[name]}.{_int_suffix(lhs.type, op)}"
                self.set(op.results[0], self.call_intrinsic(intr, [lhs, rhs], lhs.type))
            else:
                self.set(
                    op.results[0], self.select(self.icmp(pred, lhs, rhs), lhs, rhs)
                )
        elif (ccls := _INT_CASTS.get(name)) is not None:
            self.lower_simple_cast(op, ccls)
        elif (ucls := _MATH_TYPED_UNARY.get(name)) is not None:
            self.set(op.results[0], self.emit_value(ucls(self.get(op.operands[0], op))))
        elif (bcls := _MATH_TYPED_BINARY.get(name)) is not None:
            lhs, rhs = (self.get(v, op) for v in op.operands)
            self.set(op.results[0], self.emit_value(bcls(lhs, rhs)))
        elif (intr := _MATH_INTRINSIC.get(name)) is not None:
            t = _scalar_type(op.results[0].type, op)
            args = [self.get(v, op) for v in op.operands]
            self.set(
                op.results[0],
                self.call_intrinsic(
                    f"{intr}.{_float_suffix(t, op)}", args, t, _fastmath(op)
                ),
            )
        elif (libm := _MATH_LIBM.get(name)) is not None:
            self.lower_libm(op, libm)
        elif (intr := _INT_INTRINSIC.get(name)) is not None:
            t = _scalar_type(op.results[0].type, op)
            args = [self.get(op.operands[0], op)]
            if name != "math.ctpop":
                args.append(self.const(0, i1))  # is_zero_poison = false
            self.set(
                op.results[0],
                self.call_intrinsic(f"{intr}.{_int_suffix(t, op)}", args, t),
            )
        elif (handler := _HANDLERS.get(name)) is not None:
            if name in _SCALAR_ONLY and any(
                _is_vector(v.type) for v in (*op.operands, *op.results)
            ):
                raise _err(op, "unsupported vector operands")
            handler(self, op)
        elif name.startswith("llvm.") and not op.regions and not op.successors:
            self.lower_llvm_passthrough(op)
        else:
            raise TCError(f"convert-to-llvm: unsupported operation '{name}'")

    # -- arith -------------------------------------------------------------

    def lower_constant(self, op: Operation) -> None:
        assert isinstance(op, arith.ConstantOp)
        t = _scalar_type(op.result.type, op)
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, VectorType):
            if value.get_shape() != t.get_shape():
                raise _err(op, f"unsupported constant {value}")
            # ints or floats: the lowered types have no complex elements
            values: list[Any] = list(value.get_values())
            if len(set(values)) == 1:
                self.set(op.result, self.const(values[0], t))
            else:
                attr = DenseIntOrFPElementsAttr.from_list(t, values)
                self.set(op.result, self.emit_value(llvm.ConstantOp(attr, t)))
        elif isinstance(value, IntegerAttr):
            self.set(op.result, self.const(value.value.data, t))
        elif isinstance(value, FloatAttr):
            self.set(op.result, self.const(value.value.data, t))
        else:
            raise _err(op, f"unsupported constant {value}")

    def lower_simple_cast(self, op: Operation, cls: Callable[..., Operation]) -> None:
        src = self.get(op.operands[0], op)
        t = _scalar_type(op.results[0].type, op)
        if src.type == t:
            self.set(op.results[0], src)
            return
        self.set(op.results[0], self.emit_value(cls(src, t)))

    def lower_index_cast(self, op: Operation) -> None:
        src = self.get(op.operands[0], op)
        t = _scalar_type(op.results[0].type, op)
        src_w, dst_w = _int_width(src.type), _int_width(t)
        if src_w == dst_w:
            self.set(op.results[0], src)
        elif src_w > dst_w:
            self.set(op.results[0], self.emit_value(llvm.TruncOp(src, t)))
        elif op.name == "arith.index_castui":
            self.set(op.results[0], self.emit_value(llvm.ZExtOp(src, t)))
        else:
            self.set(op.results[0], self.emit_value(llvm.SExtOp(src, t)))

    def lower_uitofp(self, op: Operation) -> None:
        src = self.get(op.operands[0], op)
        t = _scalar_type(op.results[0].type, op)
        width = _int_width(src.type)
        if width < 64:
            wide = self.emit_value(llvm.ZExtOp(src, i64))
            self.set(op.results[0], self.emit_value(llvm.SIToFPOp(wide, t)))
            return
        if width > 64:
            raise _err(op, f"unsupported source type {src.type}")
        # x >= 0 (signed): sitofp x; else 2 * sitofp((x >> 1) | (x & 1)), where
        # the low bit keeps the rounding sticky.
        one = self.const(1, i64)
        negative = self.icmp("slt", src, self.const(0, i64))
        half = self.emit_value(llvm.LShrOp(src, one))
        low = self.emit_value(llvm.AndOp(src, one))
        halved = self.emit_value(
            llvm.SIToFPOp(self.emit_value(llvm.OrOp(half, low)), t)
        )
        doubled = self.emit_value(llvm.FAddOp(halved, halved))
        direct = self.emit_value(llvm.SIToFPOp(src, t))
        self.set(op.results[0], self.select(negative, doubled, direct))

    def lower_fptoi(self, op: Operation) -> None:
        src = self.get(op.operands[0], op)
        t = _scalar_type(op.results[0].type, op)
        kind = "fptosi" if op.name == "arith.fptosi" else "fptoui"
        name = f"llvm.{kind}.sat.{_int_suffix(t, op)}.{_float_suffix(src.type, op)}"
        self.set(op.results[0], self.call_intrinsic(name, [src], t))

    def lower_negf(self, op: Operation) -> None:
        self.set(
            op.results[0], self.emit_value(llvm.FNegOp(self.get(op.operands[0], op)))
        )

    def lower_select(self, op: Operation) -> None:
        cond, a, b = op.operands
        if isinstance(a.type, MemRefType):
            ma, mb = self.get_memref(a, op), self.get_memref(b, op)
            c = self.get(cond, op)
            self.set(
                op.results[0],
                _MemRef(
                    ma.type,
                    self.select(c, ma.ptr, mb.ptr),
                    tuple(
                        self.select(c, x, y)
                        for x, y in zip(ma.dyn_sizes, mb.dyn_sizes, strict=True)
                    ),
                ),
            )
            return
        self.set(
            op.results[0],
            self.select(self.get(cond, op), self.get(a, op), self.get(b, op)),
        )

    def lower_cmpi(self, op: Operation) -> None:
        assert isinstance(op, arith.CmpiOp)
        pred = _CMPI_PREDICATES[op.predicate.value.data]
        lhs, rhs = self.get(op.lhs, op), self.get(op.rhs, op)
        self.set(op.result, self.icmp(pred, lhs, rhs))

    def lower_cmpf(self, op: Operation) -> None:
        assert isinstance(op, arith.CmpfOp)
        pred = _CMPF_PREDICATES[op.predicate.value.data]
        if pred in ("false", "true"):
            self.set(op.result, self.const(1 if pred == "true" else 0, i1))
            return
        lhs, rhs = self.get(op.lhs, op), self.get(op.rhs, op)
        self.set(op.result, self.emit_value(llvm.FCmpOp(lhs, rhs, pred)))

    def _divisor_needs_guard(self, rhs: SSAValue, signed: bool) -> bool:
        c = _int_constant_of(rhs)
        if c is None:
            return True
        width = 64 if isinstance(rhs.type, IndexType) else _int_width(rhs.type)
        c &= (1 << width) - 1
        return c == 0 or (signed and c == (1 << width) - 1)

    def _sdiv_srem(
        self, op: Operation, quotient: bool, remainder: bool
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(quotient, remainder, divisor) of a signed division that never traps.

        y == 0 gives (0, 0); y == -1 gives (-x, 0), wrapping for INT_MIN.
        Only the parts asked for are emitted (the others are the divisor).
        """
        x = self.get(op.operands[0], op)
        y = self.get(op.operands[1], op)
        q = r = y
        if not self._divisor_needs_guard(op.operands[1], signed=True):
            if quotient:
                q = self.emit_value(llvm.SDivOp(x, y))
            if remainder:
                r = self.emit_value(llvm.SRemOp(x, y))
            return q, r, y
        t = x.type
        zero = self.const(0, t)
        is_zero = self.icmp("eq", y, zero)
        is_m1 = self.icmp("eq", y, self.const(-1, t))
        bad = self.emit_value(llvm.OrOp(is_zero, is_m1))
        safe = self.select(bad, self.const(1, t), y)
        if quotient:
            # safe == 1 when y is -1: negate x (wrapping) instead.
            q = self.emit_value(llvm.SDivOp(x, safe))
            q = self.select(is_m1, self.emit_value(llvm.SubOp(zero, q)), q)
            q = self.select(is_zero, zero, q)
        if remainder:
            r = self.emit_value(llvm.SRemOp(x, safe))  # 0 when y is 0 or -1
        return q, r, y

    def _udiv_urem(
        self, op: Operation, quotient: bool, remainder: bool
    ) -> tuple[SSAValue, SSAValue]:
        """(quotient, remainder) of an unsigned division; y == 0 gives (0, 0)."""
        x = self.get(op.operands[0], op)
        y = self.get(op.operands[1], op)
        q = r = y
        if not self._divisor_needs_guard(op.operands[1], signed=False):
            if quotient:
                q = self.emit_value(llvm.UDivOp(x, y))
            if remainder:
                r = self.emit_value(llvm.URemOp(x, y))
            return q, r
        t = x.type
        zero = self.const(0, t)
        is_zero = self.icmp("eq", y, zero)
        safe = self.select(is_zero, self.const(1, t), y)
        if quotient:
            q = self.select(is_zero, zero, self.emit_value(llvm.UDivOp(x, safe)))
        if remainder:
            r = self.emit_value(llvm.URemOp(x, safe))  # 0 when y is 0
        return q, r

    def lower_divsi(self, op: Operation) -> None:
        self.set(op.results[0], self._sdiv_srem(op, True, False)[0])

    def lower_remsi(self, op: Operation) -> None:
        self.set(op.results[0], self._sdiv_srem(op, False, True)[1])

    def lower_divui(self, op: Operation) -> None:
        self.set(op.results[0], self._udiv_urem(op, True, False)[0])

    def lower_remui(self, op: Operation) -> None:
        self.set(op.results[0], self._udiv_urem(op, False, True)[1])

    def lower_floor_ceil_divsi(self, op: Operation) -> None:
        q, r, y = self._sdiv_srem(op, True, True)
        t = q.type
        zero = self.const(0, t)
        inexact = self.icmp("ne", r, zero)
        r_neg = self.icmp("slt", r, zero)
        y_neg = self.icmp("slt", y, zero)
        if op.name == "arith.floordivsi":
            # signs differ: the truncated quotient is one above the floor
            signs = self.emit_value(llvm.XOrOp(r_neg, y_neg))
            delta = self.const(-1, t)
        else:
            signs = self.icmp("eq", r_neg, y_neg)
            delta = self.const(1, t)
        adjust = self.emit_value(llvm.AndOp(inexact, signs))
        adjusted = self.emit_value(llvm.AddOp(q, delta))
        self.set(op.results[0], self.select(adjust, adjusted, q))

    def lower_ceildivui(self, op: Operation) -> None:
        q, r = self._udiv_urem(op, True, True)
        t = q.type
        inexact = self.icmp("ne", r, self.const(0, t))
        adjusted = self.emit_value(llvm.AddOp(q, self.const(1, t)))
        self.set(op.results[0], self.select(inexact, adjusted, q))

    # -- math --------------------------------------------------------------

    def lower_absf(self, op: Operation) -> None:
        x = self.get(op.operands[0], op)
        self.set(op.results[0], self.emit_value(llvm.FAbsOp(x, x.type)))

    def lower_absi(self, op: Operation) -> None:
        x = self.get(op.operands[0], op)
        if _is_vector(x.type):
            name = f"llvm.abs.{_int_suffix(x.type, op)}"
            self.set(
                op.results[0], self.call_intrinsic(name, [x, self.const(0, i1)], x.type)
            )
            return
        zero = self.const(0, x.type)
        neg = self.emit_value(llvm.SubOp(zero, x))
        self.set(op.results[0], self.select(self.icmp("slt", x, zero), neg, x))

    def lower_rsqrt(self, op: Operation) -> None:
        x = self.get(op.operands[0], op)
        root = self.emit_value(llvm.FSqrtOp(x))
        one = self.const(1.0, x.type)
        self.set(op.results[0], self.emit_value(llvm.FDivOp(one, root)))

    def lower_fma(self, op: Operation) -> None:
        a, b, c = (self.get(v, op) for v in op.operands)
        self.set(op.results[0], self.emit_value(llvm.FMAOp(a, b, c, _fastmath(op))))

    def lower_fpowi(self, op: Operation) -> None:
        # pow(x, float(n)): `llvm.powi` needs `__powisf2` from compiler-rt or
        # libgcc, which a JIT process may not have.
        base = self.get(op.operands[0], op)
        exp = self.emit_value(llvm.SIToFPOp(self.get(op.operands[1], op), base.type))
        self.set(op.results[0], self.emit_value(llvm.FPowOp(base, exp)))

    def lower_libm(self, op: Operation, base: str) -> None:
        t = _scalar_type(op.results[0].type, op)
        if isinstance(t, Float32Type):
            fname = base + "f"
        elif isinstance(t, Float64Type):
            fname = base
        else:
            raise _err(op, f"unsupported type {t}")
        args = [self.get(v, op) for v in op.operands]
        call = self.call(fname, args, t, op)
        self.set(op.results[0], call.results[0])

    # -- memref ------------------------------------------------------------

    def _extent(self, m: _MemRef, dim: int) -> SSAValue:
        shape = m.type.get_shape()
        if shape[dim] >= 0:
            return self.const(shape[dim], i64)
        return m.dyn_sizes[sum(1 for d in shape[:dim] if d < 0)]

    def _element_ptr(
        self,
        m: _MemRef,
        indices: Sequence[SSAValue],
        op: Operation,
        *,
        inbounds: bool = True,
        split: bool = False,
    ) -> SSAValue:
        """The address of `m[indices]`. With `split`, constant addends of the
        indices (`arith.addi %x, %c`) along dimensions of static stride
        become one constant offset after the linearised rest, which the
        backend folds into the instruction's displacement: a register tile's
        16 row stores `T[%n0, %n1 + i, %d]` then share one base register
        instead of holding 16 row indices (spilled) across the tile.

        Used for vector stores and masked vector accesses (paired, 2
        threads, 30-40 rounds: Kronecker3 0.97-0.98x the time, its code
        1093 -> 893 lines; tbmm, gconv, softmax and layernorm unchanged).
        Not for prefetches, whose split made LLVM unroll softmax's row
        loops further (1.02-1.04x), nor for plain loads, whose tile loops
        already fold their offsets."""
        if len(indices) != m.type.get_num_dims():
            raise _err(op, "wrong number of indices")
        if not indices:
            return m.ptr
        offset = 0
        if split:
            indices, offset = _split_constants(indices, m.type.get_shape())
        nsw = llvm.OverflowAttr((llvm.OverflowFlag.NO_SIGNED_WRAP,))
        linear = self.get(indices[0], op)
        for dim in range(1, len(indices)):
            scaled = self.emit_value(
                llvm.MulOp(linear, self._extent(m, dim), overflow=nsw)
            )
            linear = self.emit_value(
                llvm.AddOp(scaled, self.get(indices[dim], op), overflow=nsw)
            )
        elem = _scalar_type(m.type.get_element_type(), op)
        if offset:
            # `base + linear` alone may lie outside the array: no `inbounds`
            at = self.emit_value(llvm.GEPOp.from_mixed_indices(m.ptr, [linear], elem))
            return self.emit_value(llvm.GEPOp.from_mixed_indices(at, [offset], elem))
        if not inbounds:
            return self.emit_value(llvm.GEPOp.from_mixed_indices(m.ptr, [linear], elem))
        return self.emit_value(_inbounds_gep(m.ptr, linear, elem))

    def lower_load(self, op: Operation) -> None:
        assert isinstance(op, memref.LoadOp)
        m = self.get_memref(op.memref, op)
        ptr = self._element_ptr(m, op.indices, op)
        t = _scalar_type(op.res.type, op)
        self.set(op.res, self.emit_value(llvm.LoadOp(ptr, t)))

    def lower_store(self, op: Operation) -> None:
        assert isinstance(op, memref.StoreOp)
        m = self.get_memref(op.memref, op)
        ptr = self._element_ptr(m, op.indices, op)
        self.emit(llvm.StoreOp(self.get(op.value, op), ptr))

    def lower_prefetch(self, op: Operation) -> None:
        # The address may lie outside the memref: no `inbounds`, and the
        # intrinsic never faults.
        assert isinstance(op, PrefetchOp)
        m = self.get_memref(op.memref, op)
        ptr = self._element_ptr(m, op.indices, op, inbounds=False)
        write, data = (a.value.data != 0 for a in (op.isWrite, op.isDataCache))
        flags = (int(write), op.locality, int(data))
        args = [ptr, *(self.const(f, i32) for f in flags)]
        self.emit(llvm.CallIntrinsicOp("llvm.prefetch.p0", args, []))

    def _alloc_shape(
        self, op: memref.AllocOp | memref.AllocaOp
    ) -> tuple[MemRefType[Attribute], list[SSAValue], SSAValue]:
        """(type, dynamic sizes, element count) of an allocation."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        _check_memref(t, op)
        if op.symbol_operands:
            raise _err(op, "unsupported symbol operands")
        dyn = [self.get(v, op) for v in op.dynamic_sizes]
        count: SSAValue | None = None
        static = 1
        it = iter(dyn)
        for d in t.get_shape():
            if d >= 0:
                static *= d
                continue
            size = next(it)
            count = size if count is None else self.emit_value(llvm.MulOp(count, size))
        if count is None:
            count = self.const(static, i64)
        elif static != 1:
            count = self.emit_value(llvm.MulOp(count, self.const(static, i64)))
        return t, dyn, count

    def lower_alloc(self, op: Operation) -> None:
        assert isinstance(op, memref.AllocOp)
        t, dyn, count = self._alloc_shape(op)
        elem_size = _element_size(_scalar_type(t.get_element_type(), op))
        size = self.emit_value(llvm.MulOp(count, self.const(elem_size, i64)))
        call = self.call("malloc", [size], _PTR, op)
        self.set(op.memref, _MemRef(t, call.results[0], tuple(dyn)))

    def lower_alloca(self, op: Operation) -> None:
        assert isinstance(op, memref.AllocaOp)
        t = op.memref.type
        assert isinstance(t, MemRefType)
        elem = _scalar_type(t.get_element_type(), op)
        if not op.dynamic_sizes and not op.symbol_operands:
            # A static alloca goes to the entry block: inside a loop, LLVM
            # would grow the stack on every iteration.
            _check_memref(t, op)
            count = llvm.ConstantOp(IntegerAttr(max(1, t.element_count()), i64), i64)
            alloca = llvm.AllocaOp(count, elem, alignment=64)
            self._at_entry([count, alloca])
            self.set(op.memref, _MemRef(t, alloca.res, ()))
            return
        t, dyn, count = self._alloc_shape(op)
        ptr = self.emit_value(llvm.AllocaOp(count, elem, alignment=16))
        self.set(op.memref, _MemRef(t, ptr, tuple(dyn)))

    def _at_entry(self, ops: list[Operation]) -> None:
        """Insert `ops` at the start of the function's entry block."""
        first = self.entry.first_op
        if first is None:
            self.entry.add_ops(ops)
        else:
            self.entry.insert_ops_before(ops, first)

    def lower_dealloc(self, op: Operation) -> None:
        assert isinstance(op, memref.DeallocOp)
        self.call("free", [self.get_memref(op.memref, op).ptr], None, op)

    def lower_dim(self, op: Operation) -> None:
        assert isinstance(op, memref.DimOp)
        m = self.get_memref(op.source, op)
        dim = _int_constant_of(op.index)
        if dim is None or not 0 <= dim < m.type.get_num_dims():
            raise _err(op, "the dimension must be a constant in range")
        self.set(op.result, self._extent(m, dim))

    # -- vector ------------------------------------------------------------

    def _vector_access(
        self,
        op: Operation,
        base: SSAValue,
        indices: Sequence[SSAValue],
        *,
        split: bool = False,
    ) -> tuple[SSAValue, int]:
        """(address of the first element, alignment) of a contiguous vector access."""
        m = self.get_memref(base, op)
        elem = _scalar_type(m.type.get_element_type(), op)
        if elem == i1:
            raise _err(op, "unsupported vector access to an i1 memref")
        return self._element_ptr(m, indices, op, split=split), _element_size(elem)

    def lower_vector_load(self, op: Operation) -> None:
        assert isinstance(op, vector.LoadOp)
        t = _scalar_type(op.result.type, op)
        ptr, align = self._vector_access(op, op.base, op.indices)
        self.set(op.result, self.emit_value(llvm.LoadOp(ptr, t, alignment=align)))

    def lower_vector_store(self, op: Operation) -> None:
        assert isinstance(op, vector.StoreOp)
        ptr, align = self._vector_access(op, op.base, op.indices, split=True)
        alignment = op.attributes.get("alignment")
        if isinstance(alignment, IntegerAttr):
            align = max(align, alignment.value.data)
        nontemporal = op.nontemporal is not None and op.nontemporal.value.data != 0
        value = self.get(op.vector, op)
        self.emit(llvm.StoreOp(value, ptr, alignment=align, nontemporal=nontemporal))

    def lower_extract_aligned_pointer(self, op: Operation) -> None:
        assert isinstance(op, memref.ExtractAlignedPointerAsIndexOp)
        ptr = self.get_memref(op.source, op).ptr
        self.set(op.aligned_pointer, self.emit_value(llvm.PtrToIntOp(ptr, i64)))

    def lower_masked_load(self, op: Operation) -> None:
        assert isinstance(op, vector.MaskedLoadOp)
        t = _scalar_type(op.result.type, op)
        ptr, _ = self._vector_access(op, op.base, op.indices, split=True)
        mask, passthru = self.get(op.mask, op), self.get(op.pass_thru, op)
        # LLVM 22's form: no alignment operand (an optional `align` on the
        # pointer; without it the access may be unaligned, as here).
        name = f"llvm.masked.load.{_vector_suffix(t, op)}.p0"
        self.set(op.result, self.call_intrinsic(name, [ptr, mask, passthru], t))

    def lower_masked_store(self, op: Operation) -> None:
        assert isinstance(op, vector.MaskedStoreOp)
        ptr, _ = self._vector_access(  # LLVM 22's form
            op, op.base, op.indices, split=True
        )
        value = self.get(op.value_to_store, op)
        name = f"llvm.masked.store.{_vector_suffix(value.type, op)}.p0"
        args = [value, ptr, self.get(op.mask, op)]
        self.emit(llvm.CallIntrinsicOp(name, args, []))

    def lower_create_mask(self, op: Operation) -> None:
        assert isinstance(op, vector.CreateMaskOp)
        t = op.results[0].type
        if not isinstance(t, VectorType) or t.get_num_dims() != 1:
            raise _err(op, f"unsupported mask type {t}")
        (bound,) = (self.get(v, op) for v in op.operands)
        n = t.get_shape()[0]
        lanes = DenseIntOrFPElementsAttr.from_list(VectorType(i64, [n]), list(range(n)))
        step = self.emit_value(llvm.ConstantOp(lanes, VectorType(i64, [n])))
        splat = self._splat(bound, VectorType(i64, [n]))
        self.set(op.results[0], self.icmp("slt", step, splat))

    def _splat(self, x: SSAValue, t: VectorType[Attribute]) -> SSAValue:
        """`x` (a scalar) in every lane of a `t`: insertelement + shufflevector."""
        n = t.get_shape()[0]
        undef = self.emit_value(llvm.UndefOp(t))
        first = self.emit_value(llvm.InsertElementOp(undef, x, self.const(0, i32)))
        mask = DenseArrayBase.from_list(i32, [0] * n)
        return self.emit_value(llvm.ShuffleVectorOp(first, undef, mask, t))

    def lower_broadcast(self, op: Operation) -> None:
        assert isinstance(op, vector.BroadcastOp)
        src = self.get(op.source, op)
        t = _scalar_type(op.vector.type, op)
        assert isinstance(t, VectorType)
        if src.type == t:
            self.set(op.vector, src)
            return
        if isinstance(src.type, VectorType):
            if src.type.get_shape() != (1,):
                raise _err(op, f"unsupported broadcast of {src.type}")
            mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
            self.set(
                op.vector, self.emit_value(llvm.ShuffleVectorOp(src, src, mask, t))
            )
            return
        self.set(op.vector, self._splat(src, t))

    def lower_shuffle(self, op: Operation) -> None:
        assert isinstance(op, vector.ShuffleOp)
        t = _scalar_type(op.result.type, op)
        a, b = self.get(op.v1, op), self.get(op.v2, op)
        if not isinstance(t, VectorType) or len(t.get_shape()) != 1:
            raise _err(op, f"unsupported shuffle to {op.result.type}")
        if not isinstance(a.type, VectorType) or not isinstance(b.type, VectorType):
            raise _err(op, "unsupported shuffle of 0-d vectors")
        mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        self.set(op.result, self.emit_value(llvm.ShuffleVectorOp(a, b, mask, t)))

    def lower_vector_fma(self, op: Operation) -> None:
        assert isinstance(op, vector.FMAOp)
        a, b, c = (self.get(v, op) for v in (op.lhs, op.rhs, op.acc))
        self.set(op.res, self.emit_value(llvm.FMAOp(a, b, c)))

    def lower_reduction(self, op: Operation) -> None:
        assert isinstance(op, vector.ReductionOp)
        vec = self.get(op.vector, op)
        vt = vec.type
        assert isinstance(vt, VectorType)
        elem = vt.get_element_type()
        kind = op.kind.data.value
        acc = self.get(op.acc, op) if op.acc is not None else None
        flags = _fastmath(op)
        if isinstance(elem, AnyFloat):
            suffix = _float_suffix(vt, op)
            if kind in ("add", "mul"):
                start = acc
                if start is None:
                    start = self.const(-0.0 if kind == "add" else 1.0, elem)
                name = f"llvm.vector.reduce.f{kind}.{suffix}"
                result = self.call_intrinsic(name, [start, vec], elem, flags)
            elif kind in _FLOAT_REDUCTIONS:
                intr, combine = _FLOAT_REDUCTIONS[kind]
                name = f"llvm.vector.reduce.{intr}.{suffix}"
                result = self.call_intrinsic(name, [vec], elem, flags)
                if acc is not None:
                    name = f"llvm.{combine}.{_float_suffix(elem, op)}"
                    result = self.call_intrinsic(name, [result, acc], elem, flags)
            else:
                raise _err(op, f"unsupported reduction kind '{kind}' on floats")
        elif isinstance(elem, IntegerType):
            if kind not in _INT_REDUCTIONS:
                raise _err(op, f"unsupported reduction kind '{kind}' on integers")
            intr, combine = _INT_REDUCTIONS[kind]
            name = f"llvm.vector.reduce.{intr}.{_int_suffix(vt, op)}"
            result = self.call_intrinsic(name, [vec], elem)
            if acc is not None:
                if isinstance(combine, str):
                    name = f"llvm.{combine}.{_int_suffix(elem, op)}"
                    result = self.call_intrinsic(name, [result, acc], elem)
                else:
                    result = self.emit_value(combine(result, acc))
        else:
            raise _err(op, f"unsupported vector type {vt}")
        self.set(op.dest, result)

    # -- func, cf, casts ----------------------------------------------------

    def lower_call(self, op: Operation) -> None:
        assert isinstance(op, func.CallOp)
        name = op.callee.string_value()
        ftype = self.parent.signatures.get(name)
        if ftype is None:
            raise _err(op, f"unknown callee @{name}")
        args = self.flat(op.arguments, op)
        result = None if isinstance(ftype.output, llvm.LLVMVoidType) else ftype.output
        call = self.emit(llvm.CallOp(name, *args, return_type=result))
        for old, new in zip(op.results, call.results, strict=True):
            self.set(old, new)

    def lower_return(self, op: Operation) -> None:
        values = self.flat(op.operands, op)
        self.emit(llvm.ReturnOp(values[0] if values else None))

    def lower_br(self, op: Operation) -> None:
        assert isinstance(op, cf.BranchOp)
        self.emit(llvm.BrOp(self.blocks[op.successor], *self.flat(op.arguments, op)))

    def lower_cond_br(self, op: Operation) -> None:
        assert isinstance(op, cf.ConditionalBranchOp)
        self.emit(
            llvm.CondBrOp(
                self.get(op.cond, op),
                self.blocks[op.then_block],
                self.flat(op.then_arguments, op),
                self.blocks[op.else_block],
                self.flat(op.else_arguments, op),
            )
        )

    def lower_unrealized_cast(self, op: Operation) -> None:
        assert isinstance(op, UnrealizedConversionCastOp)
        inputs = self.flat(op.inputs, op)
        out_types = [t for r in op.results for t in _lowered_types(r.type, op)]
        if [v.type for v in inputs] != out_types:
            raise _err(
                op,
                f"cannot reconcile {[str(v.type) for v in op.inputs]} with "
                f"{[str(r.type) for r in op.results]}",
            )
        it = iter(inputs)
        for r in op.results:
            n = len(_lowered_types(r.type, op))
            self.set(r, _pack(r.type, [next(it) for _ in range(n)]))

    def lower_llvm_passthrough(self, op: Operation) -> None:
        operands = [self.get(v, op) for v in op.operands]
        new = op.clone_without_regions()
        for i, v in enumerate(operands):
            new.operands[i] = v
        self.emit(new)
        for old, res in zip(op.results, new.results, strict=True):
            self.set(old, res)

    # -- tcrt ----------------------------------------------------------------

    def lower_parallel_for(self, op: Operation) -> None:
        assert isinstance(op, ParallelForOp)
        callee = op.callee.string_value()
        captures = self.flat(op.captures, op)
        types = tuple(v.type for v in captures)
        thunk = self.parent.thunk(callee, types, op)
        count = self.get(op.count, op)
        fn = self.emit_value(llvm.AddressOfOp(thunk, _PTR))
        if captures:
            ctx = self._entry_alloca(len(captures))
            for i, v in enumerate(captures):
                self.emit(llvm.StoreOp(v, self.emit_value(_slot_gep(ctx, i, v.type))))
        else:
            ctx = self.emit_value(llvm.ZeroOp(result_types=[_PTR]))
        self.call(PARALLEL_FOR_SYMBOL, [fn, ctx, count], None, op)

    def _entry_alloca(self, slots: int) -> SSAValue:
        """A context of `slots` 8-byte slots, allocated at the start of the entry block."""
        count = llvm.ConstantOp(IntegerAttr(slots, i64), i64)
        # Slots typed `!llvm.ptr` (8 bytes): xDSL's translator then keeps the
        # alloca's pointer opaque, which its typed GEPs need.
        alloca = llvm.AllocaOp(count, _PTR, alignment=8)
        self._at_entry([count, alloca])
        return alloca.res


def _split_constants(
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


def _inbounds_gep(ptr: SSAValue, index: int | SSAValue, elem: Attribute) -> llvm.GEPOp:
    """`getelementptr inbounds elem, ptr, index` (a single index)."""
    gep = llvm.GEPOp.from_mixed_indices(ptr, [index], elem, inbounds=True)
    # MLIR reads `inbounds` from the no-wrap flags (inbounds | nusw).
    gep.properties["noWrapFlags"] = IntegerAttr(3, 32)
    return gep


def _slot_gep(ctx: SSAValue, slot: int, t: Attribute) -> llvm.GEPOp:
    """The address of 8-byte slot `slot` of a parallel_for context, as a `t`.

    The context is an array of 8-byte slots, one per (expanded) capture; the
    GEP is typed by the capture so that no struct type is needed.
    """
    size = _element_size(t)
    if size > 8 or 8 % size:
        raise TCError(f"convert-to-llvm: cannot capture a value of type {t}")
    return _inbounds_gep(ctx, slot * (8 // size), t)


def _wrap_int(value: int, width: int) -> int:
    """`value` as a signed `width`-bit integer (IntegerAttr accepts that range)."""
    value &= (1 << width) - 1
    if width > 1 and value >= 1 << (width - 1):
        value -= 1 << width
    return value


def _reverse_post_order(entry: Block) -> list[Block]:
    """The blocks reachable from `entry`, in reverse post-order (defs before uses)."""
    seen: set[Block] = {entry}
    post: list[Block] = []
    stack: list[tuple[Block, int]] = [(entry, 0)]
    while stack:
        block, i = stack.pop()
        term = block.last_op
        # Visit the last successor first, so that the first one (a branch's
        # "then" block, a loop body) directly follows its predecessor.
        succs = list(term.successors)[::-1] if term is not None else []
        if i < len(succs):
            stack.append((block, i + 1))
            nxt = succs[i]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            post.append(block)
    return post[::-1]


_HANDLERS: dict[str, Callable[[_FunctionLowering, Operation], None]] = {
    "arith.constant": _FunctionLowering.lower_constant,
    "arith.index_cast": _FunctionLowering.lower_index_cast,
    "arith.index_castui": _FunctionLowering.lower_index_cast,
    "arith.uitofp": _FunctionLowering.lower_uitofp,
    "arith.fptosi": _FunctionLowering.lower_fptoi,
    "arith.fptoui": _FunctionLowering.lower_fptoi,
    "arith.negf": _FunctionLowering.lower_negf,
    "arith.select": _FunctionLowering.lower_select,
    "arith.cmpi": _FunctionLowering.lower_cmpi,
    "arith.cmpf": _FunctionLowering.lower_cmpf,
    "arith.divsi": _FunctionLowering.lower_divsi,
    "arith.remsi": _FunctionLowering.lower_remsi,
    "arith.divui": _FunctionLowering.lower_divui,
    "arith.remui": _FunctionLowering.lower_remui,
    "arith.floordivsi": _FunctionLowering.lower_floor_ceil_divsi,
    "arith.ceildivsi": _FunctionLowering.lower_floor_ceil_divsi,
    "arith.ceildivui": _FunctionLowering.lower_ceildivui,
    "math.absf": _FunctionLowering.lower_absf,
    "math.absi": _FunctionLowering.lower_absi,
    "math.rsqrt": _FunctionLowering.lower_rsqrt,
    "math.fma": _FunctionLowering.lower_fma,
    "math.fpowi": _FunctionLowering.lower_fpowi,
    "memref.load": _FunctionLowering.lower_load,
    "memref.store": _FunctionLowering.lower_store,
    "memref.alloc": _FunctionLowering.lower_alloc,
    "memref.alloca": _FunctionLowering.lower_alloca,
    "memref.dealloc": _FunctionLowering.lower_dealloc,
    "memref.dim": _FunctionLowering.lower_dim,
    "memref.prefetch": _FunctionLowering.lower_prefetch,
    "memref.extract_aligned_pointer_as_index": (
        _FunctionLowering.lower_extract_aligned_pointer
    ),
    "func.call": _FunctionLowering.lower_call,
    "func.return": _FunctionLowering.lower_return,
    "cf.br": _FunctionLowering.lower_br,
    "cf.cond_br": _FunctionLowering.lower_cond_br,
    "builtin.unrealized_conversion_cast": _FunctionLowering.lower_unrealized_cast,
    "tcrt.parallel_for": _FunctionLowering.lower_parallel_for,
    "vector.load": _FunctionLowering.lower_vector_load,
    "vector.store": _FunctionLowering.lower_vector_store,
    "vector.maskedload": _FunctionLowering.lower_masked_load,
    "vector.maskedstore": _FunctionLowering.lower_masked_store,
    "vector.create_mask": _FunctionLowering.lower_create_mask,
    "vector.broadcast": _FunctionLowering.lower_broadcast,
    "vector.shuffle": _FunctionLowering.lower_shuffle,
    "vector.fma": _FunctionLowering.lower_vector_fma,
    "vector.reduction": _FunctionLowering.lower_reduction,
}


@dataclass(frozen=True)
class ConvertToLlvmPass(ModulePass):
    """Translate func/cf/arith/math/memref/tcrt functions to the llvm dialect.

    See the module docstring and docs/pipeline.md ("llvm stage ABI").
    """

    name = "convert-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _ModuleLowering(op).run()
