"""The hot loops of benchmark-style kernels compile to packed vector instructions.

Checked on the host assembly (the `asm` stage) after O3 for the host CPU:
packed single-precision arithmetic (`mulps`/`vmulps`, `addps`, `maxps`,
`vfmadd...ps`) must appear, on 256-bit (`ymm`) registers or wider when the host
has AVX. Reductions carry `reassoc` (TC reductions may be reordered), so they
vectorise too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tcdialect

KERNELS = {
    "chain": (
        "def chain(float(N) A, float(N) B, float(N) C, float(N) D) -> (O) {"
        " O(i) = max(A(i) * B(i) + C(i), 0.0) * D(i) }",
        [(4096,)] * 4,
        r"\bv?mulps\b",
    ),
    "rowsum": (
        "def rowsum(float(M, N) A) -> (S) { S(m) +=! A(m, n) }",
        [(64, 2048)],
        r"\bv?addps\b",
    ),
    "scale_rows": (
        "def scale(float(M, N) A, float(M) s) -> (O) { O(m, n) = A(m, n) * s(m) }",
        [(64, 2048), (64,)],
        r"\bv?mulps\b",
    ),
    "relu": (
        "def relu(float(M, N) I) -> (O) { O(m, n) = fmax(I(m, n), 0.0) }",
        [(512, 512)],
        r"\bv?maxps\b",
    ),
}


def _host_has_avx() -> bool:
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return re.search(r"\bavx\b", flags) is not None


@pytest.mark.parametrize("name", KERNELS)
def test_hot_loop_is_vectorised(name: str) -> None:
    source, shapes, packed = KERNELS[name]
    k = tcdialect.define(source)
    inputs = [np.ones(s, np.float32) for s in shapes]
    asm = k.ir(*inputs, stage="asm")
    assert re.search(packed, asm), f"no packed instruction {packed} in {name}"
    if _host_has_avx():
        assert re.search(packed + r"\s.*%[yz]mm", asm), f"{name}: no 256-bit vectors"


def test_exp_is_vectorised_and_accurate() -> None:
    k = tcdialect.define("def e(float(N) X) -> (Y) { Y(i) = exp(X(i)) }")
    x = np.concatenate(
        [
            np.linspace(-110.0, 95.0, 100_001),
            [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.7229, -87.3, 1e-30],
        ]
    ).astype(np.float32)
    asm = k.ir(x, stage="asm")
    assert "expf" not in asm
    assert re.search(r"\bv?mulps\b", asm)
    got = k(x).astype(np.float64)
    with np.errstate(over="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    normal = np.isfinite(want) & (want >= np.finfo(np.float32).tiny)
    rel = np.abs(got[normal] - want[normal]) / want[normal]
    assert rel.max() < 2.5e-7  # within 2 ulp over the whole normal range
    tiny = want < np.finfo(np.float32).tiny
    assert np.abs(got[tiny] - want[tiny]).max() <= 2e-45  # subnormal results
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


# Transcendentals: expand-math-polynomials turns them into call-free
# arithmetic, so their loops vectorise instead of calling the C library
# (logf, tanhf, erff, ...) per element: softmax, GELU, tanh activations.
TRANSCENDENTAL_KERNELS = {
    "log": "def f(float(N) X) -> (Y) { Y(i) = log(X(i)) }",
    "tanh": "def f(float(N) X) -> (Y) { Y(i) = tanh(X(i)) }",
    "erf": "def f(float(N) X) -> (Y) { Y(i) = erf(X(i)) }",
    "gelu": "def gelu(float(N) X) -> (Y) {"
    " Y(i) = 0.5 * X(i) * (1.0 + erf(X(i) * 0.70710678)) }",
    "sincos": "def sc(float(N) X) -> (S, C) { S(i) = sin(X(i)) C(i) = cos(X(i)) }",
    "misc": "def m(float(N) X) -> (Y) { Y(i) = expm1(X(i)) + log2(X(i)) + log1p(X(i))"
    " + cbrt(X(i)) + atan(X(i)) + erfc(X(i)) + sinh(X(i)) + exp10(X(i))"
    " + atan2(X(i), 1.5) + hypot(X(i), 2.0) }",
}


@pytest.mark.parametrize("name", TRANSCENDENTAL_KERNELS)
def test_transcendentals_vectorise_without_libm_calls(name: str) -> None:
    k = tcdialect.define(TRANSCENDENTAL_KERNELS[name])
    asm = k.ir(np.ones(4096, np.float32), stage="asm")
    calls = re.findall(r"\bcall\w*\s+(\S+)", asm)
    assert all(c.startswith("__tc_") for c in calls), calls  # the runtime only
    assert re.search(r"\bv?mulps\b", asm), f"{name}: no packed multiply"
    if _host_has_avx():
        assert re.search(r"\bv(mul|add|sub)ps\s.*%[yz]mm", asm), (
            f"{name}: no 256-bit vectors"
        )


def test_log_tanh_erf_accurate_through_the_pipeline() -> None:
    # The whole pipeline (parallel loops, O3 vectorisation) keeps the
    # expansions' accuracy: within 2 ulp of float64 over a wide sample.
    import math

    k = tcdialect.define(
        "def f(float(N) X) -> (L, T, E) {"
        " L(i) = log(X(i)) T(i) = tanh(X(i)) E(i) = erf(X(i)) }"
    )
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.uniform(-6.0, 6.0, 50_000),
            np.exp(rng.uniform(-80.0, 80.0, 50_000)),
            [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 0.55, 1.0],
        ]
    ).astype(np.float32)
    log_y, tanh_y, erf_y = k(x)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        wants = [
            np.log(xd),
            np.tanh(xd),
            np.frompyfunc(math.erf, 1, 1)(xd).astype(np.float64),
        ]
    for got, want in zip((log_y, tanh_y, erf_y), wants):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        g, w = got[ok].astype(np.float64), want[ok]
        same = g == w
        ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(w), 2.0**-126))) - 23)
        with np.errstate(invalid="ignore"):
            err = np.where(same, 0.0, np.abs(g - w) / ulp)
        assert err.max() <= 2.0


# min and max reductions leave the sign of a zero result open (`nsz`, which
# spares x86 the ordering of -0 and +0) but still propagate NaNs, in the
# register-tiled row reduction and in the LLVM-vectorised pooling window.
MINMAX_KERNELS = {
    "row_max": "def f(float(M, N) A) -> (O) { O(m) max=! A(m, r_n) }",
    "row_min": "def f(float(M, N) A) -> (O) { O(m) min=! A(m, r_n) }",
    "pool_max": (
        "def f(float(M, N) A) -> (O) {"
        " O(h, w) max=! A(2 * h + r_i, 2 * w + r_j) where r_i in 0:2, r_j in 0:2 }"
    ),
}


@pytest.mark.parametrize("name", sorted(MINMAX_KERNELS))
def test_min_max_reductions_propagate_nans(name: str) -> None:
    k = tcdialect.define(MINMAX_KERNELS[name])
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    a[3, 5] = np.nan  # a NaN among ordinary values
    a[10, :] = np.nan  # a row of NaNs
    a[20, 1::2] = np.nan  # every other element
    a[30, :] = -0.0  # zeros of both signs
    a[30, ::3] = 0.0
    a[40, 7] = np.inf
    a[41, 8] = -np.inf
    got = k(a)
    if name == "pool_max":
        want = a.reshape(32, 2, 48, 2).max(axis=(1, 3))  # propagates NaNs
    else:
        want = (a.max if name == "row_max" else a.min)(axis=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])  # -0.0 == 0.0


def test_sibling_reductions_read_each_row_once() -> None:
    """moments2's sum and sum of squares of a row, register-tiled into loops
    over the row, run as one loop per part (fuse-sibling-loops): the 4-vector
    part and the 1-vector part are shared, the scalar remainders (100 = 64 +
    32 + 4) stay apart, as the second one starts from a value stored between
    them. The results match NumPy's."""
    k = tcdialect.define(
        "def moments2(float(N, K) I) -> (mean, var) {\n"
        "    mean(n) +=! I(n, r_k)\n"
        "    var(n) +=! I(n, r_k) * I(n, r_k)\n"
        "    mean(n) = mean(n) / float(K)\n"
        "    var(n) = var(n) / float(K) - mean(n) * mean(n)\n"
        "}"
    )
    a = np.random.default_rng(3).standard_normal((37, 100)).astype(np.float32)
    mean, var = k(a)
    np.testing.assert_allclose(mean, a.mean(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, a.var(axis=1), rtol=1e-5, atol=1e-5)
    loops = re.findall(r"scf\.for .* iter_args\((.*?)\) ->", k.ir(a, stage="loops"))
    carried = sorted(len(args.split(",")) for args in loops)
    if k.lowering.info.vector_width(32) >= 16:
        assert carried == [1, 1, 2, 8], loops  # 64 by 4 x 16, 32 by 16, 4 scalars
    else:
        assert carried == [1, 1, 8], loops  # 96 by 4 x 8, 4 scalars


def test_short_rows_of_the_next_strip_are_prefetched() -> None:
    """kronecker3's first mode product at odd sizes: the rows of X (24
    floats) are too short for the hardware prefetcher, so each full row strip
    prefetches the next strip's rows (past the last strip: the next `a`'s,
    or past X's end). The machine code prefetches, and the result matches
    NumPy's."""
    k = tcdialect.define(
        "def mode(float(D, R) W, float(M, A, B, R) X) -> (Y) {\n"
        "    Y(m, a, b, d) +=! X(m, a, b, r_r) * W(d, r_r)\n"
        "}"
    )
    rng = np.random.default_rng(5)
    w = rng.standard_normal((13, 24)).astype(np.float32)
    x = rng.standard_normal((3, 10, 19, 24)).astype(np.float32)
    y = k(w, x)
    want = np.einsum("mabr,dr->mabd", x.astype(np.float64), w)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * np.sqrt(24))
    assert "memref.prefetch %X" in k.ir(w, x, stage="loops")
    assert re.search(r"\bprefetcht0\b", k.ir(w, x, stage="asm"))


