"""`register-tile`: register tiles in vector accumulators, end to end.

Each test lowers a TC definition to the `affine` stage (optionally through
the isl scheduler), applies the pass (asserting that it rewrote the nests it
should), compiles through the rest of the pipeline and the CPU backend, runs
on NumPy inputs and compares with the reference interpreter: odd, unit and
empty extents (remainder rows, vectors, masked columns), symbolic sizes
(generic code), 1 and 2 threads, every packing mode, several vector widths.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from tcdialect import reference
from tcdialect.arguments import signature_of
from tcdialect.backend.cpu.jit import compile_cpu
from tcdialect.diagnostics import TCError
from tcdialect.frontend import analyze, parse_tc
from tcdialect.frontend.ir_gen import gen_def
from tcdialect.pipeline import (
    common_stage_passes,
    format_sizes,
    make_context,
    passes_to,
    run_passes,
    stage_passes,
)
from tcdialect.runtime.cpu import CpuLauncher
from tcdialect.transforms.register_tile import RegisterTilePass, register_tile

Arr = np.ndarray[Any, Any]

MATMUL = (
    "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
)
ATB = "def atb(float(K,M) A, float(K,N) B) -> (C) { C(m, n) +=! A(r_k, m) * B(r_k, n) }"
MLP = "def mlp(float(B,K) X, float(N,K) W) -> (O) { O(b, n) +=! X(b, r_k) * W(n, r_k) }"
CONV = """def conv(float(N,C,H,W) I, float(K,C,KH,KW) Wt) -> (O) {
  O(n, k, h, w) +=! I(n, r_c, h + r_kh, w + r_kw) * Wt(k, r_c, r_kh, r_kw)
}"""
EINSUM = """def ein(float(A,B,C) X, float(C,D) Y) -> (O) {
  O(a, b, d) +=! X(a, b, r_c) * Y(r_c, d)
}"""


def affine_module(
    source: str, sizes: dict[str, int] | None, schedule: Any = None
) -> tuple[ModuleOp, Any]:
    """The `affine` (or `scheduled`) module of `source` and its signature."""
    checked = analyze(source, "<test>").get(None)
    module = ModuleOp([gen_def(checked)])
    ctx = make_context()
    run_passes(ctx, module, passes_to("affine", format_sizes(sizes or {})))
    fn = next(op for op in module.ops if isinstance(op, FuncOp))
    signature = signature_of(fn)
    if schedule is not None:
        run_passes(ctx, module, common_stage_passes("scheduled", schedule=schedule))
    return module, signature


def run_tiled(
    source: str,
    inputs: Sequence[Arr],
    *,
    specialize: bool = True,
    threads: int = 1,
    schedule: Any = None,
    min_rewrites: int = 1,
    **options: Any,
) -> None:
    """Tile, compile, run and compare `source` with the reference."""
    entry = analyze(source, "<test>").get(None).name
    checked = analyze(source, "<test>").get(None)
    arrays, sizes = reference.prepare_inputs(gen_def(checked), list(inputs))
    want = reference.run(parse_tc(source), entry, arrays)
    want = want if isinstance(want, tuple) else (want,)
    module, signature = affine_module(source, sizes if specialize else None, schedule)
    count = register_tile(module, **options)
    assert count >= min_rewrites, "the pass did not rewrite the nest"
    module.verify()
    ctx = make_context()
    for stage in ("loops", "llvm"):
        run_passes(ctx, module, stage_passes(stage))
    cpu = compile_cpu(module)
    cpu.set_num_threads(threads)
    launcher = CpuLauncher(cpu.address(entry), signature, owner=cpu)
    outs = [
        np.full_like(w, np.nan) if w.dtype.kind == "f" else np.empty_like(w)
        for w in want
    ]
    launcher(arrays, outs, sizes)
    red = max(1, max((a.shape[-1] for a in arrays if a.ndim), default=1))
    tol = 1e-5 * math.sqrt(red) + 2e-6
    for got, w in zip(outs, want, strict=True):
        if got.dtype.kind == "f":
            scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
            np.testing.assert_allclose(got, w, rtol=tol, atol=tol * scale)
        else:
            np.testing.assert_array_equal(got, w)


def rand(rng: np.random.Generator, *shape: int) -> Arr:
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


CONFIGS = [
    pytest.param(
        dict(vector_width=8, rows=2, vectors=2, pack="always"), id="8x2x2-pack"
    ),
    pytest.param(dict(vector_width=16), id="16-auto"),
    pytest.param(
        dict(vector_width=4, rows=3, vectors=1, pack="never"), id="4x3x1-nopack"
    ),
]


# --------------------------------------------------------------------------
# mode 1: vectors along an output loop
# --------------------------------------------------------------------------


@pytest.mark.parametrize("options", CONFIGS)
@pytest.mark.parametrize("specialize", [True, False], ids=["static", "symbolic"])
@pytest.mark.parametrize(
    "shape", [(10, 32, 40), (7, 5, 3), (33, 17, 61), (1, 1, 1), (0, 3, 4), (5, 0, 9)]
)
def test_matmul(shape: tuple[int, int, int], specialize: bool, options: Any) -> None:
    m, k, n = shape
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    run_tiled(
        MATMUL,
        [rand(rng, m, k), rand(rng, k, n)],
        specialize=specialize,
        threads=2,
        **options,
    )


@pytest.mark.parametrize("pack", ["always", "never"])
@pytest.mark.parametrize("shape", [(32, 9, 16), (48, 33, 16), (16, 5, 11), (64, 3, 7)])
def test_one_vector_of_columns_takes_16_rows(shape: tuple[int, int, int], pack: str):
    # 16 lanes and at most one vector of columns: strips of 16 rows
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    run_tiled(
        MATMUL,
        [rand(rng, m, k), rand(rng, k, n)],
        threads=2,
        vector_width=16,
        pack=pack,
    )


@pytest.mark.parametrize("options", CONFIGS)
@pytest.mark.parametrize("shape", [(19, 23, 37), (8, 16, 32)])
def test_transposed_operand_rows_are_packed(
    shape: tuple[int, ...], options: Any
) -> None:
    m, k, n = shape
    rng = np.random.default_rng(1)
    for specialize in (True, False):
        run_tiled(
            ATB, [rand(rng, k, m), rand(rng, k, n)], specialize=specialize, **options
        )


def test_row_and_panel_packing_are_chosen_for_strided_operands() -> None:
    module, _ = affine_module(ATB, {"M": 64, "K": 64, "N": 1024})
    assert register_tile(module, vector_width=8) == 1
    text = str(module)
    assert text.count("memref.alloc") == 2  # the A rows and the B panel
    assert text.count("memref.dealloc") == 2
    module, _ = affine_module(MATMUL, {"M": 64, "K": 64, "N": 1024})
    assert register_tile(module, vector_width=8) == 1
    assert str(module).count("memref.alloc") == 1  # A rows are contiguous in k
    module, _ = affine_module(MATMUL, {"M": 64, "K": 64, "N": 64})
    assert register_tile(module, vector_width=8) == 1
    assert "memref.alloc" not in str(module)  # 256-byte rows: no conflicts


def test_gathered_and_copied_panels_in_one_band() -> None:
    # A(r_k, n) is copied into its panel, B(n, r_k) gathered into another; the
    # gather loop once rebound the copy loop's list of column offsets
    # (internal error: '_Strip' object is not subscriptable).
    src = (
        "def f(float(M, K) X, float(K, N) A, float(N, K) B) -> (O) "
        "{ O(m, n) +=! X(m, r_k) * A(r_k, n) * B(n, r_k) }"
    )
    rng = np.random.default_rng(3)
    for m, k, n in [(64, 32, 256), (19, 7, 45)]:
        run_tiled(
            src,
            [rand(rng, m, k), rand(rng, k, n), rand(rng, n, k)],
            vector_width=16,
            pack="always",
        )


@pytest.mark.parametrize("specialize", [True, False], ids=["static", "symbolic"])
@pytest.mark.parametrize("shape", [(2, 3, 5, 11, 3, 3), (1, 4, 8, 19, 1, 2)])
def test_conv2d(shape: tuple[int, ...], specialize: bool) -> None:
    n, c, k, hw, kh, kw = shape
    rng = np.random.default_rng(2)
    image = rand(rng, n, c, hw + kh - 1, hw + kw - 1)
    weights = rand(rng, k, c, kh, kw)
    run_tiled(CONV, [image, weights], specialize=specialize, vector_width=8, rows=3)


def test_einsum_keeps_the_outer_output_loop() -> None:
    rng = np.random.default_rng(3)
    x, y = rand(rng, 3, 5, 7), rand(rng, 7, 21)
    run_tiled(EINSUM, [x, y], vector_width=8, rows=2, threads=2)
    module, _ = affine_module(EINSUM, {"A": 3, "B": 5, "C": 7, "D": 21})
    assert register_tile(module, vector_width=8, rows=2) == 1
    text = str(module)
    assert "vector.broadcast" in text and "math.fma" in text


def test_einsum_copies_the_shared_panel_once_per_thread() -> None:
    # Scheduled for 2 threads, `a` is cut into one tile per thread: Y's
    # panels, which do not vary along `a`, are copied before the serial loop
    # over a thread's `a`s, not once per `a`.
    from tcdialect.poly.schedule import ScheduleOptions

    schedule = ScheduleOptions(threads=2)
    sizes = {"A": 4, "B": 48, "C": 16, "D": 256}
    rng = np.random.default_rng(3)
    x, y = rand(rng, 4, 48, 16), rand(rng, 16, 256)
    run_tiled(EINSUM, [x, y], schedule=schedule, threads=2, vector_width=8)
    module, _ = affine_module(EINSUM, sizes, schedule)
    assert register_tile(module, vector_width=8) == 1
    allocs = [op for op in module.walk() if isinstance(op, memref.AllocOp)]
    assert allocs
    for op in allocs:
        ivs: list[str | None] = []
        block = op.parent_block()
        while block is not None:
            ivs += [arg.name_hint for arg in block.args]
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        assert "a" not in ivs, ivs


def test_expression_ops_and_constants_are_vectorised() -> None:
    source = """def f(float(M,K) A, float(K,N) B, float(N) s) -> (C) {
      C(m, n) +=! (A(m, r_k) + 1.5) * fmax(B(r_k, n), s(n)) - 0.25
    }"""
    rng = np.random.default_rng(4)
    run_tiled(
        source, [rand(rng, 9, 6), rand(rng, 6, 29), rand(rng, 29)], vector_width=8
    )


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_min_reductions(kind: str) -> None:
    source = f"""def f(float(M,K) A, float(K,N) B) -> (C) {{
      C(m, n) {kind}=! A(m, r_k) + B(r_k, n)
    }}"""
    rng = np.random.default_rng(5)
    for specialize in (True, False):
        run_tiled(
            source,
            [rand(rng, 11, 13), rand(rng, 13, 27)],
            specialize=specialize,
            vector_width=8,
            rows=4,
        )


def test_integer_reduction() -> None:
    source = """def f(int32(M,K) A, int32(K,N) B) -> (C) {
      C(m, n) +=! A(m, r_k) * B(r_k, n)
    }"""
    rng = np.random.default_rng(6)
    a = rng.integers(-50, 50, (7, 12), dtype=np.int32)
    b = rng.integers(-50, 50, (12, 21), dtype=np.int32)
    run_tiled(source, [a, b], vector_width=8, rows=3)
    run_tiled(source, [a, b], specialize=False, vector_width=16)


def test_f64_uses_half_the_lanes() -> None:
    source = "def mm(double(M,K) A, double(K,N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((5, 9)), rng.standard_normal((9, 19))
    run_tiled(source, [a, b], vector_width=8)
    module, _ = affine_module(source, {"M": 5, "K": 9, "N": 19})
    register_tile(module, vector_width=8)
    assert "vector<4xf64>" in str(module) and "vector<8xf64>" not in str(module)


# --------------------------------------------------------------------------
# mode 1: the masked vectors of two rows packed into one (pair tails)
# --------------------------------------------------------------------------

BIAS_RELU = """def f(float(M,K) A, float(K,N) B, float(N) c) -> (C) {
  C(m, n) +=! A(m, r_k) * B(r_k, n)
  C(m, n) = C(m, n) + c(n)
  C(m, n) = fmax(C(m, n), 0.0)
}"""
ROW_OPERAND = """def f(float(M,K,N) X, float(K) w) -> (C) {
  C(m, n) +=! X(m, r_k, n) * w(r_k)
}"""
INT_MM = (
    "def f(int32(M,K) A, int32(K,N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
)
F64_MM = (
    "def f(double(M,K) A, double(K,N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
)


def _pair_case(source: str, shapes: list[tuple[int, ...]], kind: str) -> list[Arr]:
    rng = np.random.default_rng(sum(map(sum, shapes)))
    if kind == "i":
        return [rng.integers(-50, 50, s, dtype=np.int32) for s in shapes]
    if kind == "d":
        return [rng.standard_normal(s) for s in shapes]
    return [rand(rng, *s) for s in shapes]


PAIR_CASES = {
    # 22 = 16 + 6 columns, 6 rows: strips of 4 and 2 rows, all paired
    "matmul": (MATMUL, [(6, 9), (9, 22)], "f", 16),
    # 5 rows: rows 0-3 paired, the remainder row keeps its masked vector
    "odd-rows": (MATMUL, [(5, 7), (7, 38)], "f", 16),
    # the folded bias and ReLU run on each row's half
    "bias-relu": (BIAS_RELU, [(4, 9), (9, 21), (21,)], "f", 16),
    # an operand moved by the row loop: its two rows' tails joined
    "row-operand": (ROW_OPERAND, [(4, 5, 24), (5,)], "f", 16),
    # group-conv-like rows of 22 output columns
    "conv": (CONV, [(2, 3, 7, 24), (4, 3, 3, 3)], "f", 16),
    "int32": (INT_MM, [(4, 6), (6, 21)], "i", 16),
    # 4 lanes of f64 with vector-width 8: tails of 2 = half a vector
    "f64": (F64_MM, [(4, 5), (5, 18)], "d", 8),
}


@pytest.mark.parametrize("pair_tails", [True, False], ids=["paired", "unpaired"])
@pytest.mark.parametrize("name", list(PAIR_CASES))
def test_pair_tails(name: str, pair_tails: bool) -> None:
    source, shapes, kind, width = PAIR_CASES[name]
    inputs = _pair_case(source, shapes, kind)
    opts: dict[str, Any] = dict(vector_width=width, rows=4, pack="never")
    run_tiled(source, inputs, threads=2, pair_tails=pair_tails, **opts)
    checked = analyze(source, "<test>").get(None)
    _, sizes = reference.prepare_inputs(gen_def(checked), inputs)
    module, _ = affine_module(source, sizes)
    register_tile(module, pair_tails=pair_tails, **opts)
    text = str(module)
    lanes = width * 32 // (64 if kind == "d" else 32)
    half_mask = f"vector<{lanes // 2}xi1>"
    assert (half_mask in text) == pair_tails
    assert ("vector.shuffle" in text) == pair_tails


def test_pair_tails_need_a_static_column_extent() -> None:
    module, _ = affine_module(MATMUL, None)
    register_tile(module, vector_width=16, rows=4, pack="never")
    assert "vector.shuffle" not in str(module)


# --------------------------------------------------------------------------
# mode 1 with gathered panels, mode 2: vectors along a reduction loop
# --------------------------------------------------------------------------


@pytest.mark.parametrize("pack", ["auto", "never"])
@pytest.mark.parametrize("specialize", [True, False], ids=["static", "symbolic"])
@pytest.mark.parametrize(
    "shape", [(5, 20, 6), (9, 40, 37), (1, 1, 1), (3, 0, 2), (17, 33, 8)]
)
def test_mlp(shape: tuple[int, int, int], specialize: bool, pack: str) -> None:
    b, k, n = shape
    rng = np.random.default_rng(b + k + n)
    run_tiled(
        MLP,
        [rand(rng, b, k), rand(rng, n, k)],
        specialize=specialize,
        threads=2,
        # a static reduction shorter than a vector is left alone
        min_rewrites=0 if specialize and k < 8 else 1,
        vector_width=8,
        rows=2,
        vectors=2,
        pack=pack,
    )


def test_mlp_modes() -> None:
    # many rows: W's rows gathered into the panel, vectors along n
    module, _ = affine_module(MLP, {"B": 96, "K": 64, "N": 64})
    assert register_tile(module, vector_width=8) == 1
    text = str(module)
    assert "%lane" in text and "vector.reduction" not in text
    # few rows (or no packing): vectors along k, then horizontal reductions
    for sizes, pack in (({"B": 90, "K": 64, "N": 64}, "auto"), (None, "never")):
        module, _ = affine_module(MLP, sizes)
        assert register_tile(module, vector_width=8, pack=pack) == 1
        text = str(module)
        assert "vector.reduction <add>" in text and "memref.alloc" not in text


@pytest.mark.parametrize("n", [1, 7, 16, 37])
def test_row_reductions_along_the_contiguous_loop(n: int) -> None:
    source = """def f(float(R,N) A, float(N) x) -> (s, mx) {
      s(r) +=! A(r, r_n) * x(r_n)
      mx(r) max=! A(r, r_n)
    }"""
    rng = np.random.default_rng(n)
    inputs = [rand(rng, 11, n), rand(rng, n)]
    # static reductions shorter than a vector are left alone; unknown ones
    # run their remainders
    run_tiled(source, inputs, vector_width=8, min_rewrites=2 if n >= 8 else 0)
    run_tiled(source, inputs, specialize=False, vector_width=8, min_rewrites=2)


def test_mode2_needs_a_reduction_of_a_vector_or_more() -> None:
    source = "def f(float(R,N) A) -> (s) { s(r) +=! A(r, r_n) }"
    for n, rewrites in ((7, 0), (8, 1)):
        module, _ = affine_module(source, {"R": 5, "N": n})
        assert register_tile(module, vector_width=8) == rewrites
    module, _ = affine_module(source, None)  # unknown length: vectorised
    assert register_tile(module, vector_width=8) == 1


def test_integer_mode2_reduction() -> None:
    source = "def f(int32(R,N) A) -> (s) { s(r) +=! A(r, r_n) }"
    a = np.random.default_rng(8).integers(-1000, 1000, (6, 45), dtype=np.int32)
    run_tiled(source, [a], vector_width=8)
    run_tiled(source, [a], specialize=False, vector_width=8)


# --------------------------------------------------------------------------
# after the isl scheduler; the catalog
# --------------------------------------------------------------------------


@pytest.mark.parametrize("tile", [None, (32, 64, 16), (5, 7, 3)])
def test_after_isl_tiling(tile: tuple[int, ...] | None) -> None:
    from tcdialect.poly.schedule import ScheduleOptions

    schedule = ScheduleOptions(tile=tile)
    rng = np.random.default_rng(9)
    for source, inputs in (
        (MATMUL, [rand(rng, 37, 45), rand(rng, 45, 70)]),
        (ATB, [rand(rng, 45, 37), rand(rng, 45, 70)]),
        (MLP, [rand(rng, 37, 45), rand(rng, 70, 45)]),
    ):
        for specialize in (True, False) if tile is None else (True,):
            run_tiled(
                source,
                inputs,
                specialize=specialize,
                schedule=schedule,
                threads=2,
                vector_width=8,
            )


def test_constant_subscripts_after_isl() -> None:
    """Unit extents become constant subscripts in the scheduled code."""
    from tcdialect.poly.schedule import ScheduleOptions

    source = """def maxpool(float(B, C, H, W) I) -> (O) {
      O(b, c, h, w) max=! I(b, c, 2 * h + r_i, 2 * w + r_j) where r_i in 0:2, r_j in 0:2
    }"""
    rng = np.random.default_rng(10)
    # the 2x2 window is shorter than a vector: left alone, still correct
    run_tiled(
        source,
        [rand(rng, 1, 2, 7, 5)],
        schedule=ScheduleOptions(),
        vector_width=16,
        min_rewrites=0,
    )
    run_tiled(
        MLP,
        [rand(rng, 1, 32), rand(rng, 7, 32)],
        schedule=ScheduleOptions(),
        vector_width=16,
    )


def _catalog_params() -> list[Any]:
    return [pytest.param(k, id=k.name) for k in catalog.KERNELS]


@pytest.mark.parametrize("kernel", _catalog_params())
def test_catalog_kernels_stay_correct(kernel: Any) -> None:
    """Every catalog kernel, whatever the pass rewrites in it."""
    sizes = kernel.sizes[0]
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    want = want if isinstance(want, tuple) else (want,)
    checked = analyze(kernel.source, "<test>").get(kernel.entry)
    arrays, bound = reference.prepare_inputs(gen_def(checked), inputs)
    module = ModuleOp([gen_def(checked)])
    ctx = make_context()
    run_passes(ctx, module, passes_to("affine", format_sizes(bound)))
    fn = next(
        op
        for op in module.ops
        if isinstance(op, FuncOp) and op.sym_name.data == checked.name
    )
    signature = signature_of(fn)
    run_passes(
        ctx,
        module,
        [RegisterTilePass(vector_width=8, rows=3, vectors=2, pack="always")],
    )
    for stage in ("loops", "llvm"):
        run_passes(ctx, module, stage_passes(stage))
    cpu = compile_cpu(module)
    launcher = CpuLauncher(cpu.address(checked.name), signature, owner=cpu)
    outs = [np.empty_like(w) for w in want]
    launcher(arrays, outs, bound)
    rtol = 1e-5 * math.sqrt(max(1, kernel.red(sizes))) + 2e-6
    for got, w in zip(outs, want, strict=True):
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, w, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(got, w)


# --------------------------------------------------------------------------
# what is left alone; options
# --------------------------------------------------------------------------

LEFT_ALONE = {
    "elementwise": "def f(float(M,N) A, float(M,N) B) -> (C) { C(m, n) = A(m, n) * B(m, n) }",
    "gather": "def f(float(N) A, int32(M) I) -> (O) { O(m) +=! A(I(m)) * A(r_n) }",
    "strided-operands": """def f(float(K,M) A, float(N,K) B) -> (O) {
      O(m, n) +=! A(r_k, m) * B(n, r_k)
    }""",
}


@pytest.mark.parametrize("name", list(LEFT_ALONE))
def test_left_alone(name: str) -> None:
    module, _ = affine_module(LEFT_ALONE[name], None)
    before = str(module)
    if name == "strided-operands":
        # vectors along n need B's rows gathered: left alone without packing
        assert register_tile(module, vector_width=8, pack="never") == 0
    else:
        assert register_tile(module, vector_width=8) == 0
    assert str(module) == before
    assert not any(op.dialect_name() == vector.Vector.name for op in module.walk())


def test_options() -> None:
    module, _ = affine_module(MATMUL, None)
    with pytest.raises(TCError, match="pack must be"):
        register_tile(module, pack="sometimes")
    with pytest.raises(TCError, match="must be >= 0"):
        register_tile(module, rows=-1)
    assert RegisterTilePass.name == "register-tile"
    spec = RegisterTilePass.from_pass_spec(
        RegisterTilePass(vector_width=8, rows=4, vectors=1, pack="never").spec()
    )
    assert (spec.vector_width, spec.rows, spec.vectors, spec.pack) == (8, 4, 1, "never")
    assert spec.pair_tails
    off = RegisterTilePass.from_pass_spec(RegisterTilePass(pair_tails=False).spec())
    assert not off.pair_tails


def test_default_width_does_not_depend_on_the_host() -> None:
    # 8 f32 lanes (256-bit vectors) on every machine; a target passes its own
    assert RegisterTilePass().vector_width == 8
    module, _ = affine_module(MATMUL, {"M": 64, "K": 8, "N": 256})
    assert register_tile(module) == 1
    assert "vector<8xf32>" in str(module)
    assert "vector<16xf32>" not in str(module)


@pytest.mark.parametrize("width", [0, -8, 3, 12])
def test_width_must_be_a_positive_power_of_two(width: int) -> None:
    module, _ = affine_module(MATMUL, None)
    with pytest.raises(TCError, match="vector-width must be a positive power of two"):
        register_tile(module, vector_width=width)
