"""bench/cuda_sweep.py's named option sets are valid `CudaOptions`, and the
kernels `bench/device_run.sh` sweeps exist: a typo would cost device time,
which is short, only on the GPU machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tcdialect
from bench.cuda.kernels import by_name
from bench.cuda_sweep import SETS

SCRIPT = Path(__file__).parents[2] / "bench" / "device_run.sh"


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_option_set_is_valid(name: str) -> None:
    for opts in SETS[name]:
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in opts.items()}
        tcdialect.CudaOptions(**fields)


def test_the_device_script_sweeps_known_kernels_and_sets() -> None:
    text = SCRIPT.read_text().replace("\\\n", " ")  # continued lines joined
    calls = re.findall(r"cuda_sweep\s+--kernels\s+(\S+)\s+--options\s+(\S+)", text)
    assert len(calls) == text.count("bench.cuda_sweep")
    for kernels, options in calls:
        assert options in SETS
        names = kernels.split(",")
        assert sorted(k.name for k in by_name(names)) == sorted(names)
