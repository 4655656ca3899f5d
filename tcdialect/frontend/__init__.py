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

from xdsl.dialects.builtin import ModuleOp

from tcdialect.diagnostics import Diagnostic, DiagnosticEngine, Source, TCError
from tcdialect.frontend.sema import CheckedProgram

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
        raise TCError("expression too deeply nested or too long to compile") from None
    finally:
        sys.setrecursionlimit(old)


def analyze(
    source: str, filename: str = "<string>", diag: DiagnosticEngine | None = None
) -> CheckedProgram:
    """Parse and check TC source; raise `TCError` on any error."""
    from tcdialect.frontend import parser, sema

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
    with _deep_recursion():
        module = ir_gen.gen_module(checked)
    try:
        module.verify()
    except Exception as e:  # an IR generation bug, never the user's fault
        raise TCError(f"internal error: the frontend produced invalid IR: {e}") from e
    return module


__all__ = ["TCError", "analyze", "parse_tc"]
