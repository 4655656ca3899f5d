"""bf16 for a target whose LLVM backend computes it through a library call.

LLVM has `bfloat` everywhere, but on x86-64 without AVX512-BF16 it rounds a
float to bfloat (`fptrunc`, and after any bfloat arithmetic, which it
promotes to float) by calling `__truncsfbf2`, which the CPU JIT's process
need not provide (this machine's libgcc_s has none: a call jumps to address
0). The `cpu` target therefore
never hands LLVM a bfloat computation, as MLIR's
`arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}`
followed by `arith-expand{include-bf16}` would arrange:

- `emulate_bfloat16(module)` rewrites every `arith`/`math` op (and
  `vector.fma`/`vector.reduction`) with a `bf16` operand or result, except
  `arith.constant`, `select`, `bitcast`, `extf` and `truncf`, to the same
  op on f32 between `arith.extf` of its
  `bf16` operands and `arith.truncf` of its `bf16` results. The result is
  the same value: f32 holds every bf16 value exactly, and rounding a
  correctly rounded f32 result of `+ - * /` to bf16 gives the correctly
  rounded bf16 result (f32 has more than 2 * 8 + 2 bits)::

      %z = arith.addf %x, %y : bf16

  becomes::

      %x1 = arith.extf %x : bf16 to f32
      %y1 = arith.extf %y : bf16 to f32
      %z1 = arith.addf %x1, %y1 : f32
      %z = arith.truncf %z1 : f32 to bf16

  Vectors of `bf16` likewise become vectors of f32.
- The `arith.truncf` handler of `populate_soft_bfloat16` lowers f32 → bf16
  (scalars and vectors) in integer ops: round to nearest even by adding
  ``0x7FFF + bit 16`` to the float's bits and keeping the upper half; a NaN
  keeps its sign and upper payload and is made quiet. From f64 it first
  truncates to f32 (as the frontend's conversions do). Any other `truncf`
  goes to the handler it replaces.

- Its `arith.extf` handler extends bf16 to f32 in integer ops too
  (`bitcast` to i16, `zext`, `shl 16`, `bitcast` to float; then `fpext` to
  f64 if asked): with an LLVM `fpext`, InstCombine would narrow
  ``maximum(fpext a, fpext b)`` back to a bfloat `maximum` (and so to the
  library call). LLVM then sees no bfloat value other than loaded, stored,
  selected and bit-cast ones.
"""

from __future__ import annotations

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    Float64Type,
    VectorType,
    i16,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.type_converter import err

#: `arith` ops that move or convert bf16 values: LLVM needs no library for
#: them (`truncf` has its own lowering here).
_KEPT = frozenset(
    ("arith.constant", "arith.select", "arith.bitcast", "arith.extf", "arith.truncf")
)


#: `vector` ops that compute on floats.
_VECTOR = frozenset(("vector.fma", "vector.reduction"))


def _has_bf16(t: Attribute) -> bool:
    if isinstance(t, VectorType):
        t = t.get_element_type()
    return isinstance(t, BFloat16Type)


def _widened(t: Attribute) -> Attribute:
    """`t` with bf16 replaced by f32 (`vector<8xbf16>` → `vector<8xf32>`)."""
    if isinstance(t, VectorType) and _has_bf16(t):
        return VectorType(Float32Type(), t.get_shape())
    return Float32Type() if isinstance(t, BFloat16Type) else t


