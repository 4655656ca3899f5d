"""Recurrences (docs/language-notes.md, "Recurrences"): syntax, errors, IR.

The catalog kernels `rnn` and `lstm` (test_reference_catalog.py) check the
numerics against NumPy on the reference and, through the catalog tests, on
every target; here: what the parser and the checks accept and reject, the IR
round trip, a step dimension that is not the first one on the CPU and in the
GPU simulator, and the autodiff pass's refusal.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import tcdialect
from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import make_context
from tcdialect.reference import find_def
from tcdialect.transforms.tc_differentiate import differentiate

#: A prefix sum along the second dimension: the step dimension is 1.
PREFIX_SUM = """
def prefix(float(B, T) X) -> (S) {
    S(b, t) = X(b, t)
    for t in 1:T {
        S(b, t) = S(b, t - 1) + X(b, t)
    }
}
"""


def test_for_is_still_an_identifier() -> None:
    src = "def f(float(N) X) -> (for) { for(i) = X(i) * 2.0 }"
    x = np.arange(3, dtype=np.float32)
    (out,) = reference.run(parse_tc(src), None, [x])
    np.testing.assert_array_equal(out, 2 * x)


def test_printed_ir_parses_back() -> None:
    text = str(parse_tc(PREFIX_SUM))
    again = Parser(make_context(), text).parse_module()
    again.verify()
    assert str(again) == text


@pytest.mark.parametrize(
    ("target", "steps"),
    [("reference", 7), ("cpu", 7), ("cuda-sim", 7), ("reference", 1), ("cpu", 1)],
)
def test_step_dimension_in_the_middle(target: str, steps: int) -> None:
    """Also with no step at all (`for t in 1:1`): S is X."""
    x = np.random.default_rng(3).standard_normal((3, steps)).astype(np.float32)
    if target == "reference":
        (out,) = reference.run(parse_tc(PREFIX_SUM), None, [x])
    else:
        out = tcdialect.define(PREFIX_SUM, target=target)(x)
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)


#: Two earlier steps, the step index as a value, and a step of a 1-d tensor
#: (each step's comprehension is 0-d).
TWO_STEPS = """
def fib(float(T, N) X) -> (h, s) {
    h(t, n) = X(t, n)
    s(t) = 0.0 where t in 0:T
    for t in 2:T {
        h(t, n) = h(t - 1, n) * 0.5 + h(t - 2, n) + float(t)
        s(t) +=! h(t, r_n)
    }
}
"""


@pytest.mark.parametrize("target", ["reference", "cpu", "cuda-sim"])
def test_two_earlier_steps_and_the_step_as_a_value(target: str) -> None:
    x = np.random.default_rng(4).standard_normal((6, 5)).astype(np.float32)
    h, s = x.astype(np.float64), np.zeros(6)
    for t in range(2, 6):
        h[t] = h[t - 1] * 0.5 + h[t - 2] + t
        s[t] = h[t].sum()
    if target == "reference":
        got = reference.run(parse_tc(TWO_STEPS), None, [x])
    else:
        got = tcdialect.define(TWO_STEPS, target=target)(x)
    np.testing.assert_allclose(got[0], h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], s, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "for t in 1:T { for s in 1:T { h(t, n) = X(t, n) } }",
            "recurrences cannot be nested",
        ),
        ("for t in 1:T { }", "the recurrence over 't' has no statements"),
        (
            "h(t, n) = X(t, n)\n for t in 1:T { h(t, n) += X(t, n) }",
            "'+=' (accumulating into an earlier value) is not supported inside",
        ),
        (
            "h(t, n) = X(t, n)\n for t in 1:T + 1 { h(t, n) = h(t - 1, n) }",
            "the recurrence over 't' runs up to T + 1, but the step dimension of "
            "'h' has the extent T",
        ),
        (
            "h(t, n) = X(t, n)\n for t in 1:T { h(t, n) = h(t - 1, n) where t in 0:T }",
            "index 't' is given a range twice",
        ),
        (
            "h(t, n) = X(t, n)\n for t in 1:T { p(t, n) = h(t - 1, n)\n"
            " p(n, t) = h(t - 1, n) }",
            "'p' is written with the step index 't' as subscript 1, but an earlier "
            "statement of the recurrence used subscript 0",
        ),
        (
            "h(t, n) = X(t, n)\n for t in 1:T { p(t, n) = h(t - 1, n)\n"
            " h(t, n) = p(t, n) }\n q(t, n) = p(t, n)",
            "'p' is first written in the recurrence over 't', which starts after "
            "step 0, so its earlier steps are never written",
        ),
    ],
)
def test_errors(body: str, message: str) -> None:
    src = f"def f(float(T, N) X) -> (h) {{ {body} }}"
    with pytest.raises(TCError, match=None) as e:
        parse_tc(src, "r.tc")
    assert message in str(e.value)
    assert "r.tc:" in str(e.value)


def test_recurrences_are_not_differentiable_yet() -> None:
    d = find_def(parse_tc(PREFIX_SUM), None)
    with pytest.raises(TCError, match="recurrences are not differentiable yet"):
        differentiate(d)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "tc.insert_step %p_2 into %p_1[0]",
            "tc.insert_step %p_2 into %p_1[1]",
            "does not match",
        ),
        (
            "tc.next %h_4, %p_3 : !tc.tensor<[T, N], f32>, !tc.tensor<[T, N], f32>",
            "tc.next %h_4 : !tc.tensor<[T, N], f32>",
            "must end with tc.next of the carried tensors",
        ),
        ("in [1, T) (@h", "in [1, Q) (@h", "not a size"),
    ],
)
def test_the_verifier_checks_recurrences(old: str, new: str, message: str) -> None:
    src = (
        "def scan(float(T, N) X, float(N, N) W) -> (h) { h(t, n) = X(t, n)\n"
        "for t in 1:T { p(t, n) +=! W(n, r_k) * h(t - 1, r_k)\n"
        "h(t, n) = h(t - 1, n) + p(t, n) } }"
    )
    text = str(parse_tc(src))
    assert old in text
    module = Parser(make_context(), text.replace(old, new)).parse_module()
    with pytest.raises(VerifyException, match=message):
        module.verify()
