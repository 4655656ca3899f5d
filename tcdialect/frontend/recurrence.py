"""Checks of recurrences (ext): ``for t in lo:hi { ... }`` blocks.

A recurrence runs its statements once per value of the *step index* `t`, in
increasing order, each as a comprehension over its other indices with `t`
fixed (docs/language-notes.md, "Recurrences"). `sema` calls `StepChecks` at
these points:

* `statement`: a statement of a block: `t` must be one of its left-hand-side
  indices (its position is the tensor's *step dimension*, the same for every
  statement of the block that writes the tensor); its range is the block's
  ``lo:hi``; ``op=`` without ``!`` is not supported inside a block.
* `read`: a read of a tensor that the current block writes must subscript
  its step dimension with ``t - c``, a constant ``c >= 1`` (an earlier step;
  the tensor must have been written before the block), or ``t`` itself once
  an earlier statement of the block wrote the tensor at this step. A read of
  a tensor whose steps ``0:lo`` are never written (first written in a block
  with ``lo > 0``) after its block is an error too.
* `extents`: the step dimension of a tensor written before the block keeps
  its extent, which must hold ``hi``; a tensor first written in the block
  gets the extent ``hi``.

For example::

    h(t, b, n) = H0(b, n) where t in 0:T + 1
    for t in 1:T + 1 {
        p(t, b, n) +=! Wh(n, r_k) * h(t - 1, b, r_k)
        h(t, b, n) = tanh(p(t, b, n) + X(t - 1, b, n))
    }
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tcdialect.diagnostics import DiagnosticEngine, Span, note
from tcdialect.frontend import ast
from tcdialect.symbolic import SizeExpr, provably_le


@dataclass
class _Block:
    """What is known about the block being checked."""

    loop: ast.Recurrence
    #: Tensors the block writes, with their step dimension (where the first
    #: statement writing each has the step index).
    step_dims: dict[str, int]
    lo: SizeExpr | None = None
    hi: SizeExpr | None = None
    #: Tensors written by the block's statements checked so far (this step).
    written: set[str] = field(default_factory=set)
    #: Tensors that no statement before the block wrote.
    fresh: set[str] = field(default_factory=set)


class StepChecks:
    """The recurrence rules of one definition, fed statement by statement."""

    def __init__(self, body: tuple[ast.Statement, ...], diag: DiagnosticEngine):
        self.diag = diag
        self.block: _Block | None = None
        #: The tensors each block writes and their step dimensions, by block.
        self.step_dims: dict[int, dict[str, int]] = {}
        for s in body:
            if s.loop is None:
                continue
            dims = self.step_dims.setdefault(id(s.loop), {})
            names = [i.name for i in s.lhs_indices]
            if s.loop.index.name in names and s.target.name not in dims:
                dims[s.target.name] = names.index(s.loop.index.name)
        #: Tensors whose steps ``0:lo`` no statement writes, with their block.
        self.partial: dict[str, ast.Recurrence] = {}

    def begin(self, stmt: ast.Statement, written_before: set[str]) -> None:
        """Called before each statement: enter or leave blocks."""
        loop = stmt.loop
        if loop is None:
            self.block = None
        elif self.block is None or self.block.loop is not loop:
            dims = self.step_dims[id(loop)]
            self.block = _Block(loop, dims)
            self.block.fresh = set(dims) - written_before

    def statement(
        self,
        stmt: ast.Statement,
        size_expr: Callable[[ast.Expr], SizeExpr | None],
    ) -> tuple[str, int, SizeExpr, SizeExpr] | None:
        """The step index, the step dimension of the target and the block's
        range, for a statement of a block; None otherwise or on an error
        (reported). `size_expr` turns a bound into a `SizeExpr` (reporting
        errors)."""
        block = self.block
        if block is None or stmt.loop is None:
            return None
        loop = stmt.loop
        t = loop.index.name
        if block.lo is None or block.hi is None:
            block.lo = size_expr(loop.lo)
            block.hi = size_expr(loop.hi)
            if block.lo is None or block.hi is None:
                return None
        names = [i.name for i in stmt.lhs_indices]
        if t not in names:
            self.diag.error(
                f"every statement of the recurrence over '{t}' must write a step "
                f"of its target: '{t}' must be one of its left-hand-side indices",
                stmt.target.span,
                note("the recurrence is here", loop.span),
            )
            return None
        if stmt.reduction is not None and not stmt.init:
            self.diag.error(
                f"'{stmt.op}' (accumulating into an earlier value) is not supported "
                f"inside a recurrence; use '{stmt.op}!' or '='",
                stmt.op_span,
            )
            return None
        dim = names.index(t)
        target = stmt.target.name
        known = block.step_dims[target]
        if known != dim:
            self.diag.error(
                f"'{target}' is written with the step index '{t}' as subscript "
                f"{dim}, but an earlier statement of the recurrence used subscript "
                f"{known}",
                stmt.lhs_indices[dim].span,
            )
            return None
        return t, dim, block.lo, block.hi

    def read(
        self,
        name: str,
        args: tuple[ast.Expr, ...],
        span: Span,
        affine: Callable[[ast.Expr], tuple[dict[str, SizeExpr], SizeExpr] | None],
    ) -> bool:
        """Check a read ``name(args...)``; False when an error was reported.

        `affine` gives the affine form of a subscript (or None)."""
        if name in self.partial and (
            self.block is None or self.block.loop is not self.partial[name]
        ):
            loop = self.partial[name]
            self.diag.error(
                f"'{name}' is first written in the recurrence over "
                f"'{loop.index.name}', which starts after step 0, so its earlier "
                f"steps are never written and it cannot be read after it",
                span,
                note("the recurrence is here", loop.span),
            )
            return False
        block = self.block
        dim = block.step_dims.get(name) if block is not None else None
        if block is None or dim is None or dim >= len(args):
            return True  # (a wrong number of subscripts is reported elsewhere)
        t = block.loop.index.name
        offset: int | None = None
        form = affine(args[dim])
        if form is not None:
            coeffs, rest = form
            if set(coeffs) == {t} and coeffs[t] == SizeExpr.lit(1) and rest.is_constant:
                offset = -rest.const
        what = f"'{span.text}'"
        if offset is None or offset < 0:
            self.diag.error(
                f"{what} reads '{name}', which the recurrence over '{t}' writes, at "
                + (
                    "a later step"
                    if offset is not None
                    else f"a step that is not '{t}' or '{t} - c' for a constant c"
                )
                + f"; only earlier steps ('{t} - 1', ...) and, after a statement "
                f"of the block wrote it, step '{t}' can be read",
                span,
                note("the step subscript is here", args[dim].span),
            )
            return False
        if offset == 0 and name not in block.written:
            self.diag.error(
                f"{what} reads step '{t}' of '{name}' before a statement of the "
                f"recurrence over '{t}' wrote it at this step",
                span,
            )
            return False
        if offset > 0 and name in block.fresh:
            self.diag.error(
                f"{what} reads an earlier step of '{name}', but nothing wrote "
                f"'{name}' before the recurrence over '{t}'; write its first "
                f"steps with a statement before the block",
                span,
            )
            return False
        return True

    def extent(
        self,
        target: str,
        kind: str,
        before: SizeExpr | None,
        step: tuple[str, int, SizeExpr, SizeExpr],
        span: Span,
    ) -> SizeExpr | None:
        """The extent of the step dimension of `target` (None: error reported).

        `before` is its extent when a statement before the block wrote it."""
        t, _, lo, hi = step
        block = self.block
        assert block is not None
        if before is not None and target not in block.fresh:
            if not provably_le(hi, before):
                self.diag.error(
                    f"the recurrence over '{t}' runs up to {hi}, but the step "
                    f"dimension of '{target}' has the extent {before}",
                    span,
                    note("the recurrence is here", block.loop.span),
                )
                return None
            return before
        if lo != SizeExpr.lit(0):
            if kind == "output":
                self.diag.error(
                    f"output '{target}' is first written in the recurrence over "
                    f"'{t}', which starts at {lo}: its steps before {lo} would "
                    f"never be written; write it with a statement before the block",
                    span,
                )
                return None
            self.partial[target] = block.loop
        return hi

    def wrote(self, target: str) -> None:
        if self.block is not None:
            self.block.written.add(target)
