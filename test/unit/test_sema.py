"""Semantic checks of the TC frontend (TC-LANGUAGE.md §4.1-4.5, §5).

Names, statements, types and builtins, through `analyze(source)`. Errors are
checked for their message and for their location: every diagnostic must
render as ``file:line:col: error: ...`` followed by the source line and a
caret line.
"""

from __future__ import annotations

import re

import pytest

from tcdialect.diagnostics import Diagnostic, TCError
from tcdialect.frontend import analyze, parse_tc
from tcdialect.frontend.sema import (
    CheckedDef,
    CheckedProgram,
    converts_implicitly,
    promote,
)

FILE = "sema.tc"
_HEADER = re.compile(r"^sema\.tc:(\d+):(\d+): (error|warning|note): ")


def ok(source: str) -> CheckedProgram:
    return analyze(source, FILE)


def one(source: str) -> CheckedDef:
    return ok(source).defs[0]


def assert_located(diag: Diagnostic) -> None:
    assert diag.span is not None, f"unlocated: {diag.message}"
    lines = diag.render().split("\n")
    m = _HEADER.match(lines[0])
    assert m is not None, lines[0]
    line, col = diag.span.source.line_col(diag.span.start)
    assert (int(m.group(1)), int(m.group(2))) == (line, col)
    assert lines[1].strip() == diag.span.source.line_text(line).strip()
    assert lines[2].strip().startswith("^")
    for n in diag.notes:
        assert_located(n)


def errors(source: str) -> list[Diagnostic]:
    with pytest.raises(TCError) as info:
        analyze(source, FILE)
    errs = list(info.value.errors)
    assert errs
    for d in info.value.diagnostics:
        assert_located(d)
    return errs


def error(source: str, *fragments: str) -> Diagnostic:
    """The single error of `source`; its message contains every fragment."""
    errs = errors(source)
    assert len(errs) == 1, [e.message for e in errs]
    for f in fragments:
        assert f in errs[0].message, errs[0].message
    return errs[0]


def rhs_type(source: str, k: int = 0) -> str:
    st = one(source).statements[k]
    return st.type_of(st.stmt.rhs)


def elem(source: str, name: str) -> str | None:
    return one(source).tensors[name].elem


# -------------------------------------------------------------------- names


def test_undefined_tensor_with_did_you_mean() -> None:
    d = error(
        "def matmul(float(M, K) A, float(K, N) B) -> (C) {\n"
        "    C(m, n) +=! A(m, r_k) * Bt(r_k, n)\n}",
        "undefined tensor or function 'Bt'",
        "did you mean 'B'?",
    )
    assert d.render().startswith("sema.tc:2:29: error: ")
    assert d.render().split("\n")[2] == " " * 32 + "^~"


def test_undefined_name_with_did_you_mean() -> None:
    error(
        "def f(float(N) X, float scale) -> (Y) { Y(n) = X(n) * scal }",
        "undefined name 'scal'",
        "did you mean 'scale'?",
    )


def test_undefined_name_without_suggestion() -> None:
    d = error("def f(float(N) X) -> (Y) { Y(n) = X(n) * qqq }", "undefined name 'qqq'")
    assert "did you mean" not in d.message


def test_unknown_name_in_a_subscript_is_an_index() -> None:
    # A misspelled size inside a subscript is an index variable (§4.1).
    d = one("def f(float(N) X) -> (Y) { Y(n) +=! X(n) * X(Nn) }")
    assert d.statements[0].red_indices == ["Nn"]


@pytest.mark.parametrize(
    "source",
    [
        "def f(float(N) exp) -> (Y) { Y(n) = 1.0 where n in 0:N }",
        "def f(float(N) X) -> (exp) { exp(n) = X(n) }",
        "def f(float(N) X) -> (Y) { Y(exp) = X(exp) }",
        "def f(float(N) X) -> (Y) { Y(n) = e where e = X(n), sqrt = X(n) }",
        "def f(float(exp) X) -> (Y) { Y(n) = X(n) }",
        "def f(float(N) X) -> (Y) { Y(n) = X(n)\n tanh(n) = X(n) }",
    ],
)
def test_builtin_names_cannot_be_redefined(source: str) -> None:
    errs = errors(source)
    assert any(
        "is a builtin function and cannot be redefined" in e.message for e in errs
    )


