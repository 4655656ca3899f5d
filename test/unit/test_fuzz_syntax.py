"""Fuzz tests for the TC lexer and parser.

Property: `parse()` either returns a `Program` or raises `TCError`; nothing
else escapes, and every located diagnostic renders with a
``file:line:col:`` header and a caret line. Inputs are random token streams,
random mutations of valid programs, and every prefix of a few valid programs.
A last property checks precedence: random expression trees printed with the
fewest parentheses the grammar needs parse back to the same tree.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcdialect.diagnostics import TCError
from tcdialect.frontend import ast
from tcdialect.frontend.lexer import KEYWORDS, MULTI_CHAR_TOKENS, SINGLE_CHAR_TOKENS
from tcdialect.frontend.parser import parse

FILENAME = "fuzz.tc"

PROGRAMS = (
    """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
""",
    """
# clamp with scalar inputs
def clamp_mask(float(N) X, float lo, float hi) -> (Y, int32 cnt) {
    Y(n) = (X(n) >= lo && X(n) <= hi) ? X(n) : -0.5e-3
    cnt +=! int32(!(Y(r_n) == 0.0) || 3E-5 > 1.)
}
""",
    """
def pool3(float(B, H, W) X, int32(K) Idx) -> (Y, O) {
    Y(b, h, w) max=! X(b, 3 * h + r_i, 3 * w + r_j) where r_i in 0:3, r_j in 0:3
    O(k) = d % 2 / max(min(Idx(k), 4 - 1), 0) where d = Idx(k), exists X(k, 0, 0)
}
def iota_fill(float v) -> (O) {
    O() = v + float(i) where i in 0:16
}
""",
)

_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
_HEADER = re.compile(r"^fuzz\.tc:(\d+):(\d+): (error|warning): ")


def check_parse(text: str) -> None:
    """The fuzz property for one input text."""
    try:
        program = parse(text, FILENAME)
    except TCError as err:
        assert err.errors, "a TCError must carry at least one error"
        for diag in err.diagnostics:
            if diag.span is None:
                continue
            line, col = diag.span.source.line_col(diag.span.start)
            rendered = diag.render().split("\n")
            m = _HEADER.match(rendered[0])
            assert m is not None, rendered[0]
            assert (int(m.group(1)), int(m.group(2))) == (line, col)
            assert len(rendered) >= 3
            assert "^" in rendered[2]
        return
    assert isinstance(program, ast.Program)
    assert program.defs
    for d in program.defs:
        assert d.span.text.startswith("def")
        assert d.span.text.endswith("}")
        for s in d.body:
            assert d.span.start <= s.span.start < s.span.end <= d.span.end


# ------------------------------------------------------- random token streams

_VOCABULARY = (
    sorted(KEYWORDS)
    + sorted(MULTI_CHAR_TOKENS)
    + ["min=", "max=", "min=!", "max=!"]
    + sorted(SINGLE_CHAR_TOKENS)
    + ["float", "int32", "double", "bool", "uint8", "float16"]
    + ["A", "B", "O", "i", "j", "r_k", "N", "info", "nan_mask", "exp", "fma"]
    + ["0", "1", "42", "2147483648", "1.5", ".5", "1.", "3E-5", "2e10", "1e"]
    + ["$", "@", ".", "&", "|", "\x00", "é", "`", "'", '"', "\\", "\t", "\r"]
    + ["# comment\n", "\n"]
)

_token_streams = st.lists(
    st.tuples(st.sampled_from(_VOCABULARY), st.sampled_from(["", " ", "\n"])),
    max_size=60,
).map(lambda pairs: "".join(tok + sep for tok, sep in pairs))

# Streams that start like a definition reach deeper into the parser.
_def_streams = _token_streams.map(lambda s: "def f(float(N) A) -> (O) {" + s)


@_SETTINGS
@given(st.one_of(_token_streams, _def_streams))
def test_random_token_streams(text: str) -> None:
    check_parse(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_random_text(text: str) -> None:
    check_parse(text)


# --------------------------------------------------- mutated valid programs

_mutation = st.tuples(
    st.sampled_from(["delete", "duplicate", "replace", "insert", "cut"]),
    st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    st.sampled_from(_VOCABULARY),
)


def mutate(text: str, mutations: list[tuple[str, float, str]]) -> str:
    for kind, where, tok in mutations:
        if not text:
            break
        i = int(where * len(text))
        if kind == "delete":
            text = text[:i] + text[i + 1 :]
        elif kind == "duplicate":
            text = text[: i + 1] + text[i:]
        elif kind == "replace":
            text = text[:i] + tok + text[i + 1 :]
        elif kind == "insert":
            text = text[:i] + " " + tok + " " + text[i:]
        else:  # cut a random slice of up to 8 characters
            text = text[:i] + text[i + 1 + len(tok) % 8 :]
    return text


@_SETTINGS
@given(
    st.sampled_from(PROGRAMS),
    st.lists(_mutation, min_size=1, max_size=4),
)
def test_mutated_programs(
    program: str, mutations: list[tuple[str, float, str]]
) -> None:
    check_parse(mutate(program, mutations))


# ------------------------------------------------------------- truncations


def test_valid_programs_parse() -> None:
    for program in PROGRAMS:
        parse(program, FILENAME)


def test_every_prefix() -> None:
    for program in PROGRAMS[1:]:
        for n in range(len(program) + 1):
            check_parse(program[:n])


# ----------------------------------------------- precedence round trip

_PREC = {
    "?": 0,
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 3,
    ">": 3,
    "<=": 3,
    ">=": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "%": 5,
}
_ATOM = 7

_leaves = st.one_of(
    st.sampled_from(["a", "b", "c", "N"]),
    st.integers(min_value=0, max_value=99).map(str),
)


def _extend(children: st.SearchStrategy[tuple]) -> st.SearchStrategy[tuple]:
    return st.one_of(
        st.tuples(st.sampled_from(sorted(set(_PREC) - {"?"})), children, children),
        st.tuples(st.sampled_from(["u-", "u!"]), children),
        st.tuples(st.just("?"), children, children, children),
        st.tuples(st.sampled_from(["min", "max"]), children, children),
        st.tuples(st.just("A"), children),
    )


_trees = st.recursive(_leaves, _extend, max_leaves=12)


def show_min(t: object) -> tuple[str, int]:
    """TC text with the fewest parentheses, and its precedence level."""
    if isinstance(t, str):
        return t, _ATOM
    assert isinstance(t, tuple)
    op = t[0]
    if op in ("min", "max"):
        return f"{op}({show_min(t[1])[0]}, {show_min(t[2])[0]})", _ATOM
    if op == "A":
        return f"A({show_min(t[1])[0]})", _ATOM
    if op in ("u-", "u!"):
        text, prec = show_min(t[1])
        if prec < 6:
            text = f"({text})"
        return f"{op[1]}{text}", 6
    if op == "?":
        c, cp = show_min(t[1])
        if cp <= 0:
            c = f"({c})"
        return f"{c} ? {show_min(t[2])[0]} : {show_min(t[3])[0]}", 0
    prec = _PREC[op]
    lhs, lp = show_min(t[1])
    rhs, rp = show_min(t[2])
    if lp < prec:
        lhs = f"({lhs})"
    if rp <= prec:
        rhs = f"({rhs})"
    return f"{lhs} {op} {rhs}", prec


def show_full(t: object) -> str:
    """The tree as an s-expression, the same way for both sides."""
    if isinstance(t, str):
        return t
    assert isinstance(t, tuple)
    op = t[0].removeprefix("u")
    return f"({op} {' '.join(show_full(c) for c in t[1:])})"


def tree_of(e: ast.Expr) -> str:
    match e:
        case ast.IntLit(value=v):
            return str(v)
        case ast.Name(name=n):
            return n
        case ast.Access(callee=c, args=(arg,)):
            return f"({c.name} {tree_of(arg)})"
        case ast.Unary(op=op, operand=x):
            return f"({op} {tree_of(x)})"
        case ast.Binary(op=op, lhs=a, rhs=b):
            return f"({op} {tree_of(a)} {tree_of(b)})"
        case ast.Ternary(cond=c, then=x, other=y):
            return f"(? {tree_of(c)} {tree_of(x)} {tree_of(y)})"
        case ast.MinMax(op=op, lhs=a, rhs=b):
            return f"({op} {tree_of(a)} {tree_of(b)})"
        case _:
            raise AssertionError(f"unexpected node {e!r}")


@_SETTINGS
@given(_trees)
def test_minimal_parentheses_round_trip(tree: object) -> None:
    text, _ = show_min(tree)
    program = parse(f"def f() -> (O) {{ O = {text} }}", FILENAME)
    (stmt,) = program.defs[0].body
    assert tree_of(stmt.rhs) == show_full(tree)
