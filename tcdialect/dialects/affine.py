"""xDSL's `affine` dialect with MLIR's custom syntax for memory accesses.

xDSL 0.74 parses `affine.load %A[%i + 1, %j]` into the map
`()[s0, s1] -> (s0 + 1, s1)`: every SSA id becomes a *symbol*, and its printer
writes dims and symbols alike as `%x`, so a printed map with both does not
read back. This module keeps every xDSL affine op and replaces `affine.load`,
`affine.store`, `affine.vector_load` and `affine.vector_store` by subclasses
(same names, same fields, `isinstance` of xDSL's classes still holds) whose
syntax follows MLIR:

- a bare SSA id is a dimension: `%A[%i + 1, %j]` is `(d0, d1) -> (d0 + 1, d1)`;
- `symbol(%N)` is a symbol: `%A[%i + symbol(%N)]` is
  `(d0)[s0] -> (d0 + s0)`;
- operands are the dims (in order of first use) then the symbols; an SSA id
  used twice is one operand.

The printer writes symbols as `symbol(%N)`, so `parse(print(op))` gives the
same map and operands for any op whose map operands are distinct and in
first-use order (everything built with identity-like maps, and everything
this parser produced). `tc-opt` registers this dialect under the name
`affine` instead of xDSL's.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import cast

from xdsl.dialects import affine as xaffine
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

_PRECEDENCE = {
    AffineBinaryOpKind.Add: 10,
    AffineBinaryOpKind.Mul: 20,
    AffineBinaryOpKind.Mod: 20,
    AffineBinaryOpKind.FloorDiv: 20,
    AffineBinaryOpKind.CeilDiv: 20,
}


class _SSAIdsMapParser:
    """Parses `[expr, ...]` where exprs use `%dim` and `symbol(%sym)`."""

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.dims: dict[tuple[str, int], UnresolvedOperand] = {}
        self.symbols: dict[tuple[str, int], UnresolvedOperand] = {}

    def _ssa_id(self, table: dict[tuple[str, int], UnresolvedOperand]) -> int | None:
        operand = self.parser.parse_optional_unresolved_operand()
        if operand is None:
            return None
        key = (operand.span.text, operand.index)
        if key not in table:
            table[key] = operand
        return list(table).index(key)

    def _primary(self) -> AffineExpr:
        p = self.parser
        if (position := self._ssa_id(self.dims)) is not None:
            return AffineExpr.dimension(position)
        if p.parse_optional_keyword("symbol") is not None:
            p.parse_punctuation("(")
            position = self._ssa_id(self.symbols)
            if position is None:
                p.raise_error("expected SSA value in 'symbol(...)'")
            p.parse_punctuation(")")
            return AffineExpr.symbol(position)
        if p.parse_optional_punctuation("(") is not None:
            expr = self._expr()
            p.parse_punctuation(")")
            return expr
        if p.parse_optional_punctuation("-") is not None:
            return -self._primary()
        value = p.parse_optional_integer(allow_boolean=False, allow_negative=False)
        if value is None:
            p.raise_error("expected an affine expression of SSA ids")
        return AffineExpr.constant(value)

    def _term(self) -> AffineExpr:
        p = self.parser
        lhs = self._primary()
        while True:
            if p.parse_optional_punctuation("*") is not None:
                lhs = self._apply(lhs, "*", self._primary())
            elif (
                kw := p.parse_optional_keyword_in(("floordiv", "ceildiv", "mod"))
            ) is not None:
                lhs = self._apply(lhs, kw, self._primary())
            else:
                return lhs

    def _apply(self, lhs: AffineExpr, op: str, rhs: AffineExpr) -> AffineExpr:
        try:
            match op:
                case "*":
                    return lhs * rhs
                case "floordiv":
                    return lhs // rhs
                case "ceildiv":
                    return lhs.ceil_div(rhs)
                case _:
                    return lhs % rhs
        except NotImplementedError as err:
            self.parser.raise_error(f"semi-affine expressions are not supported: {err}")

    def _expr(self) -> AffineExpr:
        p = self.parser
        lhs = self._term()
        while True:
            if p.parse_optional_punctuation("+") is not None:
                lhs = lhs + self._term()
            elif p.parse_optional_punctuation("-") is not None:
                lhs = lhs - self._term()
            else:
                return lhs

    def parse(self) -> tuple[AffineMap, list[UnresolvedOperand]]:
        exprs = self.parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, self._expr
        )
        affine_map = AffineMap(len(self.dims), len(self.symbols), tuple(exprs))
        return affine_map, [*self.dims.values(), *self.symbols.values()]


def parse_affine_map_of_ssa_ids(
    parser: Parser,
) -> tuple[AffineMap, list[SSAValue[IndexType]]]:
    """Parse `[expr, ...]` (MLIR syntax: `%d` a dim, `symbol(%s)` a symbol)."""
    affine_map, operands = _SSAIdsMapParser(parser).parse()
    return affine_map, [
        cast(SSAValue[IndexType], parser.resolve_operand(o, IndexType()))
        for o in operands
    ]


def _print_expr(
    printer: Printer,
    expr: AffineExpr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
    min_prec: int = 0,
) -> None:
    match expr:
        case AffineConstantExpr(value=value):
            printer.print_string(str(value))
        case AffineDimExpr(position=position):
            printer.print_ssa_value(dims[position])
        case AffineSymExpr(position=position):
            printer.print_string("symbol(")
            printer.print_ssa_value(symbols[position])
            printer.print_string(")")
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            prec = _PRECEDENCE[kind]
            with printer.in_parens() if prec < min_prec else nullcontext():
                _print_expr(printer, lhs, dims, symbols, prec)
                printer.print_string(f" {kind.get_token()} ")
                # Operators are left-associative: parenthesise an
                # equal-precedence right operand (also `a + (b + c)`, so that
                # the expression tree reads back unchanged).
                _print_expr(printer, rhs, dims, symbols, prec + 1)
        case _:
            raise ValueError(f"unexpected affine expression {expr}")


def print_affine_map_of_ssa_ids(
    printer: Printer, affine_map: AffineMap, operands: Sequence[SSAValue]
) -> None:
    """Print `[expr, ...]` with dims as `%d` and symbols as `symbol(%s)`."""
    dims = operands[: affine_map.num_dims]
    symbols = operands[affine_map.num_dims :]
    with printer.in_square_brackets():
        printer.print_list(
            affine_map.results, lambda e: _print_expr(printer, e, dims, symbols)
        )


def _parse_access(
    parser: Parser,
) -> tuple[SSAValue[MemRefType], AffineMap, list[SSAValue[IndexType]], MemRefType]:
    """Parse `%memref[<affine-map-of-ssa-ids>] : <memref type>`."""
    unresolved = parser.parse_unresolved_operand()
    affine_map, indices = parse_affine_map_of_ssa_ids(parser)
    parser.parse_punctuation(":")
    pos = parser.pos
    memref_type = parser.parse_type()
    if not isa(memref_type, MemRefType):
        parser.raise_error("expected a memref type", pos)
    return (
        cast(SSAValue[MemRefType], parser.resolve_operand(unresolved, memref_type)),
        affine_map,
        indices,
        memref_type,
    )


def _print_access(
    printer: Printer,
    memref: SSAValue,
    affine_map: AffineMap,
    indices: Sequence[SSAValue],
) -> None:
    printer.print_ssa_value(memref)
    print_affine_map_of_ssa_ids(printer, affine_map, indices)
    printer.print_string(" : ")
    printer.print_attribute(memref.type)


def exact_subscript(
    access: xaffine.LoadOp | xaffine.StoreOp, iv: SSAValue
) -> int | None:
    """The one subscript of `access` that is exactly `iv` (the bare
    dimension), when `iv` is in no other; None otherwise, also when `iv` is
    a symbol operand."""
    amap = access.map.data
    operands = list(access.indices)
    if any(v is iv for v in operands[amap.num_dims :]):
        return None
    dims = {k for k, v in enumerate(operands[: amap.num_dims]) if v is iv}
    found: int | None = None
    for j, expr in enumerate(amap.results):
        if not dims & expr.used_dims():
            continue
        if found is not None or not (
            isinstance(expr, AffineDimExpr) and expr.position in dims
        ):
            return None
        found = j
    return found


def parallel_op(
    operands: Sequence[SSAValue],
    lower: AffineMap,
    lower_groups: Sequence[int],
    upper: AffineMap,
    upper_groups: Sequence[int],
    steps: Sequence[int],
    body: Region,
) -> xaffine.ParallelOp:
    """An `affine.parallel` without reductions (xDSL 0.74 has no builder).

    Dim `k` runs from the max of its `lower_groups[k]` results of `lower` to
    the min of its `upper_groups[k]` results of `upper` by `steps[k]`;
    `operands` are the maps' operands, lower then upper.
    """

    def groups(sizes: Sequence[int]) -> DenseIntOrFPElementsAttr:
        return DenseIntOrFPElementsAttr.from_list(TensorType(i32, [len(sizes)]), sizes)

    return ParallelOp.build(
        operands=[operands],
        result_types=[[]],
        properties={
            "reductions": ArrayAttr([]),
            "lowerBoundsMap": AffineMapAttr(lower),
            "lowerBoundsGroups": groups(lower_groups),
            "upperBoundsMap": AffineMapAttr(upper),
            "upperBoundsGroups": groups(upper_groups),
            "steps": ArrayAttr([IntegerAttr(s, i64) for s in steps]),
        },
        regions=[body],
    )


def _verify_subscripts(
    op: LoadOp | StoreOp | VectorLoadOp | VectorStoreOp,
) -> None:
    """One subscript per dimension of the memref (xDSL checks only the
    operands of the map; lowering to `memref` then failed)."""
    t = op.memref.type
    count = len(op.map.data.results)
    if isinstance(t, MemRefType) and count != t.get_num_dims():
        raise VerifyException(
            f"'{op.name}' has {count} subscript{'s' if count != 1 else ''} "
            f"for a memref of rank {t.get_num_dims()}"
        )


class ParallelOp(xaffine.ParallelOp):
    """xDSL's `affine.parallel`, whose verifier also checks that the bound
    groups, the steps and the block's IVs agree on the number of loops (a
    short `steps` passed xDSL's and failed in the passes)."""

    name = "affine.parallel"

    def verify_(self) -> None:
        super().verify_()
        counts = {
            "lower bound groups": len(self.lowerBoundsGroups.get_values()),
            "upper bound groups": len(self.upperBoundsGroups.get_values()),
            "steps": len(self.steps.data),
            "induction variables": len(self.body.block.args),
        }
        if len(set(counts.values())) != 1:
            got = ", ".join(f"{n} {what}" for what, n in counts.items())
            raise VerifyException(
                f"'affine.parallel' needs one of each per loop: {got}"
            )
        if any(step.value.data < 1 for step in self.steps.data):
            raise VerifyException("'affine.parallel' steps must be positive")


