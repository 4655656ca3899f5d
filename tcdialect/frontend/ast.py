"""The TC abstract syntax tree.

Every node carries the `Span` of the source text it came from, so later phases
(semantic checks, range inference) can point at it. Nodes are plain frozen
dataclasses; the parser builds them, `sema` reads them and never mutates them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tcdialect.diagnostics import Span

# --------------------------------------------------------------------- types

#: Scalar type names of the language mapped to their canonical name.
SCALAR_TYPES: dict[str, str] = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "bfloat16": "bfloat16",  # ext
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
}


@dataclass(frozen=True)
class Ident:
    """An identifier occurrence."""

    name: str
    span: Span


# --------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    span: Span


@dataclass(frozen=True)
class IntLit(Expr):
    value: int


@dataclass(frozen=True)
class FloatLit(Expr):
    value: float


@dataclass(frozen=True)
class Name(Expr):
    """A bare identifier: size parameter, scalar input, index or let name."""

    name: str


@dataclass(frozen=True)
class Access(Expr):
    """`T(e1, ..., en)`: a tensor read, or a builtin call (resolved by sema)."""

    callee: Ident
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Unary(Expr):
    op: str  # "-" or "!"
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    """Arithmetic, comparison and logical binary operators."""

    op: str  # + - * / % == != < > <= >= && ||
    lhs: Expr
    rhs: Expr
    op_span: Span


@dataclass(frozen=True)
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class MinMax(Expr):
    """`min(a, b)` or `max(a, b)` (operators, exactly two arguments)."""

    op: str  # "min" | "max"
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True)
class Cast(Expr):
    """`type(expr)`; `to` is the canonical scalar type name."""

    to: str
    operand: Expr


# ------------------------------------------------------------ where clauses


@dataclass(frozen=True)
class RangeClause:
    """`i in lo:hi`."""

    index: Ident
    lo: Expr
    hi: Expr
    span: Span


@dataclass(frozen=True)
class LetClause:
    """`x = expr`."""

    name: Ident
    value: Expr
    span: Span


@dataclass(frozen=True)
class ExistsClause:
    """`exists T(e1, ..., en)`."""

    access: Expr
    span: Span


WhereClause = RangeClause | LetClause | ExistsClause

# -------------------------------------------------------------- statements

#: Assignment operators: "=" or "+=", "*=", "min=", "max=", each optionally
#: followed by "!".
ASSIGN_OPS = ("=", "+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!")


@dataclass(frozen=True, eq=False)
class Recurrence:
    """`for t in lo:hi { ... }` (ext): the block runs once per value of `t`,
    in increasing order; its statements share this node (compared by
    identity)."""

    index: Ident
    lo: Expr
    hi: Expr
    span: Span


@dataclass(frozen=True)
class Statement:
    """`T(i, j) op= expr where ...`.

    `indices` is None when the LHS is written without parentheses (`T`), and
    an empty tuple for `T()`. `loop` is the recurrence block the statement
    belongs to, if any.
    """

    target: Ident
    indices: tuple[Ident, ...] | None
    op: str
    op_span: Span
    rhs: Expr
    where: tuple[WhereClause, ...]
    span: Span
    loop: Recurrence | None = None

    @property
    def reduction(self) -> str | None:
        """ "+", "*", "min", "max", or None for plain "="."""
        if self.op == "=":
            return None
        return self.op.rstrip("!")[:-1]

    @property
    def init(self) -> bool:
        return self.op.endswith("!")

    @property
    def lhs_indices(self) -> tuple[Ident, ...]:
        return self.indices or ()


# ------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Dim:
    """A dimension of an input declaration: a size name or a literal extent."""

    value: str | int
    span: Span


@dataclass(frozen=True)
class Param:
    """An input: `float(M, K) A`, or `float s` (0-d, `dims` empty)."""

    elem_type: str  # canonical scalar type name
    type_span: Span
    dims: tuple[Dim, ...]
    name: Ident
    span: Span


@dataclass(frozen=True)
class Output:
    """An output name with an optional element-type annotation."""

    name: Ident
    elem_type: str | None
    span: Span


@dataclass(frozen=True)
class Def:
    name: Ident
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    body: tuple[Statement, ...]
    span: Span


@dataclass(frozen=True)
class Program:
    defs: tuple[Def, ...] = field(default=())