def test_row_loops_prefetch_the_next_row() -> None:
    """layernorm at odd sizes: its row loop holds the mean and variance
    reductions and the nests between them, so the mean's vector loop, which
    streams I's row, prefetches the next row of I for reading (non-temporal:
    read in the next iteration only) and of O (which the row's last nest
    stores) for writing. The machine code prefetches, and the result matches
    NumPy's."""
    k = tcdialect.define(
        "def layernorm(float(T, B, C) I) -> (O) {\n"
        "    mean(t, b) +=! I(t, b, r_c)\n"
        "    mean(t, b) = mean(t, b) / float(C)\n"
        "    cen(t, b, c) = I(t, b, c) - mean(t, b)\n"
        "    var(t, b) +=! cen(t, b, r_c) * cen(t, b, r_c)\n"
        "    var(t, b) = (var(t, b) + 1e-5) / float(C)\n"
        "    O(t, b, c) = cen(t, b, c) * rsqrt(var(t, b))\n"
        "}"
    )
    x = np.random.default_rng(9).standard_normal((3, 7, 300)).astype(np.float32)
    o = k(x)
    x64 = x.astype(np.float64)
    cen = x64 - x64.mean(axis=2, keepdims=True)
    want = cen / np.sqrt((cen * cen).mean(axis=2, keepdims=True) + 1e-5 / 300)
    np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-5 * np.sqrt(300))
    loops = k.ir(x, stage="loops")
    assert re.search(r"memref\.prefetch %I\[.*\], read, locality<0>", loops)
    assert re.search(r"memref\.prefetch %O\[.*\], write", loops)
    assert re.search(r"\bprefetchnta\b", k.ir(x, stage="asm"))