def test_duplicate_names() -> None:
    d = error(
        "def f(float(N) X, float(N) X) -> (Y) { Y(n) = X(n) }",
        "input 'X' is already defined",
    )
    assert len(d.notes) == 1 and "previous definition" in d.notes[0].message
    error(
        "def f(float(N) X) -> (X) { Y(n) = X(n) }",
        "output 'X' is already defined",
    )
    error(
        "def f(float(N) X) -> (Y, Y) { Y(n) = X(n) }",
        "output 'Y' is already defined",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) }\ndef f(float(N) X) -> (Y) { Y(n) = X(n) }",
        "definition 'f' is already defined",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n, n) = X(n) }",
        "index 'n' appears twice on the left-hand side",
    )


def test_sizes_and_tensors_share_a_namespace() -> None:
    errs = errors("def f(float(N) N) -> (Y) { Y(n) = N(n) }")
    assert any("input 'N' is already defined" in e.message for e in errs)
    errs = errors("def f(float(N) X) -> (N) { N(n) = X(n) }")
    assert "output 'N' is already defined" in errs[0].message
    error(
        "def f(float(N) X, float(M) Y) -> (Z) { Z(n) = X(n) + M(n) }",
        "'M' is a size, not a tensor",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(N) = X(N) }",
        "'N' is a size and cannot be used as an index",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n)\n N(n) = X(n) }",
        "cannot assign to size parameter 'N'",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(X) = 1.0 where X in 0:N }",
        "'X' is a tensor and cannot be used as an index",
    )


def test_sizes_and_indices_are_int32_values() -> None:
    d = one("def f(float(N) X) -> (Y) { Y(n) = N + n where n in 0:N }")
    assert d.tensors["Y"].elem == "int32"
    assert d.statements[0].ranges["n"][1].names() == {"N"}


def test_index_variables_are_local_to_a_statement() -> None:
    d = one(
        "def f(float(N) X, float(M) Z) -> (Y, W) {\n    Y(i) = X(i)\n    W(i) = Z(i)\n}"
    )
    assert [str(s.ranges["i"][1]) for s in d.statements] == ["N", "M"]


def test_let_names() -> None:
    error(
        "def f(float(N) X) -> (Y) { Y(n) = d where d = d + X(n) }",
        "let 'd' refers to itself",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = a where a = b, b = a + X(n) }",
        "let 'b' refers to itself",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) where X = 1.0 }",
        "let name 'X' is already defined",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) where n = 1 }",
        "let name 'n' is already used as an index",
    )
    # A let may use a later let (it is inlined).
    one("def f(float(N) X) -> (Y) { Y(n) = a where a = b * 2.0, b = X(n) }")


# --------------------------------------------------------------- statements


def test_equals_with_a_reduction_index_names_the_index() -> None:
    d = error(
        "def f(float(M, K) A) -> (C) { C(m) = A(m, r_k) }",
        "reduction index 'r_k'",
        "'='",
    )
    assert d.span is not None and d.span.text == "r_k"


def test_bang_reduction_without_reduction_indices_is_legal() -> None:
    d = one("def f(float(N) X) -> (Y) { Y(n) +=! X(n) }")
    assert d.statements[0].red_indices == []
    assert not d.statements[0].accumulates


def test_writing_an_input_is_an_error() -> None:
    d = error(
        "def f(float(N) X) -> (Y) { X(n) = 1.0 where n in 0:N\n Y(n) = X(n) }",
        "inputs are immutable",
        "'X'",
    )
    assert len(d.notes) == 1 and "declared as an input" in d.notes[0].message


def test_accumulate_without_initialisation() -> None:
    d = error(
        "def f(float(N, K) X) -> (Y) { Y(n) += X(n, k) }",
        "'+=' accumulates into 'Y'",
        "'+=!'",
    )
    assert d.span is not None and d.span.text == "+="
    # After an earlier statement wrote it, accumulating is fine.
    d2 = one(
        "def f(float(N, K) X, float(N) b) -> (Y) {\n"
        "    Y(n) = b(n)\n    Y(n) max= X(n, k)\n}"
    )
    assert d2.statements[1].accumulates


def test_read_before_write() -> None:
    error(
        "def f(float(N) X) -> (Y, Z) { Y(n) = Z(n)\n Z(n) = X(n) }",
        "'Z' is read before it is written",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = Y(n) + X(n) }",
        "'Y' is read before it is written",
    )


def test_temporary_read_before_its_first_statement() -> None:
    prog_errors = errors(
        "def f(float(N) A) -> (B) {\n    B(i) = T(i) + A(i)\n    T(i) = A(i)\n}"
    )
    assert [e.message for e in prog_errors] == ["'T' is read before it is written"]
    assert prog_errors[0].render().startswith("sema.tc:2:12: error: ")
    error(
        "def f(float(N) A) -> (B) {\n    B(i) = A(i) + T\n    T +=! A(r)\n}",
        "'T' is read before it is written",
    )


