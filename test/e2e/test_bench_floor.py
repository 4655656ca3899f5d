"""The benchmark's stream floor (bench/floor.py) moves exactly a kernel's arrays.

Only our floor is checked here: the torch floor needs the `bench` extra,
which `make test` does not install.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import floor


@pytest.mark.parametrize(
    ("shape", "rows"),
    [
        ((4096, 1024), 64),
        ((128, 36864), 64),
        ((96,), 32),
        ((4099,), 1),
        ((2, 3, 8), 16),
    ],
)
def test_view2_is_a_contiguous_view_with_power_of_two_rows(
    shape: tuple[int, ...], rows: int
) -> None:
    a = np.zeros(shape, dtype=np.float32)
    v = floor.view2(a)
    assert v.shape == (rows, a.size // rows)
    assert np.shares_memory(v, a) and v.flags.c_contiguous


@pytest.mark.parametrize("threads", [1, 2])
def test_ours_floor_writes_every_output_element(threads: int) -> None:
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal((33, 70)).astype(np.float32),
        np.ones(4099, np.float32),
    ]
    outputs = [
        np.full((5, 64), np.nan, np.float32),
        np.full(2100 * 1000, 7, np.float32),
    ]
    run = floor.ours_floor(inputs, outputs, threads)
    assert all(not o.any() for o in outputs)
    outputs[1][123] = 1.0
    run()
    assert not outputs[1].any()
