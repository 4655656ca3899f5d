"""The TC parser: tokens to an `ast.Program` (TC-LANGUAGE.md §3).

A hand-written recursive-descent parser. Expressions use precedence climbing
with these levels, lowest first: ``?:`` (right-associative), ``||``, ``&&``,
the comparisons ``== != < > <= >=`` (one left-associative level), ``+ -``,
``* / %``, and the prefix operators ``-`` and ``!``.

Errors go to the `DiagnosticEngine`, never out as exceptions: a syntax error
abandons the current definition, and parsing resumes at the next ``def`` so
that independent errors in different definitions are all reported.
`parse_program` returns the definitions that parsed; `parse` is the
convenience entry point that raises `TCError` when anything went wrong.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import NoReturn

from tcdialect.diagnostics import DiagnosticEngine, Source, Span
from tcdialect.frontend import ast
from tcdialect.frontend.lexer import KEYWORDS, Token, tokenize

#: Deepest allowed nesting of expressions (parentheses, arguments, casts,
#: ternaries, prefix operators); deeper input is a located error.
MAX_NESTING = 200

#: Binding strength of the binary operators (all left-associative).
BINARY_PRECEDENCE: dict[str, int] = {
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

_ASSIGN_EXPECTED = "a valid assignment operator ('=', '+=', '+=!', ...)"
_EQUIVALENCE_UNSUPPORTED = "'<=>' (equivalence) is not supported"
_WHERE_EXPECTED = "a where clause ('i in lo:hi', 'x = expr' or 'exists T(...)')"

# Python frames used per nesting level at worst (expr, ternary, 5 binary
# levels, unary, primary, argument list), with a margin.
_FRAMES_PER_LEVEL = 16


class _Abort(Exception):
    """Internal: a syntax error was reported; unwind to the enclosing def."""


def parse_program(source: Source, diag: DiagnosticEngine) -> ast.Program:
    """Tokenize and parse `source`; report every problem to `diag`.

    Returns the definitions that parsed (possibly none). Never raises for bad
    input: the caller decides what to do, usually `diag.check()`.
    """
    tokens = tokenize(source, diag)
    return _with_recursion_headroom(lambda: _Parser(tokens, diag).program())


def parse(text: str, filename: str = "<string>") -> ast.Program:
    """Parse TC source text; raise `TCError` with all diagnostics on errors."""
    source = Source(text, filename)
    diag = DiagnosticEngine()
    program = parse_program(source, diag)
    diag.check()
    return program


def _with_recursion_headroom(fn: Callable[[], ast.Program]) -> ast.Program:
    """Run `fn` with enough Python stack for `MAX_NESTING` levels."""
    depth = 0
    frame = sys._getframe()  # pyright: ignore[reportPrivateUsage]
    while frame is not None:
        depth += 1
        frame = frame.f_back
    needed = depth + MAX_NESTING * _FRAMES_PER_LEVEL + 200
    old = sys.getrecursionlimit()
    if old >= needed:
        return fn()
    sys.setrecursionlimit(needed)
    try:
        return fn()
    finally:
        sys.setrecursionlimit(old)


class _Parser:
    """Parser state: the token list and a cursor into it."""

    def __init__(self, tokens: list[Token], diag: DiagnosticEngine) -> None:
        self.tokens = tokens
        self.diag = diag
        self.pos = 0
        self.depth = 0

    # ------------------------------------------------------------ helpers

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def at(self, *kinds: str) -> bool:
        return self.tok.kind in kinds

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "EOF":
            self.pos += 1
        return tok

    def accept(self, kind: str) -> Token | None:
        if self.tok.kind == kind:
            return self.advance()
        return None

    def expect(self, kind: str, what: str | None = None) -> Token:
        if self.tok.kind == kind:
            return self.advance()
        self.fail(what if what is not None else f"'{kind}'")

    def fail(self, expected: str) -> NoReturn:
        """Report "expected X but found Y" at the current token."""
        tok = self.tok
        if tok.kind == "<=>":
            self.error(_EQUIVALENCE_UNSUPPORTED, tok.span)
        self.error(f"expected {expected} but found {tok.describe()}", tok.span)

    def error(self, message: str, span: Span) -> NoReturn:
        self.diag.error(message, span)
        raise _Abort

    def ident(self, what: str = "an identifier") -> ast.Ident:
        tok = self.tok
        if tok.kind == "IDENT":
            self.advance()
            return ast.Ident(tok.text, tok.span)
        if tok.kind in KEYWORDS or tok.kind == "TYPE":
            self.error(
                f"expected {what} but found {tok.describe()}, which is a reserved word",
                tok.span,
            )
        self.fail(what)

    # ---------------------------------------------------------- top level

    def program(self) -> ast.Program:
        defs: list[ast.Def] = []
        errors_before = len(self.diag.diagnostics)
        while not self.at("EOF"):
            start = self.pos
            try:
                if not self.at("def"):
                    self.fail("'def'")
                defs.append(self.definition())
            except _Abort:
                self.recover(start)
            except RecursionError:  # a last resort; MAX_NESTING should prevent it
                self.diag.error("expression nested too deeply", self.tok.span)
                self.recover(start)
        no_new_errors = len(self.diag.diagnostics) == errors_before
        if not defs and no_new_errors:
            tok = self.tok
            self.diag.error(f"expected 'def' but found {tok.describe()}", tok.span)
        return ast.Program(tuple(defs))

    def recover(self, start: int) -> None:
        """Skip to the next ``def`` (or the end), past the failed one."""
        self.depth = 0
        if self.pos <= start:
            self.pos = start
            self.advance()
        while not self.at("def", "EOF"):
            self.advance()

    def definition(self) -> ast.Def:
        kw = self.expect("def")
        name = self.ident("a definition name")
        self.expect("(")
        params: list[ast.Param] = []
        if not self.at(")"):
            params.append(self.param())
            while self.accept(","):
                params.append(self.param())
        self.expect(")")
        self.expect("->")
        self.expect("(")
        outputs: list[ast.Output] = []
        if not self.at(")"):
            outputs.append(self.output())
            while self.accept(","):
                outputs.append(self.output())
        self.expect(")")
        self.expect("{")
        body: list[ast.Statement] = []
        while not self.at("}"):
            if self.at_recurrence():
                body.extend(self.recurrence())
                continue
            if not self.at("IDENT"):
                self.fail("a statement or '}'")
            body.append(self.statement())
        close = self.advance()
        return ast.Def(
            name, tuple(params), tuple(outputs), tuple(body), kw.span.join(close.span)
        )

    def scalar_type(self) -> Token:
        return self.expect("TYPE", "a scalar type")

    def param(self) -> ast.Param:
        ty = self.scalar_type()
        dims: list[ast.Dim] = []
        if self.accept("("):
            dims.append(self.dim())
            while self.accept(","):
                dims.append(self.dim())
            self.expect(")")
        name = self.ident("a parameter name")
        return ast.Param(
            ast.SCALAR_TYPES[ty.text],
            ty.span,
            tuple(dims),
            name,
            ty.span.join(name.span),
        )

    def dim(self) -> ast.Dim:
        tok = self.tok
        if tok.kind == "IDENT":
            self.advance()
            return ast.Dim(tok.text, tok.span)
        if tok.kind == "INT":
            self.advance()
            assert isinstance(tok.value, int)
            return ast.Dim(tok.value, tok.span)
        self.fail("a size name or an integer extent")

    def output(self) -> ast.Output:
        if ty := self.accept("TYPE"):
            name = self.ident("an output name")
            return ast.Output(name, ast.SCALAR_TYPES[ty.text], ty.span.join(name.span))
        name = self.ident("an output name")
        return ast.Output(name, None, name.span)

    # --------------------------------------------------------- statements

    def at_recurrence(self) -> bool:
        """At ``for t in``: `for` is a keyword only there (a tensor may still
        be named `for`, since no statement starts with two names)."""
        return (
            self.at("IDENT")
            and self.tok.text == "for"
            and self.peek().kind == "IDENT"
            and self.peek(2).kind == "in"
        )

    def recurrence(self) -> list[ast.Statement]:
        """``for t in lo:hi { stmt+ }``: the statements, each pointing at
        the shared `ast.Recurrence`."""
        kw = self.advance()
        index = self.ident()
        self.expect("in")
        lo = self.expr()
        self.expect(":")
        hi = self.expr()
        loop = ast.Recurrence(index, lo, hi, kw.span.join(hi.span))
        self.expect("{")
        body: list[ast.Statement] = []
        while not self.at("}"):
            if self.at_recurrence():
                self.error("recurrences cannot be nested", self.tok.span)
            if not self.at("IDENT"):
                self.fail("a statement or '}'")
            body.append(self.statement(loop))
        close = self.advance()
        if not body:
            self.error(
                f"the recurrence over '{index.name}' has no statements",
                kw.span.join(close.span),
            )
        return body

    def statement(self, loop: ast.Recurrence | None = None) -> ast.Statement:
        target = self.ident()
        indices: list[ast.Ident] | None = None
        if self.accept("("):
            indices = []
            if not self.at(")"):
                indices.append(self.lhs_index())
                while self.accept(","):
                    indices.append(self.lhs_index())
            self.expect(")")
        op = self.tok
        if op.kind not in ast.ASSIGN_OPS:
            self.fail(_ASSIGN_EXPECTED)
        self.advance()
        rhs = self.expr()
        if self.at("<=>"):
            self.error(_EQUIVALENCE_UNSUPPORTED, self.tok.span)
        end = rhs.span
        where: list[ast.WhereClause] = []
        if self.accept("where"):
            where.append(self.where_clause())
            while self.accept(","):
                where.append(self.where_clause())
            end = where[-1].span
        return ast.Statement(
            target,
            tuple(indices) if indices is not None else None,
            op.kind,
            op.span,
            rhs,
            tuple(where),
            target.span.join(end),
            loop,
        )

    def lhs_index(self) -> ast.Ident:
        """One LHS subscript; anything but a plain name is reported."""
        tok = self.tok
        if tok.kind == "IDENT" and self.peek().kind in (",", ")"):
            self.advance()
            return ast.Ident(tok.text, tok.span)
        if tok.kind in (",", ")", "EOF"):
            self.fail("an index name")
        expr = self.expr()
        if isinstance(expr, ast.Name) and expr.span.text == expr.name:
            return ast.Ident(expr.name, expr.span)  # the caller reports what follows
        self.diag.error(
            "left-hand side subscripts must be plain index names, "
            f"but found '{_snippet(expr.span)}'",
            expr.span,
        )
        return ast.Ident(expr.span.text, expr.span)

    def where_clause(self) -> ast.WhereClause:
        if kw := self.accept("exists"):
            if not (self.at("IDENT") and self.peek().kind == "("):
                self.fail("a tensor access 'T(...)' after 'exists'")
            access = self.primary()
            return ast.ExistsClause(access, kw.span.join(access.span))
        if not self.at("IDENT"):
            self.fail(_WHERE_EXPECTED)
        name = self.ident()
        if self.accept("in"):
            lo = self.expr()
            self.expect(":")
            hi = self.expr()
            return ast.RangeClause(name, lo, hi, name.span.join(hi.span))
        if self.accept("="):
            value = self.expr()
            return ast.LetClause(name, value, name.span.join(value.span))
        self.fail("'in' or '='")

    # -------------------------------------------------------- expressions

    def expr(self) -> ast.Expr:
        """A full expression (ternary level), one nesting level deeper."""
        if self.depth >= MAX_NESTING:
            self.error("expression nested too deeply", self.tok.span)
        self.depth += 1
        try:
            return self.ternary()
        finally:
            self.depth -= 1

    def ternary(self) -> ast.Expr:
        cond = self.binary(1)
        if not self.accept("?"):
            return cond
        then = self.expr()
        self.expect(":")
        other = self.expr()
        return ast.Ternary(cond.span.join(other.span), cond, then, other)

    def binary(self, min_prec: int) -> ast.Expr:
        lhs = self.unary()
        while (prec := BINARY_PRECEDENCE.get(self.tok.kind, 0)) >= min_prec:
            op = self.advance()
            rhs = self.binary(prec + 1)
            lhs = ast.Binary(lhs.span.join(rhs.span), op.kind, lhs, rhs, op.span)
        return lhs

    def unary(self) -> ast.Expr:
        ops: list[Token] = []
        while self.at("-", "!"):
            if self.depth + len(ops) >= MAX_NESTING:
                self.error("expression nested too deeply", self.tok.span)
            ops.append(self.advance())
        self.depth += len(ops)
        try:
            operand = self.primary()
        finally:
            self.depth -= len(ops)
        for op in reversed(ops):
            operand = ast.Unary(op.span.join(operand.span), op.kind, operand)
        return operand

    def primary(self) -> ast.Expr:
        tok = self.tok
        kind = tok.kind
        if kind == "INT":
            self.advance()
            assert isinstance(tok.value, int)
            return ast.IntLit(tok.span, tok.value)
        if kind == "FLOAT":
            self.advance()
            assert isinstance(tok.value, float)
            return ast.FloatLit(tok.span, tok.value)
        if kind == "IDENT":
            self.advance()
            if not self.at("("):
                return ast.Name(tok.span, tok.text)
            args, close = self.arguments()
            return ast.Access(
                tok.span.join(close.span), ast.Ident(tok.text, tok.span), args
            )
        if kind == "(":
            self.advance()
            inner = self.expr()
            close = self.expect(")")
            # The node keeps its own kind; its span takes in the parentheses.
            return dataclasses.replace(inner, span=tok.span.join(close.span))
        if kind == "TYPE":
            self.advance()
            args, close = self.arguments()
            span = tok.span.join(close.span)
            self.check_arity(f"the cast '{tok.text}(...)'", 1, args, span)
            operand = args[0] if args else ast.IntLit(span, 0)
            return ast.Cast(span, ast.SCALAR_TYPES[tok.text], operand)
        if kind in ("min", "max"):
            self.advance()
            args, close = self.arguments()
            span = tok.span.join(close.span)
            self.check_arity(f"'{kind}'", 2, args, span)
            lhs = args[0] if args else ast.IntLit(span, 0)
            rhs = args[1] if len(args) > 1 else lhs
            return ast.MinMax(span, kind, lhs, rhs)
        self.fail("an expression")

    def arguments(self) -> tuple[tuple[ast.Expr, ...], Token]:
        """``( expr, ... )``: the arguments and the closing parenthesis."""
        self.expect("(")
        args: list[ast.Expr] = []
        if not self.at(")"):
            args.append(self.expr())
            while self.accept(","):
                args.append(self.expr())
        close = self.expect(")")
        return tuple(args), close

    def check_arity(
        self, what: str, expected: int, args: tuple[ast.Expr, ...], span: Span
    ) -> None:
        """Report (without aborting) a wrong argument count."""
        if len(args) == expected:
            return
        plural = "argument" if expected == 1 else "arguments"
        given = "1 was" if len(args) == 1 else f"{len(args)} were"
        self.diag.error(
            f"{what} takes exactly {expected} {plural} but {given} given", span
        )


def _snippet(span: Span, limit: int = 40) -> str:
    """The text of `span` on one line, shortened for a message."""
    text = " ".join(span.text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
