"""`expand-math-polynomials` on the builtins' C functions (`lgammaf` ...), run.

The f32 C functions of the TC builtins that `expand-math-polynomials`
expands (`tcdialect.testing.builtin_ulp.CALLS`: the ones without a C library
function, and erfinv, normcdf and lgamma, which must vectorise) are applied
elementwise by JIT-compiled loops and compared with the float64 reference
(`tcdialect.special_functions`) in f32 ulps: on every 131 thousandth f32 bit
pattern plus 2^15 random values in the function's range
(`builtin_ulp.SAMPLES`; the ulp table of docs/builtins.md is the same
measurement, 32 times larger), within `MAX_ULP`. lgamma is checked in ulps for x >= -1/4 and, below (the
reflection, whose zeros cancel), to 2e-6 absolutely or 10 ulps. Special values
come out exactly; vector<8xf32> operands give the scalar results bit for bit
(`VECTOR`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tcdialect.testing.builtin_ulp import (
    CALLS,
    Loops,
    lgamma_negative,
    measure,
    reference,
    sample,
    ulp_error,
)
from tcdialect.transforms.expand_math_polynomials import EXPANDED_CALLS, MAX_ULP

F32 = np.float32
INF, NAN = math.inf, math.nan
SCALE = 1 / 32
#: the calls also run on vector<8xf32> operands (the models' builtins, and one
#: per algorithm family of the others)
VECTOR = (
    "erfinvf",
    "normcdff",
    "lgammaf",
    "cospif",
    "erfcxf",
    "cyl_bessel_i1f",
    "rnorm4df",
)

# (inputs, exact result); a -0.0 result must be -0.0
SPECIAL: dict[str, list[tuple[tuple[float, ...], float]]] = {
    "cospif": [((0.0,), 1.0), ((1.0,), -1.0), ((2.5,), 0.0), ((2.0**24,), 1.0),
               ((2.0**23 + 1,), -1.0), ((-3.0,), -1.0), ((INF,), NAN), ((NAN,), NAN)],
    "sinpif": [((0.0,), 0.0), ((-0.0,), -0.0), ((0.5,), 1.0), ((-1.5,), 1.0),
               ((0.25,), math.sqrt(0.5)), ((2.0**22 + 0.5,), 1.0), ((-INF,), NAN),
               ((NAN,), NAN)],
    "lgammaf": [((1.0,), 0.0), ((2.0,), 0.0), ((0.0,), INF), ((-0.0,), INF),
                ((-1.0,), INF), ((-2.0**23,), INF), ((INF,), INF), ((-INF,), INF),
                ((NAN,), NAN), ((5e36,), INF)],
    "erfinvf": [((0.0,), 0.0), ((-0.0,), -0.0), ((1.0,), INF), ((-1.0,), -INF),
                ((1.5,), NAN), ((NAN,), NAN)],
    "erfcinvf": [((1.0,), 0.0), ((0.0,), INF), ((2.0,), -INF), ((-0.5,), NAN),
                 ((2.5,), NAN), ((NAN,), NAN)],
    "normcdfinvf": [((0.5,), 0.0), ((0.0,), -INF), ((1.0,), INF), ((1.5,), NAN),
                    ((NAN,), NAN)],
    "erfcxf": [((0.0,), 1.0), ((INF,), 0.0), ((-INF,), INF), ((-10.0,), INF),
               ((NAN,), NAN)],
    "normcdff": [((0.0,), 0.5), ((INF,), 1.0), ((-INF,), 0.0), ((20.0,), 1.0),
                 ((-20.0,), 0.0), ((NAN,), NAN)],
    "cyl_bessel_i0f": [((0.0,), 1.0), ((INF,), INF), ((-INF,), INF), ((92.0,), INF),
                       ((NAN,), NAN)],
    "cyl_bessel_i1f": [((0.0,), 0.0), ((-0.0,), -0.0), ((INF,), INF),
                       ((-INF,), -INF), ((-92.0,), -INF), ((NAN,), NAN)],
    "rcbrtf": [((8.0,), 0.5), ((0.0,), INF), ((-0.0,), -INF), ((INF,), 0.0),
               ((NAN,), NAN)],
    "rhypotf": [((3.0, 4.0), 0.2), ((0.0, 0.0), INF), ((INF, NAN), 0.0),
                ((3e38, 3e38), 1 / (3e38 * math.sqrt(2)))],
    "norm3df": [((2.0, 3.0, 6.0), 7.0), ((0.0, -0.0, 0.0), 0.0),
                ((NAN, -INF, 1.0), INF), ((NAN, 1.0, 1.0), NAN), ((3e38, 3e38, 0.0), INF),
                ((1e-45, 0.0, 0.0), 1e-45)],
    "norm4df": [((1.0, 1.0, 1.0, 1.0), 2.0), ((NAN, 1.0, INF, 1.0), INF),
                ((0.0, 0.0, 0.0, 0.0), 0.0)],
    "rnorm3df": [((2.0, 3.0, 6.0), 1 / 7), ((0.0, 0.0, 0.0), INF), ((1.0, INF, NAN), 0.0)],
    "rnorm4df": [((1.0, 1.0, 1.0, 1.0), 0.5), ((0.0, 0.0, 0.0, 0.0), INF),
                 ((-2e38, 2e38, 2e38, 2e38), 2.5e-39)],
}  # fmt: skip


@pytest.fixture(scope="module")
def loops() -> Loops:
    return Loops(list(CALLS))


def test_every_builtin_call_has_tests_and_a_bound() -> None:
    assert set(CALLS) <= set(EXPANDED_CALLS)
    assert set(CALLS) == set(SPECIAL) <= set(MAX_ULP)


@pytest.mark.parametrize("call", list(CALLS))
def test_accuracy(loops: Loops, call: str) -> None:
    xs = sample(call, SCALE)  # lgammaf: x >= -1/4, see test_lgamma_negative
    err = ulp_error(loops(call, *xs), reference(call, xs))
    i = int(np.argmax(err))
    args = ", ".join(repr(float(x[i])) for x in xs)
    assert err[i] <= MAX_ULP[call], f"{call}({args}): {err[i]:.2f} ulp"


def test_measure_reports_the_worst_argument(loops: Loops) -> None:
    mx, mean, at = measure(loops, "norm3df", SCALE)
    assert 0 < mean < mx <= MAX_ULP["norm3df"]
    want = reference("norm3df", [np.float32([a]) for a in at])
    got = loops("norm3df", *[np.float32([a]) for a in at])
    assert ulp_error(got, want)[0] == mx


def test_lgamma_negative(loops: Loops) -> None:
    absolute, ulps = lgamma_negative(loops, 1 << 16)
    assert absolute <= 2e-6 and ulps <= 10


@pytest.mark.parametrize("call", list(CALLS))
def test_special_values(loops: Loops, call: str) -> None:
    cases = SPECIAL[call]
    args = [np.float32(a) for a in zip(*(c[0] for c in cases))]
    got = loops(call, *args)
    for (xs, want), g in zip(cases, got, strict=True):
        g, want = float(g), float(F32(want))
        if math.isnan(want):
            assert math.isnan(g), (call, xs, g)
        else:
            assert g == want and math.copysign(1, g) == math.copysign(1, want), (
                call,
                xs,
                g,
                want,
            )


def test_vectors_give_the_scalar_results(loops: Loops) -> None:
    # vector<8xf32> operands (integer-mask conditions): bit for bit
    vec = Loops(VECTOR, width=8)
    rng = np.random.default_rng(11)
    for call in VECTOR:
        arity = CALLS[call][1]
        bits = rng.integers(0, 1 << 32, (arity, 1 << 12), dtype=np.uint64)
        wide = list(bits.astype(np.uint32).view(F32))
        xs = [np.concatenate([w, s]) for w, s in zip(wide, sample(call, 1 / 256))]
        xs = [x[: x.size // 8 * 8] for x in xs]
        a, b = loops(call, *xs), vec(call, *xs)
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32), call)
