"""Catalog kernels agree with the reference under every schedule option.

The option sets are each fusion strategy (max, preserve3coincident, min)
combined with each tiling (automatic, none, small sizes that divide no extent,
and a size list with an untiled member). To keep the run short, each kernel
meets every fourth option set: one tiling (the kernels take the four in
turn) under every fusion strategy, in specialised and in generic code, so
that every option set meets a quarter of the kernels; the option sets rotate
over the kernel's size sets.
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
    for j, k in enumerate(k for k in catalog.KERNELS if k.sweeps):
        for i, (fusion, tile) in enumerate(OPTION_SETS):
            if (i + j) % len(TILES):
                continue
            sizes = k.sizes[i % len(k.sizes)]
            specialize = (i // len(TILES) + j // len(TILES)) % 2 == 0
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


#: Chained contractions that all lead with a batch loop: max fusion runs them
#: in sequence inside one parallel loop over it (poly.schedule._shared_prefix).
#: Each entry: source, input shapes (size names), sizes, reduction length.
SHARED_BATCH = {
    "mode_products": (
        """
        def modes(float(D, N) W, float(E, K) V, float(M, K, N) X) -> (Y) {
            XW(m, k, d) +=! X(m, k, r_n) * W(d, r_n)
            Y(m, e, d) +=! XW(m, r_k, d) * V(e, r_k)
        }""",
        [("D", "N"), ("E", "K"), ("M", "K", "N")],
        {"M": 13, "K": 7, "N": 9, "D": 19, "E": 5},
        7 * 9,
    ),
    "batched_matmul_chain": (
        """
        def chain(float(B, I, R) A, float(B, R, J) W, float(B, J, K) V) -> (C) {
            T(b, i, j) +=! A(b, i, r_r) * W(b, r_r, j)
            C(b, i, k) +=! T(b, i, r_j) * V(b, r_j, k)
        }""",
        [("B", "I", "R"), ("B", "R", "J"), ("B", "J", "K")],
        {"B": 9, "I": 11, "R": 6, "J": 17, "K": 10},
        6 * 17,
    ),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("name", sorted(SHARED_BATCH))
def test_chained_contractions_share_the_batch_loop(
    name: str, specialize: bool, threads: int
) -> None:
    source, shapes, sizes, red = SHARED_BATCH[name]
    rng = np.random.default_rng(len(name) + threads)
    inputs = [
        rng.uniform(-1, 1, [sizes[d] for d in shape]).astype(np.float32)
        for shape in shapes
    ]
    want = reference.run(parse_tc(source), None, inputs)
    options = tcdialect.CpuOptions(specialize=specialize, threads=threads)
    k = tcdialect.define(source, options=options)
    assert k.ir(*inputs, stage="scheduled").count('"affine.parallel"') == 1
    check_outputs(k(*inputs), want, red)