@pytest.mark.parametrize(
    ("batch", "n", "m"),
    [(37, 53, 600), (8, 16, 40), (130, 70, 33)],
    ids=["tiled", "short", "gathered"],
)
def test_initialisation_bias_and_relu_fold_into_the_kernels(
    batch: int, n: int, m: int
) -> None:
    """The MLP layer at odd sizes: O1's zeroing and the bias and ReLU passes
    run inside the register tiles (the first tile starts from zero, the last
    adds B1 and takes the max before its store), so the loops IR reads O1
    only as vectors; the result matches NumPy's."""
    k = tcdialect.define(
        "def fcrelu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {\n"
        "    O1(b, n) +=! I(b, r_m) * W1(n, r_m)\n"
        "    O1(b, n) = O1(b, n) + B1(n)\n"
        "    O1(b, n) = fmax(O1(b, n), 0.0)\n"
        "}"
    )
    rng = np.random.default_rng(7)
    i = rng.standard_normal((batch, m)).astype(np.float32)
    w = rng.standard_normal((n, m)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    got = k(i, w, b)
    want = np.maximum(i.astype(np.float64) @ w.T.astype(np.float64) + b, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(m))
    # every store of O1 is a kernel's, of ReLU(acc + B1) (or of the branch
    # that applies it in the last tile): no pass of its own zeroes O1, adds
    # the bias or takes the max
    loops = k.ir(i, w, b, stage="loops")
    stores = 0
    for fn in loops.split("func.func")[1:]:
        defs: dict[str, list[str]] = {}
        for line in fn.splitlines():
            hit = re.match(r"\s*(%[\w.]+(?:, %[\w.]+)*) = ([\w.]+) ?(.*)", line)
            if hit:
                for name in hit.group(1).split(", "):
                    defs[name] = [hit.group(2), *re.findall(r"%[\w.]+", hit.group(3))]
        for v in re.findall(r"(?:memref|vector)\.store (%[\w.]+), %O1\[", fn):
            stores += 1
            op, *operands = defs[v]
            assert op in ("scf.if", "arith.maxnumf"), (v, op)
            if op == "arith.maxnumf":
                assert defs[operands[0]][0] == "arith.addf"
        for v in re.findall(
            r"vector\.maskedstore %O1\[[^]]*\], %[\w.]+, (%[\w.]+)", fn
        ):
            stores += 1
            assert defs[v][0] in ("scf.if", "arith.maxnumf"), (v, defs[v][0])
    assert stores
    assert ("scf.if" in loops) == (m > 256)


def test_transposed_panels_are_gathered_by_register_transposes() -> None:
    """C = A Bᵀ at odd sizes: B is read across its rows, so its panels are
    gathered; full blocks of lanes x lanes are transposed in registers
    (`vector.shuffle`, vector loads along k), the columns and steps of k
    left over element by element. The result matches NumPy's."""
    k = tcdialect.define(
        "def tmm(float(M, K) A, float(N, K) B) -> (C) {\n"
        "    C(m, n) +=! A(m, r_k) * B(n, r_k)\n"
        "}"
    )
    rng = np.random.default_rng(11)
    a = rng.standard_normal((200, 45)).astype(np.float32)
    b = rng.standard_normal((75, 45)).astype(np.float32)
    c = k(a, b)
    want = a.astype(np.float64) @ b.T.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.sqrt(45))
    loops = k.ir(a, b, stage="loops")
    assert "vector.shuffle" in loops
    assert re.search(r"vector\.load %B\[", loops)
    assert re.search(r"memref\.load %B\[", loops)


