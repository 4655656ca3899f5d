"""`convert-to-llvm` end to end: lower, translate with xDSL/llvmlite, JIT, run.

Each test writes a small function at the cf level (some with `scf`, lowered by
xDSL's `convert-scf-to-cf` first), lowers it with `ConvertToLlvmPass`,
translates the llvm dialect with `xdsl.backend.llvm.convert.convert_module`,
JIT-compiles the LLVM IR with llvmlite's MCJIT and calls it through ctypes on
NumPy buffers, following the ABI of docs/pipeline.md (a memref is a pointer
plus one i64 per dynamic dimension, `index` is i64).

Where MLIR 22's `mlir-translate` is installed, every source is also checked to
translate from the generic form.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func, memref, scf, vector
from xdsl.dialects import llvm as xllvm
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tcrt import TCRT

I64 = ctypes.c_int64
I32 = ctypes.c_int32
PTR = ctypes.c_void_p
F32 = ctypes.c_float
F64 = ctypes.c_double

# Sequential stand-in for the backend's runtime: two chunks, [0, n/2), [n/2, n).
PARALLEL_FOR_IR = """
define void @__tc_parallel_for(ptr %fn, ptr %ctx, i64 %n) {
entry:
  %pos = icmp sgt i64 %n, 0
  br i1 %pos, label %run, label %done
run:
  %half = sdiv i64 %n, 2
  call void %fn(ptr %ctx, i64 0, i64 %half)
  call void %fn(ptr %ctx, i64 %half, i64 %n)
  br label %done
done:
  ret void
}
"""

_SOURCES: list[str] = []  # every source lowered, for the mlir-translate check


def _context() -> Context:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        vector.Vector,
        func.Func,
        arith.Arith,
        xmath.Math,
        memref.MemRef,
        cf.Cf,
        scf.Scf,
        xllvm.LLVM,
        TCRT,
    ):
        ctx.load_dialect(dialect)
    return ctx


def lower(src: str) -> ModuleOp:
    ctx = _context()
    module = Parser(ctx, src).parse_module()
    ConvertScfToCf().apply(ctx, module)
    ConvertToLlvmPass().apply(ctx, module)
    module.verify()
    for op in module.walk():
        assert op.dialect_name() in ("llvm", "builtin"), op.name
    return module


@pytest.fixture(scope="module", autouse=True)
def _native_target() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


class Jit:
    """A lowered, JIT-compiled module; `fn` returns ctypes callables."""

    def __init__(self, src: str, extra_ir: str = ""):
        _SOURCES.append(src)
        module = lower(src)
        triple = llvm.get_process_triple()
        self.ir = str(convert_module(module, fallback_target_triple=triple))
        mod = llvm.parse_assembly(self.ir)
        mod.verify()
        if extra_ir:
            extra = llvm.parse_assembly(extra_ir)
            extra.triple = triple
            mod.link_in(extra)
        machine = llvm.Target.from_triple(triple).create_target_machine()
        self.engine = llvm.create_mcjit_compiler(mod, machine)
        self.engine.finalize_object()

    def fn(self, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        address = self.engine.get_function_address(name)
        assert address, name
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)


def ptr(a: np.ndarray) -> int:
    assert a.flags.c_contiguous
    return a.ctypes.data


# --------------------------------------------------------------------------
# memref ABI, control flow
# --------------------------------------------------------------------------

ADD2D = """
func.func @add(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %A, %c0 : memref<?x?xf32>
  %N = memref.dim %A, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %M step %c1 {
    scf.for %j = %c0 to %N step %c1 {
      %a = memref.load %A[%i, %j] : memref<?x?xf32>
      %b = memref.load %B[%i, %j] : memref<?x?xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %C[%i, %j] : memref<?x?xf32>
    }
  }
  func.return
}
"""


def test_add_2d_dynamic():
    jit = Jit(ADD2D)
    add = jit.fn("add", None, PTR, I64, I64, PTR, I64, I64, PTR, I64, I64)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((5, 7)).astype(np.float32)
    c = np.zeros_like(a)
    add(ptr(a), 5, 7, ptr(b), 5, 7, ptr(c), 5, 7)
    np.testing.assert_array_equal(c, a + b)


# Hand-written cf: row sums of a ?x3 matrix, and the total as the result.
ROWSUM = """
func.func @rowsum(%A: memref<?x3xf64>, %R: memref<?xf64>, %M: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  cf.br ^outer(%c0, %zero : index, f64)
^outer(%i: index, %total: f64):
  %more = arith.cmpi slt, %i, %M : index
  cf.cond_br %more, ^inner_start, ^exit
^inner_start:
  cf.br ^inner(%c0, %zero : index, f64)
^inner(%j: index, %acc: f64):
  %more_j = arith.cmpi slt, %j, %c3 : index
  cf.cond_br %more_j, ^body, ^inner_end
^body:
  %x = memref.load %A[%i, %j] : memref<?x3xf64>
  %acc2 = arith.addf %acc, %x : f64
  %j2 = arith.addi %j, %c1 : index
  cf.br ^inner(%j2, %acc2 : index, f64)
^inner_end:
  memref.store %acc, %R[%i] : memref<?xf64>
  %total2 = arith.addf %total, %acc : f64
  %i2 = arith.addi %i, %c1 : index
  cf.br ^outer(%i2, %total2 : index, f64)
^exit:
  func.return %total : f64
}
"""


def test_reduction_with_block_arguments():
    jit = Jit(ROWSUM)
    rowsum = jit.fn("rowsum", F64, PTR, I64, PTR, I64, I64)
    a = np.arange(12, dtype=np.float64).reshape(4, 3) * 0.5
    r = np.zeros(4)
    total = rowsum(ptr(a), 4, ptr(r), 4, 4)
    np.testing.assert_allclose(r, a.sum(axis=1))
    assert total == pytest.approx(a.sum())
    assert rowsum(ptr(a), 4, ptr(r), 4, 0) == 0.0


STATIC_AND_RANK0 = """
func.func @f(%A: memref<2x3x4xi32>, %S: memref<i32>, %T: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.load %A[%c1, %c2, %c3] : memref<2x3x4xi32>
  memref.store %x, %S[] : memref<i32>
  %t = memref.load %T[] : memref<f32>
  %t2 = arith.mulf %t, %t : f32
  memref.store %t2, %T[] : memref<f32>
  func.return
}
"""


def test_static_and_rank0_memrefs():
    jit = Jit(STATIC_AND_RANK0)
    f = jit.fn("f", None, PTR, PTR, PTR)
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    s = np.zeros((), np.int32)
    t = np.array(3.0, np.float32)
    f(ptr(a), ptr(s), ptr(t))
    assert s == a[1, 2, 3]
    assert t == 9.0


MIXED_DIMS = """
func.func @f(%A: memref<?x4x?xi16>, %i: index, %j: index, %k: index) -> i16 {
  %x = memref.load %A[%i, %j, %k] : memref<?x4x?xi16>
  func.return %x : i16
}
"""


def test_mixed_static_dynamic_dims():
    jit = Jit(MIXED_DIMS)
    f = jit.fn("f", ctypes.c_int16, PTR, I64, I64, I64, I64, I64)
    a = np.arange(3 * 4 * 5, dtype=np.int16).reshape(3, 4, 5)
    for idx in [(0, 0, 0), (2, 3, 4), (1, 2, 3)]:
        assert f(ptr(a), 3, 5, *idx) == a[idx]


ALLOC = """
func.func @f(%A: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %T = memref.alloc(%n) : memref<?x2xf32>
  %F = memref.alloc(%n) : memref<?xi1>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %x, %T[%i, %c0] : memref<?x2xf32>
    memref.store %y, %T[%i, %c1] : memref<?x2xf32>
    %pos = arith.cmpf ogt, %x, %zero : f32
    memref.store %pos, %F[%i] : memref<?xi1>
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %T[%i, %c0] : memref<?x2xf32>
    %y = memref.load %T[%i, %c1] : memref<?x2xf32>
    %p = memref.load %F[%i] : memref<?xi1>
    %xy = arith.addf %x, %y : f32
    %v = arith.select %p, %xy, %zero : f32
    %acc2 = arith.addf %acc, %v : f32
    scf.yield %acc2 : f32
  }
  memref.dealloc %F : memref<?xi1>
  memref.dealloc %T : memref<?x2xf32>
  %S = memref.alloca() : memref<3xf32>
  memref.store %s, %S[%c1] : memref<3xf32>
  %r = memref.load %S[%c1] : memref<3xf32>
  func.return %r : f32
}
"""


def test_alloc_dealloc_alloca_and_i1_buffers():
    jit = Jit(ALLOC)
    f = jit.fn("f", F32, PTR, I64, I64)
    a = np.array([1.0, -2.0, 3.0, 0.5, -0.25], np.float32)
    expected = sum(x + x * x for x in a if x > 0)
    assert f(ptr(a), 5, 5) == pytest.approx(expected)
    assert f(ptr(a), 5, 0) == 0.0


BOOL_OUT = """
func.func @f(%A: memref<?xf32>, %B: memref<?xi1>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f32
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    %b = arith.cmpf olt, %x, %half : f32
    memref.store %b, %B[%i] : memref<?xi1>
  }
  func.return
}
"""


def test_i1_elements_are_bytes():
    jit = Jit(BOOL_OUT)
    f = jit.fn("f", None, PTR, I64, PTR, I64, I64)
    a = np.array([0.1, 0.7, -3.0, 0.5, 0.49], np.float32)
    b = np.full(5, 7, np.uint8)
    f(ptr(a), 5, ptr(b), 5, 5)
    np.testing.assert_array_equal(b, (a < 0.5).astype(np.uint8))


CALLS = """
func.func private @hypotf(f32, f32) -> f32
func.func private @helper(%A: memref<?xf32>, %i: index) -> f32 {
  %x = memref.load %A[%i] : memref<?xf32>
  func.return %x : f32
}
func.func @f(%A: memref<?xf32>, %y: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %x = func.call @helper(%A, %c1) : (memref<?xf32>, index) -> f32
  %h = func.call @hypotf(%x, %y) : (f32, f32) -> f32
  func.return %h : f32
}
"""


def test_calls_internal_and_external():
    jit = Jit(CALLS)
    f = jit.fn("f", F32, PTR, I64, F32)
    a = np.array([0.0, 3.0], np.float32)
    assert f(ptr(a), 2, 4.0) == pytest.approx(5.0)


# --------------------------------------------------------------------------
# tcrt.parallel_for
# --------------------------------------------------------------------------

PARALLEL = """
func.func @scale(%A: memref<?xf32>, %B: memref<?xf32>, %k: f32, %flag: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %half = arith.divsi %n, %c2 : index
  tcrt.parallel_for @scale_par0(%half) (%c0, %c2, %A, %k, %flag, %B) : (index, index, memref<?xf32>, f32, i1, memref<?xf32>)
  tcrt.parallel_for @nothing_par1(%n) () : ()
  func.return
}
func.func private @scale_par0(%begin: index, %end: index, %lb: index, %step: index, %A: memref<?xf32>, %k: f32, %flag: i1, %B: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  scf.for %it = %begin to %end step %c1 {
    %s = arith.muli %it, %step : index
    %i = arith.addi %lb, %s : index
    %x = memref.load %A[%i] : memref<?xf32>
    %y = arith.mulf %x, %k : f32
    %neg = arith.negf %y : f32
    %r = arith.select %flag, %y, %neg : f32
    memref.store %r, %B[%i] : memref<?xf32>
  }
  func.return
}
func.func private @nothing_par1(%begin: index, %end: index) {
  func.return
}
"""


def test_parallel_for_thunk_and_captures():
    jit = Jit(PARALLEL, PARALLEL_FOR_IR)
    f = jit.fn("scale", None, PTR, I64, PTR, I64, F32, ctypes.c_bool, I64)
    a = np.arange(10, dtype=np.float32)
    for flag, sign in ((True, 1.0), (False, -1.0)):
        b = np.full(10, -7.0, np.float32)
        f(ptr(a), 10, ptr(b), 10, 1.5, flag, 10)
        expected = np.where(np.arange(10) % 2 == 0, sign * 1.5 * a, -7.0)
        np.testing.assert_array_equal(b, expected)
    b = np.full(10, -7.0, np.float32)
    f(ptr(a), 10, ptr(b), 10, 1.5, True, 0)
    assert (b == -7.0).all()


# --------------------------------------------------------------------------
# Integer division and remainder never trap
# --------------------------------------------------------------------------

DIVISION = """
func.func @div(%x: {t}, %y: {t}, %out: memref<7x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %0 = arith.divsi %x, %y : {t}
  %1 = arith.remsi %x, %y : {t}
  %2 = arith.divui %x, %y : {t}
  %3 = arith.remui %x, %y : {t}
  %4 = arith.floordivsi %x, %y : {t}
  %5 = arith.ceildivsi %x, %y : {t}
  %6 = arith.ceildivui %x, %y : {t}
  memref.store %0, %out[%c0] : memref<7x{t}>
  memref.store %1, %out[%c1] : memref<7x{t}>
  memref.store %2, %out[%c2] : memref<7x{t}>
  memref.store %3, %out[%c3] : memref<7x{t}>
  memref.store %4, %out[%c4] : memref<7x{t}>
  memref.store %5, %out[%c5] : memref<7x{t}>
  memref.store %6, %out[%c6] : memref<7x{t}>
  func.return
}}
func.func @div_const(%x: {t}, %out: memref<7x{t}>) {{
  %d = arith.constant {d} : {t}
  func.call @div(%x, %d, %out) : ({t}, {t}, memref<7x{t}>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %0 = arith.divsi %x, %d : {t}
  %1 = arith.remsi %x, %d : {t}
  %4 = arith.floordivsi %x, %d : {t}
  %5 = arith.ceildivsi %x, %d : {t}
  memref.store %0, %out[%c0] : memref<7x{t}>
  memref.store %1, %out[%c1] : memref<7x{t}>
  memref.store %4, %out[%c4] : memref<7x{t}>
  memref.store %5, %out[%c5] : memref<7x{t}>
  func.return
}}
"""


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _expected_division(x: int, y: int, bits: int) -> list[int]:
    mask = (1 << bits) - 1
    ux, uy = x & mask, y & mask
    if y == 0:
        return [0] * 7
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # truncated
    r = x - q * y
    return [
        _wrap(q, bits),
        _wrap(r, bits),
        _wrap(ux // uy, bits),
        _wrap(ux % uy, bits),
        _wrap(x // y, bits),
        _wrap(-(-x // y), bits),
        _wrap(-(-ux // uy), bits),
    ]


@pytest.mark.parametrize(("t", "bits", "ctype", "dtype"), [
    ("i32", 32, I32, np.int32),
    ("i64", 64, I64, np.int64),
    ("index", 64, I64, np.int64),
])  # fmt: skip
def test_division_never_traps(t: str, bits: int, ctype: Any, dtype: Any):
    jit = Jit(DIVISION.format(t=t, d=-3))
    div = jit.fn("div", None, ctype, ctype, PTR)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    values = [0, 1, -1, 2, -2, 7, -7, 3, lo, hi, lo + 1]
    out = np.zeros(7, dtype)
    for x in values:
        for y in values:
            div(x, y, ptr(out))
            assert out.tolist() == _expected_division(x, y, bits), (x, y)


@pytest.mark.parametrize("d", [3, -3, 2, 1, -2])
def test_division_by_constants(d: int):
    jit = Jit(DIVISION.format(t="i32", d=d))
    div = jit.fn("div_const", None, I32, PTR)
    out = np.zeros(7, np.int32)
    for x in [0, 1, -1, 7, -7, 8, -8, -(2**31), 2**31 - 1]:
        div(x, ptr(out))
        assert out.tolist() == _expected_division(x, d, 32), (x, d)


def test_guard_skipped_for_safe_constant_divisor():
    module = lower(
        "func.func @f(%x: i32) -> i32 {\n"
        "  %c = arith.constant 3 : i32\n"
        "  %q = arith.divsi %x, %c : i32\n"
        "  func.return %q : i32\n}"
    )
    names = [op.name for op in module.walk()]
    assert "llvm.sdiv" in names
    assert "llvm.select" not in names


# --------------------------------------------------------------------------
# math, float arith
# --------------------------------------------------------------------------

# op → (reference, sample points)
_GENERAL = [-1.3, 0.2, 2.5]
_POSITIVE = [0.2, 1.7, 3.1]
_UNIT = [-0.9, 0.1, 0.6]
UNARY: dict[str, tuple[Callable[[float], float], list[float]]] = {
    "exp": (math.exp, _GENERAL),
    "exp2": (lambda x: 2.0**x, _GENERAL),
    "expm1": (math.expm1, [-1.3, 1e-7, 2.5]),
    "log": (math.log, _POSITIVE),
    "log2": (math.log2, _POSITIVE),
    "log10": (math.log10, _POSITIVE),
    "log1p": (math.log1p, [-0.5, 1e-7, 3.1]),
    "sqrt": (math.sqrt, _POSITIVE),
    "rsqrt": (lambda x: 1 / math.sqrt(x), _POSITIVE),
    "cbrt": (lambda x: math.copysign(abs(x) ** (1 / 3), x), [-8.0, 0.2, 27.0]),
    "sin": (math.sin, _GENERAL),
    "cos": (math.cos, _GENERAL),
    "tan": (math.tan, _GENERAL),
    "asin": (math.asin, _UNIT),
    "acos": (math.acos, _UNIT),
    "atan": (math.atan, _GENERAL),
    "sinh": (math.sinh, _GENERAL),
    "cosh": (math.cosh, _GENERAL),
    "tanh": (math.tanh, _GENERAL),
    "asinh": (math.asinh, _GENERAL),
    "acosh": (math.acosh, [1.0, 1.5, 7.0]),
    "atanh": (math.atanh, _UNIT),
    "erf": (math.erf, _GENERAL),
    "absf": (abs, [-1.5, 0.0, 2.5]),
    "floor": (math.floor, [-1.5, 0.2, 2.5]),
    "ceil": (math.ceil, [-1.5, 0.2, 2.5]),
    "trunc": (math.trunc, [-1.5, 0.7, 2.5]),
    "round": (lambda x: math.copysign(math.floor(abs(x) + 0.5), x), [-2.5, 0.5, 1.4]),
    "roundeven": (round, [-2.5, 0.5, 1.5]),
}
BINARY: dict[str, tuple[str, Callable[[float, float], float]]] = {
    "powf": ("math.powf", math.pow),
    "atan2": ("math.atan2", math.atan2),
    "copysign": ("math.copysign", math.copysign),
    "maximumf": ("arith.maximumf", max),
    "minimumf": ("arith.minimumf", min),
    "maxnumf": ("arith.maxnumf", max),
    "minnumf": ("arith.minnumf", min),
    "addf": ("arith.addf", lambda a, b: a + b),
    "subf": ("arith.subf", lambda a, b: a - b),
    "mulf": ("arith.mulf", lambda a, b: a * b),
    "divf": ("arith.divf", lambda a, b: a / b),
}
BINARY_POINTS = [(0.5, 2.0), (2.0, -1.5), (3.0, 0.25), (-1.0, 3.0)]


def _math_module(t: str) -> str:
    # `t_` prefix: a function named like a C math function (`exp`) would
    # capture the libm calls that LLVM emits for the intrinsics.
    funcs = []
    for name in UNARY:
        funcs.append(
            f"func.func @t_{name}(%x: {t}) -> {t} {{\n"
            f"  %r = math.{name} %x : {t}\n  func.return %r : {t}\n}}"
        )
    for name, (op, _) in BINARY.items():
        funcs.append(
            f"func.func @t_{name}(%x: {t}, %y: {t}) -> {t} {{\n"
            f"  %r = {op} %x, %y : {t}\n  func.return %r : {t}\n}}"
        )
    funcs.append(
        f"func.func @t_fma(%x: {t}, %y: {t}, %z: {t}) -> {t} {{\n"
        f"  %r = math.fma %x, %y, %z : {t}\n  func.return %r : {t}\n}}"
    )
    funcs.append(
        f"func.func @t_negf(%x: {t}) -> {t} {{\n"
        f"  %r = arith.negf %x : {t}\n  func.return %r : {t}\n}}"
    )
    funcs.append(
        f"func.func @t_fpowi(%x: {t}, %n: i32) -> {t} {{\n"
        f"  %r = math.fpowi %x, %n : {t}, i32\n  func.return %r : {t}\n}}"
    )
    return "\n".join(funcs)


# f32 and f64 in separate modules: xDSL's translator does not mangle the names
# of the typed llvm.intr.* ops (see the report in convert_to_llvm's tests).
@pytest.fixture(scope="module", params=["f32", "f64"])
def math_jit(request: pytest.FixtureRequest) -> tuple[Jit, Any, float]:
    t = request.param
    jit = Jit(_math_module(t))
    return jit, F32 if t == "f32" else F64, 2e-6 if t == "f32" else 1e-13


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math(math_jit: tuple[Jit, Any, float], name: str):
    jit, ctype, rtol = math_jit
    f = jit.fn(f"t_{name}", ctype, ctype)
    ref, points = UNARY[name]
    for x in points:
        x = float(np.float32(x)) if ctype is F32 else x
        assert f(x) == pytest.approx(ref(x), rel=rtol, abs=rtol), (name, x)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_float(math_jit: tuple[Jit, Any, float], name: str):
    jit, ctype, rtol = math_jit
    f = jit.fn(f"t_{name}", ctype, ctype, ctype)
    ref = BINARY[name][1]
    for x, y in BINARY_POINTS:
        if name == "powf" and x < 0:
            continue
        assert f(x, y) == pytest.approx(ref(x, y), rel=rtol), (name, x, y)


def test_nan_semantics_of_min_max(math_jit: tuple[Jit, Any, float]):
    jit, ctype, _ = math_jit
    nan = float("nan")
    for name in ("maximumf", "minimumf"):  # propagate NaN
        f = jit.fn(f"t_{name}", ctype, ctype, ctype)
        assert math.isnan(f(nan, 1.0)) and math.isnan(f(1.0, nan))
    for name in ("maxnumf", "minnumf"):  # ignore NaN
        f = jit.fn(f"t_{name}", ctype, ctype, ctype)
        assert f(nan, 1.0) == 1.0 and f(1.0, nan) == 1.0
    assert jit.fn("t_maximumf", ctype, ctype, ctype)(-0.0, 0.0) == 0.0
    assert math.copysign(1.0, jit.fn("t_minimumf", ctype, ctype, ctype)(-0.0, 0.0)) < 0


def test_fma_negf_fpowi(math_jit: tuple[Jit, Any, float]):
    jit, ctype, rtol = math_jit
    assert jit.fn("t_fma", ctype, ctype, ctype, ctype)(2.0, 3.0, 0.5) == 6.5
    assert jit.fn("t_negf", ctype, ctype)(1.5) == -1.5
    assert jit.fn("t_fpowi", ctype, ctype, I32)(1.5, 3) == pytest.approx(
        3.375, rel=rtol
    )


# --------------------------------------------------------------------------
# casts, comparisons
# --------------------------------------------------------------------------

CASTS = """
func.func @fptosi32(%x: f32) -> i32 {
  %r = arith.fptosi %x : f32 to i32
  func.return %r : i32
}
func.func @fptoui8(%x: f64) -> i8 {
  %r = arith.fptoui %x : f64 to i8
  func.return %r : i8
}
func.func @fptosi64(%x: f64) -> i64 {
  %r = arith.fptosi %x : f64 to i64
  func.return %r : i64
}
func.func @uitofp32(%x: i32) -> f64 {
  %r = arith.uitofp %x : i32 to f64
  func.return %r : f64
}
func.func @uitofp64(%x: i64) -> f64 {
  %r = arith.uitofp %x : i64 to f64
  func.return %r : f64
}
func.func @uitofp64f(%x: i64) -> f32 {
  %r = arith.uitofp %x : i64 to f32
  func.return %r : f32
}
func.func @uitofp1(%x: i1) -> f32 {
  %r = arith.uitofp %x : i1 to f32
  func.return %r : f32
}
func.func @sitofp(%x: i16) -> f32 {
  %r = arith.sitofp %x : i16 to f32
  func.return %r : f32
}
func.func @ints(%x: i8) -> i64 {
  %a = arith.extsi %x : i8 to i32
  %b = arith.extui %x : i8 to i32
  %c = arith.addi %a, %b : i32
  %i = arith.index_cast %c : i32 to index
  %j = arith.index_cast %i : index to i64
  %k = arith.trunci %j : i64 to i16
  %l = arith.extsi %k : i16 to i64
  func.return %l : i64
}
func.func @floats(%x: f64) -> f64 {
  %a = arith.truncf %x : f64 to f32
  %b = arith.extf %a : f32 to f64
  func.return %b : f64
}
func.func @bits(%x: f32) -> i32 {
  %a = arith.bitcast %x : f32 to i32
  func.return %a : i32
}
func.func @minmax(%x: i32, %y: i32) -> i32 {
  %a = arith.minsi %x, %y : i32
  %b = arith.maxui %x, %y : i32
  %c = arith.minui %a, %b : i32
  %d = arith.maxsi %c, %a : i32
  %e = arith.xori %d, %b : i32
  func.return %e : i32
}
func.func @shifts(%x: i32, %s: i32) -> i32 {
  %a = arith.shli %x, %s : i32
  %b = arith.shrsi %x, %s : i32
  %c = arith.shrui %x, %s : i32
  %d = arith.ori %a, %b : i32
  %e = arith.andi %d, %c : i32
  %f = arith.subi %e, %a : i32
  func.return %f : i32
}
"""


def test_casts():
    jit = Jit(CASTS)
    fptosi32 = jit.fn("fptosi32", I32, F32)
    assert fptosi32(float("nan")) == 0
    assert fptosi32(1e20) == 2**31 - 1
    assert fptosi32(-1e20) == -(2**31)
    assert fptosi32(-2.7) == -2
    fptoui8 = jit.fn("fptoui8", ctypes.c_uint8, F64)
    assert fptoui8(-5.0) == 0
    assert fptoui8(300.0) == 255
    assert fptoui8(200.9) == 200
    assert fptoui8(float("nan")) == 0
    assert jit.fn("fptosi64", I64, F64)(float("inf")) == 2**63 - 1
    assert jit.fn("uitofp32", F64, I32)(-1) == 4294967295.0
    uitofp64 = jit.fn("uitofp64", F64, I64)
    assert uitofp64(-1) == 2.0**64
    assert uitofp64(12345) == 12345.0
    assert uitofp64(-(2**63)) == 2.0**63
    uitofp64f = jit.fn("uitofp64f", F32, I64)
    for u in [2**64 - 1, 2**63 + 2**39 + 1, 2**63 + 2**39, 2**40 + 3, 7]:
        s = u - 2**64 if u >= 2**63 else u
        assert uitofp64f(s) == float(np.float32(np.uint64(u))), u
    assert jit.fn("uitofp1", F32, ctypes.c_bool)(True) == 1.0
    assert jit.fn("sitofp", F32, ctypes.c_int16)(-300) == -300.0
    ints = jit.fn("ints", I64, ctypes.c_int8)
    assert ints(-1) == _wrap(-1 + 255, 16)
    assert ints(100) == 200
    assert jit.fn("floats", F64, F64)(0.1) == float(np.float32(0.1))
    assert jit.fn("bits", I32, F32)(1.0) == 0x3F800000
    minmax = jit.fn("minmax", I32, I32, I32)

    def ref(x: int, y: int) -> int:
        u = lambda v: v & 0xFFFFFFFF  # noqa: E731
        a, b = min(x, y), _wrap(max(u(x), u(y)), 32)
        c = _wrap(min(u(a), u(b)), 32)
        return _wrap(max(c, a) ^ b, 32)

    for x, y in [(3, -4), (-4, 3), (0, 0), (2**31 - 1, -(2**31)), (7, 7)]:
        assert minmax(x, y) == ref(x, y)
    shifts = jit.fn("shifts", I32, I32, I32)
    x, s = -12345, 3
    a, b, c = _wrap(x << s, 32), x >> s, (x & 0xFFFFFFFF) >> s
    assert shifts(x, s) == _wrap(((a | b) & c) - a, 32)


CMPF = """
func.func @cmp(%x: f32, %y: f32, %out: memref<16xi8>) {{
{body}
  func.return
}}
"""
CMPF_PREDICATES = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip


def _cmpf_reference(p: str, x: float, y: float) -> bool:
    if p in ("false", "true"):
        return p == "true"
    unordered = math.isnan(x) or math.isnan(y)
    if p == "ord":
        return not unordered
    if p == "uno":
        return unordered
    rel = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y}
    rel["ne"] = not unordered and x != y
    value = rel[p[1:]]
    return value or (unordered and p[0] == "u")


def test_cmpf_and_cmpi_predicates():
    lines = []
    for k, p in enumerate(CMPF_PREDICATES):
        lines += [
            f"  %b{k} = arith.cmpf {p}, %x, %y : f32",
            f"  %e{k} = arith.extui %b{k} : i1 to i8",
            f"  %c{k} = arith.constant {k} : index",
            f"  memref.store %e{k}, %out[%c{k}] : memref<16xi8>",
        ]
    jit = Jit(CMPF.format(body="\n".join(lines)))
    cmp = jit.fn("cmp", None, F32, F32, PTR)
    out = np.zeros(16, np.uint8)
    nan = float("nan")
    for x, y in [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (nan, 1.0), (1.0, nan)]:
        cmp(x, y, ptr(out))
        expected = [int(_cmpf_reference(p, x, y)) for p in CMPF_PREDICATES]
        assert out.tolist() == expected, (x, y)

    cmpi_src = "\n".join(
        f"func.func @{p}(%x: i8, %y: i8) -> i1 {{\n"
        f"  %r = arith.cmpi {p}, %x, %y : i8\n  func.return %r : i1\n}}"
        for p in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
    )
    jit = Jit(cmpi_src)
    for x, y in [(-1, 1), (1, -1), (5, 5), (0, 127)]:
        ux, uy = x & 0xFF, y & 0xFF
        ref = {
            "eq": x == y, "ne": x != y, "slt": x < y, "sle": x <= y,
            "sgt": x > y, "sge": x >= y, "ult": ux < uy, "ule": ux <= uy,
            "ugt": ux > uy, "uge": ux >= uy,
        }  # fmt: skip
        for p, want in ref.items():
            got = jit.fn(p, ctypes.c_bool, ctypes.c_int8, ctypes.c_int8)(x, y)
            assert got == want, (p, x, y)


# --------------------------------------------------------------------------
# errors and the MLIR oracle
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("src", "message"), [
    (
        "func.func @f(%A: memref<4xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        '  "memref.copy"(%A, %A) : (memref<4xf32>, memref<4xf32>) -> ()\n'
        "  func.return\n}",
        "unsupported operation 'memref.copy'",
    ),
    (
        "func.func @f(%A: memref<4xf32, strided<[2]>>) {\n  func.return\n}",
        "unsupported memref layout",
    ),
    (
        "func.func @f(%x: i32) -> (i32, i32) {\n  func.return %x, %x : i32, i32\n}",
        "unsupported results",
    ),
    (
        "func.func @f(%x: i32) -> i32 {\n"
        "  %r = math.ipowi %x, %x : i32\n  func.return %r : i32\n}",
        "unsupported operation 'math.ipowi'",
    ),
])  # fmt: skip
def test_unsupported_input_raises_tcerror(src: str, message: str):
    with pytest.raises(TCError, match=message):
        lower(src)


def test_private_functions_are_internal_and_declarations_external():
    module = lower(CALLS)
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, xllvm.FuncOp)}
    assert funcs["helper"].linkage.linkage.data == "internal"
    assert funcs["f"].linkage.linkage.data == "external"
    assert funcs["hypotf"].linkage.linkage.data == "external"
    assert not funcs["hypotf"].body.blocks


# --------------------------------------------------------------------------
# vectors: JIT-compiled through the backend (tcdialect.backend.cpu), which
# translates what xDSL's llvmlite converter does not (fast-math flags on
# intrinsic calls, mangled vector intrinsics)
# --------------------------------------------------------------------------


class HostJit:
    """A lowered module compiled by `compile_cpu` (O3, host CPU)."""

    def __init__(self, src: str):
        from tcdialect.backend.cpu.jit import compile_cpu

        _SOURCES.append(src)
        self.module = compile_cpu(lower(src))

    def fn(self, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        """The function `name` (valid while this object lives)."""
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.module.address(name))


# Elementwise float ops on vector<8xf32>, 8 lanes per iteration over n (a
# multiple of 8): every arith/math op xDSL's dialects accept on vectors.
VECTOR_FLOAT = """
func.func @vfloat(%A: memref<?xf32>, %B: memref<?xf32>, %O: memref<?x8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %two = arith.constant dense<2.0> : vector<8xf32>
  %ramp = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : vector<8xf32>
  %zero = arith.constant 0.0 : f32
  %s_pos = arith.cmpf ogt, %s, %zero : f32
  %bs = vector.broadcast %s : f32 to vector<8xf32>
  scf.for %i = %c0 to %n step %c8 {
    %a = vector.load %A[%i] : memref<?xf32>, vector<8xf32>
    %b = vector.load %B[%i] : memref<?xf32>, vector<8xf32>
    %add = arith.addf %a, %b fastmath<reassoc> : vector<8xf32>
    %sub = arith.subf %a, %bs : vector<8xf32>
    %mul = arith.mulf %a, %two : vector<8xf32>
    %div = arith.divf %a, %b : vector<8xf32>
    %max = arith.maximumf %a, %b : vector<8xf32>
    %min = arith.minnumf %a, %ramp : vector<8xf32>
    %neg = arith.negf %a : vector<8xf32>
    %fma = math.fma %a, %b, %bs : vector<8xf32>
    %vfma = vector.fma %a, %two, %b : vector<8xf32>
    %abs = math.absf %sub : vector<8xf32>
    %sq = math.sqrt %abs : vector<8xf32>
    %fl = math.floor %div : vector<8xf32>
    %sel = arith.select %s_pos, %max, %min : vector<8xf32>
    vector.store %add, %O[%i, %c0] : memref<?x8xf32>, vector<8xf32>
    %r1 = arith.addf %sub, %mul : vector<8xf32>
    vector.store %r1, %O[%c1, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %div, %O[%c2, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %sel, %O[%c3, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %neg, %O[%c4, %c0] : memref<?x8xf32>, vector<8xf32>
    %f2 = arith.addf %fma, %vfma : vector<8xf32>
    vector.store %f2, %O[%c5, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %sq, %O[%c6, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %fl, %O[%c7, %c0] : memref<?x8xf32>, vector<8xf32>
  }
  func.return
}
"""


def test_vector_float_ops():
    jit = HostJit(VECTOR_FLOAT)  # keeps the compiled code alive
    f = jit.fn("vfloat", None, PTR, I64, PTR, I64, PTR, I64, F32)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32) + 3
    a[3] = np.nan
    ramp = np.arange(8, dtype=np.float32)
    for s in (1.5, -0.5):
        o = np.zeros((8, 8), np.float32)
        f(ptr(a), 8, ptr(b), 8, ptr(o), 8, s)
        s32 = np.float32(s)
        want_sel = np.maximum(a, b) if s > 0 else np.fmin(a, ramp)
        rows = [
            a + b,
            (a - s32) + a * 2,
            a / b,
            want_sel,
            -a,
            (a * b + s32) + (a * 2 + b),
            np.sqrt(np.abs(a - s32)),
            np.floor(a / b),
        ]
        for i, want in enumerate(rows):
            np.testing.assert_allclose(o[i], want, rtol=1e-6, err_msg=f"row {i}")


# Integer vector ops, and reductions (with and without an accumulator).
VECTOR_INT = """
func.func @vint(%A: memref<8xi32>, %B: memref<8xi32>, %O: memref<6x8xi32>, %R: memref<9xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %a = vector.load %A[%c0] : memref<8xi32>, vector<8xi32>
  %b = vector.load %B[%c0] : memref<8xi32>, vector<8xi32>
  %three = arith.constant dense<3> : vector<8xi32>
  %add = arith.addi %a, %b : vector<8xi32>
  %mul = arith.muli %a, %three : vector<8xi32>
  %max = arith.maxsi %a, %b : vector<8xi32>
  %min = arith.minui %a, %b : vector<8xi32>
  %x = arith.xori %a, %b : vector<8xi32>
  %and = arith.andi %a, %b : vector<8xi32>
  %abs = math.absi %a : vector<8xi32>
  vector.store %add, %O[%c0, %c0] : memref<6x8xi32>, vector<8xi32>
  vector.store %mul, %O[%c1, %c0] : memref<6x8xi32>, vector<8xi32>
  vector.store %max, %O[%c2, %c0] : memref<6x8xi32>, vector<8xi32>
  vector.store %min, %O[%c3, %c0] : memref<6x8xi32>, vector<8xi32>
  %xa = arith.ori %x, %and : vector<8xi32>
  vector.store %xa, %O[%c4, %c0] : memref<6x8xi32>, vector<8xi32>
  vector.store %abs, %O[%c5, %c0] : memref<6x8xi32>, vector<8xi32>
  %seven = arith.constant 7 : i32
  %r0 = vector.reduction <add>, %a : vector<8xi32> into i32
  %r1 = vector.reduction <mul>, %b, %seven : vector<8xi32> into i32
  %r2 = vector.reduction <maxsi>, %a : vector<8xi32> into i32
  %r3 = vector.reduction <minsi>, %a, %seven : vector<8xi32> into i32
  %r4 = vector.reduction <maxui>, %a : vector<8xi32> into i32
  %r5 = vector.reduction <minui>, %b : vector<8xi32> into i32
  %r6 = vector.reduction <and>, %a : vector<8xi32> into i32
  %r7 = vector.reduction <or>, %b : vector<8xi32> into i32
  %r8 = vector.reduction <xor>, %a, %seven : vector<8xi32> into i32
  memref.store %r0, %R[%c0] : memref<9xi32>
  memref.store %r1, %R[%c1] : memref<9xi32>
  memref.store %r2, %R[%c2] : memref<9xi32>
  memref.store %r3, %R[%c3] : memref<9xi32>
  memref.store %r4, %R[%c4] : memref<9xi32>
  memref.store %r5, %R[%c5] : memref<9xi32>
  memref.store %r6, %R[%c6] : memref<9xi32>
  memref.store %r7, %R[%c7] : memref<9xi32>
  memref.store %r8, %R[%c8] : memref<9xi32>
  func.return
}
"""


def test_vector_integer_ops_and_reductions():
    jit = HostJit(VECTOR_INT)  # keeps the compiled code alive
    f = jit.fn("vint", None, PTR, PTR, PTR, PTR)
    a = np.array([3, -5, 7, 0, 12, -1, 9, 2], np.int32)
    b = np.array([1, 2, -3, 4, 5, 6, 1, -2], np.int32)
    o = np.zeros((6, 8), np.int32)
    r = np.zeros(9, np.int32)
    f(ptr(a), ptr(b), ptr(o), ptr(r))
    au, bu = a.view(np.uint32), b.view(np.uint32)
    np.testing.assert_array_equal(o[0], a + b)
    np.testing.assert_array_equal(o[1], a * 3)
    np.testing.assert_array_equal(o[2], np.maximum(a, b))
    np.testing.assert_array_equal(o[3].view(np.uint32), np.minimum(au, bu))
    np.testing.assert_array_equal(o[4], (a ^ b) | (a & b))
    np.testing.assert_array_equal(o[5], np.abs(a))
    want = [
        a.sum(),
        7 * np.prod(b),
        a.max(),
        min(a.min(), 7),
        au.max().view(np.int32),
        bu.min().view(np.int32),
        np.bitwise_and.reduce(a),
        np.bitwise_or.reduce(b),
        np.bitwise_xor.reduce(a) ^ 7,
    ]
    np.testing.assert_array_equal(r, np.array(want, dtype=np.int64).astype(np.int32))


# Float reductions: add/mul with reassoc (tree) and strict (ordered), min/max
# kinds with NaN semantics, f64 vectors of 4.
VECTOR_REDUCE = """
func.func @vreduce(%A: memref<16xf32>, %D: memref<4xf64>, %R: memref<8xf32>, %RD: memref<2xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %a = vector.load %A[%c0] : memref<16xf32>, vector<8xf32>
  %n = vector.load %A[%c8] : memref<16xf32>, vector<8xf32>
  %acc = arith.constant 0.5 : f32
  %r0 = vector.reduction <add>, %a fastmath<reassoc> : vector<8xf32> into f32
  %r1 = vector.reduction <add>, %a, %acc : vector<8xf32> into f32
  %r2 = vector.reduction <mul>, %a fastmath<reassoc> : vector<8xf32> into f32
  %r3 = vector.reduction <maxnumf>, %n : vector<8xf32> into f32
  %r4 = vector.reduction <minnumf>, %a, %acc : vector<8xf32> into f32
  %r5 = vector.reduction <maximumf>, %n : vector<8xf32> into f32
  %r6 = vector.reduction <minimumf>, %a : vector<8xf32> into f32
  %r7 = vector.reduction <maximumf>, %a, %acc : vector<8xf32> into f32
  memref.store %r0, %R[%c0] : memref<8xf32>
  memref.store %r1, %R[%c1] : memref<8xf32>
  memref.store %r2, %R[%c2] : memref<8xf32>
  memref.store %r3, %R[%c3] : memref<8xf32>
  memref.store %r4, %R[%c4] : memref<8xf32>
  memref.store %r5, %R[%c5] : memref<8xf32>
  memref.store %r6, %R[%c6] : memref<8xf32>
  memref.store %r7, %R[%c7] : memref<8xf32>
  %d = vector.load %D[%c0] : memref<4xf64>, vector<4xf64>
  %dacc = arith.constant 1.0 : f64
  %s0 = vector.reduction <add>, %d, %dacc fastmath<reassoc> : vector<4xf64> into f64
  %f = math.fma %d, %d, %d : vector<4xf64>
  %s1 = vector.reduction <maxnumf>, %f : vector<4xf64> into f64
  memref.store %s0, %RD[%c0] : memref<2xf64>
  memref.store %s1, %RD[%c1] : memref<2xf64>
  func.return
}
"""


def test_vector_float_reductions():
    jit = HostJit(VECTOR_REDUCE)  # keeps the compiled code alive
    f = jit.fn("vreduce", None, PTR, PTR, PTR, PTR)
    a = np.array([1.5, -2.0, 0.25, 3.0, -0.5, 2.0, 1.0, 0.75], np.float32)
    n = a.copy()
    n[2] = np.nan
    d = np.array([0.5, -1.5, 2.0, 0.25])
    r = np.zeros(8, np.float32)
    rd = np.zeros(2)
    f(ptr(np.concatenate([a, n])), ptr(d), ptr(r), ptr(rd))
    np.testing.assert_allclose(r[0], a.sum(), rtol=1e-6)
    np.testing.assert_allclose(r[1], 0.5 + a.sum(), rtol=1e-6)
    np.testing.assert_allclose(r[2], np.prod(a), rtol=1e-6)
    assert r[3] == np.nanmax(n)  # maxnum ignores NaN
    assert r[4] == min(a.min(), 0.5)
    assert math.isnan(r[5])  # maximum propagates NaN
    assert r[6] == a.min()
    assert r[7] == max(a.max(), 0.5)
    np.testing.assert_allclose(rd, [1.0 + d.sum(), (d * d + d).max()], rtol=1e-12)


# Masked loads/stores with vector.create_mask: the first k lanes only; the
# other lanes of the load take the pass-through value and memory beyond the
# mask is neither read nor written.
VECTOR_MASKED = """
func.func @vmasked(%A: memref<?xf32>, %O: memref<?xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %mask = vector.create_mask %k : vector<8xi1>
  %pass = arith.constant dense<-1.0> : vector<8xf32>
  %a = vector.maskedload %A[%c0], %mask, %pass : memref<?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %b = arith.addf %a, %a : vector<8xf32>
  vector.maskedstore %O[%c0], %mask, %b : memref<?xf32>, vector<8xi1>, vector<8xf32>
  %c8 = arith.constant 8 : index
  vector.store %a, %O[%c8] : memref<?xf32>, vector<8xf32>
  func.return
}
"""


@pytest.mark.parametrize("k", [0, 1, 5, 8])
def test_vector_masked_load_store(k: int):
    jit = HostJit(VECTOR_MASKED)  # keeps the compiled code alive
    f = jit.fn("vmasked", None, PTR, I64, PTR, I64, I64)
    a = np.arange(1, k + 1, dtype=np.float32)  # exactly k elements
    o = np.full(16, 42.0, np.float32)
    f(ptr(a) if k else ptr(np.zeros(1, np.float32)), k, ptr(o), 16, k)
    np.testing.assert_array_equal(o[:k], 2 * a)
    np.testing.assert_array_equal(o[k:8], 42.0)
    np.testing.assert_array_equal(o[8 : 8 + k], a)
    np.testing.assert_array_equal(o[8 + k :], -1.0)


# Vector block arguments (loop-carried accumulators) and 2-D contiguous
# vector accesses at an unaligned offset (alignment = element size).
VECTOR_LOOP = """
func.func @colsum(%A: memref<?x?xf32>, %O: memref<?xf32>, %j: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %A, %c0 : memref<?x?xf32>
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %zero) -> (vector<8xf32>) {
    %a = vector.load %A[%i, %j] : memref<?x?xf32>, vector<8xf32>
    %x = arith.addf %acc, %a : vector<8xf32>
    scf.yield %x : vector<8xf32>
  }
  vector.store %s, %O[%j] : memref<?xf32>, vector<8xf32>
  func.return
}
"""


def test_vector_loop_carried_and_unaligned():
    jit = HostJit(VECTOR_LOOP)  # keeps the compiled code alive
    f = jit.fn("colsum", None, PTR, I64, I64, PTR, I64, I64)
    a = np.random.default_rng(1).standard_normal((7, 13)).astype(np.float32)
    o = np.zeros(13, np.float32)
    f(ptr(a), 7, 13, ptr(o), 13, 3)
    np.testing.assert_allclose(o[3:11], a[:, 3:11].sum(axis=0), rtol=1e-5)
    assert not o[:3].any() and not o[11:].any()


@pytest.mark.parametrize(("src", "message"), [
    (
        # xDSL 0.74 types a vector comparison as i1 (MLIR: vector<8xi1>)
        "func.func @f(%a: vector<8xf32>) -> i1 {\n"
        "  %r = arith.cmpf olt, %a, %a : vector<8xf32>\n"
        "  func.return %r : i1\n}",
        "unsupported vector operands in 'arith.cmpf'",
    ),
    (
        "func.func @f(%a: vector<8xi32>) -> vector<8xi32> {\n"
        "  %r = arith.divsi %a, %a : vector<8xi32>\n"
        "  func.return %r : vector<8xi32>\n}",
        "unsupported vector operands in 'arith.divsi'",
    ),
    (
        "func.func @f(%a: vector<8xf32>) -> vector<8xf32> {\n"
        "  %r = math.expm1 %a : vector<8xf32>\n  func.return %r : vector<8xf32>\n}",
        "unsupported type",
    ),
    (
        "func.func @f(%a: vector<2x4xf32>) {\n  func.return\n}",
        "only fixed 1-D vectors",
    ),
])  # fmt: skip
def test_unsupported_vector_input_raises_tcerror(src: str, message: str):
    with pytest.raises(TCError, match=message):
        lower(src)


MLIR_TRANSLATE = shutil.which("mlir-translate", path="/usr/lib/llvm-22/bin")


@pytest.mark.skipif(MLIR_TRANSLATE is None, reason="MLIR 22 not installed")
@pytest.mark.parametrize(
    "src",
    [ADD2D, ROWSUM, STATIC_AND_RANK0, MIXED_DIMS, ALLOC, CALLS, PARALLEL, CASTS]
    + [_math_module("f32"), _math_module("f64")]
    + [DIVISION.format(t=t, d=-3) for t in ("i32", "index")]
    + [VECTOR_FLOAT, VECTOR_INT, VECTOR_REDUCE, VECTOR_MASKED, VECTOR_LOOP],
)
def test_mlir_translate_accepts_generic_form(src: str, tmp_path: Path):
    module = lower(src)
    path = tmp_path / "m.mlir"
    with path.open("w") as stream:
        Printer(stream=stream, print_generic_format=True).print_op(module)
    assert MLIR_TRANSLATE is not None
    result = subprocess.run(
        [MLIR_TRANSLATE, "--mlir-to-llvmir", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "define" in result.stdout
