"""`arith` → llvm: the handlers of `convert-to-llvm` for the arith dialect.

`populate_arith_to_llvm(handlers)` adds them to a handler table (see
`lowering.py`). Nothing here calls a library or depends on the target beyond
LLVM's own intrinsics, so a device lowering can use the table as it is.

- Integer and float arithmetic, bitwise ops and shifts become the llvm op of
  the same name (`arith.addi` → `llvm.add`, `arith.mulf` → `llvm.fmul` with
  the op's fast-math flags), on scalars and on 1-D vectors alike; a dense
  `arith.constant` becomes an `llvm.mlir.constant` (shared within a block).
- Integer min/max is `icmp` + `select` on scalars and `llvm.smax.v8i32` etc.
  on vectors; `maxnumf`/`minnumf` are `llvm.intr.maxnum`/`minnum`,
  `maximumf`/`minimumf` the intrinsics `llvm.maximum.*`/`llvm.minimum.*`.
- Integer division and remainder never trap: a zero divisor gives 0 and
  `INT_MIN / -1` wraps (the divisor is guarded with selects, unless it is a
  constant other than 0 and -1); `floordivsi`/`ceildivsi`/`ceildivui` round
  towards -inf/+inf::

      %q = arith.divsi %x, %y : i32

  becomes (the guard elided) `llvm.sdiv %x, %safe` with
  `%safe = select(%y == 0 or %y == -1, 1, %y)`, then selects for -1 and 0.
- `fptosi`/`fptoui` become the saturating `llvm.fpto[su]i.sat.*` intrinsics
  (NaN gives 0), `uitofp` a zero extension (or, from `i64`, a halving
  sequence) and `sitofp`; `index_cast[ui]` a truncation or extension.
- `arith.select` of memrefs selects the pointer and every dynamic extent;
  with a scalar condition on vectors it selects whole vectors.
- Comparisons, selects on a vector condition, integer divisions, `uitofp` and
  index casts on vectors are rejected: xDSL 0.74's llvm dialect has no vector
  `llvm.fcmp` and no vector-condition `llvm.select` (and its arith types
  vector comparisons as `i1`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.lowering import (
    FunctionLowering,
    Handler,
    binary,
    float_intrinsic,
    int_constant_of,
    scalar_only,
)
from tcdialect.conversion.convert_to_llvm.memref_abi import MemRef
from tcdialect.conversion.convert_to_llvm.type_converter import (
    err,
    fastmath,
    float_suffix,
    int_suffix,
    int_width,
    is_vector,
    scalar_type,
)

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

# float min/max with a typed llvm.intr.* op in xDSL
_FLOAT_MINMAX_TYPED: dict[str, Callable[..., Operation]] = {
    "arith.maxnumf": llvm.VectorFMaxOp,
    "arith.minnumf": llvm.VectorFMinOp,
}

# float min/max as LLVM 22 intrinsics, llvm.call_intrinsic "<name>.<fty>"
_FLOAT_MINMAX_INTRINSIC: dict[str, str] = {
    "arith.minimumf": "llvm.minimum",
    "arith.maximumf": "llvm.maximum",
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


def _float_binary(cls: type[llvm.AbstractFloatArithOp]) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        lhs, rhs = (lw.get(v, op) for v in op.operands)
        lw.set(op.results[0], lw.emit_value(cls(lhs, rhs, fastmath(op))))

    return lower


def _int_minmax(pred: str, intrinsic: str) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        lhs, rhs = (lw.get(v, op) for v in op.operands)
        if is_vector(lhs.type):
            # llvm.select takes a scalar condition in xDSL: use intrinsics.
            name = f"llvm.{intrinsic}.{int_suffix(lhs.type, op)}"
            lw.set(op.results[0], lw.call_intrinsic(name, [lhs, rhs], lhs.type))
        else:
            lw.set(op.results[0], lw.select(lw.icmp(pred, lhs, rhs), lhs, rhs))

    return lower


def _simple_cast(cls: Callable[..., Operation]) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        src = lw.get(op.operands[0], op)
        t = scalar_type(op.results[0].type, op)
        if src.type == t:
            lw.set(op.results[0], src)
            return
        lw.set(op.results[0], lw.emit_value(cls(src, t)))

    return lower


def lower_constant(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    t = scalar_type(op.result.type, op)
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, VectorType):
        if value.get_shape() != t.get_shape():
            raise err(op, f"unsupported constant {value}")
        # ints or floats: the lowered types have no complex elements
        values: list[Any] = list(value.get_values())
        if len(set(values)) == 1:
            lw.set(op.result, lw.const(values[0], t))
        else:
            attr = DenseIntOrFPElementsAttr.from_list(t, values)
            lw.set(op.result, lw.emit_value(llvm.ConstantOp(attr, t)))
    elif isinstance(value, IntegerAttr):
        lw.set(op.result, lw.const(value.value.data, t))
    elif isinstance(value, FloatAttr):
        lw.set(op.result, lw.const(value.value.data, t))
    else:
        raise err(op, f"unsupported constant {value}")


def lower_index_cast(lw: FunctionLowering, op: Operation) -> None:
    src = lw.get(op.operands[0], op)
    t = scalar_type(op.results[0].type, op)
    src_w, dst_w = int_width(src.type), int_width(t)
    if src_w == dst_w:
        lw.set(op.results[0], src)
    elif src_w > dst_w:
        lw.set(op.results[0], lw.emit_value(llvm.TruncOp(src, t)))
    elif op.name == "arith.index_castui":
        lw.set(op.results[0], lw.emit_value(llvm.ZExtOp(src, t)))
    else:
        lw.set(op.results[0], lw.emit_value(llvm.SExtOp(src, t)))


def lower_uitofp(lw: FunctionLowering, op: Operation) -> None:
    src = lw.get(op.operands[0], op)
    t = scalar_type(op.results[0].type, op)
    width = int_width(src.type)
    if width < 64:
        wide = lw.emit_value(llvm.ZExtOp(src, i64))
        lw.set(op.results[0], lw.emit_value(llvm.SIToFPOp(wide, t)))
        return
    if width > 64:
        raise err(op, f"unsupported source type {src.type}")
    # x >= 0 (signed): sitofp x; else 2 * sitofp((x >> 1) | (x & 1)), where
    # the low bit keeps the rounding sticky.
    one = lw.const(1, i64)
    negative = lw.icmp("slt", src, lw.const(0, i64))
    half = lw.emit_value(llvm.LShrOp(src, one))
    low = lw.emit_value(llvm.AndOp(src, one))
    halved = lw.emit_value(llvm.SIToFPOp(lw.emit_value(llvm.OrOp(half, low)), t))
    doubled = lw.emit_value(llvm.FAddOp(halved, halved))
    direct = lw.emit_value(llvm.SIToFPOp(src, t))
    lw.set(op.results[0], lw.select(negative, doubled, direct))


def lower_fptoi(lw: FunctionLowering, op: Operation) -> None:
    src = lw.get(op.operands[0], op)
    t = scalar_type(op.results[0].type, op)
    kind = "fptosi" if op.name == "arith.fptosi" else "fptoui"
    name = f"llvm.{kind}.sat.{int_suffix(t, op)}.{float_suffix(src.type, op)}"
    lw.set(op.results[0], lw.call_intrinsic(name, [src], t))


def lower_negf(lw: FunctionLowering, op: Operation) -> None:
    lw.set(op.results[0], lw.emit_value(llvm.FNegOp(lw.get(op.operands[0], op))))


def lower_select(lw: FunctionLowering, op: Operation) -> None:
    cond, a, b = op.operands
    if isinstance(a.type, MemRefType):
        ma, mb = lw.get_memref(a, op), lw.get_memref(b, op)
        c = lw.get(cond, op)
        lw.set(
            op.results[0],
            MemRef(
                ma.type,
                lw.select(c, ma.ptr, mb.ptr),
                tuple(
                    lw.select(c, x, y)
                    for x, y in zip(ma.dyn_sizes, mb.dyn_sizes, strict=True)
                ),
            ),
        )
        return
    lw.set(op.results[0], lw.select(lw.get(cond, op), lw.get(a, op), lw.get(b, op)))


def lower_cmpi(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, arith.CmpiOp)
    pred = _CMPI_PREDICATES[op.predicate.value.data]
    lhs, rhs = lw.get(op.lhs, op), lw.get(op.rhs, op)
    lw.set(op.result, lw.icmp(pred, lhs, rhs))


def lower_cmpf(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, arith.CmpfOp)
    pred = _CMPF_PREDICATES[op.predicate.value.data]
    if pred in ("false", "true"):
        lw.set(op.result, lw.const(1 if pred == "true" else 0, i1))
        return
    lhs, rhs = lw.get(op.lhs, op), lw.get(op.rhs, op)
    lw.set(op.result, lw.emit_value(llvm.FCmpOp(lhs, rhs, pred)))


# -- division ------------------------------------------------------------------


def _divisor_needs_guard(rhs: SSAValue, signed: bool) -> bool:
    c = int_constant_of(rhs)
    if c is None:
        return True
    width = 64 if isinstance(rhs.type, IndexType) else int_width(rhs.type)
    c &= (1 << width) - 1
    return c == 0 or (signed and c == (1 << width) - 1)


def _sdiv_srem(
    lw: FunctionLowering, op: Operation, quotient: bool, remainder: bool
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(quotient, remainder, divisor) of a signed division that never traps.

    y == 0 gives (0, 0); y == -1 gives (-x, 0), wrapping for INT_MIN.
    Only the parts asked for are emitted (the others are the divisor).
    """
    x = lw.get(op.operands[0], op)
    y = lw.get(op.operands[1], op)
    q = r = y
    if not _divisor_needs_guard(op.operands[1], signed=True):
        if quotient:
            q = lw.emit_value(llvm.SDivOp(x, y))
        if remainder:
            r = lw.emit_value(llvm.SRemOp(x, y))
        return q, r, y
    t = x.type
    zero = lw.const(0, t)
    is_zero = lw.icmp("eq", y, zero)
    is_m1 = lw.icmp("eq", y, lw.const(-1, t))
    bad = lw.emit_value(llvm.OrOp(is_zero, is_m1))
    safe = lw.select(bad, lw.const(1, t), y)
    if quotient:
        # safe == 1 when y is -1: negate x (wrapping) instead.
        q = lw.emit_value(llvm.SDivOp(x, safe))
        q = lw.select(is_m1, lw.emit_value(llvm.SubOp(zero, q)), q)
        q = lw.select(is_zero, zero, q)
    if remainder:
        r = lw.emit_value(llvm.SRemOp(x, safe))  # 0 when y is 0 or -1
    return q, r, y


