"""Every catalog kernel, under a random valid `CudaOptions`, agrees with the
reference interpreter in the GPU simulator.

test_cuda_sim_catalog.py covers the defaults and TC's presets; here each
kernel gets one option set drawn from its name (`random_options`): tiles
that do not divide the loops (and untiled members), blocks larger than the
work and blocks of odd sizes, grids smaller than the tiles (the cyclic
mapping strides over them), every fusion strategy, reductions shared by a
warp or kept in each thread, memory promotion on and off, specialised or
generic sizes, and every intra-tile fusion strategy. The kernel runs at its
largest catalog size whose outputs have at most 4096 elements, so that
tiles are cut at the boundary.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import FUSIONS, CudaOptions
from tcdialect.frontend import parse_tc


def random_options(rng: np.random.Generator) -> CudaOptions:
    """A valid `CudaOptions` with the choices of the module docstring."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    tile = tuple(
        int(pick([0, 1, 2, 3, 5, 7, 16, 32])) for _ in range(int(rng.integers(1, 5)))
    )
    block: list[int] = []
    for _ in range(int(rng.integers(1, 4))):
        room = 1024 // max(1, int(np.prod(block)))
        limit = 64 if len(block) == 2 else 1024
        block.append(int(min(pick([1, 2, 3, 7, 32, 64, 128]), room, limit)))
    grid = tuple(int(pick([1, 2, 3, 5, 256])) for _ in range(int(rng.integers(1, 4))))
    return CudaOptions(
        outer_fusion=pick(FUSIONS),
        tile=tile if rng.random() < 0.8 else None,
        block=tuple(block),
        grid=grid,
        match_library_calls=pick([None, True, False]),
        use_shared_memory=bool(rng.random() < 0.5),
        use_private_memory=bool(rng.random() < 0.5),
        specialize=bool(rng.random() < 0.7),
        intra_tile_fusion=pick(FUSIONS),
    )


def _params() -> list[Any]:
    out = []
    for k in catalog.KERNELS:
        rng = np.random.default_rng(zlib.crc32(k.name.encode()))
        options = random_options(rng)
        sizes = max(
            (s for s in k.sizes if int(np.prod(list(s.values()) or [1])) <= 4096),
            key=lambda s: sum(s.values()),
            default=k.sizes[0],
        )
        label = ",".join(f"{n}={v}" for n, v in sizes.items())
        out.append(pytest.param(k, sizes, options, id=f"{k.name}[{label}]"))
    return out


def test_random_options_are_varied() -> None:
    drawn = [p.values[2] for p in _params()]
    for field in (
        "outer_fusion",
        "intra_tile_fusion",
        "match_library_calls",
        "specialize",
    ):
        assert len({getattr(o, field) for o in drawn}) > 1, field
    assert any(o.tile is None for o in drawn)
    assert any(o.tile and 0 in o.tile for o in drawn)
    assert any(len(o.block) == 3 for o in drawn)


@pytest.mark.parametrize(("kernel", "sizes", "options"), _params())
def test_catalog_under_random_options(
    kernel: Any, sizes: dict[str, int], options: CudaOptions
) -> None:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + 1)
    inputs = kernel.inputs(rng, sizes)
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    k = tcdialect.define(
        kernel.source, kernel.entry, target="cuda-sim", options=options
    )
    try:
        got = k(*inputs)
    except tcdialect.TCError as e:
        fields = dataclasses.asdict(options)
        pytest.fail(f"{kernel.name} {sizes} under {fields}: {e}", pytrace=False)
    check_outputs(got, want, kernel.red(sizes))
