"""Range inference through the whole frontend (TC-LANGUAGE.md §4.6).

Every example of §4.6 and of anchor-tc.md §1.7-1.8 goes through
`analyze(source)`; the tests read the inferred ranges of each statement and
the extents of the tensors (`str()` of the `SizeExpr`s), and the call-time
bounds check `CheckedDef.check_sizes`.
"""

from __future__ import annotations

import re

import pytest

from tcdialect.diagnostics import TCError
from tcdialect.frontend import analyze
from tcdialect.frontend import range_inference as ri
from tcdialect.frontend.sema import CheckedDef
from tcdialect.symbolic import SizeExpr, parse

FILE = "ri.tc"
_LOCATED = re.compile(r"^ri\.tc:\d+:\d+: (error|warning|note): ", re.MULTILINE)


def check(source: str) -> CheckedDef:
    return analyze(source, FILE).defs[0]


def ranges(d: CheckedDef, k: int = 0) -> dict[str, tuple[str, str]]:
    return {v: (str(lo), str(hi)) for v, (lo, hi) in d.statements[k].ranges.items()}


def extents(d: CheckedDef, name: str) -> list[str]:
    t = d.tensors[name]
    assert t.extents is not None
    return [str(e) for e in t.extents]


def error(source: str) -> TCError:
    with pytest.raises(TCError) as info:
        analyze(source, FILE)
    err = info.value
    assert err.errors
    for diag in err.diagnostics:
        assert diag.span is not None, diag.message
        assert _LOCATED.match(diag.render())
    return err


# --------------------------------------------------------------- §4.6 basics


def test_stride_two() -> None:
    d = check("def f(float(I) B) -> (A) { A(i) = B(2 * i) }")
    assert ranges(d) == {"i": ("0", "(I + 1) floordiv 2")}
    assert extents(d, "A") == ["(I + 1) floordiv 2"]
    assert d.output_extents({"I": 7}) == [(4,)]  # i = 0..3 reads B(0..6)
    assert d.output_extents({"I": 0}) == [(0,)]


def test_pair_sum_intersects_two_accesses() -> None:
    d = check("def f(float(I) B) -> (A) { A(i) = B(2 * i) + B(2 * i + 1) }")
    assert ranges(d) == {"i": ("0", "I floordiv 2")}
    assert extents(d, "A") == ["I floordiv 2"]


def test_valid_convolution_solves_kernel_first() -> None:
    d = check("def f(float(H) I, float(KH) W) -> (O) { O(h) +=! I(h + kh) * W(kh) }")
    assert ranges(d) == {"h": ("0", "H - KH + 1"), "kh": ("0", "KH")}
    assert extents(d, "O") == ["H - KH + 1"]
    assert d.statements[0].out_indices == ["h"]
    assert d.statements[0].red_indices == ["kh"]


def test_strided_2d_convolution() -> None:
    d = check(
        """
def conv(float(N, C, H, W) I, float(F, C, KH, KW) W1) -> (O) {
    O(n, f, h, w) +=! I(n, r_c, 2 * h + r_kh, 2 * w + r_kw) * W1(f, r_c, r_kh, r_kw)
}
"""
    )
    r = ranges(d)
    assert r["r_kh"] == ("0", "KH")
    assert r["r_kw"] == ("0", "KW")
    assert r["r_c"] == ("0", "C")
    assert r["h"] == ("0", "(H - KH) floordiv 2 + 1")
    assert r["w"] == ("0", "(W - KW) floordiv 2 + 1")
    assert extents(d, "O") == [
        "N",
        "F",
        "(H - KH) floordiv 2 + 1",
        "(W - KW) floordiv 2 + 1",
    ]
    # 7x7 input, 3x3 kernel, stride 2: 3x3 output.
    sizes = {"N": 1, "C": 2, "H": 7, "W": 8, "F": 4, "KH": 3, "KW": 3}
    assert d.output_extents(sizes) == [(1, 4, 3, 3)]
    d.check_sizes(sizes)