def _udiv_urem(
    lw: FunctionLowering, op: Operation, quotient: bool, remainder: bool
) -> tuple[SSAValue, SSAValue]:
    """(quotient, remainder) of an unsigned division; y == 0 gives (0, 0)."""
    x = lw.get(op.operands[0], op)
    y = lw.get(op.operands[1], op)
    q = r = y
    if not _divisor_needs_guard(op.operands[1], signed=False):
        if quotient:
            q = lw.emit_value(llvm.UDivOp(x, y))
        if remainder:
            r = lw.emit_value(llvm.URemOp(x, y))
        return q, r
    t = x.type
    zero = lw.const(0, t)
    is_zero = lw.icmp("eq", y, zero)
    safe = lw.select(is_zero, lw.const(1, t), y)
    if quotient:
        q = lw.select(is_zero, zero, lw.emit_value(llvm.UDivOp(x, safe)))
    if remainder:
        r = lw.emit_value(llvm.URemOp(x, safe))  # 0 when y is 0
    return q, r


def lower_divsi(lw: FunctionLowering, op: Operation) -> None:
    lw.set(op.results[0], _sdiv_srem(lw, op, True, False)[0])


def lower_remsi(lw: FunctionLowering, op: Operation) -> None:
    lw.set(op.results[0], _sdiv_srem(lw, op, False, True)[1])


