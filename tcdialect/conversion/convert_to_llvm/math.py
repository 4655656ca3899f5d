"""`math` → llvm intrinsics: the handlers of `convert-to-llvm` for math ops.

`populate_math_to_llvm(handlers)` adds them to a handler table (see
`lowering.py`). Every op here becomes an LLVM intrinsic, on scalars and on
1-D vectors (mangled by the type: `llvm.tanh.v8f32`):

- `llvm.intr.*` ops where xDSL has them (`math.exp` → `llvm.intr.exp`,
  `math.sqrt`, `sin`, `cos`, `floor`, `ceil`, `powf`, `copysign`, ...);
- `llvm.call_intrinsic` for other LLVM 22 intrinsics (`llvm.log10`,
  `llvm.tanh`, `llvm.atan2`, ...), carrying the op's fast-math flags, and for
  `ctlz`/`cttz`/`ctpop` (zero is not poison);
- `absf` is `llvm.intr.fabs`, `absi` an `icmp` + `select` (`llvm.abs.v8i32` on
  vectors), `rsqrt` is `1 / sqrt`, `fma` is `llvm.intr.fma` and `fpowi` is
  `pow(x, sitofp(n))`.

Ops without an LLVM intrinsic (`math.expm1`, `log1p`, `cbrt`, `erf`, `erfc`,
the inverse hyperbolics) are not here: they become calls to a math library
whose names depend on the target (`cpu_runtime` calls the C library's). A
target whose backend cannot lower some of these intrinsics (NVPTX has no
`llvm.exp.f32`) replaces their entries in its table.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i1
from xdsl.ir import Operation

from tcdialect.conversion.convert_to_llvm.lowering import (
    FunctionLowering,
    Handler,
    binary,
    float_intrinsic,
    unary,
)
from tcdialect.conversion.convert_to_llvm.type_converter import (
    fastmath,
    int_suffix,
    is_vector,
    scalar_type,
)

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
}

_INT_INTRINSIC: dict[str, str] = {
    "math.ctlz": "llvm.ctlz",
    "math.cttz": "llvm.cttz",
    "math.ctpop": "llvm.ctpop",
}


def _int_intrinsic(intrinsic: str) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        t = scalar_type(op.results[0].type, op)
        args = [lw.get(op.operands[0], op)]
        if op.name != "math.ctpop":
            args.append(lw.const(0, i1))  # is_zero_poison = false
        name = f"{intrinsic}.{int_suffix(t, op)}"
        lw.set(op.results[0], lw.call_intrinsic(name, args, t))

    return lower


def lower_absf(lw: FunctionLowering, op: Operation) -> None:
    x = lw.get(op.operands[0], op)
    lw.set(op.results[0], lw.emit_value(llvm.FAbsOp(x, x.type)))


def lower_absi(lw: FunctionLowering, op: Operation) -> None:
    x = lw.get(op.operands[0], op)
    if is_vector(x.type):
        name = f"llvm.abs.{int_suffix(x.type, op)}"
        lw.set(op.results[0], lw.call_intrinsic(name, [x, lw.const(0, i1)], x.type))
        return
    zero = lw.const(0, x.type)
    neg = lw.emit_value(llvm.SubOp(zero, x))
    lw.set(op.results[0], lw.select(lw.icmp("slt", x, zero), neg, x))


def lower_rsqrt(lw: FunctionLowering, op: Operation) -> None:
    x = lw.get(op.operands[0], op)
    root = lw.emit_value(llvm.FSqrtOp(x))
    one = lw.const(1.0, x.type)
    lw.set(op.results[0], lw.emit_value(llvm.FDivOp(one, root)))


def lower_fma(lw: FunctionLowering, op: Operation) -> None:
    a, b, c = (lw.get(v, op) for v in op.operands)
    lw.set(op.results[0], lw.emit_value(llvm.FMAOp(a, b, c, fastmath(op))))


def lower_fpowi(lw: FunctionLowering, op: Operation) -> None:
    # pow(x, float(n)): `llvm.powi` needs `__powisf2` from compiler-rt or
    # libgcc, which a JIT process may not have.
    base = lw.get(op.operands[0], op)
    exp = lw.emit_value(llvm.SIToFPOp(lw.get(op.operands[1], op), base.type))
    lw.set(op.results[0], lw.emit_value(llvm.FPowOp(base, exp)))


def populate_math_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of the `math` ops that are LLVM intrinsics to `handlers`."""
    handlers.update({n: unary(cls) for n, cls in _MATH_TYPED_UNARY.items()})
    handlers.update({n: binary(cls) for n, cls in _MATH_TYPED_BINARY.items()})
    handlers.update({n: float_intrinsic(i) for n, i in _MATH_INTRINSIC.items()})
    handlers.update({n: _int_intrinsic(i) for n, i in _INT_INTRINSIC.items()})
    handlers.update(
        {
            "math.absf": lower_absf,
            "math.absi": lower_absi,
            "math.rsqrt": lower_rsqrt,
            "math.fma": lower_fma,
            "math.fpowi": lower_fpowi,
        }
    )
