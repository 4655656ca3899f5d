"""Unit tests for the TC lexer (TC-LANGUAGE.md §2)."""

from __future__ import annotations

import pytest

from tcdialect.diagnostics import DiagnosticEngine, Source
from tcdialect.frontend.ast import SCALAR_TYPES
from tcdialect.frontend.lexer import (
    MULTI_CHAR_TOKENS,
    SINGLE_CHAR_TOKENS,
    Token,
    tokenize,
)


def lex(text: str) -> tuple[list[Token], DiagnosticEngine]:
    diag = DiagnosticEngine()
    return tokenize(Source(text, "t.tc"), diag), diag


def kinds(text: str) -> list[str]:
    tokens, diag = lex(text)
    assert not diag.diagnostics, [d.render() for d in diag.diagnostics]
    return [t.kind for t in tokens]


def only(text: str) -> Token:
    tokens, diag = lex(text)
    assert not diag.diagnostics, [d.render() for d in diag.diagnostics]
    assert len(tokens) == 2 and tokens[1].kind == "EOF"
    return tokens[0]


def test_empty_input_is_just_eof() -> None:
    tokens, diag = lex("")
    assert [t.kind for t in tokens] == ["EOF"]
    assert tokens[0].span.start == tokens[0].span.end == 0
    assert not diag.diagnostics


def test_eof_span_is_at_end_of_input() -> None:
    tokens, _ = lex("a  \n")
    assert tokens[-1].kind == "EOF"
    assert tokens[-1].span.start == 4


def test_identifiers() -> None:
    for name in ("a", "_", "_x1", "r_k", "Abc_09", "info", "nan_mask", "inf", "nan"):
        tok = only(name)
        assert (tok.kind, tok.text, tok.value) == ("IDENT", name, None)


def test_inference_and_prefixed_keywords_are_identifiers() -> None:
    for name in ("inference", "defs", "wherever", "minimum", "maxi", "floats"):
        assert only(name).kind == "IDENT"


@pytest.mark.parametrize("word", ["def", "in", "where", "exists", "min", "max"])
def test_keywords(word: str) -> None:
    tok = only(word)
    assert (tok.kind, tok.text) == (word, word)


@pytest.mark.parametrize("name", sorted(SCALAR_TYPES))
def test_scalar_type_names(name: str) -> None:
    tok = only(name)
    assert (tok.kind, tok.text) == ("TYPE", name)


@pytest.mark.parametrize("op", MULTI_CHAR_TOKENS)
def test_multi_char_tokens(op: str) -> None:
    tok = only(op)
    assert (tok.kind, tok.text) == (op, op)


@pytest.mark.parametrize("op", sorted(SINGLE_CHAR_TOKENS))
def test_single_char_tokens(op: str) -> None:
    tok = only(op)
    assert (tok.kind, tok.text) == (op, op)


@pytest.mark.parametrize("op", ["min=", "max=", "min=!", "max=!"])
def test_min_max_assignment_tokens(op: str) -> None:
    tok = only(op)
    assert (tok.kind, tok.text) == (op, op)
    assert kinds(f"O(i) {op} A(i)") == ["IDENT", "(", "IDENT", ")", op] + [
        "IDENT",
        "(",
        "IDENT",
        ")",
        "EOF",
    ]


def test_min_max_operators_are_keywords() -> None:
    assert kinds("min(a, b)") == ["min", "(", "IDENT", ",", "IDENT", ")", "EOF"]
    assert kinds("max (a,b)")[:2] == ["max", "("]


def test_min_followed_by_double_equals_is_not_an_assignment() -> None:
    assert kinds("min==") == ["min", "==", "EOF"]
    assert kinds("min =") == ["min", "=", "EOF"]
    assert kinds("max= =") == ["max=", "=", "EOF"]


def test_longest_match() -> None:
    assert kinds("+=!") == ["+=!", "EOF"]
    assert kinds("+= !") == ["+=", "!", "EOF"]
    assert kinds("<=>") == ["<=>", "EOF"]
    assert kinds("<= >") == ["<=", ">", "EOF"]
    assert kinds("a<=-b") == ["IDENT", "<=", "-", "IDENT", "EOF"]
    assert kinds("->-") == ["->", "-", "EOF"]
    assert kinds("!!=") == ["!", "!=", "EOF"]
    assert kinds("===") == ["==", "=", "EOF"]


def test_lone_ampersand_and_bar_are_errors() -> None:
    tokens, diag = lex("a & b | c &&& d")
    assert [t.kind for t in tokens] == ["IDENT", "IDENT", "IDENT", "&&", "IDENT", "EOF"]
    assert [d.message for d in diag.diagnostics] == [
        "unexpected character '&'",
        "unexpected character '|'",
        "unexpected character '&'",
    ]


def test_integer_literals() -> None:
    for text, value in (("0", 0), ("42", 42), ("007", 7), ("2147483647", 2**31 - 1)):
        tok = only(text)
        assert (tok.kind, tok.value) == ("INT", value)
        assert isinstance(tok.value, int)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("3e-3", 3e-3),
        ("3E-5", 3e-5),
        ("2e10", 2e10),
        (".5e-7", 0.5e-7),
        ("1.e5", 1e5),
        ("1e+2", 100.0),
        ("0.0", 0.0),
    ],
)
def test_float_literals(text: str, value: float) -> None:
    tok = only(text)
    assert tok.kind == "FLOAT"
    assert isinstance(tok.value, float)
    assert tok.value == pytest.approx(value)