def test_max_pool_with_where_ranges() -> None:
    d = check(
        """
def pool3(float(B, H, W) X) -> (Y) {
    Y(b, h, w) max=! X(b, 3 * h + r_i, 3 * w + r_j) where r_i in 0:3, r_j in 0:3
}
"""
    )
    r = ranges(d)
    assert r["r_i"] == r["r_j"] == ("0", "3")
    assert r["h"] == ("0", "H floordiv 3")
    assert r["w"] == ("0", "W floordiv 3")
    assert extents(d, "Y") == ["B", "H floordiv 3", "W floordiv 3"]
    assert d.output_extents({"B": 2, "H": 10, "W": 9}) == [(2, 3, 3)]


def test_same_round_indices_do_not_see_each_other() -> None:
    d = check(
        "def f(float(I) B, float(K) C, float(J) D) -> (A) "
        "{ A(i, j) = B(i) * C(i + j) * D(j) }"
    )
    # i and j come from B and D in the same round; C only gives a check.
    assert ranges(d) == {"i": ("0", "I"), "j": ("0", "J")}
    assert extents(d, "A") == ["I", "J"]
    d.check_sizes({"I": 3, "J": 4, "K": 6})  # i + j <= 5 < 6
    d.check_sizes({"I": 3, "J": 4, "K": 100})
    with pytest.raises(TCError) as info:
        d.check_sizes({"I": 3, "J": 4, "K": 5})
    text = str(info.value)
    assert "'C'" in text
    assert "[0, 5]" in text and "extent is 5" in text
    assert "i in [0, 3)" in text and "j in [0, 4)" in text
    assert text.startswith("ri.tc:1:71: error:")  # located at the access
    assert info.value.diagnostics[0].span.text == "i + j"  # type: ignore[union-attr]


def test_explicit_where_on_a_broadcast() -> None:
    d = check(
        """
def affine3(float(M, 3) A, float(3, N) B, float(N) bias) -> (C) {
    C(m, n)  = bias(n) where m in 0:M
    C(m, n) += A(m, r_k) * B(r_k, n)
}
"""
    )
    assert ranges(d, 0) == {"m": ("0", "M"), "n": ("0", "N")}
    assert ranges(d, 1) == {"m": ("0", "M"), "n": ("0", "N"), "r_k": ("0", "3")}
    assert extents(d, "C") == ["M", "N"]
    assert d.statements[1].accumulates


def test_broadcast_without_where_is_an_error() -> None:
    err = error("def f(float(N) bias) -> (C) { C(m, n) = bias(n) }")
    text = str(err)
    assert "output index 'm'" in text
    assert "where m in" in text


def test_constant_where_range() -> None:
    d = check("def iota_fill(float v) -> (O) { O(i) = v + float(i) where i in 0:16 }")
    assert ranges(d) == {"i": ("0", "16")}
    assert extents(d, "O") == ["16"]


def test_exists_shapes_an_output() -> None:
    d = check(
        "def ones_like(float(M, N) X) -> (O) { O(m, n) = 1.0 where exists X(m, n) }"
    )
    assert ranges(d) == {"m": ("0", "M"), "n": ("0", "N")}
    assert extents(d, "O") == ["M", "N"]


def test_let_binding_is_inlined_for_ranges() -> None:
    d = check(
        "def f(float(N) A, float(N) B) -> (O) { O(n) = d * d where d = A(n) - B(n) }"
    )
    assert ranges(d) == {"n": ("0", "N")}
    d = check("def f(float(N) A) -> (O) { O(i) = A(j) where j = 2 * i + 1 }")
    assert ranges(d) == {"i": ("0", "N floordiv 2")}


