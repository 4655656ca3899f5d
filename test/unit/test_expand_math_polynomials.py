"""`expand-math-polynomials`: accuracy and special cases of every expansion, run.

Each expanded op is applied elementwise by a loop function (`memref<?xf32>`
in, `memref<?xf32>` out), lowered with the `llvm` stage passes and JIT-compiled
by `tcdialect.backend.cpu` (O3, host CPU: the loops vectorise). The results are
compared with float64 NumPy (or `math.erf`/`math.erfc`) in f32 ulps of the
exact value (a subnormal result's ulp is 2^-149; +-inf counts as +-2^128), on

* the whole f32 range: every 4099th bit pattern (subnormals, both signs,
  infinities and NaNs included), and
* 2^20 random values in the op's interesting range,

and must stay within the bound `MAX_ULP` documents. Special values (+-0,
+-inf, NaN, domain edges) must come out exactly. The integer-mask form of
conditions (`mask_selects`, what vectors use) must give bit-identical results.
"""

from __future__ import annotations

import ctypes
import math
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

from tcdialect.backend.cpu.jit import CpuModule, compile_cpu
from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass
from tcdialect.pipeline import make_context
from tcdialect.testing.builtin_ulp import CALLS as BUILTIN_CALLS
from tcdialect.transforms.expand_math_polynomials import (
    EXPANDED_CALLS,
    EXPANDED_OPS,
    MAX_ULP,
    ExpandMathPolynomialsPass,
)

F32 = np.float32
INF, NAN = math.inf, math.nan
PIO2 = float(F32(math.pi / 2))
_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _ref_erf(x: np.ndarray) -> np.ndarray:
    return _erf(x).astype(np.float64)


def _ref_erfc(x: np.ndarray) -> np.ndarray:
    return _erfc(x).astype(np.float64)


# op → (float64 reference, range of the random sample)
UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = {
    "math.exp": (np.exp, (-104.0, 89.0)),
    "math.exp2": (np.exp2, (-151.0, 129.0)),
    "math.expm1": (np.expm1, (-3.0, 3.0)),
    "exp10f": (lambda x: np.power(10.0, x), (-46.0, 39.0)),
    "math.log": (np.log, (0.0, 4.0)),
    "math.log2": (np.log2, (0.0, 4.0)),
    "math.log10": (np.log10, (0.0, 4.0)),
    "math.log1p": (np.log1p, (-1.0, 3.0)),
    "math.sinh": (np.sinh, (-12.0, 12.0)),
    "math.cosh": (np.cosh, (-12.0, 12.0)),
    "math.tanh": (np.tanh, (-5.0, 5.0)),
    "math.asinh": (np.arcsinh, (-5.0, 5.0)),
    "math.acosh": (np.arccosh, (1.0, 5.0)),
    "math.atanh": (np.arctanh, (-1.0, 1.0)),
    "math.erf": (_ref_erf, (-5.0, 5.0)),
    "erfcf": (_ref_erfc, (-5.0, 11.0)),
    "math.sin": (np.sin, (-10.0, 10.0)),
    "math.cos": (np.cos, (-10.0, 10.0)),
    "math.tan": (np.tan, (-10.0, 10.0)),
    "math.asin": (np.arcsin, (-1.0, 1.0)),
    "math.acos": (np.arccos, (-1.0, 1.0)),
    "math.atan": (np.arctan, (-5.0, 5.0)),
    "math.cbrt": (np.cbrt, (-10.0, 10.0)),
}
BINARY = {"hypotf": np.hypot, "math.atan2": np.arctan2}
TRIG = ("math.sin", "math.cos", "math.tan")
TRIG_ACCURATE = 102943.0  # |x| below: within MAX_ULP; see the pass docstring
TRIG_MAX = 6.5e6  # |x| above: NaN