def test_output_never_written() -> None:
    error("def f(float(N) X) -> (Y, Z) { Y(n) = X(n) }", "output 'Z' is never written")


def test_in_place_updates_of_an_output() -> None:
    d = one(
        "def f(float(N, K) X, float(N) b) -> (Y) {\n"
        "    Y(n) +=! X(n, r_k)\n    Y(n) = Y(n) + b(n)\n}"
    )
    assert [s.target for s in d.statements] == ["Y", "Y"]


def test_temporaries() -> None:
    prog = ok(
        "def f(float(N) X) -> (Y) {\n    t(n) = exp(X(n))\n    Y(n) = t(n) / 2.0\n}"
    )
    d = prog.defs[0]
    assert d.tensors["t"].kind == "temp"
    assert [t.name for t in d.outputs] == ["Y"]
    assert prog.warnings == []


def test_unused_temporary_is_a_warning() -> None:
    prog = ok("def f(float(N) X) -> (Y) {\n    t(n) = X(n)\n    Y(n) = X(n)\n}")
    (w,) = prog.warnings
    assert w.severity == "warning"
    assert "temporary 't' is written but never read" in w.message
    assert w.render().startswith("sema.tc:2:5: warning: ")
    seen: list[Diagnostic] = []
    parse_tc(
        "def f(float(N) X) -> (Y) { t(n) = X(n)\n Y(n) = X(n) }", on_warning=seen.append
    )
    assert len(seen) == 1


# -------------------------------------------------------------------- types


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("int32", "float32", "float32"),
        ("float64", "int8", "float64"),
        ("float32", "float64", "float64"),
        ("float16", "float32", "float32"),
        ("int8", "int32", "int32"),
        ("int64", "int16", "int64"),
        ("uint8", "int32", "int32"),
        ("uint32", "int8", "int32"),
        ("uint8", "uint16", "uint16"),
        ("uint64", "uint8", "uint64"),
        ("bool", "int8", "int8"),
        ("bool", "float32", "float32"),
        ("int32", "int32", "int32"),
    ],
)
def test_promotion_table(a: str, b: str, result: str) -> None:
    assert promote(a, b) == result
    assert promote(b, a) == result


@pytest.mark.parametrize(
    ("ta", "tb", "result"),
    [
        ("int32", "float", "float32"),
        ("float", "double", "float64"),
        ("int8", "int32", "int32"),
        ("uint8", "int32", "int32"),
        ("uint8", "uint16", "uint16"),
        ("int64", "float", "float32"),
    ],
)
def test_promotion_through_the_frontend(ta: str, tb: str, result: str) -> None:
    src = f"def f({ta}(N) a, {tb}(N) b) -> (Y) {{ Y(n) = a(n) + b(n) }}"
    assert rhs_type(src) == result
    assert elem(src, "Y") == result


def test_implicit_conversions() -> None:
    assert converts_implicitly("int32", "float32")
    assert converts_implicitly("float32", "float64")
    assert not converts_implicitly("float64", "float32")
    assert not converts_implicitly("int64", "int32")
    assert converts_implicitly("bool", "int32")


def test_literal_types() -> None:
    assert (
        rhs_type("def f(float(N) X) -> (Y) { Y(n) = 3 where exists X(n) }") == "int32"
    )
    assert (
        rhs_type("def f(float(N) X) -> (Y) { Y(n) = 1.5 where exists X(n) }")
        == "float32"
    )
    assert (
        rhs_type("def f(float(N) X) -> (Y) { Y(n) = 3E-5 where exists X(n) }")
        == "float32"
    )
    assert (
        rhs_type("def f(float(N) X) -> (Y) { Y(n) = 2e10 where exists X(n) }")
        == "float32"
    )
    assert rhs_type("def f(double(N) X) -> (Y) { Y(n) = X(n) * 2.0 }") == "float64"
    assert rhs_type("def f(int8(N) X) -> (Y) { Y(n) = X(n) + 1 }") == "int32"


def test_float_literal_out_of_float32_range() -> None:
    error(
        "def f(float(N) X) -> (Y) { Y(i) = 1e39 + X(i) }",
        "floating literal '1e39' is out of range for float32",
    )
    error("def f(float(N) X) -> (Y) { Y(i) = 1e400 + X(i) }", "'1e400' is out of range")
    # 3.4028235e38 rounds to the largest float32; tiny values round to 0.
    one("def f(float(N) X) -> (Y) { Y(i) = 3.4028235e38 + 1e-50 + X(i) }")


