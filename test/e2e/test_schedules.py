"""Every catalog kernel agrees with the reference under every schedule option.

Each kernel runs under each fusion strategy (max, preserve3coincident, min)
combined with each tiling (automatic, none, small sizes that divide no extent,
and a size list with an untiled member). To keep the run short, the option
sets rotate over the kernel's size sets and over specialised/generic code, so
every kernel meets every option set once.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit, test/e2e are on the pythonpath
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc

FUSIONS = ("max", "preserve3coincident", "min")
TILES: tuple[tuple[int, ...] | None, ...] = (None, (0,), (3, 5, 2), (2, 0, 7, 4))
OPTION_SETS = list(itertools.product(FUSIONS, TILES))


def _params() -> list[Any]:
    out = []
    for k in catalog.KERNELS:
        for i, (fusion, tile) in enumerate(OPTION_SETS):
            sizes = k.sizes[i % len(k.sizes)]
            specialize = i % 2 == 0
            label = ",".join(f"{n}={v}" for n, v in sizes.items())
            tiles = "auto" if tile is None else "x".join(map(str, tile))
            mode = "spec" if specialize else "generic"
            out.append(
                pytest.param(
                    k,
                    sizes,
                    tcdialect.CpuOptions(
                        specialize=specialize, fusion=fusion, tile=tile, threads=2
                    ),
                    id=f"{k.name}[{label}]-{fusion}-{tiles}-{mode}",
                )
            )
    return out


@pytest.mark.parametrize(("kernel", "sizes", "options"), _params())
def test_catalog_under_schedule(
    kernel: Any, sizes: dict[str, int], options: tcdialect.CpuOptions
) -> None:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    k = tcdialect.define(kernel.source, kernel.entry, options=options)
    check_outputs(k(*inputs), want, kernel.red(sizes))