# Special values: (inputs, exact result). -0.0 results must be -0.0.
SPECIAL: dict[str, list[tuple[tuple[float, ...], float]]] = {
    "math.exp": [
        ((0.0,), 1.0),
        ((-0.0,), 1.0),
        ((INF,), INF),
        ((-INF,), 0.0),
        ((NAN,), NAN),
        ((89.0,), INF),
        ((-104.0,), 0.0),
    ],
    "math.exp2": [
        ((0.0,), 1.0),
        ((INF,), INF),
        ((-INF,), 0.0),
        ((NAN,), NAN),
        ((10.0,), 1024.0),
        ((-149.0,), 2.0**-149),
        ((-151.0,), 0.0),
        ((128.0,), INF),
    ],
    "math.expm1": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), INF),
        ((-INF,), -1.0),
        ((NAN,), NAN),
        ((-30.0,), -1.0),
        ((1e-30,), 1e-30),
    ],
    "exp10f": [
        ((0.0,), 1.0),
        ((INF,), INF),
        ((-INF,), 0.0),
        ((NAN,), NAN),
        ((39.0,), INF),
        ((-46.0,), 0.0),
    ],
    "math.log": [
        ((1.0,), 0.0),
        ((0.0,), -INF),
        ((-0.0,), -INF),
        ((-1.0,), NAN),
        ((INF,), INF),
        ((-INF,), NAN),
        ((NAN,), NAN),
    ],
    "math.log2": [
        ((1.0,), 0.0),
        ((1024.0,), 10.0),
        ((2.0**-149,), -149.0),
        ((0.0,), -INF),
        ((-2.0,), NAN),
        ((INF,), INF),
        ((NAN,), NAN),
    ],
    "math.log10": [
        ((1.0,), 0.0),
        ((0.0,), -INF),
        ((-2.0,), NAN),
        ((INF,), INF),
        ((NAN,), NAN),
    ],
    "math.log1p": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((-1.0,), -INF),
        ((-2.0,), NAN),
        ((INF,), INF),
        ((-INF,), NAN),
        ((NAN,), NAN),
        ((1e-45,), 1e-45),
    ],
    "math.sinh": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), INF),
        ((-INF,), -INF),
        ((NAN,), NAN),
        ((90.0,), INF),
        ((1e-45,), 1e-45),
    ],
    "math.cosh": [
        ((0.0,), 1.0),
        ((-0.0,), 1.0),
        ((INF,), INF),
        ((-INF,), INF),
        ((NAN,), NAN),
        ((-90.0,), INF),
    ],
    "math.tanh": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), 1.0),
        ((-INF,), -1.0),
        ((NAN,), NAN),
        ((9.1,), 1.0),
        ((-20.0,), -1.0),
        ((1e-45,), 1e-45),
    ],
    "math.asinh": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), INF),
        ((-INF,), -INF),
        ((NAN,), NAN),
    ],
    "math.acosh": [
        ((1.0,), 0.0),
        ((0.5,), NAN),
        ((-INF,), NAN),
        ((INF,), INF),
        ((NAN,), NAN),
    ],
    "math.atanh": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((1.0,), INF),
        ((-1.0,), -INF),
        ((1.5,), NAN),
        ((-INF,), NAN),
        ((NAN,), NAN),
    ],
    "math.erf": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), 1.0),
        ((-INF,), -1.0),
        ((NAN,), NAN),
        ((4.0,), 1.0),
        ((-6.0,), -1.0),
        ((1e-45,), 1e-45),
    ],
    "erfcf": [
        ((0.0,), 1.0),
        ((-0.0,), 1.0),
        ((INF,), 0.0),
        ((-INF,), 2.0),
        ((NAN,), NAN),
        ((10.1,), 0.0),
        ((-5.0,), 2.0),
    ],
    "math.sin": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), NAN),
        ((-INF,), NAN),
        ((NAN,), NAN),
        ((1e-45,), 1e-45),
        ((1e7,), NAN),
    ],
    "math.cos": [
        ((0.0,), 1.0),
        ((-0.0,), 1.0),
        ((INF,), NAN),
        ((NAN,), NAN),
        ((-1e7,), NAN),
    ],
    "math.tan": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), NAN),
        ((NAN,), NAN),
        ((-1e-40,), -1e-40),
    ],
    "math.asin": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((1.0,), PIO2),
        ((-1.0,), -PIO2),
        ((1.5,), NAN),
        ((INF,), NAN),
        ((NAN,), NAN),
    ],
    "math.acos": [
        ((1.0,), 0.0),
        ((-1.0,), float(F32(math.pi))),
        ((0.0,), PIO2),
        ((-2.0,), NAN),
        ((NAN,), NAN),
    ],
    "math.atan": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), PIO2),
        ((-INF,), -PIO2),
        ((NAN,), NAN),
        ((1.0,), float(F32(math.pi / 4))),
    ],
    "math.cbrt": [
        ((0.0,), 0.0),
        ((-0.0,), -0.0),
        ((INF,), INF),
        ((-INF,), -INF),
        ((NAN,), NAN),
        ((8.0,), 2.0),
        ((-27.0,), -3.0),
        ((2.0**-147,), 2.0**-49),
    ],
    "math.atan2": [
        ((0.0, 0.0), 0.0),
        ((-0.0, 0.0), -0.0),
        ((0.0, -0.0), math.pi),
        ((-0.0, -0.0), -math.pi),
        ((-1.0, 0.0), -math.pi / 2),
        ((INF, 1.0), math.pi / 2),
        ((1.0, INF), 0.0),
        ((-1.0, -INF), -math.pi),
        ((INF, INF), math.pi / 4),
        ((INF, -INF), 3 * math.pi / 4),
        ((-INF, -INF), -3 * math.pi / 4),
        ((NAN, 0.0), NAN),
        ((1.0, NAN), NAN),
        ((3e38, 3e38), math.pi / 4),
    ],
    "hypotf": [
        ((3.0, 4.0), 5.0),
        ((0.0, 0.0), 0.0),
        ((-0.0, -0.0), 0.0),
        ((INF, NAN), INF),
        ((NAN, -INF), INF),
        ((NAN, 1.0), NAN),
        ((3e38, 3e38), INF),
        ((-5.0, 0.0), 5.0),
    ],
}

