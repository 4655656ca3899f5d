"""Random TC programs, mapped onto the GPU and run in the simulator, agree
with the reference interpreter.

The programs of test_random_programs.py (`tcgen.generate(seed)`: reductions,
in-place updates, temporaries, gathers, where-clauses, builtins, mixed
types) compiled for `cuda-sim` with the default `CudaOptions` and one set of
`ROTATION` (chosen by seed): tiles that do not divide the loops, blocks
larger than the work, a grid of one block, every fusion strategy, reductions
shared by a warp or not, generic sizes. The simulator checks every launch for
races, divergent barriers and out-of-bounds accesses as it runs.

Seeds are `TC_RANDOM_SEED` (default 0) + 0 .. `TC_CUDA_SIM_PROGRAMS` - 1
(default 40). A failure names the seed and the options; reproduce with
``tcgen.check(tcgen.generate(seed), options, "cuda-sim")``.
"""

from __future__ import annotations

import json
import os

import pytest

import tcdialect
from tcdialect.testing import tcgen

DEFAULT: dict[str, object] = {}
ROTATION: list[dict[str, object]] = [
    dict(outer_fusion="min", tile=(3, 5, 2), block=(7, 3)),
    dict(outer_fusion="max", specialize=False, block=(64, 2), grid=(3,)),
    dict(tile=(4, 4, 4, 4), block=(2, 2, 2), grid=(1, 2, 3)),
    dict(match_library_calls=True, block=(32, 4)),
    dict(match_library_calls=False, tile=(0,), block=(1024,), grid=(1,)),
    dict(outer_fusion="preserve3coincident", tile=(1,), block=(3,), grid=(5,)),
]

COUNT = int(os.environ.get("TC_CUDA_SIM_PROGRAMS", "40"))
BASE_SEED = int(os.environ.get("TC_RANDOM_SEED", "0"))


def test_option_sets_are_cuda_options() -> None:
    for opts in (DEFAULT, *ROTATION):
        tcgen.target_options(opts, "cuda-sim")  # a TypeError names unknown keys


#: Seeds that once failed, run every time: 5013, 5055 and 5134 raced on an
#: input that gpu-carry-registers stored back; in 17053 a thread loop's
#: lower bound moved with a tile loop around it (an element changed threads)
#: and a row loop on threads along y held nests that need a barrier.
ONCE_FAILED = [5013, 5055, 5134, 17053]


@pytest.mark.parametrize(
    "seed",
    [pytest.param(BASE_SEED + k, id=f"seed={BASE_SEED + k}") for k in range(COUNT)]
    + [pytest.param(s, id=f"once-failed={s}") for s in ONCE_FAILED],
)
def test_random_program_in_simulator(seed: int) -> None:
    program = tcgen.generate(seed)
    try:
        for opts in (DEFAULT, ROTATION[seed % len(ROTATION)]):
            failure = tcgen.check(program, opts, "cuda-sim")
            if failure is not None:
                options = json.dumps(opts, sort_keys=True)
                pytest.fail(
                    f"seed={seed} options={options}: {failure.kind}\n"
                    f"{program.describe()}\n{failure}",
                    pytrace=False,
                )
    finally:
        tcdialect.clear_cache()
