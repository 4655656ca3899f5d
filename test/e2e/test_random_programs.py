"""Random TC programs, compiled under every option set, agree with the reference.

`tcdialect.testing.tcgen.generate(seed)` builds a multi-statement definition
(reductions, in-place updates, temporaries, strided and shifted accesses,
where-clauses, builtins, mixed types; the module docstring lists them) with
concrete input arrays. Each program is compiled with
``tcdialect.CpuOptions(**opts)`` for the default options and for one of
`ROTATION` (chosen by seed, so a run covers every fusion strategy, automatic,
explicit, non-dividing and no tiling, specialised and generic code, and 1 or 2
threads), and its outputs are compared with `tcdialect.reference.run` (floats
with the tolerance of test_cpu_catalog.py, ints and bools exactly).

Seeds are `TC_RANDOM_SEED` (default 0) + 0 .. `TC_RANDOM_PROGRAMS` - 1
(default 110); every test id names its seed (``test_random_program[seed=17]``).
A failure reports the seed, the option set, the program, and a reproducer
shrunk by `tcgen.reduce` (at most `TC_RANDOM_REDUCE_SECONDS`, default 30 s,
and `TC_RANDOM_REDUCE_BUDGET`, default 120 s, per test process in all);
save it under test/e2e/regressions/ with
``python -m tcdialect.testing.tcgen --seed N --options '{...}' --reduce --save FILE.tc``.
Every reproducer there runs under every option set.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import tcdialect
from tcdialect.testing import tcgen

#: Options every program is checked under, as `CpuOptions` fields.
DEFAULT: dict[str, object] = dict(specialize=True)
#: Program `seed` is also checked under ``ROTATION[seed % len(ROTATION)]``.
#: A key that is not a `CpuOptions` field fails every test (it is not skipped).
ROTATION: list[dict[str, object]] = [
    dict(specialize=False, threads=2),
    dict(fusion="min", tile=(3, 5, 2)),
    dict(fusion="preserve3coincident", specialize=False, threads=2),
    dict(fusion="max", tile=(0,), threads=2),
    dict(fusion="min", specialize=False, tile=(2, 0, 7, 4)),
    dict(fusion="preserve3coincident", tile=(4, 4, 4, 4), threads=2),
    dict(schedule=False, specialize=False),
    dict(register_tile=False, threads=2),
]
OPTION_SETS: list[dict[str, object]] = [DEFAULT, *ROTATION]

COUNT = int(os.environ.get("TC_RANDOM_PROGRAMS", "110"))
BASE_SEED = int(os.environ.get("TC_RANDOM_SEED", "0"))
REDUCE_SECONDS = float(os.environ.get("TC_RANDOM_REDUCE_SECONDS", "30"))
#: Reduction time per test process: when many programs fail, only the first
#: failures are reduced (the others still report seed, options and program).
_reduce_budget = [float(os.environ.get("TC_RANDOM_REDUCE_BUDGET", "120"))]
REGRESSIONS = Path(__file__).parent / "regressions"


def _report(
    label: str,
    opts: dict[str, object],
    program: tcgen.Program,
    failure: tcgen.Failure,
) -> str:
    """The failure message: what failed where, and a reduced reproducer."""
    options = json.dumps(opts, sort_keys=True)
    lines = [
        f"{label} options={options}: {failure.kind}",
        program.describe(),
        str(failure),
    ]
    if program.text is not None:  # a saved reproducer: nothing to reduce
        return "\n".join(lines)
    seconds = min(REDUCE_SECONDS, _reduce_budget[0])
    if seconds > 0:
        start = time.monotonic()
        reduced = tcgen.reduce(program, tcgen.failure_predicate(failure, opts), seconds)
        _reduce_budget[0] -= time.monotonic() - start
        after = tcgen.check(reduced, opts)
        lines += ["", "reduced reproducer:", reduced.describe(), str(after)]
    else:
        lines += ["", "(not reduced: TC_RANDOM_REDUCE_BUDGET is spent)"]
    lines.append(
        f"reproduce: python -m tcdialect.testing.tcgen --seed {program.seed} "
        f"--options '{options}' --reduce --save test/e2e/regressions/seed{program.seed}.tc"
    )
    return "\n".join(lines)


def test_option_sets_are_cpu_options() -> None:
    for opts in OPTION_SETS:
        tcgen.cpu_options(opts)  # a TypeError names the unknown keys


@pytest.mark.parametrize(
    "seed",
    [pytest.param(BASE_SEED + k, id=f"seed={BASE_SEED + k}") for k in range(COUNT)],
)
def test_random_program(seed: int) -> None:
    program = tcgen.generate(seed)
    try:
        for opts in (DEFAULT, ROTATION[seed % len(ROTATION)]):
            failure = tcgen.check(program, opts)
            if failure is not None:
                pytest.fail(
                    _report(f"seed={seed}", opts, program, failure), pytrace=False
                )
    finally:
        tcdialect.clear_cache()  # hundreds of JIT modules otherwise stay alive


def _regressions() -> list[object]:
    return [pytest.param(p, id=p.stem) for p in sorted(REGRESSIONS.glob("*.tc"))]


@pytest.mark.parametrize("path", _regressions())
def test_regression(path: Path) -> None:
    program = tcgen.load(path)
    for opts in OPTION_SETS:
        failure = tcgen.check(program, opts)
        if failure is not None:
            label = f"{path.name} (seed={program.seed})"
            pytest.fail(_report(label, opts, program, failure), pytrace=False)


def test_generator_is_deterministic() -> None:
    a, b = tcgen.generate(BASE_SEED), tcgen.generate(BASE_SEED)
    assert a.source == b.source
    assert all((x == y).all() for x, y in zip(a.arrays(), b.arrays(), strict=True))