def test_capital_e_exponent_is_float_not_int() -> None:
    tok = only("3E-5")
    assert tok.kind == "FLOAT"
    assert tok.value == pytest.approx(3e-5)


def test_sign_is_never_part_of_a_literal() -> None:
    tokens, _ = lex("-3 +2.5 1-2 1e-3-4")
    assert [(t.kind, t.text) for t in tokens] == [
        ("-", "-"),
        ("INT", "3"),
        ("+", "+"),
        ("FLOAT", "2.5"),
        ("INT", "1"),
        ("-", "-"),
        ("INT", "2"),
        ("FLOAT", "1e-3"),
        ("-", "-"),
        ("INT", "4"),
        ("EOF", ""),
    ]


def test_dot_digit_after_identifier_is_a_float() -> None:
    # TC's documented `T.1` syntax never worked: '.1' is the number 0.1.
    assert kinds("T.1") == ["IDENT", "FLOAT", "EOF"]


def test_int32_overflow_is_a_located_error() -> None:
    tokens, diag = lex("x + 2147483648")
    assert tokens[2].kind == "INT"
    (err,) = diag.diagnostics
    assert err.severity == "error"
    assert err.message == "integer literal 2147483648 does not fit in int32"
    assert err.render() == (
        "t.tc:1:5: error: integer literal 2147483648 does not fit in int32\n"
        "    x + 2147483648\n"
        "        ^~~~~~~~~~"
    )


def test_huge_integer_literal_does_not_crash() -> None:
    tokens, diag = lex("9" * 5000)
    assert tokens[0].kind == "INT"
    (err,) = diag.diagnostics
    assert "does not fit in int32" in err.message
    assert len(err.message) < 80


def test_numeric_literal_with_a_suffix_is_an_error() -> None:
    for text in ("1.0f", "1e", "3abc", "2e10x"):
        tokens, diag = lex(text)
        assert [t.kind for t in tokens][1:] == ["EOF"]
        (err,) = diag.diagnostics
        assert err.message == f"invalid numeric literal '{text}'"
        assert err.span is not None and err.span.text == text


def test_comments_and_whitespace() -> None:
    text = "# header\ndef # trailing ( comment\n\t  f  #\r\n#last"
    tokens, diag = lex(text)
    assert not diag.diagnostics
    assert [(t.kind, t.text) for t in tokens] == [
        ("def", "def"),
        ("IDENT", "f"),
        ("EOF", ""),
    ]


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_line_endings(nl: str) -> None:
    """Unix, Windows and old Mac line ends: comments stop at them and
    locations count them as lines; the caret line shows one line."""
    text = nl.join(["# c (", "def f", "  g  # x", "  $h"])
    tokens, diag = lex(text)
    assert [t.text for t in tokens] == ["def", "f", "g", "h", ""]
    assert tokens[2].span.location() == "t.tc:3:3"
    (err,) = diag.diagnostics
    assert err.span is not None and err.span.location() == "t.tc:4:3"
    assert err.span.source.line_text(4) == "  $h"
    assert err.render().splitlines()[1:] == ["      $h", "      ^"]


def test_spans() -> None:
    text = "C(m) +=! A(m)\n  * 1.5"
    tokens, _ = lex(text)
    for tok in tokens[:-1]:
        assert tok.span.text == tok.text
    assert tokens[4].span.start == 5
    assert tokens[-2].span.location() == "t.tc:2:5"


def test_unknown_character_is_reported_and_skipped() -> None:
    tokens, diag = lex("a $ b @ c")
    assert [t.text for t in tokens] == ["a", "b", "c", ""]
    assert [d.message for d in diag.diagnostics] == [
        "unexpected character '$'",
        "unexpected character '@'",
    ]
    assert diag.diagnostics[1].render() == (
        "t.tc:1:7: error: unexpected character '@'\n    a $ b @ c\n          ^"
    )


def test_run_of_unknown_characters_is_one_error() -> None:
    tokens, diag = lex("a $$`\n. b")
    assert [t.text for t in tokens] == ["a", "b", ""]
    assert [d.message for d in diag.diagnostics] == [
        "unexpected characters '$$`'",
        "unexpected character '.'",
    ]


def test_non_ascii_and_control_characters() -> None:
    tokens, diag = lex("x\u00e9 \x00 \u0663")
    assert [t.text for t in tokens] == ["x", ""]
    assert [d.message for d in diag.diagnostics] == [
        "unexpected character 'é'",
        "unexpected character '\\x00'",
        "unexpected character '٣'",
    ]


def test_dot_before_non_ascii_digit_is_not_a_number() -> None:
    tokens, diag = lex(".\u0663")
    assert [t.kind for t in tokens] == ["EOF"]
    assert len(diag.diagnostics) == 1


def test_describe() -> None:
    tokens, _ = lex("where")
    assert tokens[0].describe() == "'where'"
    assert tokens[1].describe() == "end of input"
