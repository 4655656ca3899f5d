"""Every catalog kernel compiled for the CPU agrees with the reference interpreter.

Each kernel of test/unit/test_reference_catalog.py runs at each of its sizes
(odd ones, 1 and 0 extents among them), specialised to the sizes (the default,
one compile per size) and as generic code with run-time sizes (one compile
that serves every size), with 1 and 2 threads. Outputs are
compared with `tcdialect.reference.run` on the same inputs: exactly for
integers and booleans, with a tolerance growing with the reduction length for
floats.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath

import tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc


def _params() -> list[Any]:
    out = []
    for k in catalog.KERNELS:
        for s in k.sizes:
            label = ",".join(f"{n}={v}" for n, v in s.items())
            out.append(pytest.param(k, [s], "specialized", id=f"{k.name}[{label}]"))
        out.append(pytest.param(k, k.sizes, "generic", id=f"{k.name}-generic"))
    return out


def check_outputs(got: Any, want: tuple[Any, ...], red: int) -> None:
    if not isinstance(got, tuple):
        got = (got,)
    assert len(got) == len(want)
    rtol = 1e-5 * math.sqrt(max(1, red)) + 2e-6
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert isinstance(g, np.ndarray), f"output {i}"
        assert g.dtype == w.dtype, f"output {i}"
        assert g.shape == w.shape, f"output {i}"
        if g.dtype.kind == "f":
            np.testing.assert_allclose(
                g, w, rtol=rtol, atol=rtol, err_msg=f"output {i}"
            )
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


@pytest.mark.parametrize(("kernel", "size_sets", "mode"), _params())
def test_catalog_on_cpu(
    kernel: Any, size_sets: list[dict[str, int]], mode: str
) -> None:
    seed = zlib.crc32(kernel.name.encode())
    options = tcdialect.CpuOptions(
        specialize=mode == "specialized",
        threads=1 + (sum(size_sets[0].values()) + len(size_sets)) % 2,
    )
    k = tcdialect.define(kernel.source, kernel.entry, options=options)
    for sizes in size_sets:
        rng = np.random.default_rng(seed + sum(sizes.values()))
        inputs = kernel.inputs(rng, sizes)
        before = [np.copy(x) for x in inputs]
        want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
        try:
            check_outputs(k(*inputs), want, kernel.red(sizes))
            for x, b in zip(inputs, before, strict=True):
                np.testing.assert_array_equal(x, b)  # inputs are not modified
        except AssertionError as err:
            raise AssertionError(f"at sizes {sizes}: {err}") from err


def test_catalog_covers_enough_kernels() -> None:
    assert len(catalog.KERNELS) >= 30
