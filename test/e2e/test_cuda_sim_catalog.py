"""Every catalog kernel run in the GPU simulator agrees with the reference interpreter.

Each kernel of test/unit/test_reference_catalog.py is compiled for the
`cuda-sim` target under the default `CudaOptions` and under every other one
of TC's presets (alternating between kernels, so each preset meets half of
the catalog; test/gpu runs every preset on a device), and run at its
smallest size without a 0 extent (compiling takes most of the time: one
size per kernel and options keeps the file near a minute). The simulator checks what a GPU would leave undefined (races,
barriers, out-of-bounds accesses) and raises on it; the outputs are
compared with `tcdialect.reference.run` as in test_cpu_catalog.py.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import PRESETS, CudaOptions
from tcdialect.frontend import parse_tc


def _params() -> list[Any]:
    out = []
    for i, k in enumerate(catalog.KERNELS):
        sizes = min(
            (s for s in k.sizes if 0 not in s.values()), key=lambda s: sum(s.values())
        )
        label = ",".join(f"{n}={v}" for n, v in sizes.items())
        for preset in ["default", *list(PRESETS)[i % 2 :: 2]]:
            out.append(pytest.param(k, sizes, preset, id=f"{k.name}[{label}]-{preset}"))
    return out


@pytest.mark.parametrize(("kernel", "sizes", "preset"), _params())
def test_catalog_in_the_gpu_simulator(
    kernel: Any, sizes: dict[str, int], preset: str
) -> None:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    before = [np.copy(x) for x in inputs]
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    options = CudaOptions() if preset == "default" else CudaOptions.preset(preset)
    k = tcdialect.define(
        kernel.source, kernel.entry, target="cuda-sim", options=options
    )
    got = k(*inputs)
    check_outputs(got, want, kernel.red(sizes))
    for x, b in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(x, b)  # inputs are not modified
