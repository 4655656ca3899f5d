"""The library API: define, call, out=, call-time checks, stages, caching, errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tcdialect
from tcdialect import CpuOptions, TCError, reference
from tcdialect.backend.registry import get_backend
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import COMMON_STAGES

STAGES = (*COMMON_STAGES, *get_backend("cpu").stages)

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""

TWO = """
def first(float(N) A) -> (B) { B(i) = A(i) + 1.0 }
def second(float(N) A, float s) -> (B, S) {
    B(i) = s * A(i)
    S +=! A(i)
}
"""

GATHER = """
def gather(float(K, D) E, int32(L) Idx) -> (O) {
    O(l, d) = E(Idx(l), d)
}
"""


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def test_matmul_matches_numpy() -> None:
    mm = tcdialect.define(MATMUL)
    A, B = rand(33, 17), rand(17, 9, seed=1)
    C = mm(A, B)
    assert C.dtype == np.float32 and C.shape == (33, 9)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def test_entry_selection_and_tuple_outputs() -> None:
    with pytest.raises(TCError, match="several definitions"):
        tcdialect.define(TWO)
    k = tcdialect.define(TWO, "second")
    A = rand(10)
    B, S = k(A, 2.5)
    np.testing.assert_allclose(B, 2.5 * A, rtol=1e-6)
    assert S.shape == () and S.dtype == np.float32
    np.testing.assert_allclose(S, A.sum(), rtol=1e-5, atol=1e-6)
    B2, _ = k(A, np.float32(2.5))  # 0-d input as a NumPy scalar
    np.testing.assert_array_equal(B, B2)


def test_out_writes_into_preallocated_arrays() -> None:
    mm = tcdialect.define(MATMUL)
    A, B = rand(8, 4), rand(4, 6, seed=1)
    C = np.full((8, 6), np.nan, np.float32)
    res = mm(A, B, out=C)
    assert res is C
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)
    k = tcdialect.define(TWO, "second")
    outs = (np.empty(8, np.float32), np.empty((), np.float32))
    assert k(rand(8), 1.0, out=outs) is outs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((rand(3, 4),), "expects 2 inputs"),
        ((rand(3, 4), rand(5, 2)), "size K"),
        ((rand(3, 4).astype(np.float64), rand(4, 2)), "input 'A'.*float32"),
        ((rand(3), rand(3, 2)), "input 'A'.*2 dimensions"),
        ((rand(4, 3).T, rand(4, 2)), "input 'A'.*contiguous"),
        ((rand(3, 4), "x"), "input 'B'.*NumPy array"),
    ],
)
@pytest.mark.parametrize("warm", [False, True])
def test_call_errors_name_the_argument(args: tuple, message: str, warm: bool) -> None:
    mm = tcdialect.define(MATMUL)
    if warm:  # a good call of the same shapes first: the checks of a known key
        mm(rand(3, 4), rand(4, 2))
    with pytest.raises(TCError, match=message):
        mm(*args)


def test_literal_extent_is_checked() -> None:
    k = tcdialect.define("def f(float(3, N) A) -> (B) { B(i, j) = A(i, j) }")
    with pytest.raises(TCError, match=r"input 'A'.*dimension 0 must be 3 but is 4"):
        k(rand(4, 2))
    np.testing.assert_array_equal(k(rand(3, 2)), rand(3, 2))


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.empty((3, 3), np.float32), "output 'C'.*shape"),
        (np.empty((3, 2), np.float64), "output 'C'.*float32"),
        (np.empty((2, 3), np.float32).T, "output 'C'.*contiguous"),
        (np.empty((3, 2), np.float32)[::-1], "output 'C'.*contiguous"),
        (np.broadcast_to(np.float32(0), (3, 2)), "output 'C'.*writeable"),
        ([np.empty((3, 2), np.float32).tolist()], "output 'C'.*NumPy array"),
        ((np.empty((3, 2), np.float32),) * 2, "must give 1 array"),
    ],
)
@pytest.mark.parametrize("warm", [False, True])
def test_out_errors(out: object, message: str, warm: bool) -> None:
    mm = tcdialect.define(MATMUL)
    if warm:
        mm(rand(3, 4), rand(4, 2), out=np.empty((3, 2), np.float32))
    with pytest.raises(TCError, match=message):
        mm(rand(3, 4), rand(4, 2), out=out)


def test_views_pass_their_own_first_element() -> None:
    # the launcher reads each array's data pointer from the ndarray object
    # (checked against arr.ctypes.data when tcdialect is imported)
    from tcdialect.runtime import cpu

    assert cpu.NDARRAY_LAYOUT is not None  # the fast path is on here
    base = np.arange(40, dtype=np.float32)
    for arr in (
        base,
        base[7:],
        base[7:31].reshape(4, 6),
        base[:0],
        np.float32(2.0) * base[3:4],
    ):
        assert cpu.data_pointer(arr) == arr.ctypes.data
    k = tcdialect.define("def f(float(N) A, float(N) B) -> (C) { C(i) = A(i) - B(i) }")
    out = np.zeros(40, np.float32)
    k(base[10:30], base[:20], out=out[5:25])
    np.testing.assert_array_equal(out[5:25], np.full(20, 10.0, np.float32))
    assert not out[:5].any() and not out[25:].any()


def test_out_overlapping_an_input_is_rejected() -> None:
    k = tcdialect.define("def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 }")
    A = rand(6)
    with pytest.raises(TCError, match=r"output 'B'.*overlaps"):
        k(A, out=A)
    base = rand(12)
    k(base[:6], out=base[6:])  # adjacent, not overlapping: a good call
    np.testing.assert_array_equal(base[6:], base[:6] * 2)
    for start in (1, 5):
        with pytest.raises(TCError, match=r"output 'B'.*overlaps"):
            k(base[:6], out=base[start : start + 6])
    two = tcdialect.define(TWO, "second")
    B = np.empty(8, np.float32)
    two(rand(8), 1.0, out=(B, np.empty((), np.float32)))
    with pytest.raises(TCError, match=r"output 'S'.*overlaps"):
        two(rand(8), 1.0, out=(B, B[3:4].reshape(())))


def test_known_shapes_take_the_short_path(monkeypatch: pytest.MonkeyPatch) -> None:
    mm = tcdialect.define(MATMUL)
    A, B = rand(5, 4), rand(4, 3, seed=1)
    want = mm(A, B)

    def general(*args: object) -> None:
        raise AssertionError("the general path ran")

    monkeypatch.setattr(mm, "_prepare", general)
    np.testing.assert_array_equal(mm(A, B), want)
    C = np.empty((5, 3), np.float32)
    assert mm(A.copy(), B, out=C) is C
    np.testing.assert_array_equal(C, want)
    with pytest.raises(AssertionError, match="general path"):
        mm(A, B, out=np.empty((5, 3), np.float64))  # a bad call: the general path


def test_repeated_shapes_take_the_call_stub(monkeypatch: pytest.MonkeyPatch) -> None:
    tcdialect.clear_cache()  # plans live with the compiled code, shared by kernels
    mm = tcdialect.define(MATMUL)
    A, B = rand(5, 4), rand(4, 3, seed=1)
    want = mm(A, B)
    assert mm._last is not None and mm._last.stub is None  # made on the 2nd run
    np.testing.assert_array_equal(mm(A, B), want)
    assert mm._last.stub is not None

    def python_path(*args: object) -> None:
        raise AssertionError("the Python path ran")

    monkeypatch.setattr(mm, "_shape_key", python_path)
    np.testing.assert_array_equal(mm(A.copy(), B), want)  # out=None
    C = np.full((5, 3), np.nan, np.float32)
    assert mm(A, B, out=C) is C
    np.testing.assert_array_equal(C, want)
    for out in ((np.empty((5, 3), np.float32),), [np.empty((5, 3), np.float32)]):
        assert mm(A, B, out=out) is out
        np.testing.assert_array_equal(out[0], want)
    for bad in (
        lambda: mm(A, B, out=np.empty((5, 3), np.float64)),
        lambda: mm(A.astype(np.float64), B),
        lambda: mm(A, B, out=(C, C)),
        lambda: mm(A, out=C),
        lambda: mm(A, B, out=np.empty((3, 5), np.float32).T),
    ):  # the stub rejects: the Python path runs (and raises here)
        with pytest.raises(AssertionError, match="Python path"):
            bad()


def test_a_stub_that_fails_to_compile_warns_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tcdialect.backend.cpu import call_stub

    def broken(*args: object) -> None:
        raise TCError("invalid LLVM IR: (injected)")

    monkeypatch.setattr(call_stub, "compile_call_stub", broken)
    tcdialect.clear_cache()
    mm = tcdialect.define(MATMUL)
    A, B = rand(5, 4), rand(4, 3, seed=1)
    mm(A, B)
    with pytest.warns(RuntimeWarning, match="no call stub.*injected"):
        got = mm(A, B)  # the second run tries to make the stub
    np.testing.assert_allclose(got, A @ B, rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second attempt, no second warning
        np.testing.assert_allclose(mm(A, B), A @ B, rtol=1e-5, atol=1e-6)
    tcdialect.clear_cache()


def test_alternating_shapes_are_each_right() -> None:
    mm = tcdialect.define(MATMUL)
    pairs = [(rand(5, 4), rand(4, 3, seed=1)), (rand(2, 6), rand(6, 7, seed=2))]
    for _ in range(3):
        for A, B in pairs:
            np.testing.assert_allclose(mm(A, B), A @ B, rtol=1e-5, atol=1e-6)
            C = np.empty((A.shape[0], B.shape[1]), np.float32)
            assert mm(A, B, out=C) is C
            np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)
    with pytest.raises(TCError, match=r"output 'C'.*shape"):
        mm(*pairs[0], out=np.empty((2, 7), np.float32))


def test_data_dependent_read_out_of_bounds_names_the_tensor() -> None:
    k = tcdialect.define(GATHER)
    E = rand(5, 3)
    good = np.array([4, 0, 2], np.int32)
    np.testing.assert_array_equal(k(E, good), E[good])
    for bad in ([0, 5, 1], [-1, 0, 0]):
        with pytest.raises(TCError, match="tensor 'E'"):
            k(E, np.array(bad, np.int32))


def test_generic_code_serves_every_shape() -> None:
    mm = tcdialect.define(MATMUL, options=CpuOptions(specialize=False))
    for m, k, n in [(1, 1, 1), (7, 3, 5), (0, 4, 2), (16, 0, 3)]:
        A, B = rand(m, k), rand(k, n, seed=2)
        np.testing.assert_allclose(mm(A, B), A @ B, rtol=1e-5, atol=1e-6)
    assert len(mm._compiled) == 4 and len({id(c) for c in mm._compiled.values()}) == 1
    # each shape ran once: no call stub was compiled for any
    assert all(p.stub is None for p in mm._plans.values())


def test_compiled_code_is_cached_across_kernels() -> None:
    tcdialect.clear_cache()
    A, B = rand(4, 4), rand(4, 4)
    first = tcdialect.define(MATMUL).compile(A, B)
    again = tcdialect.define(MATMUL).compile(A, B)
    assert first is again
    tcdialect.clear_cache()
    assert tcdialect.define(MATMUL).compile(A, B) is not first


def test_every_stage_prints() -> None:
    mm = tcdialect.define(MATMUL)
    A, B = rand(8, 4), rand(4, 6)
    texts = mm.dump(A, B)
    assert tuple(texts) == STAGES  # pipeline order
    expected = {
        "tc": "tc.comprehension",
        "affine": "affine.for",
        "scheduled": "affine.for %r_k",  # reordered: m, r_k, n
        "loops": "scf.for",
        "llvm": "llvm.func @matmul",
        "llvm-ir": 'define void @"matmul"',
        "asm": "matmul:",
    }
    for stage, text in texts.items():
        assert expected[stage] in text, stage
        if stage in ("affine", "scheduled", "loops"):
            # Specialised to the call's shapes: static memref types.
            assert "memref<8x4xf32>" in text, stage
    # one stage alone is the same text, and so is a stage asked for with
    # others (given back in pipeline order, whatever the order asked)
    assert mm.ir(A, B, stage="loops") == texts["loops"]
    some = mm.dump(A, B, stages=["asm", "tc"])
    assert some == {"tc": texts["tc"], "asm": texts["asm"]}
    assert mm.dump(A, B, stages=[]) == {}
    generic = mm.dump(A, B, stages=["affine"], generic=True)["affine"]
    assert generic.startswith('"builtin.module"()')
    with pytest.raises(TCError, match="unknown stage 'ptx'"):
        mm.dump(A, B, stages=["tc", "ptx"])


def test_generic_stage_without_inputs() -> None:
    text = tcdialect.define(MATMUL).ir(stage="affine")
    assert "memref<?x?xf32>" in text and "tc.sizes" in text


def test_unknown_stage_and_target() -> None:
    with pytest.raises(TCError, match="unknown stage 'cuda'"):
        tcdialect.define(MATMUL).ir(stage="cuda")
    with pytest.raises(TCError, match="target 'rocm'"):
        tcdialect.define(MATMUL, target="rocm")


def test_bad_source_is_a_located_error_at_define() -> None:
    with pytest.raises(TCError) as info:
        tcdialect.define(
            "def f(float(N) A) -> (B) {\n  B(i) = Ax(i)\n}", filename="f.tc"
        )
    assert re.search(r"f\.tc:2:\d+: error", str(info.value))


def test_a_failing_pass_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdialect.conversion import convert_tc_to_affine

    def boom(*args: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(convert_tc_to_affine.ConvertTcToAffinePass, "apply", boom)
    tcdialect.clear_cache()
    with pytest.raises(TCError, match=r"pass 'convert-tc-to-affine'.*simulated bug"):
        tcdialect.define(MATMUL)(rand(2, 2), rand(2, 2))


def test_threads_agree() -> None:
    src = "def f(float(M, N) A) -> (B) { B(i, j) = exp(A(i, j)) * 2.0 }"
    A = rand(257, 31)
    want = reference.run(parse_tc(src), None, [A])[0]
    for t in (1, 2, 3):
        got = tcdialect.define(src, options=CpuOptions(threads=t))(A)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_bad_options() -> None:
    with pytest.raises(TCError, match="threads"):
        CpuOptions(threads=0)
    with pytest.raises(TCError, match="CpuOptions"):
        tcdialect.define(MATMUL, options={"threads": 2})  # type: ignore[arg-type]


def test_bad_tile_options() -> None:
    for tile in (32, "32", (-1,), (2**70,), (True,), (4.0,)):
        with pytest.raises(TCError, match="tile sizes must be"):
            CpuOptions(tile=tile)  # type: ignore[arg-type]
    assert CpuOptions(tile=[np.int64(4), 0]).tile == (4, 0)  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"def f(float(N) A) -> (B) { B(i) = A(i) }", "str, not bytes.*decode"),
        (None, "str, not NoneType"),
    ],
)
def test_source_must_be_text(source: object, message: str) -> None:
    with pytest.raises(TCError, match=message):
        tcdialect.define(source)  # type: ignore[arg-type]


def test_array_subclasses() -> None:
    """NumPy subclasses pass their data; a masked array is refused, as its
    mask would be ignored."""
    k = tcdialect.define("def f(float(M, N) A) -> (B) { B(i, j) = A(i, j) + 1.0 }")

    class Sub(np.ndarray):
        pass

    got = k(np.ones((2, 3), np.float32).view(Sub))
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, np.full((2, 3), 2, np.float32))
    with pytest.raises(TCError, match=r"input 'A'.*masked arrays"):
        k(np.ma.masked_array(np.ones((2, 3), np.float32)))


def test_long_operator_chains() -> None:
    """A 600-term sum and a 3000-term subscript compile; an expression too
    long to check is an error located at its statement, not a
    RecursionError."""
    terms = " + ".join(["A(i)"] * 600)
    k = tcdialect.define(f"def f(float(N) A) -> (B) {{\n  B(i) = {terms}\n}}")
    np.testing.assert_array_equal(k(np.ones(3, np.float32)), np.full(3, 600.0))
    terms = " + ".join(["A(i)"] * 20_000)
    with pytest.raises(TCError, match=r"<string>:2:3: error: expression too deeply"):
        tcdialect.define(f"def f(float(N) A) -> (B) {{\n  B(i) = {terms}\n}}")
    # a 3000-term subscript: convert-tc-to-affine traced it recursively
    index = " + ".join(["i"] + ["0"] * 3000)
    k = tcdialect.define(f"def f(float(N) A) -> (B) {{ B(i) = A({index}) }}")
    np.testing.assert_array_equal(k(rand(4)), rand(4))


def test_chained_lets_are_checked_once() -> None:
    """Each let is a sum of the one before, used twice: checked (and
    lowered) once per let, not once per use (2^40 times)."""
    n = 40
    lets = ", ".join(["x0 = A(i)"] + [f"x{k + 1} = x{k} + x{k}" for k in range(n)])
    k = tcdialect.define(f"def f(float(N) A) -> (B) {{ B(i) = x{n} where {lets} }}")
    np.testing.assert_array_equal(k(np.ones(2, np.float32)), np.full(2, 2.0**n))
    subs = ", ".join(["s0 = i"] + [f"s{k + 1} = s{k} + s{k} - s{k}" for k in range(n)])
    k = tcdialect.define(f"def f(float(N) A) -> (B) {{ B(i) = A(s{n}) where {subs} }}")
    np.testing.assert_array_equal(k(rand(5)), rand(5))


def test_long_tensor_names() -> None:
    """LLVM cuts value names at 1024 characters when it reads IR back."""
    a, b = "A" * 2000, "A" * 1999 + "B"
    k = tcdialect.define(
        f"def f(float(N) {a}, float(N) {b}) -> (O) {{ O(i) = {a}(i) - {b}(i) }}"
    )
    np.testing.assert_array_equal(
        k(rand(4), rand(4, seed=1)), rand(4) - rand(4, seed=1)
    )


@pytest.mark.parametrize("to", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_float_to_int_saturates_like_the_reference(to: str) -> None:
    src = f"def f(float(N) A) -> ({to} B) {{ B(i) = {to}(A(i)) }}"
    x = np.array(
        [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 300.0, -1.0, 1e19, 1.9e19],
        np.float32,
    )
    want = reference.run(parse_tc(src), None, [x])[0]
    info = np.iinfo(to)
    assert want[0] == 0 and want[1] == info.max and want[2] == info.min
    np.testing.assert_array_equal(tcdialect.define(src)(x), want)


def test_temporaries_too_big_for_the_machine_are_an_error() -> None:
    k = tcdialect.define(
        "def f(float(N) A) -> (B) { T(i, j) = A(i) * A(j)  B(i) +=! T(i, r) }"
    )
    np.testing.assert_allclose(k(np.ones(3, np.float32)), [3, 3, 3])
    with pytest.raises(TCError, match=r"@f needs .* GiB of temporaries"):
        k(np.ones(10**6, np.float32))  # T would need 3.6 TiB


def test_zero_d_inputs_of_every_kind() -> None:
    src = "def f(float A) -> (B) { B = A + 1.0 }"
    k = tcdialect.define(src)
    for x in (2.0, np.float32(2), np.array(2, np.float32)):
        (want,) = reference.run(parse_tc(src), None, [x])
        assert want.shape == () and float(want) == 3.0
        got = k(x)
        assert got.shape == () and float(got) == 3.0


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_out_of_bounds_gather_names_the_index_element(target: str) -> None:
    # compiled code only flags the bad read; the call names the index
    # tensor's element, its value and the valid range (issue 38 item 5)
    k = tcdialect.define(
        """def gather(float(V, D) E, int32(K, L) Idx) -> (O) {
            O(k, d) +=! E(Idx(k, r_l) + 1, d)
        }""",
        target=target,
    )
    E = np.ones((5, 3), np.float32)
    good = np.array([[0, 1], [3, 2]], np.int32)
    np.testing.assert_array_equal(k(E, good), np.full((2, 3), 2, np.float32))
    bad = np.array([[0, 1], [4, 2]], np.int32)
    want = (
        "read of tensor 'E' out of bounds: subscript 0 is 5 but the extent is 5 "
        "(from Idx[1, 0] = 4; valid: 0 to 4) in the statement of 'O'; the read "
        "was skipped"
    )
    for _ in range(2):  # the first call and the cached one
        with pytest.raises(TCError, match=re.escape(want)) as raised:
            k(E, bad)
    # and where: the access, located with a caret under it
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("<string>:2:"), lines
    assert lines[1].strip() == "O(k, d) +=! E(Idx(k, r_l) + 1, d)"
    assert lines[2].strip() == "^" + "~" * (len("E(Idx(k, r_l) + 1, d)") - 1)
    with pytest.raises(TCError, match=re.escape(want)):
        k(E=E, Idx=bad)
