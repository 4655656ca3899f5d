"""Semantic analysis of TC definitions: names, types, statements and ranges.

`analyze` checks a parsed `ast.Program` against TC-LANGUAGE.md §4 and returns
a `CheckedProgram`: per definition, the tensors with their element types and
symbolic extents, and per statement the output and reduction indices with
their inferred ranges and the type of every expression. Every problem is
reported as a located diagnostic; independent problems (in other statements
or definitions) are all reported. The checked model is what `ir_gen` lowers
to the tc dialect.
"""

from __future__ import annotations

import difflib
import math
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from tcdialect.diagnostics import Diagnostic, DiagnosticEngine, Span, TCError, note
from tcdialect.frontend import ast
from tcdialect.frontend import range_inference as ri
from tcdialect.frontend.recurrence import StepChecks
from tcdialect.symbolic import (
    SizeExpr,
    SymbolicError,
    diff_range,
    provably_le,
    provably_nonneg,
    smax,
    smin,
)

# ------------------------------------------------------------------ builtins

#: Builtin math functions and their arity (TC-LANGUAGE.md §4.4).
BUILTIN_ARITY: dict[str, int] = {
    **{
        n: 1
        for n in (
            "exp exp2 expm1 exp10 log log2 log10 log1p sqrt rsqrt cbrt sin cos tan "
            "asin acos atan sinh cosh tanh asinh acosh atanh erf erfc fabs floor "
            "ceil trunc round cospi sinpi lgamma tgamma erfinv erfcinv erfcx normcdf "
            "normcdfinv logb j0 j1 y0 y1 cyl_bessel_i0 cyl_bessel_i1 rcbrt"
        ).split()
    },
    **{
        n: 2
        for n in (
            "fmax fmin fmod pow atan2 hypot copysign fdim nextafter remainder rhypot "
            "fdivide"
        ).split()
    },
    "fma": 3,
    "norm3d": 3,
    "rnorm3d": 3,
    "norm4d": 4,
    "rnorm4d": 4,
}

# --------------------------------------------------------------------- types

INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
#: The 16-bit floats: stored in 16 bits, computed as docs/language-notes.md
#: ("16-bit floats") says.
HALF_TYPES = ("float16", "bfloat16")


def is_float(t: str) -> bool:
    return t in FLOAT_TYPES


def is_half(t: str) -> bool:
    return t in HALF_TYPES


def is_int(t: str) -> bool:
    return t in INT_TYPES or t == "bool"


def is_unsigned(t: str) -> bool:
    return t.startswith("uint") or t == "bool"


def width(t: str) -> int:
    return 1 if t == "bool" else int(t.lstrip("buintfloat"))


def promote(a: str, b: str) -> str:
    """Binary-operator promotion (TC-LANGUAGE.md §4.3).

    Of two floats the wider wins; float16 with bfloat16 (neither holds the
    other's values) gives float32."""
    if a == b:
        return a
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            if width(a) == width(b):
                return "float32"
            return a if width(a) > width(b) else b
        return a if is_float(a) else b
    w = max(width(a), width(b), 8)
    if a == "bool":
        return b
    if b == "bool":
        return a
    signed = not is_unsigned(a) or not is_unsigned(b)
    return f"{'' if signed else 'u'}int{w}"


def converts_implicitly(src: str, dst: str) -> bool:
    """Whether a value of type `src` may be stored into `dst` without a cast."""
    return promote(src, dst) == dst


def _unnegated(e: ast.Expr) -> ast.Expr:
    while isinstance(e, ast.Unary) and e.op == "-":
        e = e.operand
    return e


def is_float_literal(e: ast.Expr) -> bool:
    """A floating literal, possibly negated (``1.5``, ``-(2e3)``)."""
    return isinstance(_unnegated(e), ast.FloatLit)


def is_literal(e: ast.Expr) -> bool:
    """A numeric literal, possibly negated."""
    return isinstance(_unnegated(e), ast.FloatLit | ast.IntLit)


def operands_type(a: ast.Expr, ta: str, b: ast.Expr, tb: str) -> str:
    """The type two operands `a: ta` and `b: tb` are computed in: `promote`,
    except that a float literal takes the type of a 16-bit float operand
    (``h * 0.5`` stays float16, as a literal would in PyTorch)."""
    if is_half(tb) and is_float_literal(a):
        return tb
    if is_half(ta) and is_float_literal(b):
        return ta
    return promote(ta, tb)


# --------------------------------------------------------------- the model


@dataclass
class Tensor:
    name: str
    kind: Literal["input", "output", "temp"]
    elem: str | None  # None until inferred
    extents: tuple[SizeExpr, ...] | None  # None until first written
    span: Span
    annotated: bool = False
    written_by: ast.Statement | None = None
    read: bool = False


@dataclass
class Access:
    """An affine tensor access kept for bounds checks once sizes are known.

    The subscript is ``sum(coeffs[v] * v) + rest``; a coefficient may be an
    expression of sizes (``i * S``) whose sign is known (`coefficient_sign`).
    """

    tensor: str
    dim: int
    coeffs: dict[str, SizeExpr]
    rest: SizeExpr
    span: Span


def coefficient_sign(c: SizeExpr) -> int | None:
    """1 when `c >= 0` for all sizes, -1 when `c <= 0`, None when unknown."""
    if c.is_constant:
        return 1 if c.const >= 0 else -1
    if provably_nonneg(c):
        return 1
    if provably_nonneg(-c):
        return -1
    return None


