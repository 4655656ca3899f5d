"""CUDA's math library in `convert-to-llvm`: math ops → libdevice calls.

LLVM 22's NVPTX backend has no lowering for most transcendental intrinsics
(`llvm.exp.f32` and `llvm.log.f32` end the process: "no libcall available
for fexp"), so on the GPU they call NVIDIA's libdevice (`libdevice.10.bc`,
which the backend links and internalises: `tcdialect.backend.cuda.device`),
as MLIR's `convert-gpu-to-nvvm` does. `populate_libdevice_to_llvm(handlers)`
replaces the entries of `math.populate_math_to_llvm` for these ops and adds
the ones the CPU takes from its C library (`cpu_runtime`):

- `math.exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh
  cosh tanh asinh acosh atanh atan2 powf cbrt erf` on `f32` call
  `__nv_<name>f`, on `f64` `__nv_<name>` (`math.exp` → `__nv_expf`,
  `__nv_exp`; `math.powf` → `__nv_powf`, `__nv_pow`); other types are
  rejected;
- `math.fpowi` calls `__nv_powif` / `__nv_powi` with the exponent as `i32`;
- `func.call` of the C functions the frontend calls for the builtins
  (`hypotf`, `exp10f`, `erfcf`, `fmodf`, `lgammaf`, `erfinvf`, `norm3df`,
  `cyl_bessel_i0f` ..., and their `f64` names: `C_FUNCTIONS`) calls
  `__nv_<name>`, and
  `drop_c_declarations` erases their `func.func private` declarations from
  a `gpu.module` beforehand.

The ops that NVPTX lowers itself (`NVPTX_NATIVE`: `sqrt`, `rsqrt`, `absf`,
`absi`, `floor`, `ceil`, `trunc`, `round`, `roundeven`, `copysign`, `fma`,
the bit counts) keep the generic handlers. Every math op of the `cuda`
table must be in `MATH` or `NVPTX_NATIVE` (test/unit/test_cuda_ptx.py checks
it): an intrinsic that NVPTX cannot lower ends the process instead of
raising. Example::

    %y = math.tanh %x : f32

becomes ``%y = llvm.call @__nv_tanhf(%x) : (f32) -> f32``, with
``llvm.func @__nv_tanhf(f32) -> f32`` declared once.
"""

from __future__ import annotations

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import Float32Type, Float64Type, i32
from xdsl.ir import Operation, SSAValue

from tcdialect.conversion.convert_to_llvm.func_cf import lower_call
from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.type_converter import (
    err,
    int_width,
    scalar_type,
)
from tcdialect.dialects.tc import BUILTINS

PREFIX = "__nv_"
"""libdevice's functions are the C math library's names with this prefix."""

MATH: dict[str, str] = {
    "math.exp": "exp",
    "math.exp2": "exp2",
    "math.expm1": "expm1",
    "math.log": "log",
    "math.log2": "log2",
    "math.log10": "log10",
    "math.log1p": "log1p",
    "math.sin": "sin",
    "math.cos": "cos",
    "math.tan": "tan",
    "math.asin": "asin",
    "math.acos": "acos",
    "math.atan": "atan",
    "math.sinh": "sinh",
    "math.cosh": "cosh",
    "math.tanh": "tanh",
    "math.asinh": "asinh",
    "math.acosh": "acosh",
    "math.atanh": "atanh",
    "math.atan2": "atan2",
    "math.powf": "pow",
    "math.cbrt": "cbrt",
    "math.erf": "erf",
    "math.fpowi": "powi",
}
"""The math ops that call libdevice, and its name for f64 (`f` suffix for f32)."""

NVPTX_NATIVE = frozenset(
    f"math.{name}"
    for name in (
        "absf absi sqrt rsqrt floor ceil trunc round roundeven copysign fma "
        "ctlz cttz ctpop"
    ).split()
)
"""The math ops whose generic handlers (LLVM intrinsics, `arith`-like ops)
NVPTX compiles (each checked with ptxas on f32 and f64)."""

C_FUNCTIONS = frozenset(
    f"{name}{suffix}" for name in BUILTINS if name != "fdim" for suffix in ("", "f")
)
"""The C math functions `convert-tc-to-affine` calls (`func.call @hypotf`):
one per `tc.builtin` but `fdim`, each in libdevice (`__nv_hypotf`,
`__nv_normcdfinvf`, `__nv_cyl_bessel_i0`, ...)."""


def _function(base: str, op: Operation) -> str:
    t = scalar_type(op.results[0].type, op)
    if isinstance(t, Float32Type):
        return f"{PREFIX}{base}f"
    if isinstance(t, Float64Type):
        return f"{PREFIX}{base}"
    raise err(op, f"no libdevice function for {t}")


def _exponent(lw: FunctionLowering, v: SSAValue) -> SSAValue:
    """An integer exponent as the `i32` `__nv_powi[f]` takes."""
    width = int_width(v.type)
    if width > 32:
        return lw.emit_value(llvm.TruncOp(v, i32))
    if width < 32:
        return lw.emit_value(llvm.SExtOp(v, i32))
    return v


def _libdevice(base: str) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        name = _function(base, op)
        args = [lw.get(v, op) for v in op.operands]
        if op.name == "math.fpowi":
            args[1] = _exponent(lw, args[1])
        call = lw.call(name, args, args[0].type, op)
        lw.set(op.results[0], call.results[0])

    return lower


def lower_c_call(lw: FunctionLowering, op: Operation) -> None:
    """`func.call` of a C math function → its libdevice version; others as
    `func_cf` lowers them."""
    assert isinstance(op, func.CallOp)
    name = op.callee.string_value()
    if name not in C_FUNCTIONS:
        lower_call(lw, op)
        return
    args = [lw.get(v, op) for v in op.arguments]
    result = scalar_type(op.res[0].type, op)
    call = lw.call(PREFIX + name, args, result, op)
    lw.set(op.res[0], call.results[0])


def drop_c_declarations(module: Operation) -> None:
    """Erase the declarations (`func.func` without a body) of `C_FUNCTIONS`
    at the top of `module`: their calls become calls to libdevice."""
    for op in list(module.regions[0].block.ops):
        if (
            isinstance(op, func.FuncOp)
            and not op.body.blocks
            and op.sym_name.data in C_FUNCTIONS
        ):
            op.detach()
            op.erase()


def populate_libdevice_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of the math ops that call libdevice, and of calls to
    C math functions, to `handlers` (replacing the LLVM intrinsics)."""
    handlers.update({name: _libdevice(base) for name, base in MATH.items()})
    handlers["func.call"] = lower_c_call
