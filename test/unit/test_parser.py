"""Unit tests for the TC parser (TC-LANGUAGE.md §3 and §5)."""

from __future__ import annotations

import pytest

from tcdialect.diagnostics import DiagnosticEngine, Source, TCError
from tcdialect.frontend import ast
from tcdialect.frontend.parser import MAX_NESTING, parse, parse_program

# ------------------------------------------------------------------ helpers


def sexpr(e: ast.Expr) -> str:
    """A compact, fully parenthesized rendering of an expression."""
    match e:
        case ast.IntLit(value=v) | ast.FloatLit(value=v):
            return repr(v)
        case ast.Name(name=n):
            return n
        case ast.Access(callee=c, args=args):
            return f"{c.name}[{', '.join(sexpr(a) for a in args)}]"
        case ast.Unary(op=op, operand=x):
            return f"({op}{sexpr(x)})"
        case ast.Binary(op=op, lhs=a, rhs=b):
            return f"({sexpr(a)} {op} {sexpr(b)})"
        case ast.Ternary(cond=c, then=t, other=o):
            return f"({sexpr(c)} ? {sexpr(t)} : {sexpr(o)})"
        case ast.MinMax(op=op, lhs=a, rhs=b):
            return f"{op}<{sexpr(a)}, {sexpr(b)}>"
        case ast.Cast(to=to, operand=x):
            return f"{to}<{sexpr(x)}>"
        case _:
            raise AssertionError(f"unexpected node {e!r}")


def wrap(body: str) -> str:
    return f"def f(float(N) A) -> (O) {{\n{body}\n}}"


def stmt(body: str) -> ast.Statement:
    (d,) = parse(wrap(body)).defs
    (s,) = d.body
    return s


def rhs(expr: str) -> str:
    return sexpr(stmt(f"O(i) = {expr}").rhs)


def errors(text: str, filename: str = "t.tc") -> str:
    with pytest.raises(TCError) as info:
        parse(text, filename)
    return str(info.value)


def messages(text: str) -> list[str]:
    with pytest.raises(TCError) as info:
        parse(text, "t.tc")
    return [d.message for d in info.value.diagnostics]


# ------------------------------------------------------- precedence and assoc


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("a - b - c", "((a - b) - c)"),
        ("a / b / c", "((a / b) / c)"),
        ("a - b + c", "((a - b) + c)"),
        ("a + b * c", "(a + (b * c))"),
        ("a * b + c", "((a * b) + c)"),
        ("a % b * c", "((a % b) * c)"),
        ("-a * b", "((-a) * b)"),
        ("- - a", "(-(-a))"),
        ("!a && b", "((!a) && b)"),
        ("!-a", "(!(-a))"),
        ("a - -b", "(a - (-b))"),
        ("a < b == c", "((a < b) == c)"),
        ("a == b != c", "((a == b) != c)"),
        ("a <= b >= c > d", "(((a <= b) >= c) > d)"),
        ("a + b < c * d", "((a + b) < (c * d))"),
        ("a || b && c", "(a || (b && c))"),
        ("a && b || c", "((a && b) || c)"),
        ("a || b || c", "((a || b) || c)"),
        ("a < b && c > d", "((a < b) && (c > d))"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a ? b ? c : d : e", "(a ? (b ? c : d) : e)"),
        ("a || b ? c + 1 : d", "((a || b) ? (c + 1) : d)"),
        ("(a + b) * c", "((a + b) * c)"),
        ("-(a + b)", "(-(a + b))"),
        ("((a))", "a"),
    ],
)
def test_precedence_and_associativity(expr: str, expected: str) -> None:
    assert rhs(expr) == expected