def test_comparisons_and_logic_give_bool() -> None:
    src = (
        "def f(float(N) X) -> (Y) { Y(n) = X(n) > 0.0 && !(X(n) == 1.0) || X(n) <= -1 }"
    )
    assert rhs_type(src) == "bool"
    assert elem(src, "Y") == "bool"


def test_logical_operators_need_bool() -> None:
    errs = errors("def f(float(N) X) -> (Y) { Y(n) = X(n) && X(n) > 0.0 }")
    assert (
        len(errs) == 1
        and "'&&' needs bool operands but found float32" in errs[0].message
    )
    assert errs[0].span is not None and errs[0].span.text == "X(n)"
    error("def f(int32(N) X) -> (Y) { Y(n) = !X(n) }", "'!' needs a bool operand")
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) || 1 > 0 }", "'||' needs bool operands"
    )


def test_ternary_condition_must_be_bool() -> None:
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) ? 1.0 : 0.0 }",
        "condition of '?:' must be bool but found float32",
    )
    src = "def f(float(N) X) -> (Y) { Y(n) = X(n) > 0.0 ? X(n) : 0 }"
    assert rhs_type(src) == "float32"


def test_subscripts_must_be_integers() -> None:
    d = error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n * 1.0) }",
        "subscripts must be integers but this one is float32",
    )
    assert d.span is not None and d.span.text == "n * 1.0"
    errs = errors("def f(float(N) X) -> (Y) { Y(n) = X(n > 1) }")
    assert any("bool" in e.message for e in errs)
    # Integer tensor values are fine subscripts (data-dependent).
    one("def f(float(N) X, int64(N) I) -> (Y) { Y(n) = X(I(n)) }")


def test_annotated_output_narrowing_needs_a_cast() -> None:
    error(
        "def f(float(N) X) -> (int32 Y) { Y(n) = X(n) }",
        "cannot assign a value of type float32 to 'Y' of type int32",
        "explicit cast",
    )
    error(
        "def f(double(N) X) -> (float Y) { Y(n) = X(n) }",
        "float64 to 'Y' of type float32",
    )
    src = "def f(float(N) X) -> (int32 Y) { Y(n) = int32(X(n)) }"
    assert elem(src, "Y") == "int32"
    assert elem("def f(int8(N) X) -> (float Y) { Y(n) = X(n) }", "Y") == "float32"
    assert (
        elem(
            "def count_pos(float(N) X) -> (int32 cnt) { cnt +=! int32(X(r_n) > 0.0) }",
            "cnt",
        )
        == "int32"
    )


def test_later_statements_keep_the_first_type() -> None:
    error(
        "def f(int32(N) X, float(N) Z) -> (Y) {\n    Y(n) = X(n)\n    Y(n) = Z(n)\n}",
        "cannot assign a value of type float32 to 'Y' of type int32",
    )


def test_arithmetic_on_bool_needs_a_cast() -> None:
    error(
        "def f(float(N) X) -> (Y) { Y(n) = (X(n) > 0.0) + (X(n) < 1.0) }",
        "'+' needs numeric operands but both are bool",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = -(X(n) > 0.0) }",
        "'-' needs a numeric operand",
    )
    error(
        "def f(float(N) X) -> (Y) { Y +=! X(n) > 0.0 }", "cannot reduce into bool 'Y'"
    )
    # Promotion to an integer or an annotated integer output is fine.
    assert rhs_type("def f(float(N) X) -> (Y) { Y(n) = (X(n) > 0.0) + 1 }") == "int32"
    assert elem("def f(float(N) X) -> (int32 Y) { Y +=! X(n) > 0.0 }", "Y") == "int32"
    assert elem("def f(float(N) X) -> (Y) { Y max=! X(n) > 0.0 }", "Y") == "bool"


def test_scalar_inputs() -> None:
    d = one(
        "def clamp_mask(float(N) X, float lo, float hi) -> (Y) {\n"
        "    Y(n) = (X(n) >= lo && X(n) <= hi) ? X(n) : 0.0\n}"
    )
    assert d.tensors["lo"].extents == ()
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X }",
        "'X' is a tensor with 1 dimensions",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n, n) }",
        "'X' has 1 dimension but is accessed with 2 subscripts",
    )


# ------------------------------------------------------------------ builtins


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("exp(X(n), 1.0)", "builtin 'exp' takes 1 argument but 2 were given"),
        ("pow(X(n))", "builtin 'pow' takes 2 arguments but 1 was given"),
        ("fma(X(n), X(n))", "builtin 'fma' takes 3 arguments but 2 were given"),
    ],
)
def test_builtin_arity_says_what_was_expected(call: str, expected: str) -> None:
    error(f"def f(float(N) X) -> (Y) {{ Y(n) = {call} }}", expected)


