"""The TC language frontend: source text -> checked model -> tc dialect.

* `analyze(source, filename)`: lex, parse and check; returns the
  `CheckedProgram` (raises `TCError` with every located diagnostic found).
* `parse_tc(source, filename)`: the same, lowered to a verified `ModuleOp` of
  `tc.def`s.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tcdialect.diagnostics import Diagnostic, DiagnosticEngine, Source, TCError
from tcdialect.frontend.sema import TOO_DEEP, CheckedDef, CheckedProgram
from tcdialect.verifier import verify

if TYPE_CHECKING:
    from tcdialect.dialects.tc import DefOp

_RECURSION_LIMIT = 20_000


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Room for deeply nested expressions; too deep becomes a `TCError`.

    The parser bounds nesting, but long operator chains (``a + a + ... + a``)
    build deep left-leaning trees that the recursive checks walk.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise TCError(TOO_DEEP) from None
    finally:
        sys.setrecursionlimit(old)


def analyze(
    source: str, filename: str = "<string>", diag: DiagnosticEngine | None = None
) -> CheckedProgram:
    """Parse and check TC source; raise `TCError` on any error."""
    from tcdialect.frontend import parser, sema

    if not isinstance(source, str):
        raise TCError(
            f"the TC source must be a str, not {type(source).__name__}"
            + (
                " (decode it first, e.g. source.decode())"
                if isinstance(source, bytes)
                else ""
            )
        )
    if not isinstance(filename, str):
        raise TCError(f"filename must be a str, not {type(filename).__name__}")
    diag = diag if diag is not None else DiagnosticEngine()
    src = Source(source, filename)
    program = parser.parse_program(src, diag)
    diag.check()
    with _deep_recursion():
        checked = sema.analyze(program, diag)
    diag.check()
    return checked


def parse_tc(
    source: str,
    filename: str = "<string>",
    on_warning: Callable[[Diagnostic], None] | None = None,
) -> ModuleOp:
    """TC source to a verified module of `tc.def` ops.

    Warnings (e.g. an unused temporary) go to `on_warning` when given.
    """
    from tcdialect.frontend import ir_gen

    checked = analyze(source, filename)
    if on_warning is not None:
        for w in checked.warnings:
            on_warning(w)
    return _verified(lambda: ir_gen.gen_module(checked))


def lower_def(checked: CheckedDef) -> DefOp:
    """The verified `tc.def` of one checked definition (what `parse_tc` builds
    for each), for callers that checked a program and picked one."""
    from tcdialect.frontend import ir_gen

    return _verified(lambda: ir_gen.gen_def(checked))


_Op = TypeVar("_Op", bound=Operation)


def _verified(build: Callable[[], _Op]) -> _Op:
    """`build()` (IR generation) with room for deep expressions, verified."""
    with _deep_recursion():
        op = build()
    try:
        verify(op)
    except Exception as e:  # an IR generation bug, never the user's fault
        raise TCError(f"internal error: the frontend produced invalid IR: {e}") from e
    return op


__all__ = ["TCError", "analyze", "lower_def", "parse_tc"]