def test_whole_trailing_dimensions_collapse_into_one_vector_loop() -> None:
    """tensordot at 7 x 9 spatial sizes: h and w index the last two
    dimensions of every tensor, whole, so `collapse-dims` walks them as one
    dimension of 63 floats (one vector loop with a single masked tail, not 7
    rows of 9). The result matches NumPy's, as does the uncollapsed kernel
    that explicit tile sizes (naming the definition's own loops) keep."""
    src = (
        "def tensordot(float(N, C1, C2, H, W) I0, float(N, C2, C3, H, W) I1)"
        " -> (O) {\n"
        "    O(n, c1, c3, h, w) +=! I0(n, c1, r_c2, h, w) * I1(n, r_c2, c3, h, w)\n"
        "}"
    )
    rng = np.random.default_rng(6)
    i0 = rng.standard_normal((2, 5, 3, 7, 9)).astype(np.float32)
    i1 = rng.standard_normal((2, 3, 4, 7, 9)).astype(np.float32)
    want = np.einsum("nabhw,nbchw->nachw", i0.astype(np.float64), i1)
    k = tcdialect.define(src)
    got = np.full(want.shape, np.nan, np.float32)  # no stale right answers
    k(i0, i1, out=got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(3))
    scheduled = k.ir(i0, i1, stage="scheduled")
    assert "%I0: memref<2x5x3x63xf32>" in scheduled, scheduled
    assert "%I1: memref<2x3x4x63xf32>" in scheduled
    assert "%O: memref<2x5x4x63xf32>" in scheduled
    tiled = tcdialect.define(src, options=tcdialect.CpuOptions(tile=(0, 0, 0, 0, 0)))
    got = np.full(want.shape, np.nan, np.float32)
    tiled(i0, i1, out=got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(3))
    assert "%I0: memref<2x5x3x7x9xf32>" in tiled.ir(i0, i1, stage="scheduled")