def test_primaries() -> None:
    assert rhs("3") == "3"
    assert rhs("2.5") == "2.5"
    assert rhs("3E-5") == "3e-05"
    assert rhs("A(i, j + 1)") == "A[i, (j + 1)]"
    assert rhs("exp(A(i))") == "exp[A[i]]"
    assert rhs("fma(a, b, c)") == "fma[a, b, c]"
    assert rhs("E(Idx(k), d)") == "E[Idx[k], d]"
    assert rhs("min(a, b) + max(c, 1)") == "(min<a, b> + max<c, 1>)"
    assert rhs("max(min(Idx(k), V - 1), 0)") == "max<min<Idx[k], (V - 1)>, 0>"
    assert rhs("float(i)") == "float32<i>"
    assert rhs("double(i) + int32(x)") == "(float64<i> + int32<x>)"


def test_empty_argument_list_is_an_access() -> None:
    # `T()` reads a 0-d tensor; sema checks arity of builtins and ranks.
    assert rhs("s() + 1") == "(s[] + 1)"


def test_cast_uses_canonical_type_names() -> None:
    for written, canonical in ast.SCALAR_TYPES.items():
        e = stmt(f"O(i) = {written}(A(i))").rhs
        assert isinstance(e, ast.Cast)
        assert e.to == canonical


def test_negative_literal_is_unary_minus() -> None:
    e = stmt("O(i) = -3").rhs
    assert isinstance(e, ast.Unary)
    assert e.op == "-"
    assert isinstance(e.operand, ast.IntLit)
    assert e.operand.value == 3


# ------------------------------------------------------------------- spans


def test_expression_spans() -> None:
    text = "def f(float(N) A) -> (O) { O(i) = (A(i) + 1) * -x ? 1.5 : min(a, b) }"
    (d,) = parse(text).defs
    (s,) = d.body
    t = s.rhs
    assert isinstance(t, ast.Ternary)
    assert t.span.text == "(A(i) + 1) * -x ? 1.5 : min(a, b)"
    mul = t.cond
    assert isinstance(mul, ast.Binary)
    assert mul.span.text == "(A(i) + 1) * -x"
    assert mul.op_span.text == "*"
    add = mul.lhs
    assert isinstance(add, ast.Binary)
    assert add.span.text == "(A(i) + 1)"
    assert add.op_span.text == "+"
    assert isinstance(add.lhs, ast.Access)
    assert add.lhs.span.text == "A(i)"
    assert add.lhs.callee.span.text == "A"
    assert mul.rhs.span.text == "-x"
    assert t.then.span.text == "1.5"
    assert t.other.span.text == "min(a, b)"


def test_statement_and_def_spans() -> None:
    text = (
        "# leading comment\n"
        "def pool(float(B, H) X) -> (Y) {\n"
        "    Y(b, h) max=! X(b, 3 * h + r_i) where r_i in 0:3\n"
        "}  # trailing\n"
    )
    (d,) = parse(text).defs
    assert d.span.text.startswith("def pool(")
    assert d.span.text.endswith("}")
    assert d.name.span.text == "pool"
    (p,) = d.params
    assert p.span.text == "float(B, H) X"
    assert p.type_span.text == "float"
    assert [dim.span.text for dim in p.dims] == ["B", "H"]
    (s,) = d.body
    assert s.span.text == "Y(b, h) max=! X(b, 3 * h + r_i) where r_i in 0:3"
    assert s.op_span.text == "max=!"
    assert s.target.span.text == "Y"
    assert [i.span.text for i in s.lhs_indices] == ["b", "h"]
    (w,) = s.where
    assert isinstance(w, ast.RangeClause)
    assert w.span.text == "r_i in 0:3"
    assert s.span.location() == "<string>:3:5"


# --------------------------------------------------------------- statements


@pytest.mark.parametrize("op", ast.ASSIGN_OPS)
def test_assignment_operators(op: str) -> None:
    s = stmt(f"O(i) {op} A(i)")
    assert s.op == op
    assert s.op_span.text == op


def test_assignment_operator_properties() -> None:
    assert stmt("O(i) = A(i)").reduction is None
    s = stmt("O(i) min=! A(i, r)")
    assert (s.reduction, s.init) == ("min", True)
    s = stmt("O(i) += A(i, r)")
    assert (s.reduction, s.init) == ("+", False)