ALL_OPS = [*UNARY, *BINARY]


def _name(op: str) -> str:
    return "t_" + op.replace("math.", "").replace(".", "_")


def _loop(op: str, width: int) -> str:
    """A function applying `op` elementwise, Y(i) = op(X(i)[, Z(i)]), on f32
    (width 0) or `width` elements at a time as vector<width x f32>."""
    binary = op in BINARY
    t = f"vector<{width}xf32>" if width else "f32"
    load, store = (
        ("vector.load", "vector.store") if width else ("memref.load", "memref.store")
    )
    vt = f", {t}" if width else ""
    args = ["%X: memref<?xf32>"] + (["%Z: memref<?xf32>"] if binary else [])
    loads = [f"%x = {load} %X[%i] : memref<?xf32>{vt}"]
    if binary:
        loads.append(f"%z = {load} %Z[%i] : memref<?xf32>{vt}")
    operands = "%x, %z" if binary else "%x"
    types = f"{t}, {t}" if binary else t
    if op.startswith("math."):
        apply = f"%y = {op} {operands} : {t}"
    else:
        apply = f"%y = func.call @{op}({operands}) : ({types}) -> {t}"
    body = "\n      ".join(loads)
    return f"""
  func.func @{_name(op)}({", ".join(args)}, %Y: memref<?xf32>) {{
    %c0 = arith.constant 0 : index
    %step = arith.constant {max(width, 1)} : index
    %n = memref.dim %X, %c0 : memref<?xf32>
    scf.for %i = %c0 to %n step %step {{
      {body}
      {apply}
      {store} %y, %Y[%i] : memref<?xf32>{vt}
    }}
    func.return
  }}"""


def _module_text(width: int) -> str:
    t = f"vector<{width}xf32>" if width else "f32"
    decls = [
        f"  func.func private @{c}({', '.join([t] * (2 if c in BINARY else 1))}) -> {t}"
        for c in EXPANDED_CALLS
        if c in ALL_OPS
    ]
    loops = "".join(_loop(op, width) for op in ALL_OPS)
    return "builtin.module {\n" + "\n".join(decls) + loops + "\n}"


