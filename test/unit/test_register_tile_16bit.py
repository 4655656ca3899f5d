"""`register-tile` on float16 and bfloat16 contractions, and 16-bit reductions in recurrences.

With `fma16`, a 16-bit product accumulating in f32 becomes an f32 FMA of the
extended factors, the factors copied extended where the plan packs them.
Multiples of 1/4 as inputs make every product exact in 16 bits and every f32
sum exact in any order, so the kernels must agree with the reference
interpreter bit for bit whatever the packing, the tile and the remainders;
with random inputs the contraction gives the exact sum rounded once (the
reference rounds each product to 16 bits first). A reduction into a 16-bit
tensor inside a recurrence accumulates in a float32 slice of one step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_register_tile import (  # test/unit is on pytest's pythonpath
    ATB,
    CONV,
    MATMUL,
    MLP,
    affine_module,
    run_tiled,
)

import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.jit import compile_cpu
from tcdialect.bfloat16 import from_bfloat16, to_bfloat16
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import make_context, run_passes, stage_passes
from tcdialect.runtime.cpu import CpuLauncher
from tcdialect.transforms.register_tile import register_tile

Arr = np.ndarray[Any, Any]


def _typed(source: str, elem: str) -> str:
    return source.replace("float(", f"{elem}(")


def _quarters(rng: np.random.Generator, elem: str, *shape: int) -> Arr:
    """Multiples of 1/4 in [-1, 1] as `elem` arrays (bfloat16: uint16 bits)."""
    x = (rng.integers(-4, 5, shape) / 4).astype(np.float32)
    return to_bfloat16(x) if elem == "bfloat16" else x.astype(np.float16)


CASES = [
    # element type, source, shapes, options
    ("float16", MATMUL, [(13, 9), (9, 37)], dict(vector_width=8, rows=3, vectors=2)),
    # a masked panel copy (70 columns by 16 lanes)
    ("bfloat16", MATMUL, [(19, 6), (6, 70)], dict(vector_width=16, pack="always")),
    ("bfloat16", ATB, [(7, 11), (7, 29)], dict(vector_width=8, rows=2, pack="always")),
    # a gathered panel: 8 x 8 blocks transposed in registers, then lane by lane
    ("float16", MLP, [(9, 11), (19, 11)], dict(vector_width=8, rows=2, pack="always")),
    ("bfloat16", MLP, [(5, 40), (3, 40)], dict(vector_width=8, pack="never")),
    ("float16", CONV, [(2, 3, 8, 12), (7, 3, 3, 3)], dict(vector_width=8, rows=3)),
]


@pytest.mark.parametrize(
    ("elem", "source", "shapes", "options"),
    [
        pytest.param(*c, id=f"{c[1].split()[1].split('(')[0]}-{c[0]}-{i}")
        for i, c in enumerate(CASES)
    ],
)
def test_contractions_match_the_reference(
    elem: str, source: str, shapes: list[tuple[int, ...]], options: dict[str, Any]
) -> None:
    rng = np.random.default_rng(len(shapes[0]) + shapes[0][0])
    inputs = [_quarters(rng, elem, *s) for s in shapes]
    run_tiled(_typed(source, elem), inputs, fma16=True, **options)


def test_the_contraction_rounds_once() -> None:
    """Random float16 inputs: the FMA kernel's result is the exact sum of
    the exact products rounded once to float16 (within the f32
    accumulation's error), which the reference, rounding every product to
    float16, is not."""
    source = _typed(MATMUL, "float16")
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (6, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 16)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    sizes = {"M": 6, "K": 64, "N": 16}
    module, signature = affine_module(source, sizes)
    assert register_tile(module, vector_width=8, fma16=True) == 1
    assert "math.fma" in str(module)
    ctx = make_context()
    for stage in ("loops", "llvm"):
        run_passes(ctx, module, stage_passes(stage))
    cpu = compile_cpu(module)
    got = np.empty((6, 16), np.float16)
    CpuLauncher(cpu.address("mm"), signature, owner=cpu)([a, b], [got], sizes)
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= 0.51 * ulp)
    (ref,) = reference.run(parse_tc(source), None, [a, b])
    assert np.any(ref != got)  # the reference rounded the products


RECURRENCE = """
def scan(float(B, T) X, float(B, T, N) Y) -> (S, P) {
    S(b, t) = X(b, t)
    P(b, t) = X(b, t) where t in 0:T
    for t in 1:T {
        P(b, t) +=! S(b, t - 1) * Y(b, t, r_n)
        S(b, t) = S(b, t - 1) * 0.5 + P(b, t)
    }
}
"""


@pytest.mark.parametrize(
    ("elem", "target"),
    [("float16", "cpu"), ("bfloat16", "cuda-sim")],
)
def test_16_bit_reduction_in_a_recurrence(elem: str, target: str) -> None:
    """The step dimension is the second: the float32 accumulator is one
    step's slice, rounded into the step of the target."""
    source = _typed(RECURRENCE, elem)
    rng = np.random.default_rng(12)
    inputs = [_quarters(rng, elem, 3, 5), _quarters(rng, elem, 3, 5, 4)]
    want = reference.run(parse_tc(source), None, inputs)
    got = tcdialect.define(source, target=target)(*inputs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        if elem == "bfloat16":
            g, w = from_bfloat16(g), from_bfloat16(w)
        np.testing.assert_array_equal(g, w)