def test_lhs_forms() -> None:
    s = stmt("O = A(0)")
    assert s.indices is None
    assert s.lhs_indices == ()
    s = stmt("O() = A(0)")
    assert s.indices == ()
    s = stmt("O(i, j, k) = A(i)")
    assert s.indices is not None
    assert [i.name for i in s.indices] == ["i", "j", "k"]


def test_statements_need_no_separator() -> None:
    (d,) = parse(wrap("O(i) = A(i) P(i) = O(i) * 2 Q = 1 R() += Q")).defs
    assert [s.target.name for s in d.body] == ["O", "P", "Q", "R"]
    assert [s.op for s in d.body] == ["=", "=", "=", "+="]
    assert sexpr(d.body[1].rhs) == "(O[i] * 2)"


def test_empty_body() -> None:
    (d,) = parse("def f() -> () {}").defs
    assert d.params == ()
    assert d.outputs == ()
    assert d.body == ()


def test_where_clauses() -> None:
    s = stmt("O(i) = d * d + A(r) where d = A(i) - 1, r in 0:N - 1, exists A(i)")
    let_, r, ex = s.where
    assert isinstance(let_, ast.LetClause)
    assert let_.name.name == "d"
    assert sexpr(let_.value) == "(A[i] - 1)"
    assert let_.span.text == "d = A(i) - 1"
    assert isinstance(r, ast.RangeClause)
    assert r.index.name == "r"
    assert sexpr(r.lo) == "0"
    assert sexpr(r.hi) == "(N - 1)"
    assert isinstance(ex, ast.ExistsClause)
    assert sexpr(ex.access) == "A[i]"
    assert ex.span.text == "exists A(i)"
    assert s.span.text.endswith("exists A(i)")


def test_range_clause_with_ternary_bound() -> None:
    s = stmt("O(i) = 1 where i in c ? 0 : 1 : N")
    (r,) = s.where
    assert isinstance(r, ast.RangeClause)
    assert sexpr(r.lo) == "(c ? 0 : 1)"
    assert sexpr(r.hi) == "N"


def test_where_followed_by_next_statement() -> None:
    (d,) = parse(wrap("O(i) = 1 where i in 0:N\nP(i) = O(i) where exists A(i)")).defs
    assert [len(s.where) for s in d.body] == [1, 1]


# ------------------------------------------------------------ params/outputs


def test_params_and_outputs() -> None:
    text = (
        "def g(float(M, 3) A, int32(K) Idx, double s, uint8 t) "
        "-> (C, int32 cnt, double D) { C(m) = A(m, 0) }"
    )
    (d,) = parse(text).defs
    a, idx, s, t = d.params
    assert (a.elem_type, [x.value for x in a.dims], a.name.name) == (
        "float32",
        ["M", 3],
        "A",
    )
    assert (idx.elem_type, [x.value for x in idx.dims]) == ("int32", ["K"])
    assert (s.elem_type, s.dims, s.name.name) == ("float64", (), "s")
    assert s.span.text == "double s"
    assert (t.elem_type, t.dims) == ("uint8", ())
    c, cnt, dd = d.outputs
    assert (c.name.name, c.elem_type, c.span.text) == ("C", None, "C")
    assert (cnt.name.name, cnt.elem_type, cnt.span.text) == (
        "cnt",
        "int32",
        "int32 cnt",
    )
    assert dd.elem_type == "float64"


def test_multiple_defs() -> None:
    text = """
    def a(float(N) X) -> (Y) { Y(i) = X(i) }
    def b(float(N) X) -> (Y) { Y(i) = -X(i) }
    def c(float(N) X) -> (Y) { Y(i) = 2 * X(i) }
    """
    prog = parse(text)
    assert [d.name.name for d in prog.defs] == ["a", "b", "c"]


# -------------------------------------------------------- example programs