def _emulate(op: Operation) -> None:
    """Compute `op` in f32 between extensions and truncations (module doc)."""
    operands: list[SSAValue] = []
    for v in op.operands:
        if _has_bf16(v.type):
            ext = arith.ExtFOp(v, _widened(v.type))
            Rewriter.insert_op(ext, InsertPoint.before(op))
            v = ext.result
        operands.append(v)
    result_types = [_widened(r.type) for r in op.results]
    wide = op.create(
        operands=operands,
        result_types=result_types,
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    Rewriter.insert_op(wide, InsertPoint.before(op))
    for old, new in zip(op.results, wide.results, strict=True):
        if _has_bf16(old.type):
            trunc = arith.TruncFOp(new, old.type)
            Rewriter.insert_op(trunc, InsertPoint.before(op))
            new = trunc.result
        old.replace_all_uses_with(new)
    Rewriter.erase_op(op)


def emulate_bfloat16(module: Operation) -> None:
    """Rewrite `module`'s bf16 arithmetic to f32 (see the module docstring)."""
    for op in list(module.walk()):
        computes = op.dialect_name() in ("arith", "math") or op.name in _VECTOR
        if not computes or op.name in _KEPT:
            continue
        if any(_has_bf16(v.type) for v in (*op.operands, *op.results)):
            _emulate(op)


def _round_to_bf16(lw: FunctionLowering, x: SSAValue) -> SSAValue:
    """The bfloat nearest (ties to even) to the float (vector) `x`, in
    integer ops only (no compare or select, which xDSL's llvm dialect lacks
    on vectors)."""
    t = x.type
    n = t.get_shape()[0] if isinstance(t, VectorType) else None
    i32_t = i32 if n is None else VectorType(i32, [n])
    i16_t = i16 if n is None else VectorType(i16, [n])
    bf16_t = BFloat16Type() if n is None else VectorType(BFloat16Type(), [n])

    def op(cls: type[Operation], a: SSAValue, b: int | SSAValue) -> SSAValue:
        rhs = lw.const(b, i32_t) if isinstance(b, int) else b
        return lw.emit_value(cls(a, rhs))  # pyright: ignore[reportCallIssue]

    bits = lw.emit_value(llvm.BitcastOp(x, i32_t))
    high = op(llvm.LShrOp, bits, 16)
    bias = op(llvm.AddOp, op(llvm.AndOp, high, 1), 0x7FFF)
    rounded = op(llvm.LShrOp, op(llvm.AddOp, bits, bias), 16)
    quiet = op(llvm.OrOp, high, 0x40)
    # all ones for a NaN (|bits| above infinity's), else 0
    magnitude = op(llvm.AndOp, bits, 0x7FFFFFFF)
    nan = op(llvm.AShrOp, op(llvm.SubOp, lw.const(0x7F800000, i32_t), magnitude), 31)
    keep = op(llvm.XOrOp, nan, -1)
    chosen = op(llvm.OrOp, op(llvm.AndOp, nan, quiet), op(llvm.AndOp, keep, rounded))
    half = lw.emit_value(llvm.TruncOp(chosen, i16_t))
    return lw.emit_value(llvm.BitcastOp(half, bf16_t))


def _extend_bf16(lw: FunctionLowering, x: SSAValue) -> SSAValue:
    """The float (vector) of the bfloat (vector) `x`, in integer ops only."""
    t = x.type
    n = t.get_shape()[0] if isinstance(t, VectorType) else None
    i16_t = i16 if n is None else VectorType(i16, [n])
    i32_t = i32 if n is None else VectorType(i32, [n])
    f32_t = Float32Type() if n is None else VectorType(Float32Type(), [n])
    bits = lw.emit_value(llvm.BitcastOp(x, i16_t))
    wide = lw.emit_value(llvm.ZExtOp(bits, i32_t))
    high = lw.emit_value(llvm.ShlOp(wide, lw.const(16, i32_t)))
    return lw.emit_value(llvm.BitcastOp(high, f32_t))


def _extf(default: Handler) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        if not _has_bf16(op.operands[0].type):
            default(lw, op)
            return
        x = _extend_bf16(lw, lw.get(op.operands[0], op))
        t = op.results[0].type
        elem = t.get_element_type() if isinstance(t, VectorType) else t
        if isinstance(elem, Float64Type):
            x = lw.emit_value(llvm.FPExtOp(x, t))
        elif not isinstance(elem, Float32Type):
            raise err(op, f"unsupported extension of bf16 to {t}")
        lw.set(op.results[0], x)

    return lower


def _truncf(default: Handler) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        if not _has_bf16(op.results[0].type):
            default(lw, op)
            return
        x = lw.get(op.operands[0], op)
        src = x.type
        elem = src.get_element_type() if isinstance(src, VectorType) else src
        if isinstance(elem, Float64Type):
            wide = (
                VectorType(Float32Type(), src.get_shape())
                if isinstance(src, VectorType)
                else Float32Type()
            )
            x = lw.emit_value(llvm.FPTruncOp(x, wide))
        elif not isinstance(elem, Float32Type):
            raise err(op, f"unsupported truncation of {src} to bf16")
        lw.set(op.results[0], _round_to_bf16(lw, x))

    return lower


def populate_soft_bfloat16(handlers: dict[str, Handler]) -> None:
    """Replace the `arith.extf` and `arith.truncf` handlers of `handlers`
    (the arith ones) by ones that convert bf16 in integer ops."""
    handlers["arith.extf"] = _extf(handlers["arith.extf"])
    handlers["arith.truncf"] = _truncf(handlers["arith.truncf"])
