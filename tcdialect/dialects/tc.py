"""The `tc` dialect: Tensor Comprehension definitions as IR.

A `tc.def` is one TC definition. Its body is a sequence of
`tc.comprehension` ops, one per TC statement, in value semantics: each
comprehension yields the new value of the tensor it writes, and a statement
that accumulates into an earlier value (``+=`` without ``!``) consumes it
with ``into``. `tc.return` lists the final values of the outputs. A
recurrence (a language extension) is a `tc.recurrence` whose body runs once
per step, carrying the tensors it writes; its comprehensions compute one
step each, which `tc.insert_step` puts into the carried tensor (see
`RecurrenceOp`).

Shapes and index ranges are symbolic: they are `SizeExpr` texts over the
size parameters of the enclosing definition (``M``, ``H - KH + 1``,
``(I + 1) floordiv 2``). The right-hand side of a statement is a region of
`arith`/`math` ops, `tc.read` (tensor reads, data-dependent subscripts
included), `tc.size` and `tc.builtin`, ending in `tc.yield`.

Example::

    tc.def @matmul<M, K, N>(A, B) -> (C) {
    ^bb0(%A : !tc.tensor<[M, K], f32>, %B : !tc.tensor<[K, N], f32>):
      %C = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%r_k in [0, K)) : !tc.tensor<[M, N], f32> {
        %0 = tc.read %A[%m, %r_k] : !tc.tensor<[M, K], f32>
        %1 = tc.read %B[%r_k, %n] : !tc.tensor<[K, N], f32>
        %2 = arith.mulf %0, %1 : f32
        tc.yield %2 : f32
      }
      tc.return %C : !tc.tensor<[M, N], f32>
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from tcdialect import symbolic
from tcdialect.symbolic import SizeExpr

#: The TC assignment operators a comprehension may carry.
ASSIGN_OPS = ("=", "+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!")


def reduction_kind(op: str) -> str | None:
    """``"+"``, ``"*"``, ``"min"``, ``"max"`` for a reduction operator, else None."""
    return None if op == "=" else op.rstrip("!")[:-1]


def signless(t: Attribute) -> Attribute:
    """The signless type used for values of element type `t` in a body."""
    if isinstance(t, IntegerType) and t.signedness.data != Signedness.SIGNLESS:
        return IntegerType(t.width.data)
    return t


def _count(n: int, noun: str) -> str:
    """``1 input``, ``2 inputs``, ``0 inputs``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _is_element_type(t: Attribute) -> bool:
    return isinstance(
        t, IntegerType | Float16Type | BFloat16Type | Float32Type | Float64Type
    )


# ----------------------------------------------------------- size expressions


def _parse_size_expr(parser: AttrParser) -> SizeExpr:
    """Parse a size expression up to a ',' ']' or ')' at nesting depth 0."""
    start = parser.pos
    depth = 0
    pieces: list[str] = []
    while True:
        tok = parser._current_token  # pyright: ignore[reportPrivateUsage]
        kind = tok.kind
        if kind == MLIRTokenKind.EOF:
            break
        if depth == 0 and kind in (
            MLIRTokenKind.COMMA,
            MLIRTokenKind.R_SQUARE,
            MLIRTokenKind.R_PAREN,
            MLIRTokenKind.GREATER,
        ):
            break
        if kind == MLIRTokenKind.L_PAREN:
            depth += 1
        elif kind == MLIRTokenKind.R_PAREN:
            depth -= 1
        pieces.append(tok.text)
        parser._consume_token()  # pyright: ignore[reportPrivateUsage]
    text = " ".join(pieces)
    if not text:
        parser.raise_error("expected a size expression", start, parser.pos)
    try:
        return symbolic.parse(text)
    except symbolic.SymbolicError as e:
        parser.raise_error(f"invalid size expression '{text}': {e}", start, parser.pos)


def _check_size_text(text: str, what: str) -> SizeExpr:
    try:
        e = symbolic.parse(text)
    except symbolic.SymbolicError as err:
        raise VerifyException(f"{what}: invalid size expression '{text}': {err}")
    if str(e) != text:
        raise VerifyException(f"{what}: size expression '{text}' is not canonical")
    return e


