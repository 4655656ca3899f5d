"""Size expressions beyond affine, and scalars that drive sizes (issue 38 items 1-2).

Covers the `SizeExpr` algebra of products and quotients by sizes, range
inference with size coefficients (``I(i * S + r)``), which 0-d integer
inputs become sizes, call-time binding (values, negative values, zero
divisors, keyword inputs), the reference interpreter against NumPy, and the
derived parameters of the polyhedral model (docs/language-notes.md, "Size
expressions beyond affine" and "Scalars that drive sizes").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tcdialect import reference
from tcdialect.arguments import inputs_by_name, prepare_inputs
from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.frontend import analyze, parse_tc
from tcdialect.frontend import range_inference as ri
from tcdialect.pipeline import lower
from tcdialect.poly.schedule import ScheduleOptions, schedule_context
from tcdialect.poly.scop import extract_scop
from tcdialect.symbolic import SizeExpr, parse, provably_nonneg
from tcdialect.transforms.affine_isl_schedule import schedule_function

M, N, P, Q, K, S = (SizeExpr.sym(n) for n in "M N P Q K S".split())

KRON = """
def kron(float(M, N) A, float(P, Q) B) -> (K) {
    K(i, j) = A(i / P, j / Q) * B(i % P, j % Q) where i in 0:M * P, j in 0:N * Q
}
"""
SCONV = """
def sconv(float(N) I, float(K) W, int32 S) -> (O) {
    O(i) +=! I(i * S + r_k) * W(r_k)
}
"""
DCONV = """
def dconv(float(N) I, float(K) W, int64 D) -> (O) {
    O(i) +=! I(i + D * r_k) * W(r_k)
}
"""


def rand(*shape: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def sconv_numpy(x: Any, w: Any, s: int, d: int = 1) -> Any:
    n, k = len(x), len(w)
    count = max(0, (n - d * (k - 1) - 1) // s + 1)
    return np.array(
        [
            sum(float(x[i * s + d * r]) * float(w[r]) for r in range(k))
            for i in range(count)
        ],
        dtype=np.float64,
    ).reshape(count)


# ----------------------------------------------------------------- algebra


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (M * P, "M * P"),
        ((M + 1) * P, "P + M * P"),
        (2 * M * P - N, "2 * M * P - N"),
        ((N - K).floordiv_by(S) + 1, "(N - K) floordiv S + 1"),
        (M.floordiv(2) * P, "(M floordiv 2) * P"),
        (P * (N - K).floordiv_by(S), "((N - K) floordiv S) * P"),
        ((M * P).floordiv(2), "M * P floordiv 2"),
        ((N - K).ceildiv_by(S), "(N + S - K - 1) floordiv S"),
        (M * P * Q, "M * P * Q"),
    ],
)
def test_products_and_quotients_print_canonically(expr: SizeExpr, text: str) -> None:
    assert str(expr) == text
    assert parse(text) == expr
    assert str(parse(text)) == text


def test_simplifications() -> None:
    assert (M * P).floordiv_by(P) == M  # exact
    assert (2 * M * P + 4 * P).floordiv_by(2 * P) == M + 2
    assert (S - 1).floordiv_by(S) == SizeExpr.lit(0)  # a divisor is >= 1
    assert SizeExpr.lit(0).floordiv_by(S) == SizeExpr.lit(0)
    assert (M * P).floordiv_by(4) == (M * P).floordiv(4)  # constant divisor
    assert M * P == P * M
    assert (M + P) * (M - P) == M * M - P * P


def test_evaluate_substitute_and_divisors() -> None:
    e = (N - K).floordiv_by(S) + 1
    assert e.evaluate({"N": 10, "K": 3, "S": 2}) == 4
    assert e.evaluate({"N": 10, "K": 3, "S": 0}) == 1  # x floordiv 0 is 0
    assert e.divisors() == [S]
    assert not e.is_affine and (N - K + 1).is_affine
    assert (M * P).substitute({"M": SizeExpr.lit(3)}) == 3 * P
    assert e.substitute({"S": SizeExpr.lit(2)}) == (N - K).floordiv(2) + 1
    assert (M * P).mod_by(P).evaluate({"M": 3, "P": 4}) == 0
    assert provably_nonneg(M * P) and not provably_nonneg(M * P - N)
    nested = (M * P).floordiv_by(Q.floordiv_by(S))
    assert nested.divisors() == [S, Q.floordiv_by(S)]


# --------------------------------------------------------- range inference


def test_inference_divides_by_a_size_coefficient() -> None:
    # I(i * S + r) with r in [0, K), I of extent N.
    cons = [
        ri.Constraint({"i": S, "r": 1}, SizeExpr.lit(0)),
        ri.Constraint({"i": -S, "r": -1}, N - 1),
    ]
    res = ri.infer(["i", "r"], cons, {"r": (SizeExpr.lit(0), K)})
    assert res.ranges["i"] == (SizeExpr.lit(0), (N - K).floordiv_by(S) + 1)


def _ranges(source: str, target: str = "O") -> dict[str, tuple[str, str]]:
    cdef = analyze(source).defs[0]
    (st,) = [s for s in cdef.statements if s.target == target]
    return {v: (str(lo), str(hi)) for v, (lo, hi) in st.ranges.items()}


def test_scalar_inputs_that_drive_sizes() -> None:
    cdef = analyze(SCONV).defs[0]
    assert cdef.sizes == ["N", "K", "S"]
    assert _ranges(SCONV)["i"] == ("0", "(N - K) floordiv S + 1")
    dconv = analyze(DCONV).defs[0]
    assert dconv.sizes == ["N", "K", "D"]
    assert [str(e) for e in dconv.outputs[0].extents or ()] == ["D + N - D * K"]
    # only in a non-affine subscript, or only as a value: not a size
    wrap = "def w(float(N) X, int32 k) -> (O) { O(i) = X(i % k) + float(k) where i in 0:N }"
    assert analyze(wrap).defs[0].sizes == ["N"]
    # through a let, and in a where range
    let = """
    def l(float(N) X, int32 s, uint8 p) -> (O) {
        O(i) +=! X(j) where j = i * s + r, r in 0:p
    }"""
    assert analyze(let).defs[0].sizes == ["N", "s", "p"]
    # an index coefficient of unknown sign is not used for inference
    with pytest.raises(TCError, match="cannot infer the range of output index 'i'"):
        parse_tc("def f(float(M, N) X) -> (O) { O(i) = X(0, i * (M - N)) }")


def test_scalar_size_in_the_ir() -> None:
    (d,) = [op for op in parse_tc(SCONV).body.block.ops if isinstance(op, tc.DefOp)]
    assert d.size_names == ("N", "K", "S")
    assert d.scalar_size_names == ("S",)
    assert str(d.output_types[0].extents[0]) == "(N - K) floordiv S + 1"


# ------------------------------------------------------------------ calling


def _def(source: str) -> tc.DefOp:
    (d,) = [op for op in parse_tc(source).body.block.ops if isinstance(op, tc.DefOp)]
    return d


def test_binding_scalar_sizes() -> None:
    d = _def(SCONV)
    x, w = rand(11), rand(3, seed=1)
    _, sizes = prepare_inputs(d, [x, w, 2])
    assert sizes == {"N": 11, "K": 3, "S": 2}
    _, sizes = prepare_inputs(d, [x, w, np.asarray(3, np.int32)])
    assert sizes["S"] == 3
    with pytest.raises(
        TCError,
        match=r"input 'S' \(argument 2\) of @sconv drives sizes and must not be "
        r"negative, but is -1",
    ):
        prepare_inputs(d, [x, w, -1])
    with pytest.raises(
        TCError,
        match=r"'\(N - K\) floordiv S \+ 1' divides by 'S', which is 0 for S=0",
    ):
        prepare_inputs(d, [x, w, 0])
    with pytest.raises(TCError, match=r"expects 3 inputs .* but got 2; missing: S"):
        prepare_inputs(d, [x, w])


def test_inputs_by_name() -> None:
    d = _def(SCONV)
    x, w = rand(11), rand(3, seed=1)
    assert inputs_by_name(d, [x, w], {"S": 2})[2] == 2
    got = inputs_by_name(d, [], {"S": 2, "W": w, "I": x})
    assert got[0] is x and got[1] is w
    with pytest.raises(TCError, match="@sconv: missing input 'S'"):
        inputs_by_name(d, [x], {"W": w})
    with pytest.raises(TCError, match="missing inputs 'W', 'S'"):
        inputs_by_name(d, [], {"I": x})
    with pytest.raises(
        TCError, match="@sconv has no input named 'T'; its inputs are I, W, S"
    ):
        inputs_by_name(d, [x, w], {"T": 2})
    with pytest.raises(
        TCError, match=r"input 'I' \(argument 0\) of @sconv is given twice"
    ):
        inputs_by_name(d, [x, w], {"I": x, "S": 1})
    with pytest.raises(TCError, match=r"expects 3 inputs .* but got 4 positional ones"):
        inputs_by_name(d, [x, w, 1, 2], {"S": 1})


# ---------------------------------------------------------------- reference


def test_reference_kron_flatten_and_strided_convolutions() -> None:
    a, b = rand(3, 4), rand(2, 5, seed=1)
    (k,) = reference.run(parse_tc(KRON), None, [a, b])
    assert k.shape == (6, 20)
    np.testing.assert_allclose(k, np.kron(a, b), rtol=1e-6)
    x, w = rand(13), rand(3, seed=2)
    for s in (1, 2, 3, 20):
        (o,) = reference.run(parse_tc(SCONV), None, [x, w, s])
        np.testing.assert_allclose(o, sconv_numpy(x, w, s), rtol=1e-5, atol=1e-6)
    for dil in (1, 2, 5):
        (o,) = reference.run(parse_tc(DCONV), None, [x, w, dil])
        np.testing.assert_allclose(o, sconv_numpy(x, w, 1, dil), rtol=1e-5, atol=1e-6)
    flat = "def f(float(B, C, H) X) -> (Y) { Y(b, f) = X(b, f / H, f % H) where f in 0:C * H }"
    x3 = rand(2, 3, 4)
    (y,) = reference.run(parse_tc(flat), None, [x3])
    np.testing.assert_array_equal(y, x3.reshape(2, 12))


# ------------------------------------------------------------------- poly


def _affine_fn(source: str) -> func.FuncOp:
    module = lower(parse_tc(source), "affine", None)
    assert isinstance(module, ModuleOp)
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fn


def test_derived_parameters_of_the_scop() -> None:
    scop = extract_scop(_affine_fn(KRON))
    assert scop.params == ("M", "N", "P", "Q", "M_x_P", "N_x_Q")
    assert set(scop.nonneg_params) == set(scop.params)
    (stmt,) = scop.statements.values()
    assert "M_x_P" in str(stmt.domain)
    ctx = schedule_context(scop)
    assert "M_x_P >= 0" in str(ctx)
    conv = extract_scop(_affine_fn(SCONV))
    # (the array S takes the name S, the size argument is S_1)
    assert conv.params == ("N", "K", "S_1", "N_minus_K_div_S_1")
    # N - K may be negative: so may its quotient
    assert "N_minus_K_div_S_1" not in conv.nonneg_params


@pytest.mark.parametrize("source", [KRON, SCONV, DCONV])
def test_generic_code_with_derived_parameters_is_scheduled(source: str) -> None:
    fn = _affine_fn(source)
    assert schedule_function(fn, ScheduleOptions()) is not None