@dataclass
class CheckedStatement:
    stmt: ast.Statement
    target: str
    out_indices: list[str]
    red_indices: list[str]
    ranges: dict[str, tuple[SizeExpr, SizeExpr]]
    lets: dict[str, ast.Expr]
    types: dict[int, str]  # id(expr) -> type
    elem: str  # element type of the target
    accumulates: bool  # reduction without '!'
    accesses: list[Access]
    #: In a recurrence (`stmt.loop`): the position of the step index among
    #: the output indices.
    step_dim: int | None = None

    def type_of(self, e: ast.Expr) -> str:
        return self.types[id(e)]


@dataclass
class CheckedDef:
    node: ast.Def
    name: str
    sizes: list[str]
    inputs: list[Tensor]
    outputs: list[Tensor]
    tensors: dict[str, Tensor]
    statements: list[CheckedStatement] = field(default_factory=list)

    def check_sizes(self, sizes: Mapping[str, int]) -> None:
        """Reject affine accesses that fall out of bounds for these sizes.

        Raises a `TCError` naming the access and the index ranges.
        """
        diag = DiagnosticEngine()
        for st in self.statements:
            ranges = {
                v: (lo.evaluate(sizes), hi.evaluate(sizes))
                for v, (lo, hi) in st.ranges.items()
            }
            if any(hi <= lo for lo, hi in ranges.values()):
                continue  # empty iteration space: nothing is read
            for acc in st.accesses:
                t = self.tensors[acc.tensor]
                assert t.extents is not None
                extent = t.extents[acc.dim].evaluate(sizes)
                low = high = acc.rest.evaluate(sizes)
                for v, coeff in acc.coeffs.items():
                    c = coeff.evaluate(sizes)
                    lo, hi = ranges[v]
                    low += c * (lo if c > 0 else hi - 1)
                    high += c * (hi - 1 if c > 0 else lo)
                if low < 0 or high >= extent:
                    where = ", ".join(
                        f"{v} in [{ranges[v][0]}, {ranges[v][1]})" for v in acc.coeffs
                    )
                    diag.error(
                        f"access to '{acc.tensor}' is out of bounds: subscript {acc.dim} "
                        f"takes values in [{low}, {high}] but the extent is {extent}"
                        + (f" (with {where})" if where else ""),
                        acc.span,
                    )
        diag.check()

    def output_extents(self, sizes: Mapping[str, int]) -> list[tuple[int, ...]]:
        """The shapes of the outputs for these sizes.

        An extent that evaluates to a negative number (e.g. ``H - KH + 1``
        with a kernel larger than the input) is an empty dimension: 0.
        """
        out: list[tuple[int, ...]] = []
        for t in self.outputs:
            assert t.extents is not None
            out.append(tuple(max(0, e.evaluate(sizes)) for e in t.extents))
        return out


@dataclass
class CheckedProgram:
    defs: list[CheckedDef]
    warnings: list[Diagnostic] = field(default_factory=list)

    def get(self, name: str | None) -> CheckedDef:
        if name is None:
            if len(self.defs) == 1:
                return self.defs[0]
            raise TCError(
                "the source has several definitions "
                f"({', '.join(d.name for d in self.defs)}); pick one with entry=..."
            )
        for d in self.defs:
            if d.name == name:
                return d
        raise TCError(
            f"no definition named '{name}'; available: "
            + ", ".join(d.name for d in self.defs)
        )


# ------------------------------------------------------------------ helpers