def test_later_statements_see_inferred_extents() -> None:
    d = check(
        """
def rownorm(float(R, C) X) -> (Y, ss) {
    ss(r)   +=! X(r, r_c) * X(r, r_c)
    Y(r, c)  =  X(r, c) * rsqrt(ss(r) + 1e-6)
}
"""
    )
    assert extents(d, "ss") == ["R"]
    assert extents(d, "Y") == ["R", "C"]
    d = check(
        """
def f(float(I) B) -> (A, C) {
    A(i) = B(2 * i)
    C(i) = A(2 * i)
}
"""
    )
    # ((I + 1) floordiv 2 + 1) floordiv 2, merged into one floordiv.
    assert extents(d, "C") == ["(I + 3) floordiv 4"]
    assert d.output_extents({"I": 5}) == [(3,), (2,)]


def test_zero_d_output_and_full_reduction() -> None:
    d = check(
        "def count_pos(float(N) X) -> (int32 cnt) { cnt +=! int32(X(r_n) > 0.0) }"
    )
    assert ranges(d) == {"r_n": ("0", "N")}
    assert extents(d, "cnt") == []
    assert d.output_extents({"N": 5}) == [()]


def test_literal_extents() -> None:
    d = check("def f(float(4, N) X) -> (Y) { Y(i, j) = X(i, j) + X(i + 1, 0) }")
    assert ranges(d) == {"i": ("0", "3"), "j": ("0", "N")}
    assert extents(d, "Y") == ["3", "N"]


# ------------------------------------------------- non-zero starts (errors)


@pytest.mark.parametrize(
    ("source", "interval"),
    [
        ("def f(float(I) B) -> (A) { A(i) = B(10 - i) }", "[-I + 11, 11)"),
        ("def f(float(I) B) -> (A) { A(i) = B(i - 1) }", "[1, I + 1)"),
        (
            "def f(float(HO) dO, float(KH) W) -> (dI) { dI(h) +=! dO(h - kh) * W(kh) }",
            "[KH - 1, HO)",
        ),
    ],
)
def test_lhs_range_must_start_at_zero(source: str, interval: str) -> None:
    err = error(source)
    assert len(err.errors) == 1
    msg = err.errors[0].message
    assert interval in msg
    assert "must start at 0" in msg
    assert "where" in msg


def test_gradient_of_a_1x1_convolution_is_fine() -> None:
    d = check(
        "def f(float(HO) dO, float(1) W) -> (dI) { dI(h) +=! dO(h - kh) * W(kh) }"
    )
    assert ranges(d) == {"h": ("0", "HO"), "kh": ("0", "1")}
    assert extents(d, "dI") == ["HO"]


def test_output_offset_by_a_size_is_recognised_as_zero_based() -> None:
    # lows 0 (from B) and -K (from C): sizes are non-negative, so max is 0.
    d = check(
        "def f(float(N) B, float(K) D, float(M) C) -> (A) "
        "{ A(i) = B(i) + C(i + K) + D(0) }"
    )
    assert ranges(d) == {"i": ("0", "min(M - K, N)")}


# ------------------------------------------------------------- unsolvable


def test_unsolvable_lists_constraints_and_suggests_where() -> None:
    err = error("def f(float(I) B) -> (A) { A(i) +=! B(i + j) }")
    assert len(err.errors) == 2  # one per unsolved index
    for diag, v in zip(err.errors, ["i", "j"]):
        assert f"'{v}'" in diag.message
        assert "0 <= i + j < extent 0 of B" in diag.message
        assert f"where {v} in" in diag.message


def test_unconstrained_reduction_index() -> None:
    # k appears only in a data-dependent subscript: no constraint at all.
    err = error(
        "def f(float(N) X, int32(N) Idx) -> (Y) { Y(i) +=! X(i) * X(Idx(0) + k) }"
    )
    assert "index 'k'" in str(err)
    assert "constraints: none" in str(err)


# ------------------------------------------------------- where too large


def test_where_range_provably_too_large_is_a_compile_time_error() -> None:
    err = error("def f(float(N) B) -> (A) { A(i) = B(i) where i in 0:N+1 }")
    (diag,) = err.errors
    assert "'B'" in diag.message and "out of bounds" in diag.message
    assert "i in [0, N + 1)" in diag.message
    assert diag.span is not None and diag.span.text == "i"