def test_builtin_result_types() -> None:
    assert rhs_type("def f(float(N) X) -> (Y) { Y(n) = exp(X(n)) }") == "float32"
    assert rhs_type("def f(double(N) X) -> (Y) { Y(n) = sqrt(X(n)) }") == "float64"
    assert rhs_type("def f(int32(N) X) -> (Y) { Y(n) = log(X(n)) }") == "float32"
    assert rhs_type("def f(double(N) X) -> (Y) { Y(n) = pow(X(n), 2) }") == "float64"
    assert rhs_type("def f(int32(N) X) -> (Y) { Y(n) = min(X(n), 3) }") == "int32"
    assert rhs_type("def f(float(N) X) -> (Y) { Y(n) = max(X(n), 3) }") == "float32"


def test_builtin_misuse() -> None:
    error("def f(float(N) X) -> (Y) { Y(n) = exp }", "builtin 'exp' must be called")
    error(
        "def f(float16(N) X) -> (Y) { Y(n) = nextafter(X(n), X(n)) }",
        "'nextafter' needs float32 or float64 arguments, not float16",
    )
    error(
        "def f(float(N) X) -> (Y) { Y(n) = exp(X(n) > 0.0) }",
        "needs numeric arguments but found bool",
    )


# ------------------------------------------------------------- where clauses


def test_where_range_bounds() -> None:
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) where n in 0:X(0) }",
        "tensor reads cannot be used in a where range",
    )
    errs = errors("def f(float(N) X) -> (Y) { Y(n) +=! X(k) where k in 0:n }")
    assert any("integer expression of sizes" in e.message for e in errs)
    error(
        "def f(float(N) X) -> (Y) { Y(n) = X(n) where n in 0:N, n in 0:N }",
        "index 'n' is given a range twice",
    )
    error("def f(float(N) X) -> (Y) { Y(n) +=! X(n) where r in 5:2 }", "always empty")
    d = one("def f(float(N) X) -> (Y) { Y(n) = X(n) where n in 0:N / 2 }")
    assert str(d.statements[0].ranges["n"][1]) == "N floordiv 2"


def test_exists_needs_a_tensor_access() -> None:
    errs = errors("def f(float(N) X) -> (Y) { Y(n) = 1.0 where exists exp(n) }")
    assert any("'exists' needs a tensor access" in e.message for e in errs)


# -------------------------------------------------------------- reporting


def test_several_independent_errors_are_all_reported() -> None:
    errs = errors(
        "def f(float(N) X) -> (Y, Z, W) {\n"
        "    Y(n) = Xx(n)\n"  # undefined tensor
        "    Z(n) = pow(X(n))\n"  # arity
        "    W(n) = X(n, r)\n"  # rank
        "}\n"
        "def g(float(N) X) -> (int32 Y) {\n"
        "    Y(n) = X(n)\n"  # narrowing
        "}\n"
    )
    assert len(errs) == 4
    assert [e.span.source.line_col(e.span.start)[0] for e in errs if e.span] == [
        2,
        3,
        4,
        7,
    ]


def test_no_cascade_after_a_failed_statement() -> None:
    # T's statement fails; reading or accumulating into T says nothing more.
    errs = errors(
        "def f(float(N) X) -> (Y) {\n"
        "    T(n) = Xx(n)\n"
        "    T(n) += X(n)\n"
        "    Y(n) = T(n) + X(n)\n"
        "}"
    )
    assert [e.message for e in errs] == [
        "undefined tensor or function 'Xx'; did you mean 'X'?"
    ]


def test_every_error_is_located() -> None:
    bad = [
        "def f(float(N) X) -> (Y) { Y(n) = X(n) + undefined }",
        "def f(float(N) X) -> (Y) { Y(i) = X(i - 1) }",
        "def f(float(N) X) -> (Y) { Y(n) = X(n) \n Y(n) += X(n, n) }",
        "def f(float(N) X) -> (Y) { Y(n) = X(n) where n in 0:N + 1 }",
        "def f(float(N) X) -> (Y) { Y(i) +=! X(i + j) }",
        "def f(float(N) X) -> (Y) { Y(n) = 1 ? 2 : 3 }",
    ]
    for src in bad:
        for e in errors(src):
            assert e.render().startswith("sema.tc:1:") or e.render().startswith(
                "sema.tc:2:"
            )
