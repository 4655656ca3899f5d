"""The NumPy reference interpreter on hand-written tc-dialect IR.

Each op family, each assignment operator, empty index spaces, bounds-checked
gathers, chunked evaluation and the call-time checks of `bind_sizes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.math import Math
from xdsl.parser import Parser

from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tc import TC, DefOp

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
DTYPES = {
    "i1": np.bool_,
    "i8": np.int8,
    "i32": np.int32,
    "i64": np.int64,
    "f32": np.float32,
    "f64": np.float64,
}


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Arith, Math, TC):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def run(text: str, *inputs: Any, entry: str | None = None) -> tuple[np.ndarray, ...]:
    return reference.run(parse(text), entry, list(inputs))


def _signless(t: str) -> str:
    return t[1:] if t.startswith("ui") else t


def elementwise(body: str, in_types: Sequence[str], out_type: str) -> str:
    """A def ``O(i) = body(x, y, z)`` over 1-D inputs X, Y, Z; `body` sets %r."""
    names = "XYZ"[: len(in_types)]
    args = ", ".join(
        f"%{n} : !tc.tensor<[N], {t}>" for n, t in zip(names, in_types, strict=True)
    )
    reads = "\n".join(
        f"    %{n.lower()} = tc.read %{n}[%i] : !tc.tensor<[N], {t}>"
        for n, t in zip(names, in_types, strict=True)
    )
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"""
tc.def @f<N>({", ".join(names)}) -> (O) {{
^bb0({args}):
  %O = tc.comprehension @O(%i in [0, N)) "=" : !tc.tensor<[N], {out_type}> {{
{reads}
{lines}
    tc.yield %r : {_signless(out_type)}
  }}
  tc.return %O : !tc.tensor<[N], {out_type}>
}}
"""


def wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def u32(v: int) -> int:
    return v % 2**32


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# --------------------------------------------------------- integer arith ops

INT_X = [-7, 7, -8, 0, I32_MIN, I32_MAX, 3, -1, 9, -9, 5]
INT_Y = [2, -2, 3, 5, -1, 1, -3, 7, -4, -4, 0]

INT_BINARY: dict[str, Callable[[int, int], int]] = {
    "addi": lambda a, b: wrap32(a + b),
    "subi": lambda a, b: wrap32(a - b),
    "muli": lambda a, b: wrap32(a * b),
    "divsi": lambda a, b: 0 if b == 0 else wrap32(trunc_div(a, b)),
    "divui": lambda a, b: 0 if b == 0 else wrap32(u32(a) // u32(b)),
    "floordivsi": lambda a, b: 0 if b == 0 else wrap32(a // b),
    "ceildivsi": lambda a, b: 0 if b == 0 else wrap32(-((-a) // b)),
    "ceildivui": lambda a, b: 0 if b == 0 else wrap32(-((-u32(a)) // u32(b))),
    "remsi": lambda a, b: 0 if b == 0 else wrap32(a - b * trunc_div(a, b)),
    "remui": lambda a, b: 0 if b == 0 else wrap32(u32(a) % u32(b)),
    "minsi": min,
    "maxsi": max,
    "minui": lambda a, b: wrap32(min(u32(a), u32(b))),
    "maxui": lambda a, b: wrap32(max(u32(a), u32(b))),
    "andi": lambda a, b: wrap32(a & b),
    "ori": lambda a, b: wrap32(a | b),
    "xori": lambda a, b: wrap32(a ^ b),
}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_integer_binary(name: str) -> None:
    text = elementwise(f"%r = arith.{name} %x, %y : i32", ["i32", "i32"], "i32")
    x, y = np.array(INT_X, np.int32), np.array(INT_Y, np.int32)
    (out,) = run(text, x, y)
    assert out.dtype == np.int32
    expected = [INT_BINARY[name](a, b) for a, b in zip(INT_X, INT_Y, strict=True)]
    assert out.tolist() == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("shli", lambda a, b: wrap32(a << b) if b < 32 else 0),
        ("shrui", lambda a, b: wrap32(u32(a) >> b) if b < 32 else 0),
        ("shrsi", lambda a, b: a >> min(b, 31)),
    ],
)
def test_shifts(name: str, expected: Callable[[int, int], int]) -> None:
    text = elementwise(f"%r = arith.{name} %x, %y : i32", ["i32", "i32"], "i32")
    xs = [1, -1, 5, -8, I32_MIN, 12345]
    ys = [3, 4, 31, 1, 2, 40]
    (out,) = run(text, np.array(xs, np.int32), np.array(ys, np.int32))
    assert out.tolist() == [expected(a, b) for a, b in zip(xs, ys, strict=True)]


CMPI: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: u32(a) < u32(b),
    "ule": lambda a, b: u32(a) <= u32(b),
    "ugt": lambda a, b: u32(a) > u32(b),
    "uge": lambda a, b: u32(a) >= u32(b),
}


@pytest.mark.parametrize("pred", sorted(CMPI))
def test_cmpi(pred: str) -> None:
    text = elementwise(f"%r = arith.cmpi {pred}, %x, %y : i32", ["i32", "i32"], "i1")
    xs = [*INT_X, 4, -4]
    ys = [*INT_Y, 4, -4]
    (out,) = run(text, np.array(xs, np.int32), np.array(ys, np.int32))
    assert out.dtype == np.bool_
    assert out.tolist() == [CMPI[pred](a, b) for a, b in zip(xs, ys, strict=True)]


def test_i1_arithmetic_wraps_and_compares_signed() -> None:
    # On i1, addi is xor and true is -1 for signed comparisons.
    x = np.array([True, True, False, False])
    y = np.array([True, False, True, False])
    add = elementwise("%r = arith.addi %x, %y : i1", ["i1", "i1"], "i1")
    assert run(add, x, y)[0].tolist() == [False, True, True, False]
    slt = elementwise("%r = arith.cmpi slt, %x, %y : i1", ["i1", "i1"], "i1")
    assert run(slt, x, y)[0].tolist() == [False, True, False, False]
    ext = elementwise("%r = arith.extsi %x : i1 to i32", ["i1"], "i32")
    assert run(ext, x)[0].tolist() == [-1, -1, 0, 0]
    extu = elementwise("%r = arith.extui %x : i1 to i32", ["i1"], "i32")
    assert run(extu, x)[0].tolist() == [1, 1, 0, 0]


def test_select_and_constants() -> None:
    text = elementwise(
        """
        %zero = arith.constant 0 : i32
        %c = arith.cmpi slt, %x, %zero : i32
        %big = arith.constant -5 : i64
        %t = arith.constant true
        %k = arith.constant 2.5 : f32
        %f = arith.sitofp %x : i32 to f32
        %m = arith.mulf %f, %k : f32
        %n = arith.negf %m : f32
        %s = arith.select %c, %n, %m : f32
        %b = arith.sitofp %big : i64 to f32
        %s2 = arith.addf %s, %b : f32
        %r = arith.select %t, %s2, %m : f32
        """,
        ["i32"],
        "f32",
    )
    x = np.array([-2, 0, 3], np.int32)
    (out,) = run(text, x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.abs(x) * 2.5 - 5)


def test_floor_division_and_modulo_as_the_frontend_emits_them() -> None:
    # TC integer '/' and '%': floor semantics, division by zero gives 0.
    text = elementwise(
        """
        %zero = arith.constant 0 : i32
        %one = arith.constant 1 : i32
        %isz = arith.cmpi eq, %y, %zero : i32
        %safe = arith.select %isz, %one, %y : i32
        %q0 = arith.floordivsi %x, %safe : i32
        %q = arith.select %isz, %zero, %q0 : i32
        %p = arith.muli %q0, %safe : i32
        %m0 = arith.subi %x, %p : i32
        %m = arith.select %isz, %zero, %m0 : i32
        %hundred = arith.constant 100 : i32
        %qq = arith.muli %q, %hundred : i32
        %r = arith.addi %qq, %m : i32
        """,
        ["i32", "i32"],
        "i32",
    )
    xs = [7, -7, 7, -7, 5, 0, -1]
    ys = [2, 2, -2, -2, 0, 3, 0]
    (out,) = run(text, np.array(xs, np.int32), np.array(ys, np.int32))
    expected = [0 if b == 0 else (a // b) * 100 + a % b for a, b in zip(xs, ys)]
    assert out.tolist() == expected


def test_integer_division_by_zero_does_not_warn() -> None:
    for name in ("divsi", "divui", "floordivsi", "ceildivsi", "remsi", "remui"):
        text = elementwise(f"%r = arith.{name} %x, %y : i64", ["i64", "i64"], "i64")
        x = np.array([5, -5, np.iinfo(np.int64).min], np.int64)
        y = np.array([0, 0, -1], np.int64)
        (out,) = run(text, x, y)
        assert out[:2].tolist() == [0, 0]


def test_uint8_tensors_use_unsigned_values() -> None:
    text = elementwise(
        """
        %a = arith.extui %x : i8 to i32
        %b = arith.extsi %x : i8 to i32
        %r = arith.subi %a, %b : i32
        """,
        ["ui8"],
        "i32",
    )
    x = np.array([0, 5, 127, 128, 255], np.uint8)
    (out,) = run(text, x)
    assert out.tolist() == [0, 0, 0, 256, 256]
    # An unsigned result type: the yielded i8 bits land in a uint8 tensor.
    neg = elementwise(
        "%z = arith.constant 0 : i8\n%r = arith.subi %z, %x : i8", ["ui8"], "ui8"
    )
    (out,) = run(neg, x)
    assert out.dtype == np.uint8
    assert out.tolist() == [0, 251, 129, 128, 1]


# ------------------------------------------------------------------ floats

FX = np.array([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, np.nan], np.float32)
FY = np.array([0.5, 3.0, -0.0, 0.0, 1.0, np.inf, 1.0, np.nan, np.nan], np.float32)

FLOAT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addf": lambda a, b: a + b,
    "subf": lambda a, b: a - b,
    "mulf": lambda a, b: a * b,
    "divf": lambda a, b: a / b,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxnumf": np.fmax,
    "minnumf": np.fmin,
}


@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary(name: str) -> None:
    text = elementwise(f"%r = arith.{name} %x, %y : f32", ["f32", "f32"], "f32")
    (out,) = run(text, FX, FY)
    assert out.dtype == np.float32
    with np.errstate(all="ignore"):
        expected = FLOAT_BINARY[name](FX, FY)
    np.testing.assert_array_equal(out, expected)


def test_nan_propagation_of_minimumf_and_maxnumf() -> None:
    x = np.array([np.nan, 1.0], np.float32)
    y = np.array([2.0, np.nan], np.float32)
    for name, want in [
        ("maximumf", [np.nan, np.nan]),
        ("minimumf", [np.nan, np.nan]),
        ("maxnumf", [2.0, 1.0]),
        ("minnumf", [2.0, 1.0]),
    ]:
        text = elementwise(f"%r = arith.{name} %x, %y : f32", ["f32", "f32"], "f32")
        np.testing.assert_array_equal(run(text, x, y)[0], np.array(want, np.float32))


def _cmpf_expected(pred: str, a: float, b: float) -> bool:
    unordered = math.isnan(a) or math.isnan(b)
    if pred in ("false", "true"):
        return pred == "true"
    if pred == "ord":
        return not unordered
    if pred == "uno":
        return unordered
    if unordered:
        return pred[0] == "u"
    return {
        "eq": a == b,
        "gt": a > b,
        "ge": a >= b,
        "lt": a < b,
        "le": a <= b,
        "ne": a != b,
    }[pred[1:]]


CMPF = "false oeq ogt oge olt ole one ord ueq ugt uge ult ule une uno true".split()


@pytest.mark.parametrize("pred", CMPF)
def test_cmpf(pred: str) -> None:
    text = elementwise(f"%r = arith.cmpf {pred}, %x, %y : f32", ["f32", "f32"], "i1")
    (out,) = run(text, FX, FY)
    expected = [_cmpf_expected(pred, float(a), float(b)) for a, b in zip(FX, FY)]
    assert out.tolist() == expected


@pytest.mark.parametrize(
    ("body", "in_type", "out_type", "x", "expected"),
    [
        ("%r = arith.sitofp %x : i32 to f32", "i32", "f32", [-3, 7], [-3.0, 7.0]),
        ("%r = arith.uitofp %x : i32 to f64", "i32", "f64", [-1, 7], [2**32 - 1, 7]),
        ("%r = arith.fptosi %x : f32 to i32", "f32", "i32", [-2.7, 2.7], [-2, 2]),
        # out of range, inf and NaN saturate, as compiled code does
        (
            "%r = arith.fptosi %x : f32 to i8",
            "f32",
            "i8",
            [300.0, -300.0, np.inf, np.nan, -128.9],
            [127, -128, 127, 0, -128],
        ),
        (
            "%r = arith.fptosi %x : f64 to i64",
            "f64",
            "i64",
            [1e19, -1e19, 2.0**62],
            [2**63 - 1, -(2**63), 2**62],
        ),
        (
            "%r = arith.fptoui %x : f32 to i8",
            "f32",
            "i8",
            [-1.0, 255.9, 300.0, np.nan],
            [0, -1, -1, 0],
        ),
        (
            "%r = arith.fptoui %x : f32 to i32",
            "f32",
            "i32",
            [3e9, 2.5, 5e9],
            [wrap32(3_000_000_000), 2, wrap32(2**32 - 1)],
        ),
        (
            "%r = arith.extf %x : f32 to f64",
            "f32",
            "f64",
            [0.1],
            [float(np.float32(0.1))],
        ),
        ("%r = arith.truncf %x : f64 to f32", "f64", "f32", [0.1], [np.float32(0.1)]),
        ("%r = arith.extsi %x : i8 to i32", "i8", "i32", [-3, 100], [-3, 100]),
        ("%r = arith.extui %x : i8 to i32", "i8", "i32", [-3, 100], [253, 100]),
        ("%r = arith.trunci %x : i32 to i8", "i32", "i8", [300, -129], [44, 127]),
        ("%r = arith.trunci %x : i32 to i1", "i32", "i1", [3, 2], [True, False]),
        (
            "%r = arith.bitcast %x : f32 to i32",
            "f32",
            "i32",
            [1.0, -2.0],
            [0x3F800000, wrap32(0xC0000000)],
        ),
        ("%r = arith.bitcast %x : i32 to f32", "i32", "f32", [0x3F800000], [1.0]),
        (
            "%a = arith.index_cast %x : i32 to index\n"
            "%k = arith.constant 5000000000 : index\n"
            "%b = arith.addi %a, %k : index\n"
            "%r = arith.index_cast %b : index to i32",
            "i32",
            "i32",
            [-1, 10],
            [wrap32(5_000_000_000 - 1), wrap32(5_000_000_010)],
        ),
    ],
)
def test_casts(
    body: str, in_type: str, out_type: str, x: list[Any], expected: list[Any]
) -> None:
    text = elementwise(body, [in_type], out_type)
    (out,) = run(text, np.array(x, DTYPES[in_type]))
    assert out.tolist() == np.array(expected, out.dtype).tolist()


# -------------------------------------------------------------- math ops

MX = np.array([0.25, 0.5, 0.9, -0.3, 1.7, -2.5], np.float64)

MATH_UNARY: dict[str, Callable[[float], float]] = {
    "absf": abs,
    "acos": lambda v: math.acos(v) if abs(v) <= 1 else math.nan,
    "acosh": lambda v: math.acosh(v) if v >= 1 else math.nan,
    "asin": lambda v: math.asin(v) if abs(v) <= 1 else math.nan,
    "asinh": math.asinh,
    "atan": math.atan,
    "atanh": lambda v: math.atanh(v) if abs(v) < 1 else math.nan,
    "cbrt": lambda v: math.copysign(abs(v) ** (1 / 3), v),
    "ceil": math.ceil,
    "cos": math.cos,
    "cosh": math.cosh,
    "erf": math.erf,
    "exp": math.exp,
    "exp2": lambda v: 2.0**v,
    "expm1": math.expm1,
    "floor": math.floor,
    "log": lambda v: math.log(v) if v > 0 else math.nan,
    "log10": lambda v: math.log10(v) if v > 0 else math.nan,
    "log1p": lambda v: math.log1p(v) if v > -1 else math.nan,
    "log2": lambda v: math.log2(v) if v > 0 else math.nan,
    "rsqrt": lambda v: 1 / math.sqrt(v) if v > 0 else math.nan,
    "sin": math.sin,
    "sinh": math.sinh,
    "sqrt": lambda v: math.sqrt(v) if v >= 0 else math.nan,
    "tan": math.tan,
    "tanh": math.tanh,
    "trunc": math.trunc,
}


@pytest.mark.parametrize("name", sorted(MATH_UNARY))
@pytest.mark.parametrize("ftype", ["f32", "f64"])
def test_math_unary(name: str, ftype: str) -> None:
    dt = np.float32 if ftype == "f32" else np.float64
    text = elementwise(f"%r = math.{name} %x : {ftype}", [ftype], ftype)
    x = MX.astype(dt)
    (out,) = run(text, x)
    assert out.dtype == dt
    expected = np.array([MATH_UNARY[name](float(v)) for v in x], np.float64)
    rtol = 2e-6 if ftype == "f32" else 1e-13
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=1e-7)


def test_math_round_is_half_away_from_zero() -> None:
    x = np.array(
        [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.3, 2.7, np.inf, np.nan], np.float32
    )
    (out,) = run(elementwise("%r = math.round %x : f32", ["f32"], "f32"), x)
    expected = np.array([1, 2, 3, -1, -3, 0, -0.0, 3, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out[6])
    (even,) = run(elementwise("%r = math.roundeven %x : f32", ["f32"], "f32"), x)
    np.testing.assert_array_equal(
        even, np.array([0, 2, 2, -0.0, -2, 0, -0.0, 3, np.inf, np.nan], np.float32)
    )


def test_math_binary_and_ternary() -> None:
    x = np.array([1.5, -2.0, 0.3, 4.0], np.float32)
    y = np.array([2.0, 3.0, -0.7, 0.5], np.float32)
    z = np.array([0.1, -1.0, 2.0, 0.0], np.float32)
    cases: list[tuple[str, np.ndarray]] = [
        ("%r = math.atan2 %x, %y : f32", np.arctan2(x, y)),
        ("%r = math.copysign %x, %y : f32", np.copysign(x, y)),
        ("%r = math.powf %x, %y : f32", np.power(np.abs(x), y)),
        ("%r = math.fma %x, %y, %z : f32", x * y + z),
    ]
    for body, expected in cases:
        xx = np.abs(x) if "powf" in body else x
        (out,) = run(elementwise(body, ["f32"] * 3, "f32"), xx, y, z)
        np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_math_integer_ops() -> None:
    x = np.array([-3, 2, 0, I32_MIN, 1, -1], np.int32)
    y = np.array([2, 10, 0, 1, -3, -3], np.int32)
    (out,) = run(elementwise("%r = math.absi %x : i32", ["i32"], "i32"), x)
    assert out.tolist() == [3, 2, 0, I32_MIN, 1, 1]
    (out,) = run(
        elementwise("%r = math.ipowi %x, %y : i32", ["i32", "i32"], "i32"), x, y
    )
    assert out.tolist() == [9, 1024, 1, I32_MIN, 1, -1]
    f = np.array([1.5, -2.0], np.float32)
    e = np.array([2, -1], np.int32)
    (out,) = run(
        elementwise("%r = math.fpowi %x, %y : f32, i32", ["f32", "i32"], "f32"), f, e
    )
    np.testing.assert_allclose(out, [2.25, -0.5])


def test_tc_builtins() -> None:
    x = np.array([0.5, -1.0, 3.0, np.nan, 7.5, np.inf], np.float32)
    y = np.array([2.0, -3.0, 4.0, 1.0, 2.0, np.inf], np.float32)
    cases = [
        ('"erfc"(%x) : (f32) -> f32', [math.erfc(float(v)) for v in x]),
        ('"exp10"(%x) : (f32) -> f32', [10.0 ** float(v) for v in x]),
        ('"hypot"(%x, %y) : (f32, f32) -> f32', np.hypot(x, y)),
        ('"fdim"(%x, %y) : (f32, f32) -> f32', [0.0, 2.0, 0.0, np.nan, 5.5, 0.0]),
        ('"fmod"(%x, %y) : (f32, f32) -> f32', [0.5, -1.0, 3.0, np.nan, 1.5, np.nan]),
    ]
    for sig, expected in cases:
        text = elementwise(f"%r = tc.builtin {sig}", ["f32", "f32"], "f32")
        (out,) = run(text, x, y)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, np.array(expected, np.float32), rtol=1e-6)


def test_float16_values() -> None:
    text = elementwise("%r = arith.addf %x, %y : f16", ["f16", "f16"], "f16")
    x = np.array([1.0, 2048.0], np.float16)
    y = np.array([0.5, 1.0], np.float16)
    (out,) = run(text, x, y)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, x + y)


def test_size_and_index_arithmetic() -> None:
    # O(i) = X(N - 1 - i) * 10 + N: a reversal read through index arithmetic.
    text = elementwise(
        """
        %n = tc.size "N"
        %one = arith.constant 1 : index
        %n1 = arith.subi %n, %one : index
        %j = arith.subi %n1, %i : index
        %xr = tc.read %X[%j] : !tc.tensor<[N], i32>
        %ten = arith.constant 10 : i32
        %a = arith.muli %xr, %ten : i32
        %ni = arith.index_cast %n : index to i32
        %r = arith.addi %a, %ni : i32
        """,
        ["i32"],
        "i32",
    )
    x = np.arange(5, dtype=np.int32)
    assert run(text, x)[0].tolist() == [45, 35, 25, 15, 5]


def test_unsupported_op() -> None:
    text = elementwise("%r = math.ctpop %x : i32", ["i32"], "i32")
    with pytest.raises(
        TCError, match=r"reference interpreter: unsupported op 'math.ctpop'"
    ):
        run(text, np.array([1], np.int32))


# ------------------------------------------------- comprehension semantics

REDUCE = """
tc.def @f<N, K>(X, Y) -> (O) {{
^bb0(%X : !tc.tensor<[N], {t}>, %Y : !tc.tensor<[N, K], {t}>):
  %O0 = tc.comprehension @O(%i in [0, N)) "=" : !tc.tensor<[N], {t}> {{
    %x = tc.read %X[%i] : !tc.tensor<[N], {t}>
    tc.yield %x : {s}
  }}
  %O = tc.comprehension @O(%i in [0, N)) "{op}" (%k in [0, K)) {into} : !tc.tensor<[N], {t}> {{
    %y = tc.read %Y[%i, %k] : !tc.tensor<[N, K], {t}>
    tc.yield %y : {s}
  }}
  tc.return %O : !tc.tensor<[N], {t}>
}}
"""

NP_REDUCE = {"+": np.add, "*": np.multiply, "min": np.minimum, "max": np.maximum}


def _identity(kind: str, dt: np.dtype[Any]) -> Any:
    if kind == "+":
        return 0
    if kind == "*":
        return 1
    if dt.kind == "f":
        return np.inf if kind == "min" else -np.inf
    info = np.iinfo(dt)
    return info.max if kind == "min" else info.min


@pytest.mark.parametrize("kind", ["+", "*", "min", "max"])
@pytest.mark.parametrize("bang", [True, False])
@pytest.mark.parametrize(
    ("t", "dtype"), [("f32", np.float32), ("i32", np.int32), ("ui8", np.uint8)]
)
@pytest.mark.parametrize(("n", "k"), [(3, 4), (5, 1), (3, 0), (0, 4)])
def test_reductions(kind: str, bang: bool, t: str, dtype: Any, n: int, k: int) -> None:
    op = f"{kind}={'!' if bang else ''}"
    text = REDUCE.format(t=t, s=_signless(t), op=op, into="" if bang else "into %O0")
    rng = np.random.default_rng(7)
    if dtype == np.float32:
        x = rng.uniform(-2, 2, n).astype(dtype)
        y = rng.uniform(-2, 2, (n, k)).astype(dtype)
    else:
        x = rng.integers(0, 200, n).astype(dtype)
        y = rng.integers(0, 200, (n, k)).astype(dtype)
    (out,) = run(text, x, y)
    dt = np.dtype(dtype)
    assert out.dtype == dt
    assert out.shape == (n,)
    ufunc = NP_REDUCE[kind]
    start = np.full(n, _identity(kind, dt), dt) if bang else x
    with np.errstate(all="ignore"):
        expected = ufunc(
            start,
            ufunc.reduce(y, axis=1, dtype=dt, initial=_identity(kind, dt)),
            dtype=dt,
        )
    if dt.kind == "f":
        np.testing.assert_allclose(out, expected, rtol=1e-6)
    else:
        np.testing.assert_array_equal(out, expected)


def test_empty_reduction_gives_identity() -> None:
    for kind, want in [("+", 0.0), ("*", 1.0), ("min", np.inf), ("max", -np.inf)]:
        text = REDUCE.format(t="f32", s="f32", op=f"{kind}=!", into="")
        (out,) = run(text, np.zeros(2, np.float32), np.zeros((2, 0), np.float32))
        assert out.tolist() == [want, want]
    text = REDUCE.format(t="i32", s="i32", op="min=!", into="")
    (out,) = run(text, np.zeros(2, np.int32), np.zeros((2, 0), np.int32))
    assert out.tolist() == [I32_MAX] * 2


def test_unsigned_max_reduction_uses_unsigned_order() -> None:
    text = REDUCE.format(t="ui8", s="i8", op="max=!", into="")
    y = np.array([[100, 200, 3]], np.uint8)
    (out,) = run(text, np.zeros(1, np.uint8), y)
    assert out.tolist() == [200]


def test_integer_sum_wraps() -> None:
    text = REDUCE.format(t="i32", s="i32", op="+=!", into="")
    y = np.full((1, 3), I32_MAX, np.int32)
    (out,) = run(text, np.zeros(1, np.int32), y)
    assert out.tolist() == [wrap32(3 * I32_MAX)]


SUM0D = """
tc.def @sum<N>(X) -> (S) {
^bb0(%X : !tc.tensor<[N], f32>):
  %S = tc.comprehension @S() "+=!" (%r in [0, N)) : !tc.tensor<[], f32> {
    %x = tc.read %X[%r] : !tc.tensor<[N], f32>
    tc.yield %x : f32
  }
  tc.return %S : !tc.tensor<[], f32>
}
"""


def test_zero_dim_output() -> None:
    x = np.arange(10, dtype=np.float32)
    (out,) = run(SUM0D, x)
    assert isinstance(out, np.ndarray)
    assert out.shape == ()
    assert out.dtype == np.float32
    assert float(out) == 45.0
    (empty,) = run(SUM0D, np.zeros(0, np.float32))
    assert empty.shape == ()
    assert float(empty) == 0.0


ASSIGN_RANGES = """
tc.def @f<N, K>(X) -> (O, T) {
^bb0(%X : !tc.tensor<[N, K], f32>):
  %T = tc.comprehension @T(%i in [0, N)) "max=!" (%k in [1, K - 1)) : !tc.tensor<[N], f32> {
    %x = tc.read %X[%i, %k] : !tc.tensor<[N, K], f32>
    tc.yield %x : f32
  }
  %O = tc.comprehension @O(%i in [0, N), %j in [0, K - 2)) "=" : !tc.tensor<[N, K - 2], f32> {
    %one = arith.constant 1 : index
    %j1 = arith.addi %j, %one : index
    %x = tc.read %X[%i, %j1] : !tc.tensor<[N, K], f32>
    %t = tc.read %T[%i] : !tc.tensor<[N], f32>
    %r = arith.subf %x, %t : f32
    tc.yield %r : f32
  }
  tc.return %O, %T : !tc.tensor<[N, K - 2], f32>, !tc.tensor<[N], f32>
}
"""


@pytest.mark.parametrize(("n", "k"), [(3, 6), (4, 3), (2, 2), (0, 5), (3, 1)])
def test_assignment_and_non_zero_lower_bounds(n: int, k: int) -> None:
    x = np.random.default_rng(1).standard_normal((n, k)).astype(np.float32)
    out, t = run(ASSIGN_RANGES, x)
    inner = x[:, 1 : max(k - 1, 1)]
    want_t = inner.max(axis=1, initial=-np.inf)
    np.testing.assert_array_equal(t, want_t)
    assert out.shape == (n, max(k - 2, 0))
    np.testing.assert_array_equal(out, inner - want_t[:, None])


REVERSE_IN_PLACE = """
tc.def @rev<N>(X) -> (A) {
^bb0(%X : !tc.tensor<[N], f32>):
  %A0 = tc.comprehension @A(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %x = tc.read %X[%i] : !tc.tensor<[N], f32>
    tc.yield %x : f32
  }
  %A = tc.comprehension @A(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %n = tc.size "N"
    %one = arith.constant 1 : index
    %n1 = arith.subi %n, %one : index
    %j = arith.subi %n1, %i : index
    %a = tc.read %A0[%j] : !tc.tensor<[N], f32>
    %b = tc.read %A0[%i] : !tc.tensor<[N], f32>
    %r = arith.subf %a, %b : f32
    tc.yield %r : f32
  }
  tc.return %A : !tc.tensor<[N], f32>
}
"""


def test_comprehension_reads_the_previous_value() -> None:
    x = np.arange(6, dtype=np.float32)
    before = x.copy()
    (out,) = run(REVERSE_IN_PLACE, x)
    np.testing.assert_array_equal(out, x[::-1] - x)
    np.testing.assert_array_equal(x, before)  # inputs are never mutated


COPY = """
tc.def @copy<M, N>(X) -> (O) {
^bb0(%X : !tc.tensor<[M, N], f64>):
  %O = tc.comprehension @O(%m in [0, M), %n in [0, N)) "=" : !tc.tensor<[M, N], f64> {
    %x = tc.read %X[%m, %n] : !tc.tensor<[M, N], f64>
    tc.yield %x : f64
  }
  tc.return %O : !tc.tensor<[M, N], f64>
}
"""


def test_result_is_fresh_and_non_contiguous_inputs_are_copied() -> None:
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    view = base.T  # non-contiguous
    (out,) = run(COPY, view)
    np.testing.assert_array_equal(out, view)
    assert not np.shares_memory(out, base)
    (out,) = run(COPY, base)
    assert not np.shares_memory(out, base)
    (empty,) = run(COPY, np.zeros((0, 3)))
    assert empty.shape == (0, 3)


MATMUL = """
tc.def @matmul<M, K, N>(A, B) -> (C) {
^bb0(%A : !tc.tensor<[M, K], f32>, %B : !tc.tensor<[K, N], f32>):
  %C = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%r_k in [0, K)) : !tc.tensor<[M, N], f32> {
    %0 = tc.read %A[%m, %r_k] : !tc.tensor<[M, K], f32>
    %1 = tc.read %B[%r_k, %n] : !tc.tensor<[K, N], f32>
    %2 = arith.mulf %0, %1 : f32
    tc.yield %2 : f32
  }
  tc.return %C : !tc.tensor<[M, N], f32>
}
"""


def test_chunked_evaluation_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 9)).astype(np.float32)
    b = rng.standard_normal((9, 5)).astype(np.float32)
    x = rng.standard_normal(37).astype(np.float32)
    whole = run(MATMUL, a, b)[0], run(SUM0D, x)[0], run(COPY, a.astype(np.float64))[0]
    for limit in (1, 5, 40, 100):
        monkeypatch.setattr(reference, "MAX_ELEMENTS", limit)
        np.testing.assert_allclose(run(MATMUL, a, b)[0], whole[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(run(SUM0D, x)[0], whole[1], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(run(COPY, a.astype(np.float64))[0], whole[2])
    np.testing.assert_allclose(whole[0], a @ b, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------ gathers, bounds

GATHER = """
tc.def @take<V, D, K>(E, Idx) -> (O) {
^bb0(%E : !tc.tensor<[V, D], f32>, %Idx : !tc.tensor<[K], i32>):
  %O = tc.comprehension @O(%k in [0, K), %d in [0, D)) "=" : !tc.tensor<[K, D], f32> {
    %i = tc.read %Idx[%k] : !tc.tensor<[K], i32>
    %ii = arith.index_cast %i : i32 to index
    %e = tc.read %E[%ii, %d] : !tc.tensor<[V, D], f32>
    tc.yield %e : f32
  }
  tc.return %O : !tc.tensor<[K, D], f32>
}
"""


def test_gather() -> None:
    e = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([4, 0, 2, 2], np.int32)
    (out,) = run(GATHER, e, idx)
    np.testing.assert_array_equal(out, e[idx])


@pytest.mark.parametrize(("bad", "value"), [(7, 7), (-1, -1), (5, 5)])
def test_gather_out_of_bounds(bad: int, value: int) -> None:
    e = np.zeros((5, 3), np.float32)
    idx = np.array([1, bad, 0], np.int32)
    with pytest.raises(TCError) as err:
        run(GATHER, e, idx)
    assert str(err.value).endswith(
        f"read of tensor 'E' out of bounds: subscript 0 is {value} but the extent "
        f"is 5 (Idx[1] = {value}; valid: 0 to 4) in the statement of 'O'"
    )


def test_gather_over_an_empty_space_reads_nothing() -> None:
    e = np.zeros((5, 0), np.float32)
    idx = np.array([7, -3], np.int32)
    (out,) = run(GATHER, e, idx)
    assert out.shape == (2, 0)
    (out,) = run(GATHER, np.zeros((0, 3), np.float32), np.zeros(0, np.int32))
    assert out.shape == (0, 3)


GATHER_TEMP = """
tc.def @g<N>(X, Idx) -> (O) {
^bb0(%X : !tc.tensor<[N], f32>, %Idx : !tc.tensor<[N], i64>):
  %T = tc.comprehension @tmp(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %x = tc.read %X[%i] : !tc.tensor<[N], f32>
    tc.yield %x : f32
  }
  %O = tc.comprehension @O(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %j = tc.read %Idx[%i] : !tc.tensor<[N], i64>
    %jj = arith.index_cast %j : i64 to index
    %t = tc.read %T[%jj] : !tc.tensor<[N], f32>
    tc.yield %t : f32
  }
  tc.return %O : !tc.tensor<[N], f32>
}
"""


def test_out_of_bounds_read_of_a_temporary_names_its_target() -> None:
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(
        TCError, match="read of tensor 'tmp' out of bounds: subscript 0 is 3"
    ):
        run(GATHER_TEMP, x, np.array([0, 1, 3], np.int64))
    (out,) = run(GATHER_TEMP, x, np.array([2, 2, 0], np.int64))
    assert out.tolist() == [2.0, 2.0, 0.0]


# ------------------------------------------------------------ bind_sizes

SIG = """
tc.def @f<M, N>(A, B, s) -> (O) {
^bb0(%A : !tc.tensor<[M, N], f32>, %B : !tc.tensor<[N, 3], f32>, %s : !tc.tensor<[], f32>):
  %O = tc.comprehension @O(%m in [0, M)) "+=!" (%n in [0, N)) : !tc.tensor<[M], f32> {
    %zero = arith.constant 0 : index
    %a = tc.read %A[%m, %n] : !tc.tensor<[M, N], f32>
    %b = tc.read %B[%n, %zero] : !tc.tensor<[N, 3], f32>
    %c = tc.read %s[] : !tc.tensor<[], f32>
    %p = arith.mulf %a, %b : f32
    %r = arith.mulf %p, %c : f32
    tc.yield %r : f32
  }
  tc.return %O : !tc.tensor<[M], f32>
}
"""


def _sig_def() -> DefOp:
    return reference.find_def(parse(SIG))


def f32(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


def test_bind_sizes_and_run_with_a_python_scalar() -> None:
    d = _sig_def()
    assert reference.bind_sizes(d, [f32(2, 4), f32(4, 3), 2.0]) == {"M": 2, "N": 4}
    (out,) = reference.run(d, None, [f32(2, 4), f32(4, 3), 2])
    assert out.tolist() == [8.0, 8.0]
    (out,) = reference.run(d, "f", [f32(2, 4), f32(4, 3), np.float32(0.5)])
    assert out.tolist() == [2.0, 2.0]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([f32(2, 4), f32(4, 3)], r"@f expects 3 inputs \(A, B, s\) but got 2"),
        (
            [f32(2, 4, 1), f32(4, 3), 1.0],
            r"input 'A' \(argument 0\) of @f: expected 2 dimensions but got 3",
        ),
        (
            [f32(2, 4), np.ones((4, 3)), 1.0],
            r"input 'B' \(argument 1\) of @f: expected float32 but got float64",
        ),
        (
            [f32(2, 4), f32(4, 3), np.int32(1)],
            r"input 's' \(argument 2\) of @f: expected float32 but got int32",
        ),
        (
            [f32(2, 4), f32(5, 3), 1.0],
            r"size N: input 'A' dimension 1 is 4 but input 'B' dimension 0 is 5",
        ),
        (
            [f32(2, 4), f32(4, 2), 1.0],
            r"input 'B' \(argument 1\) of @f: dimension 1 must be 3 but is 2",
        ),
        (
            [1.0, f32(4, 3), 1.0],
            r"input 'A' \(argument 0\) of @f: expected 2 dimensions but got a Python scalar",
        ),
        (
            [[[1.0]], f32(4, 3), 1.0],
            r"input 'A' \(argument 0\) of @f: expected a NumPy array but got list",
        ),
        (
            [f32(2, 4), f32(4, 3), f32(1)],
            r"input 's' \(argument 2\) of @f: expected 0 dimensions but got 1",
        ),
    ],
)
def test_bind_sizes_errors(inputs: list[Any], message: str) -> None:
    d = _sig_def()
    with pytest.raises(TCError, match=message):
        reference.bind_sizes(d, inputs)
    with pytest.raises(TCError, match=message):
        reference.run(d, None, inputs)


SCALARS = """
tc.def @s<>(b, i, u) -> (O) {
^bb0(%b : !tc.tensor<[], i1>, %i : !tc.tensor<[], i32>, %u : !tc.tensor<[], ui8>):
  %O = tc.comprehension @O() "=" : !tc.tensor<[], i32> {
    %x = tc.read %i[] : !tc.tensor<[], i32>
    %y = tc.read %u[] : !tc.tensor<[], ui8>
    %yy = arith.extui %y : i8 to i32
    %c = tc.read %b[] : !tc.tensor<[], i1>
    %s = arith.addi %x, %yy : i32
    %r = arith.select %c, %s, %x : i32
    tc.yield %r : i32
  }
  tc.return %O : !tc.tensor<[], i32>
}
"""


def test_python_scalars_are_converted_to_the_declared_type() -> None:
    (out,) = run(SCALARS, True, 3, 250)
    assert out.shape == ()
    assert out.dtype == np.int32
    assert int(out) == 253
    (out,) = run(SCALARS, False, -3, 250)
    assert int(out) == -3
    with pytest.raises(
        TCError, match=r"input 'u' \(argument 2\) of @s: 256 does not fit in uint8"
    ):
        run(SCALARS, True, 3, 256)
    with pytest.raises(
        TCError,
        match=r"input 'i' \(argument 1\) of @s: expected int32 but got a Python float",
    ):
        run(SCALARS, True, 3.5, 1)
    with pytest.raises(
        TCError,
        match=r"input 'b' \(argument 0\) of @s: expected bool but got a Python int",
    ):
        run(SCALARS, 1, 3, 1)


EXPR_EXTENTS = """
tc.def @e<N>(A, B) -> (O) {
^bb0(%A : !tc.tensor<[2 * N], f32>, %B : !tc.tensor<[N + 1], f32>):
  %O = tc.comprehension @O(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %two = arith.constant 2 : index
    %j = arith.muli %i, %two : index
    %a = tc.read %A[%j] : !tc.tensor<[2 * N], f32>
    %b = tc.read %B[%i] : !tc.tensor<[N + 1], f32>
    %r = arith.addf %a, %b : f32
    tc.yield %r : f32
  }
  tc.return %O : !tc.tensor<[N], f32>
}
"""


def test_expression_extents_are_solved_and_checked() -> None:
    a = np.arange(6, dtype=np.float32)
    b = np.arange(4, dtype=np.float32)
    d = reference.find_def(parse(EXPR_EXTENTS))
    assert reference.bind_sizes(d, [a, b]) == {"N": 3}
    assert run(EXPR_EXTENTS, a, b)[0].tolist() == [0.0, 3.0, 6.0]
    with pytest.raises(
        TCError,
        match=r"input 'B' \(argument 1\) of @e: .*'N \+ 1' is 5 but 'N \+ 1' is 4",
    ):
        run(EXPR_EXTENTS, a, np.zeros(5, np.float32))
    with pytest.raises(TCError, match=r"input 'A' \(argument 0\) of @e"):
        run(EXPR_EXTENTS, np.zeros(5, np.float32), b)


def test_entry_selection() -> None:
    two = parse(MATMUL + SUM0D)
    with pytest.raises(TCError, match=r"several definitions \(@matmul, @sum\)"):
        reference.run(two, None, [])
    with pytest.raises(
        TCError, match=r"no definition named @nope; available: @matmul, @sum"
    ):
        reference.run(two, "nope", [])
    (out,) = reference.run(two, "sum", [np.ones(4, np.float32)])
    assert float(out) == 4.0
