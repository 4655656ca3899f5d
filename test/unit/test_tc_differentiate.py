"""`tc-differentiate` and `tcdialect.autodiff.grad`: every statement form, the
tie and zero rules, errors.

Gradients are checked with `vjp_check`: the derived ``@<name>_grad`` run by
the reference interpreter must match central finite differences (float64)
along a random direction, ``<g, J v> == <grad(x, g), v>``. Exact cases
(products with zeros, max ties, casts) compare with hand-computed values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import tcdialect
from tcdialect import reference
from tcdialect.autodiff import grad
from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.frontend import parse_tc
from tcdialect.transforms.tc_differentiate import (
    TcDifferentiatePass,
    differentiate,
    float_inputs,
)

Arr = np.ndarray[Any, Any]


def vjp_check_def(
    fwd: tc.DefOp, inputs: list[Any], seed: int, wrt: list[str] | None = None
) -> None:
    """Assert the derived gradient of `fwd` (with respect to `wrt`, default
    every float input) matches central differences."""
    bwd = differentiate(fwd, wrt)
    ModuleOp([bwd.clone()]).verify()
    rng = np.random.default_rng(seed)
    outs = reference.run(fwd, None, inputs)
    d_outs = [
        rng.standard_normal(o.shape).astype(o.dtype)
        if o.dtype.kind == "f"
        else np.zeros_like(o)
        for o in outs
    ]
    grads = reference.run(bwd, None, [*inputs, *d_outs])
    idx = [fwd.input_names.index(n) for n in wrt or float_inputs(fwd)]
    v = {i: rng.standard_normal(np.shape(inputs[i])) for i in idx}
    eps = 1e-6

    def f(sign: float) -> tuple[Arr, ...]:
        xs = list(inputs)
        for i in idx:
            xs[i] = np.asarray(inputs[i]) + sign * eps * v[i]
        return reference.run(fwd, None, xs)

    plus, minus = f(1.0), f(-1.0)
    lhs = sum(
        float(np.sum(g * (p - m) / (2 * eps)))
        for g, p, m in zip(d_outs, plus, minus)
        if p.dtype.kind == "f"
    )
    rhs = sum(float(np.sum(g * v[i])) for g, i in zip(grads, idx))
    scale = 1.0 + sum(float(np.sum(np.abs(g * v[i]))) for g, i in zip(grads, idx))
    assert abs(lhs - rhs) <= 1e-6 * scale, (lhs, rhs)


def vjp_check(source: str, entry: str | None, inputs: list[Any], seed: int) -> None:
    vjp_check_def(reference.find_def(parse_tc(source), entry), inputs, seed)


def _def(source: str) -> tc.DefOp:
    return reference.find_def(parse_tc(source))


R = np.random.default_rng(0)


def _n(*shape: int) -> Arr:
    return R.standard_normal(shape)


def _pos(*shape: int) -> Arr:
    return R.uniform(0.5, 1.5, shape)


FORMS: dict[str, tuple[str, list[Any]]] = {
    "assign": ("def f(double(N) X) -> (Y) { Y(i) = X(i) * X(i) }", [_n(5)]),
    "sum": ("def f(double(N, R) X) -> (Y) { Y(i) +=! X(i, r) * X(i, r) }", [_n(3, 4)]),
    "accumulate": (
        "def f(double(N, R) X, double(N) A) -> (Y) {\n"
        "  Y(i) = A(i) * A(i)\n  Y(i) += X(i, r) * A(i)\n}",
        [_n(3, 4), _n(3)],
    ),
    "product": ("def f(double(N, R) X) -> (Y) { Y(i) *=! X(i, r) }", [_n(3, 4)]),
    "product_into": (
        "def f(double(N, R) X, double(N) A) -> (Y) {\n"
        "  Y(i) = A(i)\n  Y(i) *= X(i, r)\n}",
        [_n(3, 4), _n(3)],
    ),
    "max": ("def f(double(N, R) X) -> (Y) { Y(i) max=! X(i, r) }", [_n(3, 4)]),
    "min": ("def f(double(N, R) X) -> (Y) { Y(i) min=! X(i, r) }", [_n(3, 4)]),
    "max_into": (
        "def f(double(N, R) X, double(N) A) -> (Y) {\n"
        "  Y(i) = A(i)\n  Y(i) max= X(i, r)\n}",
        [_n(3, 4), _n(3)],
    ),
    "min_into_product": (
        "def f(double(N, R) X) -> (Y) {\n"
        "  Y(i) *=! X(i, r)\n  Y(i) min= X(i, r) * 2.0\n}",
        [_n(3, 4)],
    ),
    "shifted_window": (
        "def f(double(N) A, double(3) K) -> (O) { O(i) +=! A(i + r) * K(r) }",
        [_n(8), _n(3)],
    ),
    "where_ranges": (
        "def f(double(N) A) -> (O) { O(i) +=! A(i + r + 1) where r in 0:2, i in 0:N-3 }",
        [_n(7)],
    ),
    "negative_shift": (
        "def f(double(N) A, double(K) W) -> (O) {\n"
        "  O(i) +=! A(i - r + K - 1) * W(r) where i in 0:N-K+1\n}",
        [_n(8), _n(3)],
    ),
    "stride": (
        "def f(double(N) X, double(K) W) -> (Y) { Y(i) +=! X(2 * i + r) * W(r) }",
        [_n(9), _n(3)],
    ),
    "stride_only": (
        "def f(double(N) X) -> (Y) { Y(i) = X(3 * i + 1) where i in 0:2 }",
        [_n(7)],
    ),
    # mixed radix (window = stride): both indices solved, no reduction
    "pool_window": (
        "def f(double(N) X, double(2) W) -> (Y) {\n"
        "  Y(i) +=! X(2 * i + r + 1) * W(r) where i in 0:3, r in 0:2\n}",
        [_n(8), _n(2)],
    ),
    "pool_window_shifted_range": (
        "def f(double(N) X) -> (Y) { Y(i) max=! X(2 * i + r) where r in 1:3 }",
        [_n(9)],
    ),
    "pool_window_output_index": (
        "def f(double(N) X) -> (Y) { Y(i, j) = X(2 * i + j) where j in 0:2 }",
        [_n(7)],
    ),
    "pool_window_nested": (
        "def f(double(N) X) -> (Y) {\n"
        "  Y(i, j, k) = X(4 * i + 2 * j + k) where i in 0:2, j in 0:2, k in 0:2\n}",
        [_n(9)],
    ),
    # the backward's exp(X(j)), j in 0:N, must not read T (defined on 0:N-1)
    "reuse_in_range_only": (
        "def f(double(N) X) -> (T, Y) {\n"
        "  T(i) = exp(X(i)) where i in 0:N-1\n  Y(j) = exp(X(j)) * T(0)\n}",
        [_n(5)],
    ),
    "diagonal": ("def f(double(N, N) X) -> (Y) { Y(i) = X(i, i) }", [_n(3, 3)]),
    "reverse": ("def f(double(N) X) -> (Y) { Y(i) = X(N - 1 - i) }", [_n(5)]),
    "constant_subscript": (
        "def f(double(N) X) -> (Y) { Y(i) = X(0) * X(i) }",
        [_n(5)],
    ),
    "two_vars_one_dim": (
        "def f(double(N) X) -> (Y) { Y(i, j) = X(i + j) where i in 0:3, j in 0:3 }",
        [_n(5)],
    ),
    "transpose": (
        "def f(double(M, N) X) -> (Y) { Y(j, i) = X(i, j) }",
        [_n(3, 4)],
    ),
    "scalar": (
        "def f(double(N) X, double s) -> (Y) { Y +=! s * X(r) }",
        [_n(4), np.float64(0.7)],
    ),
    "temporaries_and_in_place": (
        "def f(double(B, M) I, double(N, M) W, double(N) b) -> (O, S) {\n"
        "  T(x, n) +=! I(x, r_m) * W(n, r_m)\n"
        "  T(x, n) = tanh(T(x, n) + b(n))\n"
        "  O(x, n) = T(x, n) * T(x, n)\n"
        "  O(x, n) = O(x, n) + T(x, n)\n"
        "  S(x) +=! O(x, r_n)\n"
        "}",
        [_n(2, 3), _n(4, 3), _n(4)],
    ),
    "self_read_elsewhere": (
        "def f(double(N) X) -> (A) {\n  A(i) = X(i) * X(i)\n  A(i) = A(N - 1 - i) * A(i)\n}",
        [_n(5)],
    ),
    "ternary_and_comparisons": (
        "def f(double(N) X, double(N) Z) -> (Y) {\n"
        "  Y(i) = X(i) > Z(i) && X(i) > 0.0 ? X(i) * Z(i) : (X(i) < -0.5 ? Z(i) : X(i))\n}",
        [_n(9), _n(9)],
    ),
    "binary_builtins": (
        "def f(double(N) X, double(N) Z) -> (Y) {\n"
        "  Y(i) = pow(X(i), Z(i)) + atan2(X(i), Z(i)) + hypot(X(i), Z(i))\n"
        "    + fdim(X(i), Z(i)) + fmod(X(i), Z(i)) + copysign(X(i), Z(i))\n"
        "    + fma(X(i), Z(i), X(i)) + fmin(X(i), Z(i)) + fmax(X(i), Z(i))\n"
        "    + min(X(i), Z(i)) + max(X(i), Z(i)) + X(i) / Z(i) - -X(i)\n"
        "}",
        [_pos(6), _pos(6)],
    ),
    "unary_builtins": (
        "def f(double(N) X) -> (Y) {\n"
        "  Y(i) = exp(X(i)) + exp2(X(i)) + expm1(X(i)) + log(X(i)) + log2(X(i))\n"
        "    + log10(X(i)) + log1p(X(i)) + sqrt(X(i)) + rsqrt(X(i)) + cbrt(X(i))\n"
        "    + sin(X(i)) + cos(X(i)) + tan(X(i)) + asin(X(i) / 2.0)\n"
        "    + acos(X(i) / 2.0) + atan(X(i)) + sinh(X(i)) + cosh(X(i))\n"
        "    + tanh(X(i)) + asinh(X(i)) + acosh(X(i) + 1.0) + atanh(X(i) / 2.0)\n"
        "    + erf(X(i)) + erfc(X(i)) + exp10(X(i)) + fabs(X(i) - 1.0)\n"
        "}",
        [_pos(6)],
    ),
    "integer_input_and_index_values": (
        "def f(double(N) X, int32(N) K) -> (Y) {\n"
        "  Y(i) = X(i) * double(K(i)) + double(i) * X(i)\n}",
        [_n(5), np.arange(5, dtype=np.int32)],
    ),
}


@pytest.mark.parametrize("name", list(FORMS))
def test_statement_forms_match_finite_differences(name: str) -> None:
    source, inputs = FORMS[name]
    vjp_check(source, None, inputs, seed=3)


@pytest.mark.parametrize(
    ("source", "inputs"),
    [
        (
            "def f(double(N) X) -> (Y) { Y(i) max=! X(i + r) * X(i + r) where r in 0:2 }",
            [_n(7), _n(6)],
        ),
        ("def f(double(N, R) X) -> (Y) { Y(i) *=! X(i, r) }", [_n(3, 4), _n(3)]),
        (
            "def f(double(N) X, double(N) Z) -> (Y) {\n"
            "  T(i) = X(N - 1 - i) * Z(i)\n  Y(i) = exp(T(i)) / (1.0 + T(i) * T(i))\n}",
            [_n(5), _n(5), _n(5)],
        ),
    ],
)
def test_second_order_forms(source: str, inputs: list[Any]) -> None:
    vjp_check_def(differentiate(_def(source)), inputs, seed=9)


def test_second_order() -> None:
    """The derived definition is ordinary tc IR: it differentiates again,
    through its guards, clamps and selects (its own tensors `d_A`, `d_K` are
    recomputed under other names, as the new gradients take those names)."""
    g = differentiate(
        _def(
            "def f(double(N) A, double(3) K) -> (O) {\n"
            "  O(i) +=! tanh(A(i + r)) * K(r)\n}"
        )
    )
    vjp_check_def(g, [_n(7), _n(3), _n(5)], seed=5)
    gg = differentiate(g)
    assert gg.sym_name.data == "f_grad_grad"
    assert list(gg.input_names) == ["A", "K", "d_O", "d_d_A", "d_d_K"]
    assert list(gg.output_names) == ["d_A", "d_K", "d_d_O"]


def test_grad_of_grad_kernel() -> None:
    k = tcdialect.define(
        "def f(double(N) A, double(3) K) -> (O) { O(i) +=! A(i + r) * A(i + r) * K(r) }"
    )
    gg = grad(grad(k, wrt="A"), wrt=["A"])
    a, kk, d_o, d_d_a = _n(6), _n(3), _n(4), _n(6)
    got = gg(a, kk, d_o, d_d_a)
    want = reference.run(gg.defop, None, [a, kk, d_o, d_d_a])
    np.testing.assert_allclose(got, want[0], rtol=1e-12)
    # d/dA <d_d_A, 2 * sum_r d_O(i - r) * K(r) * A(i)> = 2 * d_d_A * (d_O * K)
    expected = np.array(
        [
            2 * d_d_a[x] * sum(d_o[x - r] * kk[r] for r in range(3) if 0 <= x - r < 4)
            for x in range(6)
        ]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_product_with_zeros_is_exact() -> None:
    g = differentiate(_def("def f(double(N, R) X) -> (Y) { Y(i) *=! X(i, r) }"))
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 4.0]])
    (d_x,) = reference.run(g, None, [x, np.ones(3)])
    np.testing.assert_array_equal(
        d_x, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]]
    )


def test_max_ties_go_to_the_first() -> None:
    """The documented tie rule: the first element equal to the result (in
    row-major order of the reduction indices; the previous value first for
    `max=`; the first operand of `fmax`) gets the whole gradient, like
    PyTorch's `max(dim)` and `max_pool2d`. Structural ties then agree with
    finite differences."""
    g = differentiate(_def("def f(double(N, R) X) -> (Y) { Y(i) max=! X(i, r) }"))
    x = np.array([[1.0, 3.0, 3.0, 0.0], [5.0, 5.0, 5.0, 5.0]])
    (d_x,) = reference.run(g, None, [x, np.array([2.0, 1.0])])
    np.testing.assert_array_equal(d_x, [[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    g = differentiate(
        _def(
            "def f(double(N, R) X, double(N) A) -> (Y) {\n"
            "  Y(i) = A(i)\n  Y(i) min= X(i, r)\n}"
        )
    )
    d_x, d_a = reference.run(
        g, None, [np.array([[2.0, 1.0, 1.0]]), np.ones(1), np.array([3.0])]
    )
    np.testing.assert_array_equal(d_x, [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(d_a, [3.0])
    g = differentiate(_def("def f(double(N) X) -> (Y) { Y(i) = fmax(X(i), 1.0) }"))
    (d_x,) = reference.run(g, None, [np.array([0.0, 1.0, 2.0]), np.ones(3)])
    np.testing.assert_array_equal(d_x, [0.0, 1.0, 1.0])


@pytest.mark.parametrize(
    "source",
    [
        "def f(double(N) X) -> (Y) { Y(i) = max(X(i), X(i)) + fmin(X(i), X(i)) }",
        "def f(double(N) X) -> (Y) { Y(i) max=! X(i) * 2.0 where r in 0:3 }",
        "def f(double(N) X) -> (Y) { Y(i) = X(i)\n Y(i) min= X(i) where r in 0:2 }",
    ],
)
def test_structural_ties_match_finite_differences(source: str) -> None:
    vjp_check(source, None, [_n(4)], seed=2)


def test_casts_pass_the_gradient() -> None:
    g = differentiate(
        _def("def f(double(N) X, float(N) W) -> (Y) { Y(i) = X(i) * double(W(i)) }")
    )
    x, w, dy = np.array([1.5, -2.0]), np.array([3.0, 0.5], np.float32), np.ones(2)
    d_x, d_w = reference.run(g, None, [x, w, dy])
    assert d_w.dtype == np.float32
    np.testing.assert_array_equal(d_x, w.astype(np.float64))
    np.testing.assert_array_equal(d_w, x.astype(np.float32))


def test_pointwise_accumulations_fold() -> None:
    """A pointwise `+=` folds into its `=` definition and into the copy of
    an input's gradient (fold.py): layer normalisation's `d_cen` is one
    statement and `d_X` is written once, from `d_cen` and `d_mean_1`; the
    gradient still matches finite differences. A 16-bit sum is taken in f32
    and rounded once, as the `+=` it replaces."""
    src = (
        "def ln(double(N, C) X) -> (O) {\n"
        "  mean(n) +=! X(n, r_c)\n  mean(n) = mean(n) / double(C)\n"
        "  cen(n, c) = X(n, c) - mean(n)\n  var(n) +=! cen(n, r_c) * cen(n, r_c)\n"
        "  var(n) = (var(n) + 1e-5) / double(C)\n"
        "  O(n, c) = cen(n, c) * rsqrt(var(n))\n}"
    )
    g = differentiate(_def(src))
    ops = [op for op in g.body.block.ops if isinstance(op, tc.ComprehensionOp)]
    assert [op.target.data for op in ops if op.op.data == "+="] == []
    assert [op.target.data for op in ops][-3:] == ["d_mean", "d_mean_1", "d_X"]
    vjp_check(src, None, [_n(3, 5)], seed=4)

    g16 = differentiate(_def("def f(float16(N) A) -> (O) { O(i) = A(i) * A(i) }"))
    a = np.array([1.0 + 2**-10, 3.0, -0.5], np.float16)
    d_o = np.array([1.0 - 2**-11, 2.0, 7.0], np.float16)
    (d_a,) = reference.run(g16, None, [a, d_o])
    p = d_o * a  # each product rounded to f16, then added in f32
    np.testing.assert_array_equal(d_a, (p.astype(np.float32) * 2).astype(np.float16))


def test_signature_and_forward_untouched() -> None:
    module = parse_tc(
        "def f(float(N) X, int32(N) K, float(N) Z) -> (Y, int32 C) {\n"
        "  Y(i) = X(i) * Z(i)\n  C(i) = K(i)\n}"
    )
    before = str(module)
    TcDifferentiatePass(entry="f").apply(tcdialect.pipeline.make_context(), module)
    ops = list(module.ops)
    assert str(ModuleOp([ops[0].clone()])) == before
    g = ops[1]
    assert isinstance(g, tc.DefOp)
    assert g.sym_name.data == "f_grad"
    assert list(g.input_names) == ["X", "K", "Z", "d_Y", "d_C"]
    assert list(g.output_names) == ["d_X", "d_Z"]
    g2 = differentiate(reference.find_def(module, "f"), ["Z"])
    assert list(g2.output_names) == ["d_Z"]


def test_unused_input_gets_zeros() -> None:
    g = differentiate(
        _def("def f(double(N) X, double(M) Z) -> (Y) { Y(i) = X(i) * 2.0 }")
    )
    d_x, d_z = reference.run(g, None, [np.ones(2), np.ones(3), np.ones(2)])
    np.testing.assert_array_equal(d_x, [2.0, 2.0])
    np.testing.assert_array_equal(d_z, [0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("source", "wrt", "message"),
    [
        (
            "def f(float(N) X) -> (Y) { Y(i) = floor(X(i)) * X(i) }",
            None,
            "the builtin 'floor' in the statement defining 'Y' (floor(X(i))) has no "
            "derivative",
        ),
        (
            "def f(float(N) X) -> (Y) { Y(i) = round(X(i)) }",
            None,
            "the builtin 'round'",
        ),
        (
            "def f(float(N) X) -> (Y) { Y(i) = X(i) }",
            ["Q"],
            "'Q' is not an input of @f",
        ),
        (
            "def f(float(N) X, int32(N) K) -> (Y) { Y(i) = X(i) + float(K(i)) }",
            ["K"],
            "input 'K' of @f has element type i32: only floating-point inputs",
        ),
        (
            "def f(int32(N) K) -> (Y) { Y(i) = K(i) }",
            None,
            "@f has no floating-point input",
        ),
        (
            "def f(float(N) X, float(N) d_X) -> (Y) { Y(i) = X(i) + d_X(i) }",
            None,
            "@f already uses the name 'd_X'",
        ),
    ],
)
def test_errors(source: str, wrt: list[str] | None, message: str) -> None:
    with pytest.raises(TCError, match="tc-differentiate") as e:
        differentiate(_def(source), wrt)
    assert message in str(e.value)


def test_grad_kernel_api() -> None:
    k = tcdialect.define(
        "def mv(float(R, C) A, float(C) x) -> (o) { o(r) +=! A(r, r_c) * x(r_c) }"
    )
    g = grad(k, wrt="x")
    assert g.target == k.target and g.options == k.options
    text = g.ir(stage="tc")
    assert "tc.def @mv_grad<R, C>(A, x, d_o) -> (d_x)" in text
    assert '@d_x(%r_c in [0, C)) "+=!" (%r in [0, R))' in text
    with pytest.raises(TCError, match="'y' is not an input of @mv"):
        grad(k, wrt=["y"])
    with pytest.raises(TCError, match=r"grad\(\) takes a tcdialect\.Kernel"):
        grad("mv")  # type: ignore[arg-type]


def test_grad_errors_point_at_the_statement() -> None:
    k = tcdialect.define(
        "def f(float(N) X) -> (Y, Z) {\n"
        "    Y(i) = X(i) * 2.0\n"
        "    Z(i) = ceil(X(i)) * Y(i)\n"
        "}",
        filename="f.tc",
    )
    with pytest.raises(TCError) as e:
        grad(k)
    text = str(e.value)
    assert text.startswith("f.tc:3:5: error: tc-differentiate: @f: the builtin 'ceil'")
    assert "        Z(i) = ceil(X(i)) * Y(i)\n        ^~~~" in text