def _did_you_mean(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _walk(e: ast.Expr) -> Iterator[ast.Expr]:
    yield e
    match e:
        case ast.Access(args=args):
            for a in args:
                yield from _walk(a)
        case ast.Unary(operand=o) | ast.Cast(operand=o):
            yield from _walk(o)
        case ast.Binary(lhs=a, rhs=b) | ast.MinMax(lhs=a, rhs=b):
            yield from _walk(a)
            yield from _walk(b)
        case ast.Ternary(cond=c, then=t, other=o):
            yield from _walk(c)
            yield from _walk(t)
            yield from _walk(o)
        case _:
            pass


def _size_affine(
    e: ast.Expr, sizes: set[str], tensors: set[str], lets: Mapping[str, ast.Expr]
) -> bool | None:
    """Whether `e` mentions an index, or None when it is not affine with the
    names in `sizes` read as sizes (a test before names are resolved, for
    `size_scalars`: a name that is not a size, tensor or let is an index)."""

    def form(e: ast.Expr, depth: int) -> bool | None:
        if depth > 200:
            return None
        match e:
            case ast.IntLit():
                return False
            case ast.Name(name=n) if n in lets:
                return form(lets[n], depth + 1)
            case ast.Name(name=n):
                return None if n in tensors else n not in sizes
            case ast.Unary(op="-", operand=o):
                return form(o, depth + 1)
            case ast.Binary(op="+" | "-" | "*" | "/" | "%", lhs=a, rhs=b):
                x, y = form(a, depth + 1), form(b, depth + 1)
                if x is None or y is None:
                    return None
                if e.op in ("/", "%") and (x or y):
                    return None
                if e.op == "*" and x and y:
                    return None
                return x or y
            case _:
                return None

    return form(e, 0)


class _Skip(Exception):
    """Abandons checking of one statement after an error was reported."""


# ------------------------------------------------------------------ analysis


class _DefChecker:
    def __init__(self, node: ast.Def, diag: DiagnosticEngine):
        self.node = node
        self.diag = diag
        self.sizes: list[str] = []
        self.tensors: dict[str, Tensor] = {}
        self.size_spans: dict[str, Span] = {}
        #: Scalar inputs that are also size parameters (`size_scalars`).
        self.scalar_sizes: set[str] = set()
        #: Tensors written by a statement that had errors: reading them later
        #: reports nothing more (the first error says what went wrong).
        self.failed: set[str] = set()
        #: Names assigned by some statement (temporaries before they are
        #: created), and those of them read before their first statement.
        self.targets = {s.target.name for s in node.body}
        self.read_early: set[str] = set()
        self.steps = StepChecks(node.body, diag)

    # ------------------------------------------------------------- header
    def declare(self, name: str, span: Span, what: str) -> bool:
        if name in BUILTIN_ARITY:
            self.diag.error(
                f"'{name}' is a builtin function and cannot be redefined", span
            )
            return False
        prev = self.size_spans.get(name) or (
            self.tensors[name].span if name in self.tensors else None
        )
        if prev is not None:
            self.diag.error(
                f"{what} '{name}' is already defined",
                span,
                note("previous definition is here", prev),
            )
            return False
        return True

    def size_scalars(self) -> set[str]:
        """The 0-d integer inputs used in a where range, or in a subscript
        that is affine when they are sizes (``I(i * S + r)``, ``X(i + P)``).

        Such a scalar is also a size parameter, bound from its value at the
        call (docs/language-notes.md, "Scalars that drive sizes"); in other
        subscripts (``X(i % k)``) it stays a value read at run time."""
        scalars = {
            p.name.name
            for p in self.node.params
            if not p.dims and is_int(p.elem_type) and p.elem_type != "bool"
        }
        if not scalars:
            return set()
        try:
            return self._size_scalars(scalars)
        except RecursionError:
            return set()  # the statement's check reports TOO_DEEP

    def _size_scalars(self, scalars: set[str]) -> set[str]:
        tensors = {p.name.name for p in self.node.params} | {
            o.name.name for o in self.node.outputs
        }
        tensors |= {s.target.name for s in self.node.body}
        sizes = scalars | {
            d.value
            for p in self.node.params
            for d in p.dims
            if isinstance(d.value, str)
        }
        used: set[str] = set()
        for s in self.node.body:
            lets = {
                w.name.name: w.value for w in s.where if isinstance(w, ast.LetClause)
            }
            roots: list[ast.Expr] = []
            for w in s.where:
                if isinstance(w, ast.RangeClause):
                    roots += [w.lo, w.hi]
            for e in [s.rhs, *lets.values()] + [
                w.access for w in s.where if isinstance(w, ast.ExistsClause)
            ]:
                for sub in _walk(e):
                    if isinstance(sub, ast.Access) and sub.callee.name not in (
                        BUILTIN_ARITY
                    ):
                        roots += [
                            a
                            for a in sub.args
                            if _size_affine(a, sizes, tensors - scalars, lets)
                            is not None
                        ]
            seen: set[str] = set()
            while roots:
                for sub in _walk(roots.pop()):
                    if not isinstance(sub, ast.Name) or sub.name in seen:
                        continue
                    seen.add(sub.name)
                    if sub.name in lets:
                        roots.append(lets[sub.name])
                    elif sub.name in scalars:
                        used.add(sub.name)
        return used

    def header(self) -> CheckedDef:
        inputs: list[Tensor] = []
        size_scalars = self.size_scalars()
        for p in self.node.params:
            extents: list[SizeExpr] = []
            for d in p.dims:
                if isinstance(d.value, int):
                    extents.append(SizeExpr.lit(d.value))
                    continue
                extents.append(SizeExpr.sym(d.value))
                if d.value in self.size_spans:
                    continue
                if self.declare(d.value, d.span, "size"):
                    self.sizes.append(d.value)
                    self.size_spans[d.value] = d.span
            if self.declare(p.name.name, p.name.span, "input"):
                t = Tensor(
                    p.name.name, "input", p.elem_type, tuple(extents), p.name.span
                )
                self.tensors[t.name] = t
                inputs.append(t)
                if t.name in size_scalars:
                    self.sizes.append(t.name)
                    self.scalar_sizes.add(t.name)
        outputs: list[Tensor] = []
        for o in self.node.outputs:
            annotation = o.elem_type
            if self.declare(o.name.name, o.name.span, "output"):
                t = Tensor(
                    o.name.name,
                    "output",
                    annotation,
                    None,
                    o.name.span,
                    annotated=annotation is not None,
                )
                self.tensors[t.name] = t
                outputs.append(t)
        return CheckedDef(
            self.node, self.node.name.name, self.sizes, inputs, outputs, self.tensors
        )

    # --------------------------------------------------------- statements
    def run(self) -> CheckedDef:
        cdef = self.header()
        for stmt in self.node.body:
            written = {n for n, t in self.tensors.items() if t.written_by is not None}
            self.steps.begin(stmt, written | self.failed)
            try:
                cdef.statements.append(_StmtChecker(self, stmt).check())
            except _Skip:
                self.failed.add(stmt.target.name)
            except RecursionError:
                self.diag.error(TOO_DEEP, stmt.span)
                self.failed.add(stmt.target.name)
        for t in cdef.tensors.values():
            if t.name in self.failed:
                continue  # already reported
            if t.kind == "output" and t.written_by is None:
                self.diag.error(f"output '{t.name}' is never written", t.span)
            if t.kind == "temp" and not t.read and t.name not in self.read_early:
                self.diag.warning(
                    f"temporary '{t.name}' is written but never read", t.span
                )
        return cdef


_T = TypeVar("_T")

#: The error for a statement whose expression is nested deeper (or whose
#: operator chain is longer) than the recursive checks can walk.
TOO_DEEP = "expression too deeply nested or too long to compile"


def _once(memo: dict[str, _T | Exception], key: str, compute: Callable[[], _T]) -> _T:
    """`compute()`, or what it returned (or raised) for `key` before."""
    if key not in memo:
        try:
            memo[key] = compute()
        except (_NotAffine, SymbolicError) as err:
            memo[key] = err
    got = memo[key]
    if isinstance(got, Exception):
        raise got
    return got


class _StmtChecker:
    def __init__(self, d: _DefChecker, stmt: ast.Statement):
        self.d = d
        self.diag = d.diag
        self.stmt = stmt
        self.types: dict[int, str] = {}
        self.lets: dict[str, ast.Expr] = {}
        #: The type of each let, checked at its first use: a let is an
        #: expression of earlier lets, so checking it again at every use
        #: took time exponential in the length of a chain of lets.
        self.let_types: dict[str, str] = {}
        #: The same for the affine forms and size expressions of lets (an
        #: exception when a let is not one).
        self.let_forms: dict[str, tuple[dict[str, SizeExpr], SizeExpr] | Exception] = {}
        self.let_sizes: dict[str, SizeExpr | Exception] = {}
        #: Let names that were reported as bad: no further errors for them.
        self.bad_lets: set[str] = set()
        self.indices: list[str] = []
        self.index_spans: dict[str, Span] = {}
        self.presolved: dict[str, tuple[SizeExpr, SizeExpr]] = {}
        self.constraints: list[ri.Constraint] = []
        self.accesses: list[Access] = []
        self.ok = True
        #: In a recurrence: step index, step dimension, the block's range.
        self.step: tuple[str, int, SizeExpr, SizeExpr] | None = None

    def error(self, msg: str, span: Span | None, *notes: object) -> None:
        self.diag.error(msg, span, *notes)  # type: ignore[arg-type]
        self.ok = False

    # -------------------------------------------------------------- driver
    def check(self) -> CheckedStatement:
        s = self.stmt
        target = self.target()
        out = [i.name for i in s.lhs_indices]
        for i in s.lhs_indices:
            self.add_index(i.name, i.span, lhs=True)
        if s.loop is not None:
            self.step = self.d.steps.statement(s, self.size_expr)
            if self.step is None:
                raise _Skip
            self.presolved[self.step[0]] = self.step[2:]
        # where clauses: lets and ranges first, so names resolve.
        for w in s.where:
            if isinstance(w, ast.LetClause):
                self.let(w)
        for w in s.where:
            if isinstance(w, ast.RangeClause):
                self.range_clause(w)
        # Index variables: names used inside subscripts.
        for e in self.exprs():
            self.collect_indices(e, in_subscript=False)
        rhs_type = self.expr(s.rhs)
        for w in s.where:
            if isinstance(w, ast.ExistsClause):
                self.exists(w)
        if not self.ok:
            raise _Skip
        red = [v for v in self.indices if v not in out]
        if s.op == "=" and red:
            self.error(
                f"this statement has reduction index '{red[0]}' but uses '=': "
                f"use a reduction operator such as '+=!'",
                self.index_spans[red[0]],
            )
        elem = self.element_type(target, rhs_type)
        if s.reduction in ("+", "*") and elem == "bool":
            self.error(
                f"'{s.op}' cannot reduce into bool '{target.name}'; annotate the "
                f"output with an integer type (e.g. '-> (int32 {target.name})') "
                f"or cast the right-hand side",
                s.op_span,
            )
        accumulates = s.reduction is not None and not s.init
        if accumulates and target.written_by is None and target.name in self.d.failed:
            self.ok = False  # its first statement had errors, already reported
        elif accumulates and target.written_by is None:
            self.error(
                f"'{s.op}' accumulates into '{target.name}', but nothing has written "
                f"'{target.name}' before; use '{s.op}!' to start from the identity",
                s.op_span,
            )
        if not self.ok:
            raise _Skip
        ranges = self.infer_ranges(out, red)
        extents = tuple(ranges[v][1] for v in out)
        if self.step is not None:
            k = self.step[1]
            before = None
            if target.written_by is not None and target.extents is not None:
                before = target.extents[k]
            ext = self.d.steps.extent(
                target.name, target.kind, before, self.step, s.span
            )
            if ext is None:
                raise _Skip
            extents = extents[:k] + (ext,) + extents[k + 1 :]
        if target.extents is not None and target.written_by is not None:
            if len(target.extents) != len(extents):
                self.error(
                    f"'{target.name}' has {len(target.extents)} dimensions but is "
                    f"written with {len(extents)} indices here",
                    s.target.span,
                    note("previously written here", target.written_by.span),
                )
            elif target.extents != extents:
                shown = ", ".join(str(e) for e in extents)
                before = ", ".join(str(e) for e in target.extents)
                self.error(
                    f"inconsistent extents for '{target.name}': this statement gives "
                    f"[{shown}] but an earlier statement gave [{before}]",
                    s.span,
                    note("earlier statement is here", target.written_by.span),
                )
        if not self.ok:
            raise _Skip
        self.check_static_bounds(ranges)
        target.extents = extents
        target.elem = elem
        target.written_by = s
        self.d.steps.wrote(target.name)
        return CheckedStatement(
            s,
            target.name,
            out,
            red,
            ranges,
            self.lets,
            self.types,
            elem,
            accumulates,
            self.accesses,
            None if self.step is None else self.step[1],
        )

    def exprs(self) -> Iterator[ast.Expr]:
        yield self.stmt.rhs
        for w in self.stmt.where:
            if isinstance(w, ast.ExistsClause):
                yield w.access
            elif isinstance(w, ast.LetClause):
                yield w.value

    # ------------------------------------------------------------- target
    def target(self) -> Tensor:
        s = self.stmt
        name = s.target.name
        t = self.d.tensors.get(name)
        if name in BUILTIN_ARITY:
            self.error(
                f"'{name}' is a builtin function and cannot be redefined", s.target.span
            )
            raise _Skip
        if name in self.d.size_spans:
            self.error(f"cannot assign to size parameter '{name}'", s.target.span)
            raise _Skip
        if t is None:
            t = Tensor(name, "temp", None, None, s.target.span)
            self.d.tensors[name] = t
        if t.kind == "input":
            self.error(
                f"inputs are immutable: cannot write to input '{name}'",
                s.target.span,
                note("declared as an input here", t.span),
            )
            raise _Skip
        seen: dict[str, Span] = {}
        for i in s.lhs_indices:
            if i.name in seen:
                self.error(
                    f"index '{i.name}' appears twice on the left-hand side", i.span
                )
            if i.name in self.d.size_spans or i.name in self.d.tensors:
                self.error(
                    f"'{i.name}' is {'a size' if i.name in self.d.size_spans else 'a tensor'} "
                    f"and cannot be used as an index",
                    i.span,
                )
            if i.name in BUILTIN_ARITY:
                self.error(
                    f"'{i.name}' is a builtin function and cannot be redefined", i.span
                )
            seen[i.name] = i.span
        if not self.ok:
            raise _Skip
        return t

    def add_index(self, name: str, span: Span, lhs: bool = False) -> None:
        if name not in self.indices:
            self.indices.append(name)
            self.index_spans[name] = span

    # --------------------------------------------------------------- where
    def let(self, w: ast.LetClause) -> None:
        n = w.name.name
        if n in BUILTIN_ARITY:
            self.error(
                f"'{n}' is a builtin function and cannot be redefined", w.name.span
            )
            self.bad_lets.add(n)
            return
        if n in self.d.size_spans or n in self.d.tensors or n in self.lets:
            self.error(f"let name '{n}' is already defined", w.name.span)
            return
        if n in [i.name for i in self.stmt.lhs_indices]:
            self.error(f"let name '{n}' is already used as an index", w.name.span)
            return
        if self.let_refers_to(w.value, n, set()):
            self.error(f"let '{n}' refers to itself", w.name.span)
            self.bad_lets.add(n)
            return
        self.lets[n] = w.value

    def let_refers_to(self, e: ast.Expr, n: str, seen: set[str]) -> bool:
        """Whether `e`, with the lets so far inlined, mentions the name `n`."""
        for sub in _walk(e):
            if not isinstance(sub, ast.Name):
                continue
            if sub.name == n:
                return True
            if sub.name in self.lets and sub.name not in seen:
                seen.add(sub.name)
                if self.let_refers_to(self.lets[sub.name], n, seen):
                    return True
        return False

    def range_clause(self, w: ast.RangeClause) -> None:
        n = w.index.name
        if (
            n in self.d.size_spans
            or n in self.d.tensors
            or n in self.lets
            or n in BUILTIN_ARITY
        ):
            self.error(
                f"'{n}' is not an index variable and cannot be given a range",
                w.index.span,
            )
            return
        if n in self.presolved:
            self.error(f"index '{n}' is given a range twice", w.index.span)
            return
        lo = self.size_expr(w.lo)
        hi = self.size_expr(w.hi)
        if lo is None or hi is None:
            return
        self.add_index(n, w.index.span)
        self.presolved[n] = (lo, hi)

    def size_expr(self, e: ast.Expr) -> SizeExpr | None:
        """An expression of sizes and constants, as a `SizeExpr`."""
        for sub in _walk(e):
            if isinstance(sub, ast.Access):
                self.error("tensor reads cannot be used in a where range", sub.span)
                return None
        try:
            return self._size_expr(e)
        except (_NotAffine, SymbolicError) as err:
            self.error(
                f"a where range bound must be an integer expression of sizes and "
                f"constants{': ' + str(err) if str(err) else ''}",
                getattr(err, "span", None) or e.span,
            )
            return None

    def is_size(self, n: str) -> bool:
        return n in self.d.size_spans or n in self.d.scalar_sizes

    def _size_expr(self, e: ast.Expr) -> SizeExpr:
        match e:
            case ast.IntLit(value=v):
                return SizeExpr.lit(v)
            case ast.Name(name=n) if self.is_size(n):
                return SizeExpr.sym(n)
            case ast.Name(name=n) if n in self.lets:
                return _once(self.let_sizes, n, lambda: self._size_expr(self.lets[n]))
            case ast.Name(name=n) if n in self.d.tensors:
                t = self.d.tensors[n]
                what = (
                    f"a {t.elem} scalar"
                    if t.kind == "input" and t.extents == ()
                    else "a tensor"
                )
                raise _NotAffine(
                    f"'{n}' is {what}; only 0-d integer inputs can drive sizes", e.span
                )
            case ast.Name(name=n):
                raise _NotAffine(f"'{n}' is not a size", e.span)
            case ast.Unary(op="-", operand=o):
                return -self._size_expr(o)
            case ast.Binary(op="+", lhs=a, rhs=b):
                return self._size_expr(a) + self._size_expr(b)
            case ast.Binary(op="-", lhs=a, rhs=b):
                return self._size_expr(a) - self._size_expr(b)
            case ast.Binary(op="*", lhs=a, rhs=b):
                return self._size_expr(a) * self._size_expr(b)
            case ast.Binary(op="/" | "%", lhs=a, rhs=b):
                d = self._size_expr(b)
                if d.is_constant and d.const <= 0:
                    raise _NotAffine("division by a non-positive constant", b.span)
                x = self._size_expr(a)
                return x.floordiv_by(d) if e.op == "/" else x.mod_by(d)
            case ast.MinMax(op=op, lhs=a, rhs=b):
                xs = [self._size_expr(a), self._size_expr(b)]
                return smin(xs) if op == "min" else smax(xs)
            case _:
                raise _NotAffine("", e.span)

    def exists(self, w: ast.ExistsClause) -> None:
        if (
            not isinstance(w.access, ast.Access)
            or w.access.callee.name not in self.d.tensors
        ):
            self.error(
                "'exists' needs a tensor access such as 'exists T(i, j)'", w.access.span
            )
            return
        self.expr(w.access)

    # -------------------------------------------------------- index names
    def is_known(self, n: str) -> bool:
        return (
            n in self.d.size_spans
            or n in self.d.tensors
            or n in self.lets
            or n in self.bad_lets
            or n in BUILTIN_ARITY
        )

    def collect_indices(self, e: ast.Expr, in_subscript: bool) -> None:
        match e:
            case ast.Name(name=n):
                if in_subscript and not self.is_known(n):
                    self.add_index(n, e.span)
            case ast.Access(callee=c, args=args):
                sub = in_subscript or c.name not in BUILTIN_ARITY
                for a in args:
                    self.collect_indices(a, sub)
            case ast.Unary(operand=o) | ast.Cast(operand=o):
                self.collect_indices(o, in_subscript)
            case ast.Binary(lhs=a, rhs=b) | ast.MinMax(lhs=a, rhs=b):
                self.collect_indices(a, in_subscript)
                self.collect_indices(b, in_subscript)
            case ast.Ternary(cond=c, then=t, other=o):
                for x in (c, t, o):
                    self.collect_indices(x, in_subscript)
            case _:
                pass

    # --------------------------------------------------------------- types
    def expr(self, e: ast.Expr) -> str:
        t = self._expr(e)
        self.types[id(e)] = t
        return t

    def _expr(self, e: ast.Expr) -> str:
        match e:
            case ast.IntLit():
                return "int32"
            case ast.FloatLit(value=v):
                if not _fits_float32(v):
                    self.error(
                        f"floating literal '{e.span.text}' is out of range for "
                        f"float32 (largest: 3.4028235e38)",
                        e.span,
                    )
                return "float32"
            case ast.Name(name=n):
                return self.name(e, n)
            case ast.Access():
                return self.access(e)
            case ast.Cast(to=to, operand=o):
                self.expr(o)
                return to
            case ast.Unary(op="!", operand=o):
                t = self.expr(o)
                if t != "bool":
                    self.error(f"'!' needs a bool operand but found {t}", o.span)
                return "bool"
            case ast.Unary(operand=o):  # '-'
                t = self.expr(o)
                if t == "bool":
                    self.error(
                        "'-' needs a numeric operand but found bool; "
                        "cast it first, e.g. int32(...)",
                        o.span,
                    )
                return t
            case ast.Binary(op="&&" | "||", lhs=a, rhs=b):
                for x in (a, b):
                    t = self.expr(x)
                    if t != "bool":
                        self.error(
                            f"'{e.op}' needs bool operands but found {t}", x.span
                        )
                return "bool"
            case ast.Binary(op="==" | "!=" | "<" | ">" | "<=" | ">=", lhs=a, rhs=b):
                self.expr(a)
                self.expr(b)
                return "bool"
            case ast.Binary(op=op, lhs=a, rhs=b):  # + - * / %
                t = operands_type(a, self.expr(a), b, self.expr(b))
                if t == "bool":
                    self.error(
                        f"'{op}' needs numeric operands but both are bool; "
                        f"cast them first, e.g. int32(...)",
                        e.op_span,
                    )
                return t
            case ast.MinMax(lhs=a, rhs=b):
                return operands_type(a, self.expr(a), b, self.expr(b))
            case ast.Ternary(cond=c, then=t, other=o):
                ct = self.expr(c)
                if ct != "bool":
                    self.error(
                        f"the condition of '?:' must be bool but found {ct}", c.span
                    )
                return operands_type(t, self.expr(t), o, self.expr(o))
            case _:  # pragma: no cover - the parser builds nothing else
                raise AssertionError(f"unexpected expression {e!r}")

    def name(self, e: ast.Expr, n: str) -> str:
        if n in self.bad_lets:
            return "int32"  # already reported
        if n in self.lets:
            if n not in self.let_types:
                self.let_types[n] = self.expr(self.lets[n])
            return self.let_types[n]
        if n in self.indices:
            return "int32"
        if n in self.d.size_spans:
            return "int32"
        if n in BUILTIN_ARITY:
            self.error(f"builtin '{n}' must be called with arguments", e.span)
            return "float32"
        t = self.d.tensors.get(n)
        if t is not None:
            self.use_tensor(t, e.span)
            if t.extents is not None and len(t.extents) != 0:
                self.error(
                    f"'{n}' is a tensor with {len(t.extents)} dimensions; "
                    f"read it with {len(t.extents)} subscripts",
                    e.span,
                )
            return t.elem or "float32"
        if self.temporary_read_early(n, e.span):
            return "float32"
        candidates = [*self.d.tensors, *self.d.size_spans, *self.indices, *self.lets]
        self.error(f"undefined name '{n}'{_did_you_mean(n, candidates)}", e.span)
        return "int32"

    def temporary_read_early(self, n: str, span: Span) -> bool:
        """Report a read of a temporary that a later statement creates."""
        if n not in self.d.targets or n in self.d.size_spans:
            return False
        self.error(f"'{n}' is read before it is written", span)
        self.d.read_early.add(n)
        return True

    def use_tensor(self, t: Tensor, span: Span) -> None:
        if t.kind != "input" and t.written_by is None and t.name in self.d.failed:
            self.ok = False  # the statement writing it had errors, already reported
        elif t.kind != "input" and t.written_by is None:
            self.error(f"'{t.name}' is read before it is written", span)
        t.read = True

    def access(self, e: ast.Access) -> str:
        n = e.callee.name
        if n in BUILTIN_ARITY:
            arity = BUILTIN_ARITY[n]
            if len(e.args) != arity:
                self.error(
                    f"builtin '{n}' takes {arity} argument{'s' * (arity != 1)} "
                    f"but {len(e.args)} {'were' if len(e.args) != 1 else 'was'} given",
                    e.span,
                )
            # Float arguments promote together; an integer argument counts as
            # float32, a literal as nothing (`pow(h, 2)` stays float16).
            result: str | None = None
            for a in e.args:
                t = self.expr(a)
                if t == "bool":
                    self.error(
                        f"builtin '{n}' needs numeric arguments but found bool", a.span
                    )
                if is_literal(a):
                    continue
                arg = t if is_float(t) else "float32"
                result = arg if result is None else promote(result, arg)
            if n == "nextafter" and result is not None and is_half(result):
                # 16-bit builtins compute in float32: one float32 step would
                # round back to the argument.
                self.error(
                    f"builtin 'nextafter' needs float32 or float64 arguments, "
                    f"not {result}",
                    e.span,
                )
            return result or "float32"
        t = self.d.tensors.get(n)
        if t is None:
            for a in e.args:
                self.expr(a)
            what = (
                "size"
                if n in self.d.size_spans
                else "index"
                if n in self.indices
                else None
            )
            if what is not None:
                self.error(
                    f"'{n}' is {'a' if what == 'size' else 'an'} {what}, not a tensor",
                    e.callee.span,
                )
            elif self.temporary_read_early(n, e.callee.span):
                pass
            else:
                cands = [*self.d.tensors, *BUILTIN_ARITY]
                self.error(
                    f"undefined tensor or function '{n}'{_did_you_mean(n, cands)}",
                    e.callee.span,
                )
            return "float32"
        self.use_tensor(t, e.callee.span)
        if t.written_by is not None and not self.d.steps.read(
            n, e.args, e.span, self.affine
        ):
            self.ok = False
        for a in e.args:
            st = self.expr(a)
            if not is_int(st) or st == "bool":
                self.error(f"subscripts must be integers but this one is {st}", a.span)
        if t.extents is not None and len(t.extents) != len(e.args):
            self.error(
                f"'{n}' has {len(t.extents)} dimension{'s' * (len(t.extents) != 1)} "
                f"but is accessed with {len(e.args)} subscript{'s' * (len(e.args) != 1)}",
                e.span,
            )
        elif t.extents is not None:
            for dim, a in enumerate(e.args):
                self.constrain(n, dim, t.extents[dim], a)
        return t.elem or "float32"

    def element_type(self, target: Tensor, rhs: str) -> str:
        s = self.stmt
        if target.elem is None:
            return rhs
        literal = is_half(target.elem) and is_float_literal(s.rhs)
        if not literal and not converts_implicitly(rhs, target.elem):
            self.error(
                f"cannot assign a value of type {rhs} to '{target.name}' of type "
                f"{target.elem} without an explicit cast",
                s.rhs.span,
            )
        return target.elem

    # ------------------------------------------------------------- ranges
    def affine(self, e: ast.Expr) -> tuple[dict[str, SizeExpr], SizeExpr] | None:
        """`e` as ``sum(c * index) + rest``, or None if it is not affine.

        Coefficients are size expressions of known sign (``i * S``)."""
        try:
            return self._affine(e)
        except (_NotAffine, SymbolicError):
            return None

    def _affine(self, e: ast.Expr) -> tuple[dict[str, SizeExpr], SizeExpr]:
        match e:
            case ast.IntLit(value=v):
                return {}, SizeExpr.lit(v)
            case ast.Name(name=n) if n in self.lets:
                return _once(self.let_forms, n, lambda: self._affine(self.lets[n]))
            case ast.Name(name=n) if self.is_size(n):
                return {}, SizeExpr.sym(n)
            case ast.Name(name=n) if n in self.indices:
                return {n: SizeExpr.lit(1)}, SizeExpr.lit(0)
            case ast.Unary(op="-", operand=o):
                c, r = self._affine(o)
                return {k: -v for k, v in c.items()}, -r
            case ast.Binary(op="+" | "-", lhs=a, rhs=b):
                ca, ra = self._affine(a)
                cb, rb = self._affine(b)
                sign = 1 if e.op == "+" else -1
                out = dict(ca)
                for k, v in cb.items():
                    out[k] = out.get(k, SizeExpr.lit(0)) + v * sign
                zero = SizeExpr.lit(0)
                return {k: v for k, v in out.items() if v != zero}, ra + rb * sign
            case ast.Binary(op="*", lhs=a, rhs=b):
                ca, ra = self._affine(a)
                cb, rb = self._affine(b)
                if ca and cb:
                    raise _NotAffine("", e.span)
                if not ca:
                    ca, ra, cb, rb = cb, rb, ca, ra
                # ca * index + ra, times rb (an expression of sizes)
                out = {k: v * rb for k, v in ca.items()}
                zero = SizeExpr.lit(0)
                return {k: v for k, v in out.items() if v != zero}, ra * rb
            case ast.Binary(op="/" | "%", lhs=a, rhs=b):
                ca, ra = self._affine(a)
                cb, rb = self._affine(b)
                if ca or cb or (rb.is_constant and rb.const <= 0):
                    raise _NotAffine("", e.span)
                return {}, (ra.floordiv_by(rb) if e.op == "/" else ra.mod_by(rb))
            case _:
                raise _NotAffine("", e.span)

    def constrain(self, tensor: str, dim: int, extent: SizeExpr, sub: ast.Expr) -> None:
        form = self.affine(sub)
        if form is None:
            return  # data-dependent or non-affine: bounds-checked at run time
        coeffs, rest = form
        if any(coefficient_sign(c) is None for c in coeffs.values()):
            return  # e.g. i * (M - N): not used for inference, checked at run time
        access = Access(tensor, dim, coeffs, rest, sub.span)
        if access in self.accesses:
            return  # a let used twice: the same access again
        self.accesses.append(access)
        origin = (tensor, dim, sub)
        self.constraints.append(ri.Constraint(coeffs, rest, origin))
        self.constraints.append(
            ri.Constraint({k: -v for k, v in coeffs.items()}, extent - 1 - rest, origin)
        )

    def infer_ranges(
        self, out: list[str], red: list[str]
    ) -> dict[str, tuple[SizeExpr, SizeExpr]]:
        res = ri.infer([*out, *red], self.constraints, self.presolved)
        if res.unsolved:
            for v in res.unsolved:
                related = [c for c in res.stuck if v in c.free]
                shown = "; ".join(sorted({_describe(c) for c in related})) or "none"
                kind = "output index" if v in out else "index"
                self.error(
                    f"cannot infer the range of {kind} '{v}' (constraints: {shown}); "
                    f"give it one with a where clause, e.g. 'where {v} in 0:N'",
                    self.index_spans[v],
                )
            raise _Skip
        step = self.step[0] if self.step is not None else None
        for v in out:
            lo, hi = res.ranges[v]
            if lo != SizeExpr.lit(0) and v != step:
                self.error(
                    f"the range of output index '{v}' is inferred as [{lo}, {hi}), "
                    f"but output ranges must start at 0; shift the subscripts or "
                    f"give '{v}' a range with a where clause",
                    self.index_spans[v],
                )
        for v in [*out, *red]:
            lo, hi = res.ranges[v]
            if v in out and lo != SizeExpr.lit(0) and v != step:
                continue  # reported above
            if provably_le(hi + 1, lo):  # hi < lo for every value of the sizes
                kind = "output index" if v in out else "index"
                self.error(
                    f"the range of {kind} '{v}' is always empty: [{lo}, {hi})",
                    self.index_spans[v],
                )
        if not self.ok:
            raise _Skip
        return res.ranges

    def check_static_bounds(self, ranges: dict[str, tuple[SizeExpr, SizeExpr]]) -> None:
        """Report affine accesses that are out of bounds for all sizes."""
        for acc in self.accesses:
            t = self.d.tensors[acc.tensor]
            assert t.extents is not None
            extent = t.extents[acc.dim]
            low = high = acc.rest
            for v, c in acc.coeffs.items():
                lo, hi = ranges[v]
                positive = coefficient_sign(c) == 1
                low = low + (lo * c if positive else (hi - 1) * c)
                high = high + ((hi - 1) * c if positive else lo * c)
            over = diff_range(high, extent - 1)
            under = diff_range(low, SizeExpr.lit(0))
            if (over is not None and over[0] > 0) or (
                under is not None and under[1] < 0
            ):
                where = ", ".join(
                    f"{v} in [{ranges[v][0]}, {ranges[v][1]})" for v in acc.coeffs
                )
                self.error(
                    f"access to '{acc.tensor}' is out of bounds: subscript {acc.dim} "
                    f"ranges over [{low}, {high}] but the extent is {extent}"
                    + (f" (with {where})" if where else ""),
                    acc.span,
                )
        if not self.ok:
            raise _Skip


def _fits_float32(v: float) -> bool:
    """Whether `v` rounds to a finite float32 (tiny values round to 0)."""
    if math.isnan(v):
        return True
    try:
        return math.isfinite(struct.unpack("f", struct.pack("f", v))[0])
    except OverflowError:
        return False


def _describe(c: ri.Constraint) -> str:
    if isinstance(c.origin, tuple):
        tensor, dim, sub = c.origin  # type: ignore[misc]
        return f"0 <= {sub.span.text} < extent {dim} of {tensor}"  # type: ignore[union-attr]
    return str(c)


class _NotAffine(Exception):
    def __init__(self, msg: str, span: Span | None = None):
        super().__init__(msg)
        self.span = span


#: C functions the compiled code may call by name (memory, and the math
#: functions lowered to C calls, f32 and f64 forms); a definition may not take
#: one of these names, nor a name starting with `__tc` (the runtime's).
_RESERVED_SYMBOLS = frozenset(
    {"malloc", "free"}
    | {
        name + suffix
        for name in (
            "hypot", "erfc", "exp10", "fmod", "expm1", "log1p", "cbrt", "erf",
            "asinh", "acosh", "atanh", "pow", "atan2", "cospi", "sinpi", "lgamma",
            "tgamma", "erfinv", "erfcinv", "erfcx", "normcdf", "normcdfinv", "logb",
            "j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "rcbrt",
            "nextafter", "remainder", "rhypot", "norm3d", "rnorm3d", "norm4d",
            "rnorm4d",
        )
        for suffix in ("", "f")
    }
)  # fmt: skip


def is_reserved_symbol(name: str) -> bool:
    """Whether a definition named `name` would clash with a symbol we call."""
    return name in _RESERVED_SYMBOLS or name.startswith("__tc")


def analyze(program: ast.Program, diag: DiagnosticEngine) -> CheckedProgram:
    """Check every definition; problems go to `diag` (call `diag.check()`)."""
    defs: list[CheckedDef] = []
    seen: dict[str, Span] = {}
    for d in program.defs:
        if d.name.name in seen:
            diag.error(
                f"definition '{d.name.name}' is already defined",
                d.name.span,
                note("previous definition is here", seen[d.name.name]),
            )
            continue
        seen[d.name.name] = d.name.span
        if is_reserved_symbol(d.name.name):
            diag.error(
                f"'{d.name.name}' cannot name a definition: compiled code calls "
                "a C library or runtime function of that name",
                d.name.span,
            )
        defs.append(_DefChecker(d, diag).run())
    return CheckedProgram(defs, list(diag.warnings))
