"""16-bit floats (`float16`, `bfloat16`) in the frontend, the reference interpreter
and the `tcdialect.bfloat16` helpers (docs/language-notes.md, "16-bit floats").

Types and promotion through `analyze`; the lowering through the tc-dialect
IR the frontend prints; the semantics (one rounding per elementwise op,
builtins in float32, float32 accumulation of reductions) through
`reference.run` against NumPy float16 / hand-rounded bfloat16 expectations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tcdialect import reference
from tcdialect.bfloat16 import from_bfloat16, round_to_bfloat16, to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.frontend import analyze, parse_tc
from tcdialect.frontend.sema import converts_implicitly, promote

Arr = np.ndarray[Any, Any]


def run(source: str, *inputs: Any) -> tuple[Arr, ...]:
    return reference.run(parse_tc(source), None, list(inputs))


def output_types(source: str) -> list[str | None]:
    return [t.elem for t in analyze(source, "f16.tc").defs[0].outputs]


# ------------------------------------------------------------------- bfloat16


def test_bfloat16_bit_patterns() -> None:
    x = np.array([1.0, -2.5, 0.1, 3.4e38, 1.0e-40, np.inf, -np.inf], np.float32)
    bits = to_bfloat16(x)
    assert bits.dtype == np.uint16
    # 0.1 = 0x3DCCCCCD rounds up; 3.4e38 overflows to infinity
    assert bits.tolist() == [0x3F80, 0xC020, 0x3DCD, 0x7F80, 0x0001, 0x7F80, 0xFF80]
    assert from_bfloat16(bits).dtype == np.float32
    assert from_bfloat16(np.array([0x3F80, 0xC020], np.uint16)).tolist() == [1.0, -2.5]


def test_bfloat16_rounds_ties_to_even_and_keeps_nans() -> None:
    # 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8
    # halfway between 1 + 2^-7 and 1 + 2^-6: to even (1 + 2^-6).
    ties = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-20], np.float32)
    assert to_bfloat16(ties).tolist() == [0x3F80, 0x3F82, 0x3F81]
    nans = np.array([0x7FC00001, 0xFF800001, 0x7FFFFFFF], np.uint32).view(np.float32)
    out = to_bfloat16(nans)
    assert np.isnan(from_bfloat16(out)).all()
    assert (out >> 15).tolist() == [0, 1, 0]  # signs kept
    assert round_to_bfloat16(np.float32(0.1)) == np.float32(0.10009765625)


def test_from_bfloat16_refuses_other_dtypes() -> None:
    with pytest.raises(TypeError, match="must be uint16"):
        from_bfloat16(np.zeros(3, np.float32))


# -------------------------------------------------------------------- types


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("float16", "float16", "float16"),
        ("bfloat16", "bfloat16", "bfloat16"),
        ("float16", "float32", "float32"),
        ("bfloat16", "float32", "float32"),
        ("bfloat16", "float64", "float64"),
        ("float16", "bfloat16", "float32"),
        ("int32", "float16", "float16"),
        ("bool", "bfloat16", "bfloat16"),
    ],
)
def test_promotion_of_16_bit_floats(a: str, b: str, result: str) -> None:
    assert promote(a, b) == result
    assert promote(b, a) == result


def test_implicit_conversions_only_widen() -> None:
    assert converts_implicitly("float16", "float32")
    assert converts_implicitly("bfloat16", "float64")
    assert converts_implicitly("int32", "bfloat16")
    assert not converts_implicitly("float32", "float16")
    assert not converts_implicitly("float16", "bfloat16")
    assert not converts_implicitly("bfloat16", "float16")


def test_literals_adapt_to_16_bit_operands() -> None:
    src = """
    def f(float16(N) H, bfloat16(N) B, float(N) F) -> (A, M, C, T, P, W, L, I) {
        A(i) = H(i) * 0.5 + -1.5
        M(i) = max(B(i), 0.0)
        C(i) = H(i) > 1.5 ? 1.0 : 0.0
        T(i) = B(i) > 0.0 ? B(i) : -2.0
        P(i) = pow(H(i), 2.0) + pow(H(i), 3)
        W(i) = H(i) + F(i)
        L(i) = H(i) * k where k = 0.5
        I(i) = H(i) * i
    }
    """
    assert output_types(src) == [
        "float16",
        "bfloat16",
        "float32",  # both branches are literals: float32
        "bfloat16",
        "float16",
        "float32",
        "float32",  # a let is not a literal
        "float16",
    ]


def test_builtins_follow_their_float_arguments() -> None:
    src = """
    def f(float16(N) H, bfloat16(N) B, int32(N) K) -> (E, S, X, Y, Z) {
        E(i) = exp(H(i))
        S(i) = sqrt(B(i))
        X(i) = fmax(H(i), B(i))
        Y(i) = pow(H(i), K(i))
        Z(i) = exp(1.0) * 2.0 + fmin(K(i), 2.5)
    }
    """
    assert output_types(src) == ["float16", "bfloat16", "float32", "float32", "float32"]


def test_annotations_casts_and_scalar_parameters() -> None:
    src = """
    def f(float(N) X, bfloat16 s, float16 h) -> (float16 A, bfloat16 B, float C) {
        A(i) = float16(X(i)) * h
        B(i) = bfloat16(X(i)) * s + 1.0
        C(i) = X(i) + s + h
    }
    """
    assert output_types(src) == ["float16", "bfloat16", "float32"]
    # a literal needs no cast into a 16-bit target, a float32 value does
    assert output_types("def g() -> (float16 Z) { Z = -0.25 }") == ["float16"]
    with pytest.raises(TCError, match="type float32 to 'A' of type float16"):
        analyze("def f(float(N) X) -> (float16 A) { A(i) = X(i) }")
    with pytest.raises(TCError, match="type float32 to 'B' of type bfloat16"):
        analyze(
            "def f(float16(N) X, bfloat16(N) Y) -> (bfloat16 B) { B(i) = X(i) + Y(i) }"
        )


def test_bfloat16_is_a_reserved_word() -> None:
    with pytest.raises(TCError):
        parse_tc("def f(float(N) bfloat16) -> (B) { B(i) = bfloat16(i) }")


# ------------------------------------------------------------------ lowering


def test_ir_of_16_bit_arithmetic_builtins_and_conversions() -> None:
    text = str(
        parse_tc(
            """
            def f(float16(N) H, bfloat16(N) B) -> (Y, Z, D) {
                Y(i) = exp(H(i)) * 0.5
                Z(i) = bfloat16(H(i)) + B(i) % 3.0
                D(i) = float64(B(i)) + int32(H(i))
            }
            """
        )
    )
    for line in (
        "!tc.tensor<[N], f16>",
        "!tc.tensor<[N], bf16>",
        "arith.extf %0 : f16 to f32",
        "math.exp %1 : f32",
        "arith.truncf %2 : f32 to f16",
        "arith.constant 5.000000e-01 : f16",
        "arith.mulf %3, %4 : f16",
        # float16 -> bfloat16 and integers go through float32
        "arith.truncf %7 : f32 to bf16",
        'tc.builtin "fmod"(%11, %12) : (f32, f32) -> f32',
        "arith.addf %8, %14 : bf16",
        "arith.extf %17 : f32 to f64",
        "arith.fptosi %20 : f32 to i32",
    ):
        assert line in text, line


# -------------------------------------------------------------- reference


def test_each_float16_op_rounds() -> None:
    # float16 values in [1024, 2048) are integers: rounding after the '+'
    # makes (x + 1024) - 1024 an integer.
    x = np.array([0.3, 0.2, 0.7, -0.3], np.float16)
    (y,) = run("def f(float16(N) X) -> (Y) { Y(i) = (X(i) + 1024.0) - 1024.0 }", x)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, (x + np.float16(1024)) - np.float16(1024))


def test_each_bfloat16_op_rounds() -> None:
    # bfloat16 values in [256, 512) are even integers
    x = to_bfloat16(np.array([0.3, 1.0 / 3.0, -7.1], np.float32))
    (y,) = run("def f(bfloat16(N) X) -> (Y) { Y(i) = (X(i) + 256.0) - 256.0 }", x)
    assert y.dtype == np.uint16
    xf = from_bfloat16(x)
    want = round_to_bfloat16(round_to_bfloat16(xf + np.float32(256)) - np.float32(256))
    np.testing.assert_array_equal(from_bfloat16(y), want)


def test_builtins_on_16_bit_values_compute_in_float32_and_round_once() -> None:
    h = np.array([0.1, 1.7, -3.3, 9.0], np.float16)
    (e,) = run("def f(float16(N) H) -> (E) { E(i) = exp(H(i)) }", h)
    np.testing.assert_array_equal(e, np.exp(h.astype(np.float32)).astype(np.float16))
    b = to_bfloat16(np.array([0.1, 1.7, -3.3, 9.0], np.float32))
    (t,) = run("def f(bfloat16(N) B) -> (T) { T(i) = tanh(B(i)) }", b)
    want = to_bfloat16(np.tanh(from_bfloat16(b)))
    np.testing.assert_array_equal(t, want)


def test_float16_reductions_accumulate_in_float32() -> None:
    # 4096 ones: a float16 accumulator stops at 2048 (2048 + 1 rounds back).
    ones = np.ones(4096, np.float16)
    (s,) = run("def f(float16(N) X) -> (S) { S +=! X(r) }", ones)
    assert s.dtype == np.float16 and s == 4096
    # the start value of '+=' is extended too, and the product (one op) rounds
    x = np.full((2, 3000), 0.5, np.float16)
    (s,) = run(
        """
        def f(float16(N, R) X) -> (S) {
            S(n) = X(n, 0) * 4096.0
            S(n) += X(n, r) * X(n, r)
        }
        """,
        x,
    )
    np.testing.assert_array_equal(s, np.full(2, 2048 + 750, np.float16))


def test_bfloat16_reductions_accumulate_in_float32() -> None:
    # 1000 ones: a bfloat16 accumulator stops at 256 (257 needs 9 bits).
    ones = to_bfloat16(np.ones(1000, np.float32))
    (s, m, p) = run(
        """
        def f(bfloat16(N) X) -> (S, M, P) {
            S +=! X(r)
            M max=! X(r) * -1.0
            P *=! X(r) * 1.5 where r in 0:20
        }
        """,
        ones,
    )
    assert from_bfloat16(s) == 1000.0
    assert from_bfloat16(m) == -1.0
    assert from_bfloat16(p) == from_bfloat16(to_bfloat16(np.float32(1.5) ** 20))


def test_empty_16_bit_reductions_give_the_identity() -> None:
    (s, m) = run(
        "def f(bfloat16(N) X) -> (S, M) { S +=! X(r)\n M min=! X(r) }",
        np.zeros(0, np.uint16),
    )
    assert from_bfloat16(s) == 0.0 and from_bfloat16(m) == np.inf


def test_conversions_to_16_bit_floats() -> None:
    x = np.array([70000.0, 65504.0, 1e-8, -2.5, np.nan], np.float32)
    (h, b, i) = run(
        """
        def f(float(N) X) -> (H, B, I) {
            H(i) = float16(X(i))
            B(i) = bfloat16(float64(X(i)) * 3.0)
            I(i) = int32(float16(X(i) * 0.0 + 2.75))
        }
        """,
        x,
    )
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, x.astype(np.float16))  # 70000: inf
    want = to_bfloat16((x.astype(np.float64) * 3.0).astype(np.float32))
    np.testing.assert_array_equal(from_bfloat16(b), from_bfloat16(want))
    assert i[:4].tolist() == [2, 2, 2, 2]


# ---------------------------------------------------------------- calling


def test_bfloat16_inputs_are_uint16_bit_patterns() -> None:
    src = "def f(bfloat16(N) X, bfloat16 s) -> (Y) { Y(i) = X(i) * s }"
    x = to_bfloat16(np.array([1.0, -2.0, 3.5], np.float32))
    (y,) = run(src, x, 0.5)  # a Python scalar is converted
    assert from_bfloat16(y).tolist() == [0.5, -1.0, 1.75]
    (y,) = run(src, x, to_bfloat16(np.float32(2.0)))
    assert from_bfloat16(y).tolist() == [2.0, -4.0, 7.0]
    with pytest.raises(
        TCError,
        match=r"input 'X' \(argument 0\) of @f: expected bfloat16 \(an ml_dtypes"
        r"\.bfloat16 array, or a uint16 array of bit patterns, see tcdialect.bfloat16\) "
        r"but got float32",
    ):
        run(src, from_bfloat16(x), 0.5)
    with pytest.raises(TCError, match=r"input 's' \(argument 1\) of @f: expected bf"):
        run(src, x, np.float32(0.5))


def test_float16_inputs_must_be_float16() -> None:
    src = "def f(float16(N) X) -> (Y) { Y(i) = X(i) }"
    with pytest.raises(
        TCError,
        match=r"input 'X' \(argument 0\) of @f: expected float16 but got float32",
    ):
        run(src, np.zeros(3, np.float32))
