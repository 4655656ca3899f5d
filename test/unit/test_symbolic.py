"""Unit tests for `tcdialect.symbolic`: the SizeExpr algebra.

Covers normalisation (floordiv / ceildiv / mod rules, constant folding,
pulling multiples out of floordiv, gcd reduction, nested floordiv), canonical
printing (``parse(str(e)) == e``, ``str`` is a fixed point), min/max
simplification, `diff_range` / `provably_le`, errors, and a hypothesis
property over random expressions checked against direct Python evaluation.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdialect.symbolic import (
    SizeExpr,
    SymbolicError,
    diff_range,
    parse,
    provably_le,
    provably_nonneg,
    smax,
    smin,
)

I, J, K = SizeExpr.sym("I"), SizeExpr.sym("J"), SizeExpr.sym("K")


def s(text: str) -> str:
    """The canonical text of a size expression."""
    return str(parse(text))


# ------------------------------------------------------------ construction


def test_literals_and_symbols() -> None:
    assert str(SizeExpr.lit(0)) == "0"
    assert str(SizeExpr.lit(-7)) == "-7"
    assert str(I) == "I"
    assert SizeExpr.lit(3).is_constant
    assert SizeExpr.lit(3).constant_value() == 3
    assert I.constant_value() is None
    assert (I + J - I).names() == {"J"}


def test_constant_folding() -> None:
    assert SizeExpr.lit(2) + 3 == SizeExpr.lit(5)
    assert (SizeExpr.lit(2) * 3 - 10).constant_value() == -4
    assert str(I + 1 - 1) == "I"
    assert str(2 * I + 3 - I - 3) == "I"
    assert I - I == SizeExpr.lit(0)
    assert str(parse("(I + 2) * 3 - 3 * I")) == "6"
    assert 5 - I == parse("5 - I")
    assert str(-(I - J)) == "J - I"


def test_terms_are_sorted_canonically() -> None:
    assert str(J + I) == str(I + J) == "I + J"
    assert str(K - I + J) == "J + K - I"
    assert str(parse("3 - I")) == "-I + 3"


# ---------------------------------------------------------------- floordiv


def test_floordiv_of_constants() -> None:
    assert SizeExpr.lit(7).floordiv(2) == SizeExpr.lit(3)
    assert SizeExpr.lit(-7).floordiv(2) == SizeExpr.lit(-4)  # floor, not trunc
    assert SizeExpr.lit(-7).ceildiv(2) == SizeExpr.lit(-3)
    assert SizeExpr.lit(-7).mod(3) == SizeExpr.lit(2)  # sign of the divisor


def test_floordiv_by_one_is_identity() -> None:
    assert (I + 3).floordiv(1) == I + 3


def test_floordiv_pulls_out_multiples() -> None:
    assert str((2 * I + 4).floordiv(2)) == "I + 2"
    assert str((4 * I + J).floordiv(2)) == "2 * I + (J floordiv 2)"
    # The constant left inside is in [0, divisor).
    assert str((I + 7).floordiv(2)) == "(I + 1) floordiv 2 + 3"
    assert str((I - 1).floordiv(2)) == "(I + 1) floordiv 2 - 1"
    assert str((2 * I + 1).floordiv(2)) == "I"


def test_floordiv_gcd_reduction() -> None:
    assert str((2 * I + 2).floordiv(4)) == "(I + 1) floordiv 2"
    assert str((6 * I + 3 * J).floordiv(9)) == "(2 * I + J) floordiv 3"
    # floor((2I + 1) / 4) == floor(I / 2): the constant is divided with floor.
    assert (2 * I + 1).floordiv(4) == I.floordiv(2)
    assert (2 * I + 3).floordiv(4) == (I + 1).floordiv(2)


def test_nested_floordiv_merges() -> None:
    assert I.floordiv(2).floordiv(3) == I.floordiv(6)
    assert (I.floordiv(2) + 1).floordiv(3) == (I + 2).floordiv(6)
    assert (2 * I.floordiv(3) + 1).floordiv(4) == I.floordiv(6)


def test_ceildiv_and_mod_rewrite_to_floordiv() -> None:
    assert I.ceildiv(2) == (I + 1).floordiv(2)
    assert str(I.ceildiv(2)) == "(I + 1) floordiv 2"
    assert str(I.mod(2)) == "I - 2 * (I floordiv 2)"
    assert parse("I mod 2") == I - 2 * I.floordiv(2)
    assert parse("I ceildiv 3") == (I + 2).floordiv(3)
    assert (2 * I).mod(2) == SizeExpr.lit(0)
    assert (2 * I + 3).mod(2) == SizeExpr.lit(1)


def test_floordiv_printing_parenthesises_compound_numerators() -> None:
    assert str((I + J).floordiv(2)) == "(I + J) floordiv 2"
    assert str((3 * I).floordiv(2)) == "(3 * I) floordiv 2"
    assert str((-I).floordiv(2)) == "(-I) floordiv 2"
    assert str(2 * I.floordiv(3)) == "2 * (I floordiv 3)"
    assert str(J - I.floordiv(3)) == "J - (I floordiv 3)"
    assert str(-I.floordiv(3)) == "-(I floordiv 3)"


# ------------------------------------------------------------------ min/max


def test_min_max_simplification() -> None:
    assert smin([I, I + 1]) == I
    assert smax([I, I + 1]) == I + 1
    assert smin([SizeExpr.lit(3), SizeExpr.lit(5)]) == SizeExpr.lit(3)
    assert str(smin([I, J])) == "min(I, J)"
    assert smin([J, I]) == smin([I, J])  # argument order does not matter
    assert str(smax([J, I, J + 0])) == "max(I, J)"
    # Nested min/max of the same kind flatten.
    assert smin([smin([I, J]), K]) == smin([I, J, K])
    assert str(parse("min(min(I, J), K)")) == "min(I, J, K)"
    assert str(parse("max(I, min(J, K))")) == "max(I, min(J, K))"


def test_min_of_floordivs_uses_diff_range() -> None:
    e = parse("min((I - 1) floordiv 2, (I - 2) floordiv 2)")
    assert e == parse("I floordiv 2 - 1")
    assert str(e) == "I floordiv 2 - 1"
    e = parse("max((I - 1) floordiv 2, (I - 2) floordiv 2)")
    assert str(e) == "(I + 1) floordiv 2 - 1"


def test_min_max_use_non_negative_sizes() -> None:
    assert smax([SizeExpr.lit(0), -K]) == SizeExpr.lit(0)
    assert smin([SizeExpr.lit(0), K]) == SizeExpr.lit(0)
    assert smin([I, I + J]) == I
    assert smax([I, J, I + J]) == I + J  # every dominated argument goes
    assert smax([I + J, J, I]) == I + J
    assert str(smax([SizeExpr.lit(1), K])) == "max(1, K)"  # K may be 0


def test_min_max_of_nothing_is_an_error() -> None:
    with pytest.raises(SymbolicError):
        smin([])


# ------------------------------------------------------ diff_range and order


def test_diff_range() -> None:
    assert diff_range(I + 3, I) == (3, 3)
    assert diff_range(I, J) is None
    # floor((I + 1) / 2) - floor(I / 2) is 0 or 1.
    assert diff_range((I + 1).floordiv(2), I.floordiv(2)) == (0, 1)
    assert diff_range(I.floordiv(2), (I + 1).floordiv(2)) == (-1, 0)
    assert diff_range((I + 5).floordiv(2), I.floordiv(2)) == (2, 3)
    assert diff_range(I.floordiv(2), I.floordiv(3)) is None


def test_provably_le() -> None:
    assert provably_le(I, I)
    assert provably_le(I - 1, I)
    assert not provably_le(I + 1, I)
    assert not provably_le(I, J)
    assert provably_le(I.floordiv(2), (I + 1).floordiv(2))
    assert not provably_le((I + 1).floordiv(2), I.floordiv(2))
    assert provably_le(SizeExpr.lit(0), I)  # sizes are non-negative
    assert provably_le(I, I + J)
    assert not provably_le(SizeExpr.lit(1), I)
    assert provably_nonneg(I.floordiv(2) + smin([J, K]))
    assert not provably_nonneg(I - J)


# -------------------------------------------------------------- evaluation


def test_evaluate_and_substitute() -> None:
    e = parse("(H - KH) floordiv 2 + 1")
    assert e.evaluate({"H": 9, "KH": 3}) == 4
    assert e.evaluate({"H": 2, "KH": 3}) == 0  # floor(-1 / 2) + 1
    assert parse("min(I, J) - max(I, J)").evaluate({"I": 2, "J": 5}) == -3
    sub = e.substitute({"H": parse("2 * KH + 4")})
    assert str(sub) == "KH floordiv 2 + 3"
    with pytest.raises(SymbolicError, match="no value for size 'KH'"):
        e.evaluate({"H": 1})


# ------------------------------------------------------------------- errors


def test_errors() -> None:
    with pytest.raises(SymbolicError):
        I.floordiv(0)
    with pytest.raises(SymbolicError):
        I.floordiv(-2)
    with pytest.raises(SymbolicError):
        I.mod(0)
    with pytest.raises(SymbolicError):
        parse("I floordiv 0")
    with pytest.raises(SymbolicError):
        parse("I floordiv (2 - 3)")
    with pytest.raises(SymbolicError):
        parse("I +")
    with pytest.raises(SymbolicError):
        parse("")
    with pytest.raises(SymbolicError):
        parse("I J")
    with pytest.raises(SymbolicError):
        parse("(I")
    with pytest.raises(SymbolicError):
        parse("I floordiv \u00b2")  # a superscript digit is not an integer
    assert isinstance(SymbolicError("x"), ValueError)


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "-3",
        "I",
        "-I",
        "I + 1",
        "H - KH + 1",
        "2 * I - 3 * J + 4",
        "(I + 1) floordiv 2",
        "I floordiv 2 - 1",
        "-(I floordiv 3) + J",
        "2 * ((I + J) floordiv 3)",
        "min(I, J)",
        "max(I, J + 1) - 2",
        "-min(I, J)",
        "3 * max(I, J)",
        "min(I, J) floordiv 2",
        "((I + 3) floordiv 4 + J) floordiv 2",
        "I - 2 * (I floordiv 2)",
        "mod mod 2",  # 'mod' is a name where a factor is expected
    ],
)
def test_canonical_printing(text: str) -> None:
    e = parse(text)
    assert parse(str(e)) == e
    assert str(parse(str(e))) == str(e)


def test_equivalent_spellings_print_the_same() -> None:
    assert s("(I+1)floordiv 2") == s("I ceildiv 2") == "(I + 1) floordiv 2"
    assert s("I - 1 + 1") == s("I") == "I"
    assert s("2*(I+1)") == s("2 * I + 2")
    assert s("-(-I)") == "I"


# --------------------------------------------------------- property tests

NAMES = ("I", "J", "K")

#: A random expression: the SizeExpr and the same construction as a Python
#: function of the environment.
Built = tuple[SizeExpr, Callable[[dict[str, int]], int]]


def _lit(k: int) -> Built:
    return SizeExpr.lit(k), lambda env: k


def _sym(n: str) -> Built:
    return SizeExpr.sym(n), lambda env: env[n]


def _combine(draw: st.DrawFn, children: st.SearchStrategy[Built]) -> Built:
    op = draw(
        st.sampled_from(
            ["+", "-", "neg", "*k", "k*", "fd", "cd", "mod", "min", "max", "subst"]
        )
    )
    a, fa = draw(children)
    if op in ("+", "-"):
        b, fb = draw(children)
        if op == "+":
            return a + b, lambda env: fa(env) + fb(env)
        return a - b, lambda env: fa(env) - fb(env)
    if op == "neg":
        return -a, lambda env: -fa(env)
    if op in ("*k", "k*"):
        k = draw(st.integers(-4, 4))
        if op == "*k":
            return a * SizeExpr.lit(k), lambda env: fa(env) * k
        return k * a, lambda env: k * fa(env)
    if op in ("fd", "cd", "mod"):
        d = draw(st.integers(1, 7))
        if op == "fd":
            return a.floordiv(d), lambda env: fa(env) // d
        if op == "cd":
            return a.ceildiv(d), lambda env: -(-fa(env) // d)
        return a.mod(d), lambda env: fa(env) % d
    if op in ("min", "max"):
        rest = draw(st.lists(children, min_size=1, max_size=2))
        args = [a] + [x for x, _ in rest]
        fns = [fa] + [f for _, f in rest]
        if op == "min":
            return smin(args), lambda env: min(f(env) for f in fns)
        return smax(args), lambda env: max(f(env) for f in fns)
    # Substitute an expression for one of the names.
    name = draw(st.sampled_from(NAMES))
    b, fb = draw(children)
    return a.substitute({name: b}), lambda env: fa({**env, name: fb(env)})


_leaves: st.SearchStrategy[Built] = st.one_of(
    st.integers(-12, 12).map(_lit), st.sampled_from(NAMES).map(_sym)
)
exprs: st.SearchStrategy[Built] = st.recursive(
    _leaves,
    lambda children: st.composite(lambda draw: _combine(draw, children))(),
    max_leaves=12,
)
envs = st.fixed_dictionaries({n: st.integers(0, 40) for n in NAMES})

_PROPERTY = settings(max_examples=400, deadline=None, derandomize=True)


@_PROPERTY
@given(exprs, st.lists(envs, min_size=1, max_size=4))
def test_random_expressions_print_canonically_and_evaluate_exactly(
    built: Built, env_list: list[dict[str, int]]
) -> None:
    e, direct = built
    text = str(e)
    back = parse(text)
    assert back == e, f"{text!r} parsed back as {back!r}"
    assert str(back) == text
    for env in env_list:
        assert e.evaluate(env) == direct(env), (text, env)
        assert back.evaluate(env) == direct(env)


@_PROPERTY
@given(exprs, exprs, st.lists(envs, min_size=1, max_size=4))
def test_order_queries_are_sound(
    a: Built, b: Built, env_list: list[dict[str, int]]
) -> None:
    x, y = a[0], b[0]
    r = diff_range(x, y)
    le = provably_le(x, y)
    lo_min = smin([x, y])
    hi_max = smax([x, y])
    for env in env_list:
        d = x.evaluate(env) - y.evaluate(env)
        if r is not None:
            assert r[0] <= d <= r[1], (str(x), str(y), env)
        if le:
            assert d <= 0, (str(x), str(y), env)
        assert lo_min.evaluate(env) == min(x.evaluate(env), y.evaluate(env))
        assert hi_max.evaluate(env) == max(x.evaluate(env), y.evaluate(env))
