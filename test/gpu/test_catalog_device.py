"""Every catalog kernel on the GPU agrees with the reference interpreter, and
the simulator agrees with the GPU.

Each kernel of test/unit/test_reference_catalog.py runs on CUDA device 0
(NumPy inputs, copied in and out) under the default `CudaOptions`, the
default without shared and register promotion, and each of TC's presets, at its largest catalog size, against
`tcdialect.reference.run`; under the default options the simulator runs the
same kernel on the same inputs at its smallest size, and the two results
must agree to rounding.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog
from test_cpu_catalog import check_outputs

import tcdialect
from tcdialect import reference
from tcdialect.backend.cuda.options import PRESETS, CudaOptions
from tcdialect.frontend import parse_tc

#: "unpromoted": the default mapping without shared and register promotion.
OPTIONS = ["default", "unpromoted", *PRESETS]


def _params() -> list[Any]:
    out = []
    for k in catalog.KERNELS:
        sizes = max(k.sizes, key=lambda s: sum(s.values()))
        label = ",".join(f"{n}={v}" for n, v in sizes.items())
        for preset in OPTIONS:
            out.append(pytest.param(k, sizes, preset, id=f"{k.name}[{label}]-{preset}"))
    return out


def _options(preset: str) -> CudaOptions:
    if preset == "default":
        return CudaOptions()
    if preset == "unpromoted":
        return CudaOptions(use_shared_memory=False, use_private_memory=False)
    return CudaOptions.preset(preset)


@pytest.mark.parametrize(("kernel", "sizes", "preset"), _params())
def test_catalog_on_the_gpu(kernel: Any, sizes: dict[str, int], preset: str) -> None:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    before = [np.copy(x) for x in inputs]
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    k = tcdialect.define(
        kernel.source, kernel.entry, target="cuda", options=_options(preset)
    )
    check_outputs(k(*inputs), want, kernel.red(sizes))
    for x, b in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(x, b)  # inputs are not modified


@pytest.mark.parametrize(
    "kernel", [pytest.param(k, id=k.name) for k in catalog.KERNELS]
)
def test_the_simulator_agrees_with_the_gpu(kernel: Any) -> None:
    sizes = min(
        (s for s in kernel.sizes if 0 not in s.values()),
        key=lambda s: sum(s.values()),
        default=kernel.sizes[0],
    )
    inputs = kernel.inputs(np.random.default_rng(7), sizes)
    outs = []
    for target in ("cuda", "cuda-sim"):
        got = tcdialect.define(kernel.source, kernel.entry, target=target)(*inputs)
        outs.append(got if isinstance(got, tuple) else (got,))
    for device, sim in zip(*outs, strict=True):
        if device.dtype.kind == "f":
            np.testing.assert_allclose(device, sim, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(device, sim)