def test_where_range_leaving_no_output_index_is_an_error() -> None:
    # i + k <= N - 1 for every k < N + 2 gives i <= -2: never an extent of -1.
    err = error("def f(float(N) A) -> (B) { B(i) +=! A(i + k) where k in 0:N + 2 }")
    (diag,) = err.errors
    assert diag.message == "the range of output index 'i' is always empty: [0, -1)"
    err = error("def f(float(N) A) -> (B) { B(i) = A(0) where i in 0:-N - 1 }")
    assert "always empty: [0, -N - 1)" in err.errors[0].message
    # Empty for some sizes only is fine: the output is then empty.
    d = check("def f(float(N) A) -> (B) { B(i) +=! A(i + k) where k in 0:4 }")
    assert extents(d, "B") == ["N - 3"]
    assert d.output_extents({"N": 2}) == [(0,)]


def test_where_range_too_large_only_for_some_sizes_is_a_call_time_error() -> None:
    d = check(
        """
def f(float(N) A, float(M) C) -> (O) {
    O(i) = A(i) + C(i) where i in 0:M
}
"""
    )
    assert ranges(d) == {"i": ("0", "M")}
    d.check_sizes({"N": 5, "M": 5})
    d.check_sizes({"N": 6, "M": 5})
    with pytest.raises(TCError) as info:
        d.check_sizes({"N": 3, "M": 5})
    (diag,) = info.value.diagnostics
    assert diag.span is not None
    assert diag.span.location() == "ri.tc:3:14"
    assert "'A'" in diag.message
    assert "[0, 4]" in diag.message and "extent is 3" in diag.message
    assert "i in [0, 5)" in diag.message


def test_reduction_where_too_large_for_some_sizes() -> None:
    d = check("def f(float(N, K) A) -> (S) { S(n) +=! A(n, k) where k in 0:8 }")
    d.check_sizes({"N": 2, "K": 8})
    with pytest.raises(TCError, match="'A' is out of bounds"):
        d.check_sizes({"N": 2, "K": 7})
    d.check_sizes({"N": 0, "K": 7})  # nothing is read


def test_an_access_through_a_let_used_twice_is_reported_once() -> None:
    err = error(
        "def f(float(N) X) -> (O) { O(i) = d + d where d = X(i), i in 0:N + 1 }"
    )
    assert len(err.errors) == 1


def test_data_dependent_subscripts_do_not_constrain() -> None:
    d = check(
        "def take_rows(float(V, D) E, int32(K) Idx) -> (O) { O(k, d) = E(Idx(k), d) }"
    )
    assert ranges(d) == {"k": ("0", "K"), "d": ("0", "D")}
    assert extents(d, "O") == ["K", "D"]
    # Only the affine subscripts are kept for bounds checks.
    assert {(a.tensor, a.dim) for a in d.statements[0].accesses} == {
        ("Idx", 0),
        ("E", 1),
    }
    d.check_sizes({"V": 1, "D": 2, "K": 100})
    d = check(
        "def f(float(V, D) E, int32(K) Idx) -> (O) "
        "{ O(k, d) = E(max(min(Idx(k), V - 1), 0), d) }"
    )
    assert ranges(d) == {"k": ("0", "K"), "d": ("0", "D")}


def test_empty_sizes_are_fine() -> None:
    d = check("def f(float(N, K) A, float(K) B) -> (C) { C(n) +=! A(n, r) * B(r) }")
    d.check_sizes({"N": 0, "K": 0})
    d.check_sizes({"N": 3, "K": 0})
    assert d.output_extents({"N": 0, "K": 0}) == [(0,)]
    d = check("def f(float(H) I, float(KH) W) -> (O) { O(h) +=! I(h + kh) * W(kh) }")
    d.check_sizes({"H": 0, "KH": 0})
    d.check_sizes({"H": 2, "KH": 5})  # O is empty (extent <= 0)
    assert d.output_extents({"H": 2, "KH": 5}) == [(0,)]  # never negative


