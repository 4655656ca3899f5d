"""The TC language frontend: source text -> checked model -> tc dialect.

* `analyze(source, filename)`: lex, parse and check; returns the
  `CheckedProgram` (raises `TCError` with every located diagnostic found).
* `parse_tc(source, filename)`: the same, lowered to a verified `ModuleOp` of
  `tc.def`s.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from tcdialect.diagnostics import Diagnostic, DiagnosticEngine, Source, TCError
from tcdialect.frontend.sema import CheckedProgram


def analyze(
    source: str, filename: str = "<string>", diag: DiagnosticEngine | None = None
) -> CheckedProgram:
    """Parse and check TC source; raise `TCError` on any error."""
    from tcdialect.frontend import parser, sema

    diag = diag if diag is not None else DiagnosticEngine()
    src = Source(source, filename)
    program = parser.parse_program(src, diag)
    diag.check()
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
    module = ir_gen.gen_module(checked)
    try:
        module.verify()
    except Exception as e:  # an IR generation bug, never the user's fault
        raise TCError(f"internal error: the frontend produced invalid IR: {e}") from e
    return module


__all__ = ["TCError", "analyze", "parse_tc"]
