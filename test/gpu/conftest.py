"""test/gpu runs only where pycuda and a CUDA device are present.

Elsewhere every test here is skipped, with the reason the CUDA runtime gives
(no pycuda, no driver, no device).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcdialect.diagnostics import TCError

HERE = Path(__file__).parent


def _no_device() -> str | None:
    from tcdialect.runtime.cuda.driver import cuda_device

    try:
        cuda_device(0)
    except TCError as err:
        return str(err)
    return None


REASON = _no_device()


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if REASON is None:
        return
    skip = pytest.mark.skip(reason=f"no CUDA device: {REASON}")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(skip)