def _expanded(
    mask_selects: bool, width: int = 0, native_ldexp: bool = False
) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, _module_text(width)).parse_module()
    ExpandMathPolynomialsPass(
        mask_selects=mask_selects, native_ldexp=native_ldexp
    ).apply(ctx, module)
    module.verify()
    return module


def _compile(
    mask_selects: bool, width: int = 0, native_ldexp: bool = False
) -> CpuModule:
    ctx = make_context()
    module = _expanded(mask_selects, width, native_ldexp)
    for p in (ConvertScfToCf(), ConvertToLlvmPass()):
        p.apply(ctx, module)
    return compile_cpu(module)


class _Runner:
    def __init__(self, mask_selects: bool, width: int = 0, native_ldexp: bool = False):
        self.module = _compile(mask_selects, width, native_ldexp)
        self.width = width

    def __call__(self, op: str, *xs: Any) -> np.ndarray:
        arrays = [np.ascontiguousarray(np.asarray(x, F32).ravel()) for x in xs]
        n = arrays[0].size
        assert n % max(self.width, 1) == 0
        out = np.empty(n, F32)
        args: list[Any] = []
        for a in [*arrays, out]:
            args += [a.ctypes.data, n]
        argtypes = [ctypes.c_void_p, ctypes.c_int64] * (len(arrays) + 1)
        fn = ctypes.CFUNCTYPE(None, *argtypes)(self.module.address(_name(op)))
        fn(*args)
        return out