def test_collapsed_elementwise_chain_matches_numpy() -> None:
    """An elementwise chain over NCHW with a temporary collapses to one loop
    over all 2 * 3 * 5 * 7 elements (the temporary too) and computes the
    same values."""
    src = (
        "def f(float(N, C, H, W) X, float(N, C, H, W) Y) -> (O) {\n"
        "    T(n, c, h, w) = exp(X(n, c, h, w)) * Y(n, c, h, w)\n"
        "    O(n, c, h, w) = T(n, c, h, w) + X(n, c, h, w)\n"
        "}"
    )
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    y = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    k = tcdialect.define(src)
    want = np.exp(x.astype(np.float64)) * y + x
    got = np.full(want.shape, np.nan, np.float32)
    k(x, y, out=got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert "%X: memref<210xf32>" in k.ir(x, y, stage="scheduled")


def _misaligned(shape: tuple[int, ...], byte_offset: int) -> np.ndarray:
    """An uninitialised (NaN) float32 C array whose data starts `byte_offset`
    bytes past a 64-byte boundary."""
    n = int(np.prod(shape))
    raw = np.empty(n * 4 + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + byte_offset
    out = raw[start : start + n * 4].view(np.float32).reshape(shape)
    out.fill(np.nan)
    return out


SOFTMAX = (
    "def softmax(float(N, D) I) -> (O) {\n"
    "    mx(n) max=! I(n, r_d)\n"
    "    e(n, d) = exp(I(n, d) - mx(n))\n"
    "    s(n) +=! e(n, r_d)\n"
    "    O(n, d) = e(n, d) / s(n)\n"
    "}"
)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_outputs_are_streamed_past_the_caches(threads: int) -> None:
    """softmax with 8.4 MB rows of 1000 floats: the row store becomes aligned
    non-temporal vector stores between a scalar peel and a remainder (rows
    start at every alignment mod 64, as 4000-byte rows do), and the next-row
    write prefetch of O goes. Outputs at every 4-byte offset from a 64-byte
    boundary, and one off by 2 bytes (stored by the scalar loop alone), hold
    NumPy's values."""
    x = np.random.default_rng(11).standard_normal((2100, 1000)).astype(np.float32)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    # the threshold pinned below 8.4 MB: its default, a quarter of the host's
    # last-level cache, is 75 MB on a host that reports a 300 MiB L3
    options = tcdialect.CpuOptions(threads=threads, nontemporal_min_bytes=1 << 22)
    k = tcdialect.define(SOFTMAX, options=options)
    for offset in (0, 4, 16, 36, 60, 2):
        got = _misaligned(x.shape, offset)
        k(x, out=got)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=str(offset))
    loops = k.ir(x, stage="loops")
    assert re.search(r"vector\.store .*nontemporal = true", loops), loops
    assert not re.search(r"memref\.prefetch %O\[.*\], write", loops)
    if _host_has_avx():
        assert re.search(r"\bvmovntps\s.*%[yz]mm", k.ir(x, stage="asm"))


def test_small_outputs_keep_ordinary_stores() -> None:
    """The same softmax on 64 rows (256 KB) keeps cached stores and its
    next-row write prefetch: its output is still in cache when read."""
    x = np.ones((64, 1000), np.float32)
    loops = tcdialect.define(SOFTMAX).ir(x, stage="loops")
    assert "nontemporal" not in loops
    assert re.search(r"memref\.prefetch %O\[.*\], write", loops)


def test_generic_kernels_decide_streaming_at_run_time() -> None:
    """Without specialisation O's extents are unknown: the row loop checks
    O's size at run time, so one compiled kernel streams an 8.4 MB output and
    stores a small one through the cache, both with NumPy's values."""
    k = tcdialect.define(
        "def scale(float(N, D) I, float(N) s) -> (O) { O(n, d) = I(n, d) / s(n) }",
        options=tcdialect.CpuOptions(specialize=False),
    )
    rng = np.random.default_rng(12)
    for rows in (3, 2100):
        x = rng.standard_normal((rows, 1000)).astype(np.float32)
        s = rng.uniform(1, 2, rows).astype(np.float32)
        got = _misaligned(x.shape, 20)
        k(x, s, out=got)
        want = x.astype(np.float64) / s[:, None]
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(rows))
    loops = k.ir(x, s, stage="loops")
    assert "%O: memref<?x?xf32>" in loops
    assert re.search(r"arith\.cmpi uge, .*, %\w+ : index", loops), loops
    assert "nontemporal = true" in loops