# ------------------------------------------------------------- consistency


def test_extents_must_agree_across_statements() -> None:
    err = error(
        """
def f(float(N) B, float(M) C) -> (A) {
    A(i) = B(i)
    A(i) = C(i)
}
"""
    )
    (diag,) = err.errors
    assert "inconsistent extents for 'A'" in diag.message
    assert "[M]" in diag.message and "[N]" in diag.message
    assert diag.span is not None and diag.span.text == "A(i) = C(i)"
    assert len(diag.notes) == 1
    assert diag.notes[0].span is not None
    assert diag.notes[0].span.text == "A(i) = B(i)"
    assert "ri.tc:3:5: note:" in diag.render()


def test_reading_the_target_narrows_and_then_disagrees() -> None:
    err = error(
        """
def f(float(N) B, float(M) C) -> (A) {
    A(i) = B(i)
    A(i) = A(i) + C(i)
}
"""
    )
    assert "gives [min(M, N)] but an earlier statement gave [N]" in str(err)


def test_same_extents_across_statements_are_fine() -> None:
    d = check(
        """
def f(float(N) B, float(N) C) -> (A) {
    A(i) = B(i)
    A(i) = A(i) + C(i)
}
"""
    )
    assert extents(d, "A") == ["N"]
    assert len(d.statements) == 2


def test_rank_mismatch_across_statements() -> None:
    err = error(
        """
def f(float(N) B) -> (A) {
    A(i) = B(i)
    A(i, j) = B(i) where j in 0:N
}
"""
    )
    assert "'A' has 1 dimensions" in str(err) or "dimension" in str(err)


# ------------------------------------------------------- the algorithm itself


def _c(coeffs: dict[str, int], rest: str) -> ri.Constraint:
    return ri.Constraint(coeffs, parse(rest))


def test_infer_rounds_and_for_all_rewriting() -> None:
    # 0 <= h + kh <= H - 1 and 0 <= kh <= KH - 1
    cs = [
        _c({"h": 1, "kh": 1}, "0"),
        _c({"h": -1, "kh": -1}, "H - 1"),
        _c({"kh": 1}, "0"),
        _c({"kh": -1}, "KH - 1"),
    ]
    res = ri.infer(["h", "kh"], cs, {})
    assert not res.unsolved
    assert {v: (str(a), str(b)) for v, (a, b) in res.ranges.items()} == {
        "kh": ("0", "KH"),
        "h": ("0", "H - KH + 1"),
    }
    assert res.preconditions == []


def test_infer_reports_stuck_constraints() -> None:
    cs = [_c({"i": 1, "j": 1}, "0"), _c({"i": -1, "j": -1}, "N - 1")]
    res = ri.infer(["i", "j"], cs, {})
    assert res.unsolved == ["i", "j"]
    assert len(res.stuck) == 2


def test_infer_presolved_and_preconditions() -> None:
    # B(3): a constraint with no index at all is a precondition.
    cs = [_c({}, "3"), _c({}, "N - 4"), _c({"i": 1}, "0"), _c({"i": -1}, "N - 1")]
    res = ri.infer(["i", "r"], cs, {"r": (SizeExpr.lit(0), SizeExpr.lit(3))})
    assert not res.unsolved
    assert str(res.ranges["i"][1]) == "N"
    assert [str(c.rest) for c in res.preconditions] == ["3", "N - 4"]


def test_for_all_picks_the_worst_end_of_the_range() -> None:
    c = _c({"h": 1, "k": -2}, "H")
    k = (SizeExpr.lit(0), parse("K"))
    out = c.for_all({"k": k})
    assert out.coeffs == {"h": 1}
    assert str(out.rest) == "H - 2 * K + 2"
    assert str(c) == "h + -2 * k + H >= 0"