def lower_divui(lw: FunctionLowering, op: Operation) -> None:
    lw.set(op.results[0], _udiv_urem(lw, op, True, False)[0])


def lower_remui(lw: FunctionLowering, op: Operation) -> None:
    lw.set(op.results[0], _udiv_urem(lw, op, False, True)[1])


def lower_floor_ceil_divsi(lw: FunctionLowering, op: Operation) -> None:
    q, r, y = _sdiv_srem(lw, op, True, True)
    t = q.type
    zero = lw.const(0, t)
    inexact = lw.icmp("ne", r, zero)
    r_neg = lw.icmp("slt", r, zero)
    y_neg = lw.icmp("slt", y, zero)
    if op.name == "arith.floordivsi":
        # signs differ: the truncated quotient is one above the floor
        signs = lw.emit_value(llvm.XOrOp(r_neg, y_neg))
        delta = lw.const(-1, t)
    else:
        signs = lw.icmp("eq", r_neg, y_neg)
        delta = lw.const(1, t)
    adjust = lw.emit_value(llvm.AndOp(inexact, signs))
    adjusted = lw.emit_value(llvm.AddOp(q, delta))
    lw.set(op.results[0], lw.select(adjust, adjusted, q))


def lower_ceildivui(lw: FunctionLowering, op: Operation) -> None:
    q, r = _udiv_urem(lw, op, True, True)
    t = q.type
    inexact = lw.icmp("ne", r, lw.const(0, t))
    adjusted = lw.emit_value(llvm.AddOp(q, lw.const(1, t)))
    lw.set(op.results[0], lw.select(inexact, adjusted, q))


