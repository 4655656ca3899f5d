"""Point loops rescheduled inside a tile (`CudaOptions.intra_tile_fusion`,
`tcdialect.poly.intra_tile`) compute what the reference interpreter does.

Each kernel is fused as much as possible outside (`outer_fusion="max"`:
one tile band over all statements) and rescheduled inside the tile with
each strategy; the GPU simulator runs the result and checks that no two
threads race and that every thread reaches every barrier. The sizes do not
divide the tiles, so partial tiles are covered too.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_cpu_catalog import check_outputs
from test_poly_intra_tile import MATMUL_BIAS, MLP2  # test/unit

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import FUSIONS, CudaOptions
from tcdialect.frontend import parse_tc

PRODUCER_CONSUMER = """
def pc(float(N, M) A) -> (B, C) {
  B(i, j) = A(i, j) * 2.0
  C(i, j) = B(i, j) + 1.0
}
"""
SOFTMAX = """
def softmax(float(N, D) I) -> (O, mx, sm) {
  mx(n) max=! I(n, d)
  O(n, d) = exp(I(n, d) - mx(n))
  sm(n) +=! O(n, d)
  O(n, d) = O(n, d) / sm(n)
}
"""
#: (source, entry, input shapes, elements reduced per output, tile sizes);
#: mlp2's tiles run in order in a block (what the threads exchange between
#: them keeps the old order there: test_poly_intra_tile.py).
KERNELS = {
    "pc": (PRODUCER_CONSUMER, "pc", [(37, 45)], 1, None),
    "pc-tiled": (PRODUCER_CONSUMER, "pc", [(37, 45)], 1, (16, 8)),
    "softmax": (SOFTMAX, "softmax", [(20, 40)], 40, None),
    "mmb": (MATMUL_BIAS, "mmb", [(24, 20), (20, 36), (36,)], 20, None),
    "mmb-tiled": (MATMUL_BIAS, "mmb", [(24, 20), (20, 36), (36,)], 20, (8, 16, 8)),
    "mlp2-tiled": (
        MLP2,
        "mlp2",
        [(2, 16), (9, 16), (9,), (1, 9), (1,)],
        16,
        (8, 16, 4),
    ),
}


@pytest.mark.parametrize("intra", FUSIONS)
@pytest.mark.parametrize("name", list(KERNELS))
def test_intra_tile_fusion_matches_reference(name: str, intra: str) -> None:
    source, entry, shapes, red, tile = KERNELS[name]
    rng = np.random.default_rng(len(name))
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    want = reference.run(parse_tc(source), entry, inputs)
    options = CudaOptions(outer_fusion="max", intra_tile_fusion=intra, tile=tile)
    k = tcdialect.define(source, entry, target="cuda-sim", options=options)
    check_outputs(k(*inputs), want, red)
