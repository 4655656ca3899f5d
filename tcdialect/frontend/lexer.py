"""The TC lexer: source text to a list of `Token`s (TC-LANGUAGE.md §2).

Token kinds (`Token.kind`):

- ``"IDENT"``: an identifier (``info``, ``nan_mask``, ``inf`` are identifiers).
- ``"INT"``: an integer literal; `Token.value` is its `int` value.
- ``"FLOAT"``: a floating literal (float32); `Token.value` is its `float` value.
- ``"TYPE"``: a scalar type name (a key of `ast.SCALAR_TYPES`, e.g. ``float``).
- a keyword, with the keyword as kind: ``def in where exists min max``.
- an operator or punctuation, with its text as kind: the multi-character
  tokens in `MULTI_CHAR_TOKENS` (``min=``, ``+=!``, ``<=>``, ...) and the
  single characters in `SINGLE_CHAR_TOKENS`.
- ``"EOF"``: always the last token, with an empty span at the end of input.

Errors (unknown characters, integer literals that do not fit in int32) are
reported to the `DiagnosticEngine`; lexing continues so that several errors
can be reported at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcdialect.diagnostics import DiagnosticEngine, Source, Span
from tcdialect.frontend.ast import SCALAR_TYPES

#: Reserved words that are their own token kind.
KEYWORDS: frozenset[str] = frozenset({"def", "in", "where", "exists", "min", "max"})

#: Operators of more than one character, longest first (longest match wins).
#: ``min=``, ``max=``, ``min=!`` and ``max=!`` are lexed from identifiers, see
#: `tokenize`.
MULTI_CHAR_TOKENS: tuple[str, ...] = (
    "<=>",
    "+=!",
    "*=!",
    "->",
    "+=",
    "*=",
    ">=",
    "<=",
    "==",
    "!=",
    "&&",
    "||",
)

#: Operators and punctuation of one character.
SINGLE_CHAR_TOKENS: frozenset[str] = frozenset("+-*/%()[]?:,={}><!")

#: The largest value of an int32 literal (a sign is never part of a literal).
INT32_MAX = 2**31 - 1

_WHITESPACE = frozenset(" \t\r\n\f\v")
_LINE_END = re.compile(r"[\r\n]")
_DIGITS = frozenset("0123456789")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_TAIL_RE = re.compile(r"[A-Za-z0-9_]*")
_NUMBER_RE = re.compile(
    r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # 1.5  1.  .5  .5e-7
    r"|[0-9]+[eE][+-]?[0-9]+"  # 3e-3  3E-5  2e10
    r"|[0-9]+"  # 42
)


@dataclass(frozen=True)
class Token:
    """One token: its kind (see the module docstring), text and place.

    `value` is the numeric value of ``INT`` and ``FLOAT`` tokens, else None.
    """

    kind: str
    text: str
    span: Span
    value: int | float | None = None

    def describe(self) -> str:
        """How diagnostics name this token: ``'where'`` or ``end of input``."""
        if self.kind == "EOF":
            return "end of input"
        return f"'{self.text}'"


def _describe_chars(text: str) -> str:
    if text.isprintable():
        return f"'{text}'"
    return repr(text)


def tokenize(source: Source, diag: DiagnosticEngine) -> list[Token]:
    """Split `source` into tokens; the list always ends with an ``EOF`` token.

    Unknown characters are reported (a run of them as one error) and skipped;
    integer literals that do not fit in int32 are reported and kept.
    """
    text = source.text
    n = len(text)
    tokens: list[Token] = []
    pos = 0
    bad_start = -1  # start of a run of unknown characters, or -1

    def flush_bad(end: int) -> None:
        nonlocal bad_start
        if bad_start < 0:
            return
        chars = text[bad_start:end]
        what = "character" if len(chars) == 1 else "characters"
        diag.error(
            f"unexpected {what} {_describe_chars(chars)}",
            Span(source, bad_start, end),
        )
        bad_start = -1

    while pos < n:
        c = text[pos]
        if c in _WHITESPACE or c == "#":
            flush_bad(pos)
            if c == "#":  # to the end of the line ("\n", "\r\n" or "\r")
                end = _LINE_END.search(text, pos)
                pos = n if end is None else end.start()
            else:
                pos += 1
            continue
        tok = _lex_one(source, pos, diag)
        if tok is None:
            if bad_start < 0:
                bad_start = pos
            pos += 1
            continue
        flush_bad(pos)
        tokens.append(tok)
        pos = tok.span.end
    flush_bad(n)
    tokens.append(Token("EOF", "", Span(source, n, n)))
    return tokens


def _lex_one(source: Source, pos: int, diag: DiagnosticEngine) -> Token | None:
    """The token starting at `pos`, or None if no token starts there."""
    text = source.text
    c = text[pos]
    if c.isascii() and (c.isalpha() or c == "_"):
        return _lex_word(source, pos)
    if c in _DIGITS or (c == "." and text[pos + 1 : pos + 2] in _DIGITS):
        return _lex_number(source, pos, diag)
    for op in MULTI_CHAR_TOKENS:
        if text.startswith(op, pos):
            return Token(op, op, Span(source, pos, pos + len(op)))
    if c in SINGLE_CHAR_TOKENS:
        return Token(c, c, Span(source, pos, pos + 1))
    return None


def _lex_word(source: Source, pos: int) -> Token:
    """An identifier, keyword, type name, or a ``min=``/``max=`` operator."""
    text = source.text
    m = _IDENT_RE.match(text, pos)
    assert m is not None
    word = m.group()
    end = m.end()
    if word in ("min", "max") and text.startswith("=", end):
        if not text.startswith("==", end):
            end += 1
            if text.startswith("!", end):
                end += 1
            op = text[pos:end]
            return Token(op, op, Span(source, pos, end))
    if word in KEYWORDS:
        kind = word
    elif word in SCALAR_TYPES:
        kind = "TYPE"
    else:
        kind = "IDENT"
    return Token(kind, word, Span(source, pos, end))


def _lex_number(source: Source, pos: int, diag: DiagnosticEngine) -> Token:
    """An ``INT`` or ``FLOAT`` literal; reports int32 overflow and bad suffixes.

    A literal directly followed by letters, digits or ``_`` (``1.0f``, ``1e``,
    ``3abc``) is reported as invalid; the token covers the whole word and its
    value is that of the valid prefix, so parsing can go on.
    """
    text = source.text
    m = _NUMBER_RE.match(text, pos)
    assert m is not None
    lit = m.group()
    end = m.end()
    tail = _IDENT_TAIL_RE.match(text, end)
    if tail is not None and tail.end() > end:
        end = tail.end()
        diag.error(
            f"invalid numeric literal '{_shorten(text[pos:end])}'",
            Span(source, pos, end),
        )
    span = Span(source, pos, end)
    if "." in lit or "e" in lit or "E" in lit:
        return Token("FLOAT", text[pos:end], span, float(lit))
    # Avoid int() on huge digit strings (Python limits their conversion).
    digits = lit.lstrip("0")
    value = int(digits or "0") if len(digits) <= 1000 else INT32_MAX + 1
    if value > INT32_MAX:
        diag.error(f"integer literal {_shorten(lit)} does not fit in int32", span)
    return Token("INT", text[pos:end], span, value)


def _shorten(text: str) -> str:
    return text if len(text) <= 24 else text[:20] + "..."
