"""Lowering of checked TC definitions (`sema.CheckedDef`) to the tc dialect.

One `tc.def` per definition and one `tc.comprehension` per statement; the
statements of a recurrence (``for t in lo:hi { ... }``) go into one
`tc.recurrence`, each a comprehension of one step put into its tensor by
`tc.insert_step`. The right-hand side becomes `arith`/`math` ops with the
language's exact semantics made explicit:

* subscripts built only from sizes, indices and integer constants are
  computed in `index`; anything else is computed in its own type and cast;
* integer ``/`` and ``%`` round toward negative infinity and give 0 when the
  divisor is 0 (a `select` guards the divisor, so nothing can trap);
* operands are converted to the promoted type of each operator, and the
  value stored is converted to the target's element type;
* 16-bit floats (`f16`, `bf16`; docs/language-notes.md, "16-bit floats"):
  `+ - * /`, negation, comparisons, `min`/`max` and `?:` are ops on the
  16-bit type itself (each result rounded to it); builtins and float ``%``
  extend their operands to f32, compute in f32 and truncate the result
  once; conversions between a 16-bit float and anything but f32 go through
  f32; a float literal that meets a 16-bit operand is a 16-bit constant
  (its float32 value rounded).

For example ``Y(i) = exp(X(i)) * 0.5`` with `X` float16 gives::

    %x = tc.read %X[%i] : !tc.tensor<[N], f16>
    %0 = arith.extf %x : f16 to f32
    %1 = math.exp %0 : f32
    %2 = arith.truncf %1 : f32 to f16
    %3 = arith.constant 5.000000e-01 : f16
    %4 = arith.mulf %2, %3 : f16
    tc.yield %4 : f16
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from tcdialect.bfloat16 import round_to_bfloat16
from tcdialect.diagnostics import Diagnostic, TCError
from tcdialect.dialects import tc
from tcdialect.frontend import ast
from tcdialect.frontend.sema import (
    TOO_DEEP,
    CheckedDef,
    CheckedProgram,
    CheckedStatement,
    is_float,
    is_float_literal,
    is_half,
    is_unsigned,
    operands_type,
    width,
)


def element_type(t: str) -> Attribute:
    """The tensor element type for a TC scalar type name."""
    if t == "bool":
        return IntegerType(1)
    if t.startswith("uint"):
        return IntegerType(width(t), Signedness.UNSIGNED)
    if t.startswith("int"):
        return IntegerType(width(t))
    if t == "bfloat16":
        return BFloat16Type()
    return {16: Float16Type(), 32: Float32Type(), 64: Float64Type()}[width(t)]


def float_value(value: float, t: str) -> float:
    """`value` rounded to float type `t` (through float32 for a 16-bit one)."""
    if t == "float64":
        return value
    v32 = np.float32(value)
    if t == "float16":
        return float(np.float16(v32))
    if t == "bfloat16":
        return float(round_to_bfloat16(v32))
    return float(v32)


def value_type(t: str) -> Attribute:
    """The (signless) type of values of TC scalar type `t` in a body."""
    return tc.signless(element_type(t))


_UNARY_MATH: dict[str, Callable[[SSAValue], Operation]] = {
    "exp": math.ExpOp,
    "exp2": math.Exp2Op,
    "expm1": math.ExpM1Op,
    "log": math.LogOp,
    "log2": math.Log2Op,
    "log10": math.Log10Op,
    "log1p": math.Log1pOp,
    "sqrt": math.SqrtOp,
    "rsqrt": math.RsqrtOp,
    "cbrt": math.CbrtOp,
    "sin": math.SinOp,
    "cos": math.CosOp,
    "tan": math.TanOp,
    "asin": math.AsinOp,
    "acos": math.AcosOp,
    "atan": math.AtanOp,
    "sinh": math.SinhOp,
    "cosh": math.CoshOp,
    "tanh": math.TanhOp,
    "asinh": math.AsinhOp,
    "acosh": math.AcoshOp,
    "atanh": math.AtanhOp,
    "erf": math.ErfOp,
    "fabs": math.AbsFOp,
    "floor": math.FloorOp,
    "ceil": math.CeilOp,
    "trunc": math.TruncOp,
    "round": math.RoundOp,
}

_BINARY_MATH: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "fmax": arith.MaxnumfOp,
    "fmin": arith.MinnumfOp,
    "pow": math.PowFOp,
    "atan2": math.Atan2Op,
    "copysign": math.CopySignOp,
    "fdivide": arith.DivfOp,
}

_CMP_F = {"==": "oeq", "!=": "une", "<": "olt", ">": "ogt", "<=": "ole", ">=": "oge"}
_CMP_S = {"==": "eq", "!=": "ne", "<": "slt", ">": "sgt", "<=": "sle", ">=": "sge"}
_CMP_U = {"==": "eq", "!=": "ne", "<": "ult", ">": "ugt", "<=": "ule", ">=": "uge"}


class _BodyGen:
    """Emits the body of one comprehension."""

    def __init__(
        self,
        cdef: CheckedDef,
        st: CheckedStatement,
        block: Block,
        values: dict[str, SSAValue],
        step: SSAValue | None = None,
    ):
        self.cdef = cdef
        self.st = st
        self.b = Builder(InsertPoint.at_end(block))
        self.values = values
        names = [*st.out_indices, *st.red_indices]
        if step is not None and st.step_dim is not None:
            # in a recurrence, the step index is the tc.recurrence's
            names.remove(st.out_indices[st.step_dim])
        self.index_args: dict[str, SSAValue] = dict(zip(names, block.args))
        if step is not None and st.step_dim is not None:
            self.index_args[st.out_indices[st.step_dim]] = step
        for n, a in self.index_args.items():
            a.name_hint = n
        self.sizes = set(cdef.sizes)
        self.let_values: dict[tuple[str, str], SSAValue] = {}
        #: Lets as subscripts: whether each is an index expression, and its
        #: `index` value (each computed once: lets are chains of lets).
        self.let_is_index: dict[str, bool] = {}
        self.let_indices: dict[str, SSAValue] = {}

    # ----------------------------------------------------------- helpers
    def op(self, o: Operation) -> SSAValue:
        self.b.insert(o)
        return o.results[0]

    def const(self, value: int | float | bool, t: str) -> SSAValue:
        vt = value_type(t)
        if is_float(t):
            v = float_value(float(value), t)
            return self.op(arith.ConstantOp(FloatAttr(v, vt)))  # type: ignore[arg-type]
        v = int(value)
        if t == "bool":
            v = 1 if value else 0
        elif is_unsigned(t):
            v &= (1 << width(t)) - 1
            if v >= 1 << (width(t) - 1):
                v -= 1 << width(t)
        return self.op(arith.ConstantOp(IntegerAttr(v, vt)))  # type: ignore[arg-type]

    def index_const(self, v: int) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(v, IndexType())))

    def convert(self, v: SSAValue, src: str, dst: str) -> SSAValue:
        if src == dst:
            return v
        if dst != "bool" and "float32" not in (src, dst):
            if is_half(src) or is_half(dst):
                return self.convert(self.convert(v, src, "float32"), "float32", dst)
        dt = value_type(dst)
        if dst == "bool":
            zero = self.const(0, src)
            if is_float(src):
                return self.op(arith.CmpfOp(v, zero, "une"))
            return self.op(arith.CmpiOp(v, zero, "ne"))
        if is_float(src) and is_float(dst):
            if width(dst) > width(src):
                return self.op(arith.ExtFOp(v, dt))
            return self.op(arith.TruncFOp(v, dt))
        if is_float(src):
            assert isinstance(dt, IntegerType)
            cls = arith.FPToUIOp if is_unsigned(dst) else arith.FPToSIOp
            return self.op(cls(v, dt))
        if is_float(dst):
            assert isinstance(dt, AnyFloat)
            cls = arith.UIToFPOp if is_unsigned(src) else arith.SIToFPOp
            return self.op(cls(v, dt))
        if width(dst) == width(src):
            return v
        assert isinstance(dt, IntegerType)
        if width(dst) < width(src):
            return self.op(arith.TruncIOp(v, dt))
        cls = arith.ExtUIOp if is_unsigned(src) else arith.ExtSIOp
        return self.op(cls(v, dt))

    # ------------------------------------------------------------- values
    def value(self, e: ast.Expr, want: str | None = None) -> SSAValue:
        """Emit `e` and convert it to type `want` (default: its own type)."""
        t = self.st.type_of(e)
        if want is not None and is_half(want) and is_float_literal(e):
            return self.const(_literal(e), want)
        v = self._value(e, t)
        return self.convert(v, t, want) if want is not None else v

    def _value(self, e: ast.Expr, t: str) -> SSAValue:
        match e:
            case ast.IntLit(value=v):
                return self.const(v, "int32")
            case ast.FloatLit(value=v):
                return self.const(v, "float32")
            case ast.Name(name=n):
                return self.name(n, t)
            case ast.Access():
                return self.access(e, t)
            case ast.Cast(to=to, operand=o):
                return self.value(o, to)
            case ast.Unary(op="!", operand=o):
                return self.op(
                    arith.XOrIOp(self.value(o, "bool"), self.const(1, "bool"))
                )
            case ast.Unary(operand=o):
                x = self.value(o, t)
                if is_float(t):
                    return self.op(arith.NegfOp(x))
                return self.op(arith.SubiOp(self.const(0, t), x))
            case ast.Binary(op="&&" | "||", lhs=a, rhs=b):
                cls = arith.AndIOp if e.op == "&&" else arith.OrIOp
                return self.op(cls(self.value(a, "bool"), self.value(b, "bool")))
            case ast.Binary(op="==" | "!=" | "<" | ">" | "<=" | ">=", lhs=a, rhs=b):
                ct = operands_type(a, self.st.type_of(a), b, self.st.type_of(b))
                x, y = self.value(a, ct), self.value(b, ct)
                if is_float(ct):
                    return self.op(arith.CmpfOp(x, y, _CMP_F[e.op]))
                table = _CMP_U if is_unsigned(ct) else _CMP_S
                return self.op(arith.CmpiOp(x, y, table[e.op]))
            case ast.Binary(op=op, lhs=a, rhs=b):
                return self.arith(op, self.value(a, t), self.value(b, t), t)
            case ast.MinMax(op=op, lhs=a, rhs=b):
                x, y = self.value(a, t), self.value(b, t)
                if is_float(t):
                    cls = arith.MinimumfOp if op == "min" else arith.MaximumfOp
                elif is_unsigned(t):
                    cls = arith.MinUIOp if op == "min" else arith.MaxUIOp
                else:
                    cls = arith.MinSIOp if op == "min" else arith.MaxSIOp
                return self.op(cls(x, y))
            case ast.Ternary(cond=c, then=a, other=b):
                return self.op(
                    arith.SelectOp(
                        self.value(c, "bool"), self.value(a, t), self.value(b, t)
                    )
                )
            case _:  # pragma: no cover
                raise AssertionError(f"unexpected expression {e!r}")

    def in_float32(
        self, t: str, args: list[SSAValue], make: Callable[[list[SSAValue]], Operation]
    ) -> SSAValue:
        """`make(args)`, computed in f32 and truncated when `t` is 16-bit."""
        if not is_half(t):
            return self.op(make(args))
        wide = [self.convert(a, t, "float32") for a in args]
        return self.convert(self.op(make(wide)), "float32", t)

    def arith(self, op: str, x: SSAValue, y: SSAValue, t: str) -> SSAValue:
        if is_float(t):
            if op == "%":
                return self.in_float32(t, [x, y], lambda a: tc.BuiltinOp("fmod", a))
            cls = {
                "+": arith.AddfOp,
                "-": arith.SubfOp,
                "*": arith.MulfOp,
                "/": arith.DivfOp,
            }[op]
            return self.op(cls(x, y))
        if op in "+-*":
            cls = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp}[op]
            return self.op(cls(x, y))
        return self.divide(op, x, y, t)

    def divide(self, op: str, x: SSAValue, y: SSAValue, t: str) -> SSAValue:
        """Floor division / remainder; division by zero gives 0."""
        unsigned = t != "index" and is_unsigned(t)
        if _nonzero_constant(y):
            if unsigned:
                return self.op((arith.DivUIOp if op == "/" else arith.RemUIOp)(x, y))
            q = self.op(arith.FloorDivSIOp(x, y))
            if op == "/":
                return q
            return self.op(arith.SubiOp(x, self.op(arith.MuliOp(q, y))))
        zero = self.const(0, t) if t != "index" else self.index_const(0)
        one = self.const(1, t) if t != "index" else self.index_const(1)
        is_zero = self.op(arith.CmpiOp(y, zero, "eq"))
        safe = self.op(arith.SelectOp(is_zero, one, y))
        if unsigned:
            q = self.op((arith.DivUIOp if op == "/" else arith.RemUIOp)(x, safe))
        else:
            q = self.op(arith.FloorDivSIOp(x, safe))
            if op == "%":
                q = self.op(arith.SubiOp(x, self.op(arith.MuliOp(q, safe))))
        return self.op(arith.SelectOp(is_zero, zero, q))

    def name(self, n: str, t: str) -> SSAValue:
        if n in self.st.lets:
            if (n, t) not in self.let_values:
                self.let_values[n, t] = self.value(self.st.lets[n], t)
            return self.let_values[n, t]
        if n in self.index_args:
            return self.convert(
                self.op(arith.IndexCastOp(self.index_args[n], value_type("int32"))),
                "int32",
                t,
            )
        if n in self.sizes and n not in self.values:
            size = self.op(tc.SizeOp(n))
            return self.convert(
                self.op(arith.IndexCastOp(size, value_type("int32"))), "int32", t
            )
        tensor = self.values[n]
        return self.op(tc.ReadOp(tensor, []))

    def access(self, e: ast.Access, t: str) -> SSAValue:
        n = e.callee.name
        if n in self.values:
            subs = [self.subscript(a) for a in e.args]
            return self.op(tc.ReadOp(self.values[n], subs))
        args = [self.value(a, t) for a in e.args]
        return self.in_float32(t, args, lambda a: _builtin_op(n, a))

    # --------------------------------------------------------- subscripts
    def is_index_expr(self, e: ast.Expr) -> bool:
        match e:
            case ast.IntLit():
                return True
            case ast.Name(name=n):
                if n in self.st.lets:
                    if n not in self.let_is_index:
                        self.let_is_index[n] = self.is_index_expr(self.st.lets[n])
                    return self.let_is_index[n]
                return n in self.index_args or n in self.sizes
            case ast.Unary(op="-", operand=o):
                return self.is_index_expr(o)
            case (
                ast.Binary(op="+" | "-" | "*" | "/" | "%", lhs=a, rhs=b)
                | ast.MinMax(lhs=a, rhs=b)
            ):
                return self.is_index_expr(a) and self.is_index_expr(b)
            case _:
                return False

    def subscript(self, e: ast.Expr) -> SSAValue:
        if self.is_index_expr(e):
            return self.index(e)
        t = self.st.type_of(e)
        v = self.value(e)
        if is_unsigned(t) and width(t) < 64:
            v = self.convert(v, t, "uint64")
        elif width(t) < 32:
            v = self.convert(v, t, "int32")
        return self.op(arith.IndexCastOp(v, IndexType()))

    def index(self, e: ast.Expr) -> SSAValue:
        match e:
            case ast.IntLit(value=v):
                return self.index_const(v)
            case ast.Name(name=n):
                if n in self.st.lets:
                    if n not in self.let_indices:
                        self.let_indices[n] = self.index(self.st.lets[n])
                    return self.let_indices[n]
                if n in self.index_args:
                    return self.index_args[n]
                return self.op(tc.SizeOp(n))
            case ast.Unary(operand=o):
                return self.op(arith.SubiOp(self.index_const(0), self.index(o)))
            case ast.Binary(op="+" | "-" | "*", lhs=a, rhs=b):
                cls = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp}[e.op]
                return self.op(cls(self.index(a), self.index(b)))
            case ast.Binary(op=op, lhs=a, rhs=b):
                return self.divide(op, self.index(a), self.index(b), "index")
            case ast.MinMax(op=op, lhs=a, rhs=b):
                cls = arith.MinSIOp if op == "min" else arith.MaxSIOp
                return self.op(cls(self.index(a), self.index(b)))
            case _:  # pragma: no cover
                raise AssertionError(f"not an index expression: {e!r}")

    def emit(self) -> None:
        st = self.st
        v = self.value(st.stmt.rhs, st.elem)
        self.b.insert(tc.YieldOp(v))


def _builtin_op(name: str, args: list[SSAValue]) -> Operation:
    """The op computing builtin `name` on `args` (all of one float type)."""
    if name in _UNARY_MATH:
        return _UNARY_MATH[name](args[0])
    if name in _BINARY_MATH:
        return _BINARY_MATH[name](args[0], args[1])
    if name == "fma":
        return math.FmaOp(args[0], args[1], args[2])
    return tc.BuiltinOp(name, args)


def _literal(e: ast.Expr) -> float:
    """The value of a (negated) float literal."""
    if isinstance(e, ast.Unary):
        return -_literal(e.operand)
    assert isinstance(e, ast.FloatLit)
    return e.value


def _nonzero_constant(v: SSAValue) -> bool:
    op = v.owner
    return (
        isinstance(op, arith.ConstantOp)
        and isinstance(op.value, IntegerAttr)
        and op.value.value.data != 0
    )


def _tensor_type(extents: tuple, elem: str) -> tc.TensorType:  # type: ignore[type-arg]
    return tc.TensorType(list(extents), element_type(elem))


def gen_def(cdef: CheckedDef) -> tc.DefOp:
    """The `tc.def` of one checked definition."""
    arg_types = []
    for t in cdef.inputs:
        assert t.extents is not None and t.elem is not None
        arg_types.append(_tensor_type(t.extents, t.elem))
    block = Block(arg_types=arg_types)
    values: dict[str, SSAValue] = {}
    for t, a in zip(cdef.inputs, block.args):
        a.name_hint = t.name
        values[t.name] = a
    b = Builder(InsertPoint.at_end(block))
    statements = cdef.statements
    i = 0
    while i < len(statements):
        loop = statements[i].stmt.loop
        if loop is None:
            values[statements[i].target] = _gen_statement(
                cdef, statements[i], b, values
            )
            i += 1
            continue
        j = i
        while j < len(statements) and statements[j].stmt.loop is loop:
            j += 1
        _gen_recurrence(cdef, statements[i:j], b, values)
        i = j
    b.insert(tc.ReturnOp([values[t.name] for t in cdef.outputs]))
    return tc.DefOp(
        cdef.name,
        cdef.sizes,
        [t.name for t in cdef.inputs],
        [t.name for t in cdef.outputs],
        Region(block),
    )


def _gen_statement(
    cdef: CheckedDef,
    st: CheckedStatement,
    b: Builder,
    values: dict[str, SSAValue],
    step: SSAValue | None = None,
) -> SSAValue:
    """The `tc.comprehension` of `st` (in a recurrence, given the `step`
    index: the comprehension of one step, without the step dimension)."""
    target = cdef.tensors[st.target]
    assert target.extents is not None
    names = [*st.out_indices, *st.red_indices]
    extents = list(target.extents)
    if step is not None and st.step_dim is not None:
        names.remove(st.out_indices[st.step_dim])
        del extents[st.step_dim]
    region, body = tc.make_body(len(names))
    op = tc.ComprehensionOp(
        st.target,
        st.stmt.op,
        [st.ranges[n][0] for n in names],
        [st.ranges[n][1] for n in names],
        _tensor_type(tuple(extents), st.elem),
        region,
        values[st.target] if st.accumulates else None,
    )
    try:
        _BodyGen(cdef, st, body, values, step).emit()
    except RecursionError:
        raise TCError(Diagnostic("error", TOO_DEEP, st.stmt.span)) from None
    op.result.name_hint = st.target
    b.insert(op)
    return op.result


def _gen_recurrence(
    cdef: CheckedDef,
    statements: list[CheckedStatement],
    b: Builder,
    values: dict[str, SSAValue],
) -> None:
    """The `tc.recurrence` of one block: the tensors written before it are
    carried from their values, the others are fresh."""
    first = statements[0]
    assert first.step_dim is not None
    index = first.out_indices[first.step_dim]
    lo, hi = first.ranges[index]
    written = list(dict.fromkeys(st.target for st in statements))
    carried = [n for n in written if n in values] + [
        n for n in written if n not in values
    ]
    inits = [values[n] for n in carried if n in values]
    types: list[Attribute] = []
    for n in carried:
        t = cdef.tensors[n]
        assert t.extents is not None and t.elem is not None
        types.append(_tensor_type(t.extents, t.elem))
    body = Block(arg_types=[IndexType(), *types])
    body.args[0].name_hint = index
    inner = dict(values)
    for n, a in zip(carried, body.args[1:]):
        a.name_hint = n
        inner[n] = a
    ib = Builder(InsertPoint.at_end(body))
    for st in statements:
        assert st.step_dim is not None
        part = _gen_statement(cdef, st, ib, inner, body.args[0])
        new = ib.insert(
            tc.InsertStepOp(part, inner[st.target], body.args[0], st.step_dim)
        )
        new.result.name_hint = st.target
        inner[st.target] = new.result
    ib.insert(tc.NextOp([inner[n] for n in carried]))
    op = b.insert(tc.RecurrenceOp(lo, hi, carried, inits, types, Region([body])))
    for n, r in zip(carried, op.res):
        r.name_hint = n
        values[n] = r


def gen_module(program: CheckedProgram) -> ModuleOp:
    """The module of `tc.def`s of a checked program.

    IR that cannot even be built (e.g. a type with a negative extent) is an
    internal error of the frontend, reported like invalid IR in `parse_tc`.
    """
    try:
        return ModuleOp([gen_def(d) for d in program.defs])
    except VerifyException as e:
        raise TCError(f"internal error: the frontend produced invalid IR: {e}") from e