EXAMPLES: dict[str, str] = {
    "matmul": """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
""",
    "matmul_typo": """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * Bt(r_k, n)
}
""",
    "bias_inplace": """
def fc(float(B, M) I, float(N, M) W, float(N) b) -> (O) {
    O(i, j) +=! I(i, r_m) * W(j, r_m)
    O(i, j)  =  O(i, j) + b(j)
}
""",
    "reverse_inplace": """
def rev(float(N) X) -> (A) {
    A(i) = X(i)
    A(i) = A(N - 1 - i)
}
""",
    "temporary": """
def twostep(float(N) X) -> (Y) {
    T(i) = X(i) * X(i)
    Y(i) = T(i) + 1.0
}
""",
    "count_annotated": """
def count(float(N) X) -> (int32 cnt) {
    cnt +=! int32(X(r_n) > 0.0)
}
""",
    "gather": """
def emb(float(V, D) E, int32(K) Idx) -> (O) {
    O(k, d) = E(Idx(k), d)
}
""",
    "stride": """
def stride2(float(I) B) -> (A) {
    A(i) = B(2 * i)
}
""",
    "conv_valid": """
def conv1d(float(H) I, float(KH) W) -> (O) {
    O(h) +=! I(h + kh) * W(kh)
}
""",
    # anchor-tc.md §1.8
    "clamp_mask": """
# (a) elementwise, builtins, scalar (0-d) inputs, comparisons/logical/ternary
def clamp_mask(float(N) X, float lo, float hi) -> (Y) {
    Y(n) = (X(n) >= lo && X(n) <= hi) ? X(n) : 0.0
}
""",
    "rownorm": """
def rownorm(float(R, C) X) -> (Y, ss) {
    ss(r)   +=! X(r, r_c) * X(r, r_c)
    Y(r, c)  =  X(r, c) * rsqrt(ss(r) + 1e-6)
}
""",
    "pool3": """
def pool3(float(B, H, W) X) -> (Y) {
    Y(b, h, w) max=! X(b, 3 * h + r_i, 3 * w + r_j) where r_i in 0:3, r_j in 0:3
}
""",
    "take_rows": """
def take_rows(float(V, D) E, int32(K) Idx) -> (O) {
    O(k, d) = E(max(min(Idx(k), V - 1), 0), d)
}
""",
    "ones_like": """
def ones_like(float(M, N) X) -> (O) {
    O(m, n) = 1.0 where exists X(m, n)
}
""",
    "sqdiff": """
def sqdiff(float(N) A, float(N) B) -> (O) {
    O(n) = d * d where d = A(n) - B(n)
}
""",
    "count_pos": """
def count_pos(float(N) X) -> (int32 cnt) {
    cnt +=! int32(X(r_n) > 0.0)
}
""",
    "affine3": """
def affine3(float(M, 3) A, float(3, N) B, float(N) bias) -> (C) {
    C(m, n)  = bias(n) where m in 0:M      # m appears in no RHS access: needs an explicit range
    C(m, n) += A(m, r_k) * B(r_k, n)
}
""",
    "iota_fill": """
def iota_fill(float v) -> (O) {
    O(i) = v + float(i) where i in 0:16
}
""",
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_programs_parse(name: str) -> None:
    prog = parse(EXAMPLES[name], f"{name}.tc")
    (d,) = prog.defs
    assert d.body
    for s in d.body:
        assert s.span.source.filename == f"{name}.tc"


def test_all_examples_in_one_source() -> None:
    prog = parse("\n".join(EXAMPLES.values()))
    assert len(prog.defs) == len(EXAMPLES)


def test_example_details() -> None:
    (d,) = parse(EXAMPLES["clamp_mask"]).defs
    assert [p.dims == () for p in d.params] == [False, True, True]
    (s,) = d.body
    assert sexpr(s.rhs) == "(((X[n] >= lo) && (X[n] <= hi)) ? X[n] : 0.0)"

    (d,) = parse(EXAMPLES["pool3"]).defs
    (s,) = d.body
    assert s.op == "max=!"
    assert [w.index.name for w in s.where if isinstance(w, ast.RangeClause)] == [
        "r_i",
        "r_j",
    ]

    (d,) = parse(EXAMPLES["affine3"]).defs
    assert [dim.value for dim in d.params[0].dims] == ["M", 3]
    assert [s.op for s in d.body] == ["=", "+="]

    (d,) = parse(EXAMPLES["count_pos"]).defs
    assert d.outputs[0].elem_type == "int32"
    (s,) = d.body
    assert s.indices is None
    assert sexpr(s.rhs) == "int32<(X[r_n] > 0.0)>"


# ------------------------------------------------------------------- errors


def test_rendered_error_expected_paren() -> None:
    text = "def f(float(N) A) -> (B) {\n  B(i) = A(i where i in 0:N\n}"
    assert errors(text) == (
        "t.tc:2:14: error: expected ')' but found 'where'\n"
        "      B(i) = A(i where i in 0:N\n"
        "                 ^~~~~"
    )


def test_rendered_error_expected_expression() -> None:
    text = "def f(float(N) A) -> (B) {\n    B(i) = A(i) *\n}\n"
    assert errors(text, "x.tc") == (
        "x.tc:3:1: error: expected an expression but found '}'\n    }\n    ^"
    )


def test_rendered_error_scalar_type() -> None:
    text = "def f(foo(N) A) -> (B) { B(i) = A(i) }"
    out = errors(text)
    assert out == (
        "t.tc:1:7: error: expected a scalar type but found 'foo'\n"
        "    def f(foo(N) A) -> (B) { B(i) = A(i) }\n"
        "          ^~~"
    )


def test_caret_under_right_column() -> None:
    text = "def f(float(N) A) -> (B) {\n\tB(i) = A(i) * }"
    out = errors(text)
    header, line, caret = out.split("\n")
    assert header == "t.tc:2:16: error: expected an expression but found '}'"
    assert line == "    \tB(i) = A(i) * }"
    # The caret line keeps the tab so it lines up under the '}'.
    assert caret == "    \t" + " " * 14 + "^"
    assert line.index("}") == caret.index("^")


def test_error_at_end_of_input() -> None:
    text = "def f(float(N) A) -> (B) { B(i) = A(i)"
    assert errors(text) == (
        "t.tc:1:39: error: expected a statement or '}' but found end of input\n"
        "    def f(float(N) A) -> (B) { B(i) = A(i)\n"
        "                                          ^"
    )


def test_bad_assignment_operator() -> None:
    assert messages(wrap("O(i) == A(i)")) == [
        "expected a valid assignment operator ('=', '+=', '+=!', ...) but found '=='"
    ]
    assert messages(wrap("O(i) -= A(i)")) == [
        "expected a valid assignment operator ('=', '+=', '+=!', ...) but found '-'"
    ]
    assert messages(wrap("O(i)")) == [
        "expected a valid assignment operator ('=', '+=', '+=!', ...) but found '}'"
    ]
    assert messages(wrap("O(i) min = A(i)")) == [
        "expected a valid assignment operator ('=', '+=', '+=!', ...) but found 'min'"
    ]


@pytest.mark.parametrize("lhs", ["O(i+1)", "O(0)", "O(i, 2 * j)", "O((i))", "O(A(i))"])
def test_lhs_subscripts_must_be_plain_names(lhs: str) -> None:
    text = wrap(f"{lhs} = A(i)")
    with pytest.raises(TCError) as info:
        parse(text, "t.tc")
    (err,) = info.value.diagnostics
    assert err.message.startswith(
        "left-hand side subscripts must be plain index names, but found '"
    )
    assert err.span is not None
    bad = lhs[2:-1].split(", ")[-1]
    assert err.span.text == bad
    assert err.message.endswith(f"'{bad}'")


def test_lhs_error_rendering() -> None:
    text = "def f(float(N) A) -> (B) {\n  B(i + 1) = A(i)\n}"
    assert errors(text) == (
        "t.tc:2:5: error: left-hand side subscripts must be plain index names, "
        "but found 'i + 1'\n"
        "      B(i + 1) = A(i)\n"
        "        ^~~~~"
    )


def test_lhs_missing_comma() -> None:
    assert messages(wrap("O(i j) = A(i)")) == ["expected ')' but found 'j'"]
    assert messages(wrap("O(i,) = A(i)")) == ["expected an index name but found ')'"]


def test_equivalence_is_not_supported() -> None:
    text = wrap("O(i) = A(i) <=> matmul(A, A)")
    with pytest.raises(TCError) as info:
        parse(text, "t.tc")
    (err,) = info.value.diagnostics
    assert err.message == "'<=>' (equivalence) is not supported"
    assert err.span is not None and err.span.text == "<=>"
    assert messages(wrap("O(i) = A(<=>)")) == ["'<=>' (equivalence) is not supported"]


def test_min_max_arity() -> None:
    assert messages(wrap("O(i) = min(A(i), 1, 2)")) == [
        "'min' takes exactly 2 arguments but 3 were given"
    ]
    assert messages(wrap("O(i) = max(A(i))")) == [
        "'max' takes exactly 2 arguments but 1 was given"
    ]
    assert messages(wrap("O(i) = max()")) == [
        "'max' takes exactly 2 arguments but 0 were given"
    ]
    with pytest.raises(TCError) as info:
        parse(wrap("O(i) = 1 + min(A(i), 1, 2)"))
    span = info.value.diagnostics[0].span
    assert span is not None and span.text == "min(A(i), 1, 2)"


def test_cast_arity() -> None:
    assert messages(wrap("O(i) = float(A(i), 1)")) == [
        "the cast 'float(...)' takes exactly 1 argument but 2 were given"
    ]
    assert messages(wrap("O(i) = int32()")) == [
        "the cast 'int32(...)' takes exactly 1 argument but 0 were given"
    ]
    assert messages(wrap("O(i) = float + 1")) == ["expected '(' but found '+'"]


def test_min_without_parenthesis() -> None:
    assert messages(wrap("O(i) = min + 1")) == ["expected '(' but found '+'"]


def test_where_clause_errors() -> None:
    assert messages(wrap("O(i) = 1 where exists 3")) == [
        "expected a tensor access 'T(...)' after 'exists' but found '3'"
    ]
    assert messages(wrap("O(i) = 1 where exists X")) == [
        "expected a tensor access 'T(...)' after 'exists' but found 'X'"
    ]
    assert messages(wrap("O(i) = 1 where i 0:N")) == [
        "expected 'in' or '=' but found '0'"
    ]
    assert messages(wrap("O(i) = 1 where i in 0 N")) == ["expected ':' but found 'N'"]
    assert messages(wrap("O(i) = 1 where")) == [
        "expected a where clause ('i in lo:hi', 'x = expr' or 'exists T(...)') "
        "but found '}'"
    ]


def test_header_errors() -> None:
    assert messages("def (float(N) A) -> (B) {}") == [
        "expected a definition name but found '('"
    ]
    assert messages("def in(float(N) A) -> (B) {}") == [
        "expected a definition name but found 'in', which is a reserved word"
    ]
    assert messages("def f(float(N) A) (B) {}") == ["expected '->' but found '('"]
    assert messages("def f(float(N) A) -> B {}") == ["expected '(' but found 'B'"]
    assert messages("def f(float(N)) -> (B) {}") == [
        "expected a parameter name but found ')'"
    ]
    assert messages("def f(float() A) -> (B) {}") == [
        "expected a size name or an integer extent but found ')'"
    ]
    assert messages("def f(float(1.5) A) -> (B) {}") == [
        "expected a size name or an integer extent but found '1.5'"
    ]
    assert messages("def f(float(N) A) -> (float(N) B) {}") == [
        "expected an output name but found '('"
    ]
    assert messages("def f(float(N) A) -> (B) { 3 }") == [
        "expected a statement or '}' but found '3'"
    ]
    assert messages("def f(float(N) A) -> (B) { B(i) = A(i) ) }") == [
        "expected a statement or '}' but found ')'"
    ]


def test_empty_program_is_an_error() -> None:
    assert errors("") == (
        "t.tc:1:1: error: expected 'def' but found end of input\n    \n    ^"
    )
    assert messages("# just a comment\n\n") == ["expected 'def' but found end of input"]
    assert errors("foo(") == (
        "t.tc:1:1: error: expected 'def' but found 'foo'\n    foo(\n    ^~~"
    )


def test_stray_tokens_between_defs() -> None:
    text = "def a() -> () {} } def b() -> () {}"
    diag = DiagnosticEngine()
    prog = parse_program(Source(text, "t.tc"), diag)
    assert [d.name.name for d in prog.defs] == ["a", "b"]
    assert [d.message for d in diag.diagnostics] == ["expected 'def' but found '}'"]


def test_errors_in_two_defs_are_both_reported() -> None:
    text = (
        "def a(float(N) X) -> (Y) {\n"
        "    Y(i) = X(i) +\n"
        "}\n"
        "def ok(float(N) X) -> (Y) { Y(i) = X(i) }\n"
        "def b(float(N) X) -> (Y) {\n"
        "    Y(i) = X(i where\n"
        "}\n"
    )
    diag = DiagnosticEngine()
    prog = parse_program(Source(text, "two.tc"), diag)
    assert [d.name.name for d in prog.defs] == ["ok"]
    with pytest.raises(TCError) as info:
        diag.check()
    assert len(info.value.errors) == 2
    assert str(info.value) == (
        "two.tc:3:1: error: expected an expression but found '}'\n"
        "    }\n"
        "    ^\n"
        "two.tc:6:16: error: expected ')' but found 'where'\n"
        "        Y(i) = X(i where\n"
        "                   ^~~~~"
    )


def test_missing_close_brace_recovers_at_next_def() -> None:
    text = "def a() -> (Y) { Y = 1\ndef b() -> (Y) { Y = 2 }"
    diag = DiagnosticEngine()
    prog = parse_program(Source(text), diag)
    assert [d.name.name for d in prog.defs] == ["b"]
    assert [d.message for d in diag.diagnostics] == [
        "expected a statement or '}' but found 'def'"
    ]


def test_lexer_and_parser_errors_together() -> None:
    text = "def a() -> (Y) { Y = 1 $ }\ndef b() -> (Y) { Y = 99999999999 }"
    assert messages(text) == [
        "unexpected character '$'",
        "integer literal 99999999999 does not fit in int32",
    ]


def test_non_syntax_errors_do_not_abort_the_def() -> None:
    text = wrap("O(i + 1) = min(1) + float(1, 2)\nP(0) = 1")
    diag = DiagnosticEngine()
    prog = parse_program(Source(text), diag)
    (d,) = prog.defs
    assert len(d.body) == 2
    assert len(diag.diagnostics) == 4


def test_parse_program_returns_partial_program() -> None:
    diag = DiagnosticEngine()
    prog = parse_program(Source("def a() -> () {} def b( -> () {}"), diag)
    assert [d.name.name for d in prog.defs] == ["a"]
    assert diag.has_errors


# ----------------------------------------------------------------- nesting


def test_deep_nesting_within_limit() -> None:
    depth = MAX_NESTING - 1
    e = stmt("O(i) = " + "(" * depth + "1" + ")" * depth).rhs
    assert isinstance(e, ast.IntLit)
    e = stmt("O(i) = " + "-" * (MAX_NESTING - 1) + "1").rhs
    assert isinstance(e, ast.Unary)


@pytest.mark.parametrize(
    "expr",
    [
        "(" * 300 + "1" + ")" * 300,
        "-" * 300 + "1",
        "A(" * 300 + "i" + ")" * 300,
        "min(1, " * 300 + "1" + ")" * 300,
        "a ? b : " * 300 + "c",
        "(-" * 150 + "1" + ")" * 150,
        "(" * 5000 + "1" + ")" * 5000,
    ],
)
def test_nested_too_deeply(expr: str) -> None:
    with pytest.raises(TCError) as info:
        parse(wrap(f"O(i) = {expr}"), "t.tc")
    (err,) = info.value.diagnostics
    assert err.message == "expression nested too deeply"
    assert err.span is not None


def test_long_flat_chains_are_fine() -> None:
    e = stmt("O(i) = " + " + ".join(["A(i)"] * 150)).rhs
    assert isinstance(e, ast.Binary)