# ---------------------------------------------------------------------- types


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """A tensor with a symbolic shape: ``!tc.tensor<[M, K + 1], f32>``.

    Each extent is a canonical `SizeExpr` text over the size parameters of the
    enclosing `tc.def`; ``[]`` is a 0-d tensor (a scalar). Integer element
    types are ``i1`` (bool), ``iN`` (signed) or ``uiN`` (unsigned).
    """

    name = "tc.tensor"

    shape: ArrayAttr[StringAttr]
    element_type: Attribute

    def __init__(self, shape: Sequence[SizeExpr | str | int], element_type: Attribute):
        dims = [
            StringAttr(str(d if isinstance(d, SizeExpr) else symbolic.parse(str(d))))
            for d in shape
        ]
        super().__init__(ArrayAttr(dims), element_type)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def extents(self) -> tuple[SizeExpr, ...]:
        return tuple(symbolic.parse(d.data) for d in self.shape.data)

    def verify(self) -> None:
        for d in self.shape.data:
            e = _check_size_text(d.data, "tensor extent")
            if e.is_constant and e.const < 0:
                raise VerifyException(f"tc.tensor extent {e} is negative")
        if not _is_element_type(self.element_type):
            raise VerifyException(
                f"tc.tensor element type must be an integer or float type, "
                f"got {self.element_type}"
            )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<[")
        printer.print_string(", ".join(d.data for d in self.shape.data))
        printer.print_string("], ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        parser.parse_punctuation("[")
        dims: list[StringAttr] = []

        def parse_extent() -> None:
            start = parser.pos
            e = _parse_size_expr(parser)
            if e.is_constant and e.const < 0:
                parser.raise_error(
                    f"tc.tensor extent {e} is negative", start, parser.pos
                )
            dims.append(StringAttr(str(e)))

        if parser.parse_optional_punctuation("]") is None:
            parse_extent()
            while parser.parse_optional_punctuation(",") is not None:
                parse_extent()
            parser.parse_punctuation("]")
        parser.parse_punctuation(",")
        start = parser.pos
        elem = parser.parse_type()
        if not _is_element_type(elem):
            parser.raise_error(
                f"tc.tensor element type must be an integer or float type, got {elem}",
                start,
                parser.pos,
            )
        parser.parse_punctuation(">")
        return [ArrayAttr(dims), elem]


# ------------------------------------------------------------------------ ops


def _tensor_type(value: SSAValue, what: str) -> TensorType:
    if not isinstance(value.type, TensorType):
        raise VerifyException(f"{what} must be a !tc.tensor, got {value.type}")
    return value.type


def _enclosing_def(op: Operation) -> DefOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, DefOp):
        parent = parent.parent_op()
    return parent


def _check_names(expr: SizeExpr, op: Operation, what: str) -> None:
    d = _enclosing_def(op)
    if d is None:
        return
    unknown = expr.names() - set(d.size_names)
    if unknown:
        raise VerifyException(
            f"{what} '{expr}' uses {', '.join(sorted(unknown))}, which "
            f"{'is not a size' if len(unknown) == 1 else 'are not sizes'} "
            f"of @{d.sym_name.data}"
        )


@irdl_op_definition
class DefOp(IRDLOperation):
    """A TC definition: size parameters, named inputs and outputs, and a body.

    The entry block's arguments are the inputs, in order; `tc.return` gives
    the outputs' final values, in order. Size parameters are referred to by
    name in types and ranges, and read as values with `tc.size`::

        tc.def @scale<N>(X, s) -> (Y) {
        ^bb0(%X : !tc.tensor<[N], f32>, %s : !tc.tensor<[], f32>):
          ...
          tc.return %Y : !tc.tensor<[N], f32>
        }
    """

    name = "tc.def"

    sym_name = prop_def(StringAttr)
    sizes = prop_def(ArrayAttr[StringAttr])
    inputs = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        sizes: Sequence[str],
        inputs: Sequence[str],
        outputs: Sequence[str],
        body: Region,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "sizes": ArrayAttr([StringAttr(s) for s in sizes]),
                "inputs": ArrayAttr([StringAttr(s) for s in inputs]),
                "outputs": ArrayAttr([StringAttr(s) for s in outputs]),
            },
            regions=[body],
        )

    @property
    def size_names(self) -> tuple[str, ...]:
        return tuple(s.data for s in self.sizes.data)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(s.data for s in self.inputs.data)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(s.data for s in self.outputs.data)

    @property
    def input_types(self) -> tuple[TensorType, ...]:
        return tuple(_tensor_type(a, "input") for a in self.body.block.args)

    @property
    def return_op(self) -> ReturnOp:
        last = self.body.block.last_op
        assert isinstance(last, ReturnOp)
        return last

    @property
    def output_types(self) -> tuple[TensorType, ...]:
        return tuple(_tensor_type(v, "output") for v in self.return_op.values)

    @property
    def scalar_size_names(self) -> tuple[str, ...]:
        """Sizes that are also inputs: 0-d integer inputs whose value binds
        the size (a stride ``S`` used in ranges or subscripts)."""
        inputs = set(self.input_names)
        return tuple(n for n in self.size_names if n in inputs)

    def verify_(self) -> None:
        inputs = dict(zip(self.input_names, self.body.block.args))
        names = [
            *(n for n in self.size_names if n not in inputs),
            *self.input_names,
            *self.output_names,
        ]
        seen: set[str] = set()
        for n in names:
            if n in seen or self.size_names.count(n) > 1:
                raise VerifyException(
                    f"name '{n}' is declared twice in @{self.sym_name.data}"
                )
            seen.add(n)
        for n in self.size_names:
            arg = inputs.get(n)
            if arg is None:
                continue
            t = arg.type
            if not (
                isinstance(t, TensorType)
                and t.rank == 0
                and isinstance(t.element_type, IntegerType)
                and t.element_type.width.data > 1
            ):
                raise VerifyException(
                    f"name '{n}' is declared twice in @{self.sym_name.data} (a size "
                    f"may share its name only with a 0-d integer input, not {t})"
                )
        args = self.body.block.args
        if len(args) != len(self.input_names):
            raise VerifyException(
                f"@{self.sym_name.data} declares "
                f"{_count(len(self.input_names), 'input')} but its body has "
                f"{_count(len(args), 'argument')}"
            )
        last = self.body.block.last_op
        if not isinstance(last, ReturnOp):
            raise VerifyException("tc.def body must end with tc.return")
        if len(last.values) != len(self.output_names):
            raise VerifyException(
                f"@{self.sym_name.data} declares "
                f"{_count(len(self.output_names), 'output')} but tc.return has "
                f"{_count(len(last.values), 'value')}"
            )
        for arg in args:
            t = _tensor_type(arg, "tc.def input")
            for e in t.extents:
                _check_names(e, last, "input extent")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("<" + ", ".join(self.size_names) + ">")
        printer.print_string("(" + ", ".join(self.input_names) + ")")
        printer.print_string(" -> (" + ", ".join(self.output_names) + ") ")
        printer.print_region(self.body, print_entry_block_args=True)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> DefOp:
        name = parser.parse_symbol_name().data

        def ident() -> str:
            return parser.parse_identifier()

        sizes = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, ident)
        inputs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, ident)
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, ident)
        body = parser.parse_region()
        attrs = parser.parse_optional_attr_dict()
        op = cls(name, sizes, inputs, outputs, body)
        op.attributes |= attrs
        return op


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a `tc.def`, giving the final value of each output in order.

    ``tc.return %C : !tc.tensor<[M, N], f32>``
    """

    name = "tc.return"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(DefOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        for v in self.values:
            _tensor_type(v, "tc.return operand")


@irdl_op_definition
class ComprehensionOp(IRDLOperation):
    """One TC statement: ``T(i, j) op= rhs`` over a rectangular index space.

    The body's block arguments are the index variables (type ``index``): first
    the output indices, one per dimension of the result, then the reduction
    indices. Each has a half-open range ``[lower, upper)`` of size
    expressions; output indices always start at 0 and their upper bounds are
    the result's extents. `op` is the TC assignment operator: ``=``, or a
    reduction ``+= *= min= max=``, with ``!`` to start from the reduction's
    identity. A reduction without ``!`` accumulates ``into`` the tensor's
    previous value. The body computes the right-hand side and ends in
    `tc.yield`; reads of the target see its previous value (comprehension
    semantics), so output indices are always parallel::

        %C2 = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=" (%k in [0, K))
                  into %C1 : !tc.tensor<[M, N], f32> {
          ...
          tc.yield %v : f32
        }

    A reduction into a 16-bit float tensor (`f16`, `bf16`) accumulates in
    f32: the starting value (identity or ``into``) and every yielded value
    are extended to f32, combined in f32, and each element is rounded to the
    16-bit type once, when the reduction is complete.

    **Scatter-accumulate.** A comprehension whose `tc.yield` gives subscripts
    (``tc.yield %v at [%i, %d]``, one per dimension of the result, any index
    values: data-dependent, non-affine) is a scatter ``T(s(k)) += v(k)``: it
    has no output indices (every index is iterated over), its operator is
    ``+=!`` (from zeros) or ``+=`` (``into`` the previous value), and every
    point of the index space adds its value at its subscripts; duplicates add
    up (``np.add.at``). Out-of-range subscripts are errors at run time, as
    for data-dependent reads. (What `tc-differentiate` emits for the adjoint
    of a read it cannot invert; the language has no syntax for it.)::

        %dE = tc.comprehension @dE() "+=!" (%k in [0, K), %d in [0, D)) : !tc.tensor<[V, D], f32> {
          %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
          %1 = arith.index_cast %0 : i32 to index
          %2 = tc.read %g[%k, %d] : !tc.tensor<[K, D], f32>
          tc.yield %2 at [%1, %d] : f32
        }
    """

    name = "tc.comprehension"

    target = prop_def(StringAttr)
    op = prop_def(StringAttr)
    lower_bounds = prop_def(ArrayAttr[StringAttr])
    upper_bounds = prop_def(ArrayAttr[StringAttr])
    into = opt_operand_def()
    result = result_def(TensorType)
    body = region_def("single_block")

    def __init__(
        self,
        target: str,
        op: str,
        lower_bounds: Sequence[SizeExpr],
        upper_bounds: Sequence[SizeExpr],
        result_type: TensorType,
        body: Region,
        into: SSAValue | None = None,
    ):
        super().__init__(
            operands=[[into] if into is not None else []],
            result_types=[result_type],
            properties={
                "target": StringAttr(target),
                "op": StringAttr(op),
                "lower_bounds": ArrayAttr([StringAttr(str(b)) for b in lower_bounds]),
                "upper_bounds": ArrayAttr([StringAttr(str(b)) for b in upper_bounds]),
            },
            regions=[body],
        )

    # ------------------------------------------------------------- accessors
    @property
    def result_type(self) -> TensorType:
        assert isinstance(self.result.type, TensorType)
        return self.result.type

    @property
    def num_output_indices(self) -> int:
        return 0 if self.is_scatter else self.result_type.rank

    @property
    def is_scatter(self) -> bool:
        """A scatter-accumulate: the yield gives the subscripts written."""
        last = self.body.block.last_op
        return isinstance(last, YieldOp) and bool(last.indices)

    @property
    def ranges(self) -> tuple[tuple[SizeExpr, SizeExpr], ...]:
        return tuple(
            (symbolic.parse(lo.data), symbolic.parse(hi.data))
            for lo, hi in zip(self.lower_bounds.data, self.upper_bounds.data)
        )

    @property
    def reduction(self) -> str | None:
        return reduction_kind(self.op.data)

    @property
    def init(self) -> bool:
        return self.op.data.endswith("!")

    @property
    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    # ------------------------------------------------------------ verifier
    def verify_(self) -> None:
        op = self.op.data
        if op not in ASSIGN_OPS:
            raise VerifyException(f"unknown assignment operator '{op}'")
        lbs, ubs = self.lower_bounds.data, self.upper_bounds.data
        args = self.body.block.args
        if not (len(lbs) == len(ubs) == len(args)):
            raise VerifyException(
                f"{_count(len(args), 'index variable')} but {len(lbs)} lower and "
                f"{len(ubs)} upper bounds"
            )
        for a in args:
            if not isinstance(a.type, IndexType):
                raise VerifyException(
                    f"index variables must be of type index, got {a.type}"
                )
        rank = self.num_output_indices
        if len(args) < rank:
            raise VerifyException(
                f"result has rank {rank} but there "
                f"{'is' if len(args) == 1 else 'are'} only "
                f"{_count(len(args), 'index variable')}"
            )
        for i, (lo, hi) in enumerate(zip(lbs, ubs)):
            lo_e = _check_size_text(lo.data, "lower bound")
            hi_e = _check_size_text(hi.data, "upper bound")
            _check_names(lo_e, self, "lower bound")
            _check_names(hi_e, self, "upper bound")
            if i < rank:
                if not lo_e.is_constant or lo_e.const != 0:
                    raise VerifyException(
                        f"output index #{i} must start at 0, not at {lo_e}"
                    )
                extent = self.result_type.shape.data[i].data
                if hi.data != extent:
                    raise VerifyException(
                        f"output index #{i} ranges up to {hi.data} but the result "
                        f"extent is {extent}"
                    )
        has_reduction_indices = len(args) > rank
        if self.is_scatter:
            n = len(self.yield_op.indices)
            if n != self.result_type.rank:
                raise VerifyException(
                    f"a scatter into a rank-{self.result_type.rank} tensor needs "
                    f"{self.result_type.rank} subscripts, got {n}"
                )
            if op not in ("+=", "+=!"):
                raise VerifyException(
                    f"a scatter accumulates with '+=' or '+=!', not '{op}'"
                )
        if op == "=" and has_reduction_indices:
            raise VerifyException("'=' comprehension cannot have reduction indices")
        needs_into = op in ("+=", "*=", "min=", "max=")
        if needs_into and self.into is None:
            raise VerifyException(f"'{op}' accumulates: it needs an 'into' operand")
        if not needs_into and self.into is not None:
            raise VerifyException(
                f"'{op}' does not accumulate: no 'into' operand allowed"
            )
        if self.into is not None and self.into.type != self.result.type:
            raise VerifyException(
                f"'into' operand type {self.into.type} does not match the result "
                f"type {self.result.type}"
            )
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("tc.comprehension body must end with tc.yield")
        expected = signless(self.result_type.element_type)
        if last.value.type != expected:
            raise VerifyException(
                f"body yields {last.value.type} but the result element type "
                f"needs {expected}"
            )

    # ------------------------------------------------------------- syntax
    def print(self, printer: Printer) -> None:
        args = self.body.block.args
        rank = self.num_output_indices
        lbs, ubs = self.lower_bounds.data, self.upper_bounds.data

        def print_ranges(indices: range) -> None:
            printer.print_string("(")
            for n, i in enumerate(indices):
                if n:
                    printer.print_string(", ")
                printer.print_ssa_value(args[i])
                printer.print_string(f" in [{lbs[i].data}, {ubs[i].data})")
            printer.print_string(")")

        printer.print_string(" ")
        printer.print_symbol_name(self.target.data)
        print_ranges(range(rank))
        printer.print_string(" ")
        printer.print_string_literal(self.op.data)
        if len(args) > rank:
            printer.print_string(" ")
            print_ranges(range(rank, len(args)))
        if self.into is not None:
            printer.print_string(" into ")
            printer.print_ssa_value(self.into)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ComprehensionOp:
        target = parser.parse_symbol_name().data

        def parse_range() -> tuple[Parser.Argument, SizeExpr, SizeExpr]:
            arg = parser.parse_argument(expect_type=False).resolve(IndexType())
            parser.parse_keyword("in")
            parser.parse_punctuation("[")
            lo = _parse_size_expr(parser)
            parser.parse_punctuation(",")
            hi = _parse_size_expr(parser)
            parser.parse_punctuation(")")
            return arg, lo, hi

        outs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_range)
        op = parser.parse_str_literal()
        reds: list[tuple[Parser.Argument, SizeExpr, SizeExpr]] = []
        if parser._current_token.kind == MLIRTokenKind.L_PAREN:  # pyright: ignore[reportPrivateUsage]
            reds = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parse_range
            )
        unresolved_into = None
        if parser.parse_optional_keyword("into") is not None:
            unresolved_into = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"expected a !tc.tensor type, got {result_type}")
        into = (
            parser.resolve_operand(unresolved_into, result_type)
            if unresolved_into is not None
            else None
        )
        ranges = [*outs, *reds]
        body = parser.parse_region([a for a, _, _ in ranges])
        attrs = parser.parse_optional_attr_dict()
        result = cls(
            target,
            op,
            [lo for _, lo, _ in ranges],
            [hi for _, _, hi in ranges],
            result_type,
            body,
            into,
        )
        result.attributes |= attrs
        return result


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a comprehension body with the value of the right-hand side, and
    for a scatter-accumulate the subscripts it adds it at.

    ``tc.yield %v : f32``, ``tc.yield %v at [%i, %d] : f32``
    """

    name = "tc.yield"
    value = operand_def()
    indices = var_operand_def(IndexType)
    traits = traits_def(IsTerminator(), HasParent(ComprehensionOp))
    assembly_format = "$value (`at` ` ` `[` $indices^ `]`)? `:` type($value) attr-dict"

    def __init__(self, value: SSAValue, indices: Sequence[SSAValue] = ()):
        super().__init__(operands=[value, indices])


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Reads one element of a tensor; subscripts are `index` values.

    Subscripts may be any values, including ones computed from other reads
    (data-dependent gathers); those are bounds-checked at run time. The result
    has the signless form of the element type::

        %v = tc.read %A[%m, %k] : !tc.tensor<[M, K], f32>
    """

    name = "tc.read"
    tensor = operand_def(TensorType)
    indices = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, tensor: SSAValue, indices: Sequence[SSAValue]):
        t = _tensor_type(tensor, "tc.read operand")
        super().__init__(
            operands=[tensor, indices], result_types=[signless(t.element_type)]
        )

    def verify_(self) -> None:
        t = _tensor_type(self.tensor, "tc.read operand")
        if len(self.indices) != t.rank:
            raise VerifyException(
                f"tc.read of a rank-{t.rank} tensor needs {t.rank} "
                f"subscript{'s' * (t.rank != 1)}, got {len(self.indices)}"
            )
        expected = signless(t.element_type)
        if self.result.type != expected:
            raise VerifyException(
                f"tc.read result type {self.result.type} does not match the element "
                f"type {t.element_type}: expected {expected}"
                + (
                    " (reads give signless values)"
                    if expected != t.element_type
                    else ""
                )
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.tensor)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        tensor = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(
            parser.resolve_operand(tensor, t),
            [parser.resolve_operand(i, IndexType()) for i in indices],
        )
        op.attributes |= attrs
        return op


@irdl_op_definition
class SizeOp(IRDLOperation):
    """The value of a size parameter of the enclosing definition.

    ``%N = tc.size "N"``
    """

    name = "tc.size"
    size = prop_def(StringAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$size attr-dict"

    def __init__(self, size: str):
        super().__init__(
            properties={"size": StringAttr(size)}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        d = _enclosing_def(self)
        if d is not None and self.size.data not in d.size_names:
            raise VerifyException(
                f"'{self.size.data}' is not a size of @{d.sym_name.data}"
            )


#: Builtins with no op in `math`/`arith`: name -> arity.
BUILTINS: dict[str, int] = {
    "erfc": 1,
    "exp10": 1,
    "hypot": 2,
    "fdim": 2,
    "fmod": 2,
    **{
        n: 1
        for n in (
            "cospi sinpi lgamma tgamma erfinv erfcinv erfcx normcdf normcdfinv logb "
            "j0 j1 y0 y1 cyl_bessel_i0 cyl_bessel_i1 rcbrt"
        ).split()
    },
    **{n: 2 for n in ("nextafter", "remainder", "rhypot")},
    **{n: 3 for n in ("norm3d", "rnorm3d")},
    **{n: 4 for n in ("norm4d", "rnorm4d")},
}


@irdl_op_definition
class BuiltinOp(IRDLOperation):
    """A TC math builtin that has no `math` or `arith` op.

    Operands and result share one float type::

        %h = tc.builtin "hypot"(%x, %y) : (f32, f32) -> f32
    """

    name = "tc.builtin"
    callee = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"
    )

    def __init__(self, callee: str, args: Sequence[SSAValue]):
        super().__init__(
            operands=[args],
            result_types=[args[0].type],
            properties={"callee": StringAttr(callee)},
        )

    def verify_(self) -> None:
        name = self.callee.data
        if name not in BUILTINS:
            raise VerifyException(f"unknown builtin '{name}'")
        if len(self.args) != BUILTINS[name]:
            raise VerifyException(
                f"'{name}' takes {_count(BUILTINS[name], 'argument')}, "
                f"got {len(self.args)}"
            )
        t = self.result.type
        if not isinstance(t, Float16Type | Float32Type | Float64Type):
            raise VerifyException(f"'{name}' needs a float type, got {t}")
        for a in self.args:
            if a.type != t:
                raise VerifyException(
                    f"'{name}' operand type {a.type} differs from {t}"
                )


@irdl_op_definition
class RecurrenceOp(IRDLOperation):
    """A recurrence (ext): its body runs once per value of the step index,
    in increasing order over ``[lower, upper)``.

    The tensors the body writes are carried from one step to the next, like
    `scf.for` iteration arguments: block arguments after the step index,
    yielded by `tc.next`, and results after the last step. The first
    ``len(inits)`` carried tensors start from the `inits` (their values before
    the recurrence); the others are *fresh*: first written inside, their
    steps that no iteration writes are undefined (the frontend never reads
    them). Comprehensions in the body write one step of a carried tensor
    (`tc.insert_step`) and read the step index from the enclosing block::

        %h2, %p1 = tc.recurrence %t in [1, T + 1) (@h %h = %h1, @p %p) : !tc.tensor<[T + 1, N], f32>, !tc.tensor<[T + 1, N], f32> {
          %s = tc.comprehension @p(%n in [0, N)) "+=!" (%k in [0, N)) : !tc.tensor<[N], f32> {
            %c1 = arith.constant 1 : index
            %prev = arith.subi %t, %c1 : index
            %x = tc.read %h[%prev, %k] : !tc.tensor<[T + 1, N], f32>
            tc.yield %x : f32
          }
          %p2 = tc.insert_step %s into %p[0] at %t : !tc.tensor<[N], f32> into !tc.tensor<[T + 1, N], f32>
          ...
          tc.next %h3, %p2 : !tc.tensor<[T + 1, N], f32>, !tc.tensor<[T + 1, N], f32>
        }
    """

    name = "tc.recurrence"

    lower = prop_def(StringAttr)
    upper = prop_def(StringAttr)
    tensors = prop_def(ArrayAttr[StringAttr])
    inits = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    body = region_def("single_block")

    def __init__(
        self,
        lower: SizeExpr,
        upper: SizeExpr,
        tensors: Sequence[str],
        inits: Sequence[SSAValue],
        types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[inits],
            result_types=[types],
            properties={
                "lower": StringAttr(str(lower)),
                "upper": StringAttr(str(upper)),
                "tensors": ArrayAttr([StringAttr(n) for n in tensors]),
            },
            regions=[body],
        )

    @property
    def tensor_names(self) -> tuple[str, ...]:
        return tuple(n.data for n in self.tensors.data)

    @property
    def step(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def range(self) -> tuple[SizeExpr, SizeExpr]:
        return symbolic.parse(self.lower.data), symbolic.parse(self.upper.data)

    def verify_(self) -> None:
        for what, text in (
            ("lower bound", self.lower.data),
            ("upper bound", self.upper.data),
        ):
            _check_names(_check_size_text(text, what), self, what)
        n = len(self.tensor_names)
        args = self.body.block.args
        if len(self.res) != n or len(args) != n + 1 or len(self.inits) > n:
            raise VerifyException(
                f"tc.recurrence carries {_count(n, 'tensor')}: it needs as many "
                f"results and block arguments after the step index, and at most as "
                f"many inits (got {len(self.res)}, {len(args) - 1}, {len(self.inits)})"
            )
        if not isinstance(args[0].type, IndexType):
            raise VerifyException("the step index must be of type index")
        for i, (r, a) in enumerate(zip(self.res, args[1:])):
            if a.type != r.type or (
                i < len(self.inits) and self.inits[i].type != r.type
            ):
                raise VerifyException(
                    f"carried tensor '{self.tensor_names[i]}' has inconsistent types"
                )
        last = self.body.block.last_op
        if not isinstance(last, NextOp) or [v.type for v in last.values] != [
            r.type for r in self.res
        ]:
            raise VerifyException(
                "tc.recurrence body must end with tc.next of the carried tensors"
            )

    def print(self, printer: Printer) -> None:
        args = self.body.block.args
        printer.print_string(" ")
        printer.print_ssa_value(args[0])
        printer.print_string(f" in [{self.lower.data}, {self.upper.data}) (")
        for i, (name, a) in enumerate(zip(self.tensor_names, args[1:])):
            if i:
                printer.print_string(", ")
            printer.print_symbol_name(name)
            printer.print_string(" ")
            printer.print_ssa_value(a)
            if i < len(self.inits):
                printer.print_string(" = ")
                printer.print_ssa_value(self.inits[i])
        printer.print_string(") : ")
        printer.print_list(self.res, lambda r: printer.print_attribute(r.type))
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> RecurrenceOp:
        step = parser.parse_argument(expect_type=False).resolve(IndexType())
        parser.parse_keyword("in")
        parser.parse_punctuation("[")
        lo = _parse_size_expr(parser)
        parser.parse_punctuation(",")
        hi = _parse_size_expr(parser)
        parser.parse_punctuation(")")

        def carried() -> tuple[str, Parser.UnresolvedArgument, object]:
            name = parser.parse_symbol_name().data
            arg = parser.parse_argument(expect_type=False)
            init = None
            if parser.parse_optional_punctuation("=") is not None:
                init = parser.parse_unresolved_operand()
            return name, arg, init

        items = parser.parse_comma_separated_list(parser.Delimiter.PAREN, carried)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_type
        )
        if len(types) != len(items):
            parser.raise_error(
                f"tc.recurrence carries {len(items)} tensors but has {len(types)} types"
            )
        inits: list[SSAValue] = []
        for (_, _, init), t in zip(items, types):
            if init is not None:
                inits.append(parser.resolve_operand(init, t))  # pyright: ignore
        body = parser.parse_region(
            [step, *(a.resolve(t) for (_, a, _), t in zip(items, types))]
        )
        attrs = parser.parse_optional_attr_dict()
        op = cls(lo, hi, [n for n, _, _ in items], inits, types, body)
        op.attributes |= attrs
        return op


@irdl_op_definition
class NextOp(IRDLOperation):
    """Ends a `tc.recurrence` body with the carried tensors' values after
    the step.

    ``tc.next %h3, %p2 : !tc.tensor<[T + 1, N], f32>, !tc.tensor<[T + 1, N], f32>``
    """

    name = "tc.next"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(RecurrenceOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[values])


@irdl_op_definition
class InsertStepOp(IRDLOperation):
    """`tensor` with its step `step` along dimension `dim` replaced by
    `slice` (a comprehension's result, the tensor's type without `dim`).

    ``%p2 = tc.insert_step %s into %p[0] at %t : !tc.tensor<[N], f32> into !tc.tensor<[T + 1, N], f32>``
    """

    name = "tc.insert_step"
    slice = operand_def(TensorType)
    tensor = operand_def(TensorType)
    step = operand_def(IndexType)
    dim = prop_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), HasParent(RecurrenceOp))

    def __init__(self, slice: SSAValue, tensor: SSAValue, step: SSAValue, dim: int):
        super().__init__(
            operands=[slice, tensor, step],
            result_types=[tensor.type],
            properties={"dim": IntegerAttr(dim, IndexType())},
        )

    @property
    def step_dim(self) -> int:
        return self.dim.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.slice)
        printer.print_string(" into ")
        printer.print_ssa_value(self.tensor)
        printer.print_string(f"[{self.step_dim}] at ")
        printer.print_ssa_value(self.step)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.slice.type)
        printer.print_string(" into ")
        printer.print_attribute(self.tensor.type)

    @classmethod
    def parse(cls, parser: Parser) -> InsertStepOp:
        part = parser.parse_unresolved_operand()
        parser.parse_keyword("into")
        full = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        dim = parser.parse_integer()
        parser.parse_punctuation("]")
        parser.parse_keyword("at")
        step = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        part_t = parser.parse_type()
        parser.parse_keyword("into")
        full_t = parser.parse_type()
        op = cls(
            parser.resolve_operand(part, part_t),
            parser.resolve_operand(full, full_t),
            parser.resolve_operand(step, IndexType()),
            dim,
        )
        op.attributes |= attrs
        return op

    def verify_(self) -> None:
        full = _tensor_type(self.tensor, "tc.insert_step tensor")
        part = _tensor_type(self.slice, "tc.insert_step slice")
        k = self.step_dim
        if not 0 <= k < full.rank:
            raise VerifyException(f"step dimension {k} of a rank-{full.rank} tensor")
        expected = [e for i, e in enumerate(full.extents) if i != k]
        if list(part.extents) != expected or part.element_type != full.element_type:
            raise VerifyException(
                f"slice type {part} does not match {full} without dimension {k}"
            )
        if self.result.type != full:
            raise VerifyException("tc.insert_step result type must be the tensor's")


def make_body(num_indices: int) -> tuple[Region, Block]:
    """A fresh single-block region with `num_indices` index arguments."""
    block = Block(arg_types=[IndexType()] * num_indices)
    return Region(block), block


TC = Dialect(
    "tc",
    [
        DefOp,
        ReturnOp,
        ComprehensionOp,
        YieldOp,
        ReadOp,
        SizeOp,
        BuiltinOp,
        RecurrenceOp,
        NextOp,
        InsertStepOp,
    ],
    [TensorType],
)
