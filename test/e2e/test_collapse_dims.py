"""Definitions that `collapse-dims` rewrites compute what the reference does.

Each program walks some trailing dimensions whole (and some not), under the
three fusion strategies and with generic code (dynamic sizes: nothing
collapses), against the reference interpreter. The `scheduled` IR shows
which arrays collapsed, so a test fails if the pass stops applying.
"""

from __future__ import annotations

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc

#: name -> (source, input shapes, a type the collapsed `scheduled` IR has, or
#: None when nothing may collapse)
PROGRAMS: dict[str, tuple[str, list[tuple[int, ...]], str | None]] = {
    # the reduction loops r_h, r_w (two perfectly nested affine.fors)
    "global_pool": (
        "def f(float(N, C, H, W) X) -> (O) {\n"
        "    O(n, c) +=! X(n, c, r_h, r_w)\n"
        "    O(n, c) = O(n, c) / float(H * W)\n"
        "}",
        [(2, 3, 5, 7)],
        "%X: memref<2x3x35xf32>",
    ),
    # an in-place update; B(c) keeps c apart, so h, w collapse but not c
    "bias_update": (
        "def f(float(N, C, H, W) X, float(C) B) -> (O) {\n"
        "    O(n, c, h, w) = X(n, c, h, w) * 2.0\n"
        "    O(n, c, h, w) = O(n, c, h, w) + B(c)\n"
        "}",
        [(2, 3, 4, 5), (3,)],
        "%O: memref<2x3x20xf32>",
    ),
    # a reduction over the channel with whole spatial dimensions, and a
    # temporary that collapses with them
    "channel_sum": (
        "def f(float(N, C, H, W) X) -> (O) {\n"
        "    T(n, c, h, w) = X(n, c, h, w) * X(n, c, h, w)\n"
        "    O(n, h, w) +=! T(n, r_c, h, w)\n"
        "}",
        [(2, 4, 3, 6)],
        "%O: memref<2x18xf32>",
    ),
    # a shifted read: w is computed in Y's subscript, so nothing collapses
    "shifted": (
        "def f(float(N, H, W) X, float(N, H, V) Y) -> (O) {\n"
        "    O(n, h, w) = X(n, h, w) + Y(n, h, w + 1)\n"
        "}",
        [(2, 3, 4), (2, 3, 5)],
        None,
    ),
    # a transpose: h, w are adjacent in X but swapped in O
    "transpose": (
        "def f(float(N, H, W) X) -> (O) {\n    O(n, w, h) = X(n, h, w)\n}",
        [(2, 3, 4)],
        None,
    ),
}


@pytest.mark.parametrize("fusion", ["max", "preserve3coincident", "min"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_collapsed_program_matches_reference(name: str, fusion: str) -> None:
    source, shapes, collapsed = PROGRAMS[name]
    rng = np.random.default_rng(len(name))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    (want,) = reference.run(parse_tc(source, f"{name}.tc"), None, arrays)
    for specialize in (True, False):
        k = tcdialect.define(
            source,
            options=tcdialect.CpuOptions(
                fusion=fusion, specialize=specialize, threads=2
            ),
        )
        got = np.full(want.shape, np.nan, np.float32)  # no stale right answers
        k(*arrays, out=got)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        scheduled = k.ir(*arrays, stage="scheduled")
        if collapsed is not None and specialize:
            assert collapsed in scheduled, scheduled
        else:
            args = scheduled.split("attributes")[0]
            for s in shapes:
                if len(s) >= 2 and specialize:
                    assert "x".join(map(str, s)) in args, args
