"""Located diagnostics and the `TCError` exception.

Every user-facing failure of tcdialect is a `TCError`. It carries structured
`Diagnostic`s (severity, message, source span, notes) and renders them the way
TC-LANGUAGE.md §5 asks::

    matmul.tc:2:27: error: undefined tensor 'Bt'; did you mean 'B'?
        C(m, n) +=! A(m, r_k) * Bt(r_k, n)
                                ^~
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "note"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Source:
    """A named source text; spans point into it."""

    text: str
    filename: str = "<string>"

    def _line_starts(self) -> list[int]:
        """Offsets where lines start: lines end at "\\n", "\\r\\n" or a lone "\\r"
        (the lexer takes all three as whitespace)."""
        return [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        starts = self._line_starts()
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        lines = _LINE_BREAK.split(self.text)
        if 1 <= line <= len(lines):
            return lines[line - 1]
        return ""


@dataclass(frozen=True)
class Span:
    """A half-open character range [start, end) of a `Source`."""

    source: Source
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            object.__setattr__(self, "end", self.start)

    @property
    def text(self) -> str:
        return self.source.text[self.start : self.end]

    def join(self, other: Span) -> Span:
        return Span(self.source, min(self.start, other.start), max(self.end, other.end))

    def location(self) -> str:
        line, col = self.source.line_col(self.start)
        return f"{self.source.filename}:{line}:{col}"


@dataclass(frozen=True)
class Diagnostic:
    """One error, warning or note, optionally located, with attached notes."""

    severity: Severity
    message: str
    span: Span | None = None
    notes: tuple[Diagnostic, ...] = field(default=())

    def render(self) -> str:
        """The diagnostic as text: header line, source line, caret line, notes."""
        if self.span is None:
            out = [f"{self.severity}: {self.message}"]
        else:
            out = [f"{self.span.location()}: {self.severity}: {self.message}"]
            out.extend(_caret_lines(self.span))
        out.extend(n.render() for n in self.notes)
        return "\n".join(out)


def _caret_lines(span: Span) -> list[str]:
    line, col = span.source.line_col(span.start)
    text = span.source.line_text(line)
    line_start = span.start - (col - 1)
    line_end = line_start + len(text)
    end = min(max(span.end, span.start + 1), max(line_end, span.start + 1))
    width = max(1, end - span.start)
    # Keep tabs so the caret lines up under tab-indented source.
    pad = "".join("\t" if c == "\t" else " " for c in text[: col - 1])
    return ["    " + text, "    " + pad + "^" + "~" * (width - 1)]


class TCError(Exception):
    """A user-facing tcdialect failure.

    `str(err)` is the rendered text of all diagnostics; `err.diagnostics`
    holds them structured. Raised for bad TC source, bad IR, bad call
    arguments and, wrapped with the pass name, internal pass failures.
    """

    def __init__(self, diagnostics: str | Diagnostic | Iterable[Diagnostic]):
        if isinstance(diagnostics, str):
            diags: tuple[Diagnostic, ...] = (Diagnostic("error", diagnostics),)
        elif isinstance(diagnostics, Diagnostic):
            diags = (diagnostics,)
        else:
            diags = tuple(diagnostics)
        self.diagnostics: tuple[Diagnostic, ...] = diags
        super().__init__(render_all(diags))

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")


class OutOfBoundsRead(TCError):
    """A checked read of compiled code fell outside its tensor (the read was
    skipped, the outputs are invalid). `Kernel` adds the reference
    interpreter's account of the first bad read: the index tensor's element,
    its value and the valid range."""

    def __init__(self, tensor: str):
        self.tensor = tensor
        super().__init__(
            f"out-of-bounds read of tensor '{tensor}': a data-dependent subscript "
            "fell outside its extent (the read was skipped; outputs are invalid)"
        )


class OutOfBoundsAccess(TCError):
    """The reference interpreter's account of an access outside its tensor,
    with where it is: the tensor, the subscript `dim`, and the statement (its
    target, and `ordinal`: how many statements writing that target come
    before it), from which `Kernel` finds the access in the source."""

    def __init__(
        self, message: str, tensor: str, dim: int, statement: str, ordinal: int
    ):
        super().__init__(message)
        self.tensor, self.dim = tensor, dim
        self.statement, self.ordinal = statement, ordinal


def render_all(diagnostics: Sequence[Diagnostic]) -> str:
    return "\n".join(d.render() for d in diagnostics)


class DiagnosticEngine:
    """Collects diagnostics; `check()` raises a `TCError` if any is an error."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def error(self, message: str, span: Span | None = None, *notes: Diagnostic) -> None:
        self.diagnostics.append(Diagnostic("error", message, span, tuple(notes)))

    def warning(
        self, message: str, span: Span | None = None, *notes: Diagnostic
    ) -> None:
        self.diagnostics.append(Diagnostic("warning", message, span, tuple(notes)))

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def check(self) -> None:
        if self.has_errors:
            raise TCError(self.diagnostics)


def note(message: str, span: Span | None = None) -> Diagnostic:
    return Diagnostic("note", message, span)