def populate_arith_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of every supported `arith` op to `handlers`."""
    handlers.update({name: binary(cls) for name, cls in _INT_BINARY.items()})
    handlers.update({name: _float_binary(c) for name, c in _FLOAT_BINARY.items()})
    handlers.update(
        {
            name: _int_minmax(pred, _INT_MINMAX_INTRINSIC[name])
            for name, pred in _INT_MINMAX.items()
        }
    )
    handlers.update({name: _simple_cast(cls) for name, cls in _INT_CASTS.items()})
    handlers.update({n: binary(cls) for n, cls in _FLOAT_MINMAX_TYPED.items()})
    handlers.update({n: float_intrinsic(i) for n, i in _FLOAT_MINMAX_INTRINSIC.items()})
    handlers.update(
        {
            "arith.constant": lower_constant,
            "arith.index_cast": scalar_only(lower_index_cast),
            "arith.index_castui": scalar_only(lower_index_cast),
            "arith.uitofp": scalar_only(lower_uitofp),
            "arith.fptosi": lower_fptoi,
            "arith.fptoui": lower_fptoi,
            "arith.negf": lower_negf,
            "arith.select": lower_select,
            "arith.cmpi": scalar_only(lower_cmpi),
            "arith.cmpf": scalar_only(lower_cmpf),
            "arith.divsi": scalar_only(lower_divsi),
            "arith.remsi": scalar_only(lower_remsi),
            "arith.divui": scalar_only(lower_divui),
            "arith.remui": scalar_only(lower_remui),
            "arith.floordivsi": scalar_only(lower_floor_ceil_divsi),
            "arith.ceildivsi": scalar_only(lower_floor_ceil_divsi),
            "arith.ceildivui": scalar_only(lower_ceildivui),
        }
    )