class LoadOp(xaffine.LoadOp):
    """`affine.load %A[%i + symbol(%N)] : memref<?xf32>` (MLIR syntax)."""

    name = "affine.load"

    def verify_(self) -> None:
        super().verify_()
        _verify_subscripts(self)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        memref, affine_map, indices, memref_type = _parse_access(parser)
        return cls(
            memref, indices, AffineMapAttr(affine_map), memref_type.get_element_type()
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.memref, self.map.data, self.indices)


class StoreOp(xaffine.StoreOp):
    """`affine.store %v, %A[%i, %j] : memref<?x?xf32>` (MLIR syntax)."""

    name = "affine.store"

    def verify_(self) -> None:
        super().verify_()
        _verify_subscripts(self)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        memref, affine_map, indices, memref_type = _parse_access(parser)
        resolved = parser.resolve_operand(value, memref_type.get_element_type())
        return cls(resolved, memref, indices, AffineMapAttr(affine_map))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        _print_access(printer, self.memref, self.map.data, self.indices)


class VectorLoadOp(xaffine.VectorLoadOp):
    """`affine.vector_load %A[%i] : memref<?xf32>, vector<8xf32>` (MLIR syntax)."""

    name = "affine.vector_load"

    def verify_(self) -> None:
        super().verify_()
        _verify_subscripts(self)

    @classmethod
    def parse(cls, parser: Parser) -> VectorLoadOp:
        memref, affine_map, indices, _ = _parse_access(parser)
        parser.parse_punctuation(",")
        pos = parser.pos
        result_type: Attribute = parser.parse_type()
        if not isinstance(result_type, VectorType):
            parser.raise_error("expected a vector type", pos)
        return cls(memref, indices, AffineMapAttr(affine_map), result_type)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self.memref, self.map.data, self.indices)
        printer.print_string(", ")
        printer.print_attribute(self.result.type)


class VectorStoreOp(xaffine.VectorStoreOp):
    """`affine.vector_store %v, %A[%i] : memref<?xf32>, vector<8xf32>` (MLIR syntax)."""

    name = "affine.vector_store"

    def verify_(self) -> None:
        super().verify_()
        _verify_subscripts(self)

    @classmethod
    def parse(cls, parser: Parser) -> VectorStoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        memref, affine_map, indices, _ = _parse_access(parser)
        parser.parse_punctuation(",")
        value_type = parser.parse_type()
        resolved = parser.resolve_operand(value, value_type)
        return cls(resolved, memref, indices, AffineMapAttr(affine_map))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        _print_access(printer, self.memref, self.map.data, self.indices)
        printer.print_string(", ")
        printer.print_attribute(self.value.type)


Affine = Dialect(
    "affine",
    [
        xaffine.ApplyOp,
        xaffine.ForOp,
        ParallelOp,
        xaffine.IfOp,
        StoreOp,
        LoadOp,
        xaffine.MinOp,
        xaffine.YieldOp,
        VectorLoadOp,
        VectorStoreOp,
    ],
    [],
)