@pytest.fixture(scope="module")
def run() -> _Runner:
    return _Runner(mask_selects=False)


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in f32 ulps of `want` (float64); inf where exactly one is
    NaN, 0 where both are NaN or equal after rounding `want` to f32."""
    with np.errstate(over="ignore", invalid="ignore"):
        g = got.astype(np.float64)
        w = np.asarray(want, np.float64)
        w32 = w.astype(F32).astype(np.float64)
        gi = np.where(np.isinf(g), np.copysign(2.0**128, g), g)
        wi = np.where(np.isinf(w), np.copysign(2.0**128, w), w)
        expo = np.floor(np.log2(np.maximum(np.abs(wi), 2.0**-126)))
        err = np.abs(gi - wi) / 2.0 ** (expo - 23)
    err[(g == w) | (g == w32)] = 0.0
    err[np.isnan(g) & np.isnan(w)] = 0.0
    err[np.isnan(g) != np.isnan(w)] = np.inf
    return err


def _whole_range() -> np.ndarray:
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    return bits.view(F32)


def _check(op: str, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> float:
    err = ulp_error(got, want)
    i = int(np.argmax(err))
    assert err[i] <= MAX_ULP[op], (
        f"{op}({x[i]!r}) = {got[i]!r}, want {want[i]!r}: {err[i]:.2f} ulp"
    )
    return float(err[i])


def test_every_op_has_tests_and_a_bound() -> None:
    # the builtins' C functions (lgammaf ...): test_expand_math_builtins.py
    expanded = {*EXPANDED_OPS, *EXPANDED_CALLS}
    assert expanded == set(ALL_OPS) | set(BUILTIN_CALLS) == set(MAX_ULP)
    assert set(ALL_OPS) == set(SPECIAL)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_accuracy(run: _Runner, op: str) -> None:
    ref, (lo, hi) = UNARY[op]
    rng = np.random.default_rng(zlib.crc32(op.encode()))
    x = np.concatenate([_whole_range(), rng.uniform(lo, hi, 1 << 20).astype(F32)])
    if op in TRIG:  # the accurate domain; beyond it see test_trig_large
        x = x[~(np.abs(x) >= TRIG_ACCURATE)]
    got = run(op, x)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    _check(op, x, got, want)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_accuracy(run: _Runner, op: str) -> None:
    rng = np.random.default_rng(7)
    n = 1 << 20
    bits = rng.integers(0, 1 << 32, (2, n), dtype=np.uint64).astype(np.uint32)
    wide = bits.view(F32)
    near = rng.standard_normal((2, n)).astype(F32)  # similar magnitudes
    x, z = np.concatenate([wide, near], axis=1)
    got = run(op, x, z)
    with np.errstate(all="ignore"):
        want = BINARY[op](x.astype(np.float64), z.astype(np.float64))
    _check(op, x, got, want)


@pytest.mark.parametrize("op", ALL_OPS)
def test_special_values(run: _Runner, op: str) -> None:
    cases = SPECIAL[op]
    args = list(zip(*(c[0] for c in cases)))
    got = run(op, *args)
    for (xs, want), g in zip(cases, got):
        g, want = float(g), float(F32(want))
        if math.isnan(want):
            assert math.isnan(g), (op, xs, g)
        else:
            assert g == want and math.copysign(1, g) == math.copysign(1, want), (
                op,
                xs,
                g,
                want,
            )


@pytest.mark.parametrize("op", TRIG)
def test_trig_large_arguments(run: _Runner, op: str) -> None:
    # 102943 <= |x| <= 6.5e6: the reduction is off by at most about an ulp of
    # x (the result is that of a nearby argument); beyond: NaN.
    rng = np.random.default_rng(3)
    mag = np.exp(rng.uniform(np.log(TRIG_ACCURATE), np.log(TRIG_MAX), 1 << 16))
    x = (mag * rng.choice([-1.0, 1.0], mag.size)).astype(F32)
    xd = x.astype(np.float64)
    ulp_x = 2.0 ** (np.floor(np.log2(np.abs(xd))) - 23)
    got = run(op, x).astype(np.float64)
    want = UNARY[op][0](xd)
    if op == "math.tan":  # compare the angles: tan has poles
        d = np.arctan(got) - np.arctan(want)
        err = np.abs(d - np.pi * np.round(d / np.pi))
    else:  # |derivative| <= 1
        err = np.abs(got - want)
    assert (err <= ulp_x).all(), x[err > ulp_x][:5]
    big = np.float32([TRIG_MAX * 1.01, -1e10, 3e38])
    assert np.isnan(run(op, big)).all()


def _assert_same_bits(run: _Runner, other: _Runner, x: np.ndarray) -> None:
    """Every op gives the same bits under `run` and `other` (binary ops with
    `x` reversed as the second operand)."""
    for op in UNARY:
        a, b = run(op, x), other(op, x)
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32), op)
    z = x[::-1].copy()
    for op in BINARY:
        a, b = run(op, x, z), other(op, x, z)
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32), op)


def test_mask_selects_give_identical_results(run: _Runner) -> None:
    masked = _Runner(mask_selects=True)
    x = np.concatenate(
        [
            _whole_range()[::4],
            np.float32([0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, 1e-45]),
        ]
    )
    _assert_same_bits(run, masked, x)


def test_vector_operands_give_the_scalar_results(run: _Runner) -> None:
    # vector<8xf32> operands (integer-mask conditions), loaded and stored with
    # vector.load/store: bit for bit the scalar results.
    vec = _Runner(mask_selects=False, width=8)
    x = np.concatenate(
        [
            _whole_range()[: 1 << 18],
            np.float32([0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5]),
        ]
    )
    _assert_same_bits(run, vec, x)


def test_native_ldexp_gives_identical_results(run: _Runner) -> None:
    # llvm.ldexp (one vscalef on AVX-512; a C library call elsewhere) rounds
    # p * 2^n once, as the two exponent-bit factors do: the same bits, scalar
    # and vector<8xf32>.
    x = np.concatenate(
        [
            _whole_range()[: 1 << 18],
            np.float32([0.0, -0.0, INF, -INF, NAN, 88.7, 89.0, -87.5, -103.9]),
        ]
    )
    x = x[: x.size // 8 * 8]
    for native in (_Runner(False, 0, True), _Runner(False, 8, True)):
        _assert_same_bits(run, native, x)


def test_no_call_or_math_op_is_left() -> None:
    module = _expanded(mask_selects=False)
    names = {op.name for op in module.walk()}
    assert not {n for n in names if n.startswith("math.")} - {
        "math.absf",
        "math.copysign",
        "math.sqrt",
    }
    assert "func.call" not in names
    # the C function declarations are gone with their last call
    assert not [
        f
        for f in module.body.block.ops
        if f.name == "func.func" and not f.regions[0].blocks
    ]
