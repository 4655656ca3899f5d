"""The tuned column (`python -m bench --tune-budget-s S`): each kernel tuned
by `tcdialect.tune.autotune`, then timed next to the default and the peers,
and the cold start of a new process that finds it in the cache.

Tuning is opt-in: it costs about `S` seconds per kernel (plus the search's
last confirmation). It runs with the persistent cache on in a directory
private to the benchmark run (`cache_env`); everything else in the run keeps
the cache off, so that "cold compile" stays a compile::

    with cache_env(directory):
        tuned, k = tune(kernel, sizes, inputs, threads, budget_s=20, strategy="model")
        k(*inputs, out=outs)                # compiled with tuned.options
    cold = cold_start(kernel, inputs, directory)
    cold.process_s   # from the start of `python -c ...` to the end of its first call
    cold.call_s      # `tcdialect.define(...)` + first call, inside that process

The tuner starts from `CpuOptions(threads=T)`, the options of the default
column, and may change every field its search space names (threads
included). The new process defines the kernel without options, so it gets
the tuned options from the record, and loads their code: it reports the
cache's counters, and a cold start with a compile in it is marked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench import ours
from bench.kernels import Kernel

ROOT = Path(__file__).resolve().parent.parent

#: The cold-start process: argv[1] is a JSON job; prints a JSON result.
COLD_START = """
import time
wall0 = time.time()
t0 = time.perf_counter()
import json, sys
import numpy as np
import tcdialect
from tcdialect.cache import STATS
t1 = time.perf_counter()
job = json.loads(sys.argv[1])
inputs = [np.ones(s, dtype=d) for s, d in zip(job["shapes"], job["dtypes"])]
t2 = time.perf_counter()
k = tcdialect.define(job["source"], job["entry"])
t3 = time.perf_counter()
k(*inputs)
t4 = time.perf_counter()
print(json.dumps({"end": time.time(), "import_s": t1 - t0, "call_s": t4 - t2,
                  "define_s": t3 - t2,
                  "compiles": STATS.compiles, "hits": STATS.hits}))
"""


@dataclass
class Tuned:
    """One kernel's tuning: the options found and what it cost."""

    options: str | None = None
    #: The fields in which they differ from the default column's options.
    changed: str = ""
    tune_s: float | None = None
    measured: int = 0
    #: The tuner's own default time over its best (its measurements).
    speedup: float | None = None
    error: str | None = None


@dataclass
class ColdStart:
    """A new process's first call of a kernel the cache holds."""

    #: From just before the process is started to the end of its first call.
    process_s: float | None = None
    #: `import numpy, tcdialect` in that process.
    import_s: float | None = None
    #: `tcdialect.define(...)` + the first call, in that process.
    call_s: float | None = None
    #: `tcdialect.define(...)` alone (parse, checks, lowering set-up).
    define_s: float | None = None
    compiles: int = 0
    hits: int = 0
    error: str | None = None


@contextmanager
def cache_env(directory: Path) -> Iterator[None]:
    """The persistent cache on, in `directory`, inside the block."""
    saved = {k: os.environ.get(k) for k in ("TCDIALECT_CACHE", "TCDIALECT_CACHE_DIR")}
    os.environ["TCDIALECT_CACHE"] = "1"
    os.environ["TCDIALECT_CACHE_DIR"] = str(directory)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def tune(
    kernel: Kernel,
    sizes: dict[str, int],
    inputs: list[np.ndarray],
    threads: int,
    budget_s: float,
    strategy: str,
) -> tuple[Tuned, Any]:
    """Tune `kernel` from `CpuOptions(threads=threads)` for `inputs` (call
    inside `cache_env`); the result and a kernel compiled with the options
    found (None on failure)."""
    import tcdialect
    from tcdialect.tune import autotune, tuning_record
    from tcdialect.tune.space import changed_fields

    out = Tuned()
    try:
        start = ours.define(kernel.source, kernel.entry, threads)
        t0 = time.perf_counter()
        best = autotune(
            start, *inputs, budget_s=budget_s, strategy=strategy, verbose=False
        )
        out.tune_s = time.perf_counter() - t0
        out.options = repr(best)
        out.changed = changed_fields(best, start.options)
        record = tuning_record(start, sizes) or {}
        out.measured = int(record.get("measured", 0))
        speedup = record.get("speedup")
        out.speedup = float(speedup) if isinstance(speedup, int | float) else None
        tuned = tcdialect.define(kernel.source, entry=kernel.entry, options=best)
        tuned.compile(*inputs)
    except Exception as exc:
        out.error = ours.short_error(exc)
        return out, None
    return out, tuned


def cold_start(
    kernel: Kernel,
    inputs: list[np.ndarray],
    directory: Path,
    timeout_s: float = 300,
    repeats: int = 3,
) -> ColdStart:
    """`repeats` new processes' first calls of `kernel` on the cache in
    `directory` (`_cold_start_once`): the one with the median define +
    first call (one start of a ~40 ms process moves by tens of ms on a
    shared VM), or the first error."""
    runs: list[ColdStart] = []
    for _ in range(max(1, repeats)):
        run = _cold_start_once(kernel, inputs, directory, timeout_s)
        if run.error is not None or run.call_s is None:
            return run
        runs.append(run)
    runs.sort(key=lambda r: r.call_s or 0.0)
    return runs[len(runs) // 2]


def _cold_start_once(
    kernel: Kernel, inputs: list[np.ndarray], directory: Path, timeout_s: float
) -> ColdStart:
    """Start `python -c COLD_START` with the cache in `directory` (which the
    tuning filled) and time its first call of `kernel`, defined without
    options (so with the tuned ones)."""
    job = {
        "source": kernel.source,
        "entry": kernel.entry,
        "shapes": [list(a.shape) for a in inputs],
        "dtypes": [str(a.dtype) for a in inputs],
    }
    env = {**os.environ, "TCDIALECT_CACHE": "1", "TCDIALECT_CACHE_DIR": str(directory)}
    out = ColdStart()
    try:
        start = time.time()
        done = subprocess.run(
            [sys.executable, "-c", COLD_START, json.dumps(job)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=ROOT,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            out.error = (lines[-1] if lines else f"exit status {done.returncode}")[
                : ours.MAX_ERROR_CHARS
            ]
            return out
        seen = json.loads(done.stdout.splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as exc:
        out.error = ours.short_error(exc)
        return out
    out.process_s = float(seen["end"]) - start
    out.import_s = float(seen["import_s"])
    out.call_s = float(seen["call_s"])
    out.define_s = float(seen["define_s"])
    out.compiles, out.hits = int(seen["compiles"]), int(seen["hits"])
    return out


#: Candidates after which `Convergence` reports the best time so far.
CHECKPOINTS = (5, 10, 20)


@dataclass
class Convergence:
    """One strategy's search on one kernel: the best time after the first
    `CHECKPOINTS` measured candidates (None before any valid one) and after
    all of them, within the same budget as the others."""

    strategy: str
    best_after: dict[int, float | None]
    best_s: float | None = None
    measured: int = 0
    tune_s: float | None = None
    error: str | None = None


def convergence(
    kernel: Kernel,
    sizes: dict[str, int],
    inputs: list[np.ndarray],
    threads: int,
    budget_s: float,
    strategies: tuple[str, ...] = ("genetic", "model", "random"),
) -> list[Convergence]:
    """Tune `kernel` once per strategy, each from an empty cache and with
    the same budget, and follow the best time through the trials in the
    order they were measured (the tuning record's `trials`)."""
    import tempfile

    from tcdialect.tune import autotune, tuning_record

    out: list[Convergence] = []
    for strategy in strategies:
        found = Convergence(strategy, {})
        directory = Path(tempfile.mkdtemp(prefix="tcdialect-bench-strategy-"))
        try:
            with cache_env(directory):
                start = ours.define(kernel.source, kernel.entry, threads)
                t0 = time.perf_counter()
                autotune(
                    start, *inputs, budget_s=budget_s, strategy=strategy, verbose=False
                )
                found.tune_s = time.perf_counter() - t0
                record = tuning_record(start, sizes) or {}
        except Exception as exc:
            found.error = ours.short_error(exc)
            out.append(found)
            continue
        finally:
            import shutil

            shutil.rmtree(directory, ignore_errors=True)
        times = [
            t.get("median_s") if t.get("status") == "ok" else None
            for t in record.get("trials", [])
            if isinstance(t, dict)
        ]
        best: float | None = None
        for i, t in enumerate(times, 1):
            if isinstance(t, int | float) and (best is None or t < best):
                best = float(t)
            if i in CHECKPOINTS:
                found.best_after[i] = best
        found.best_s, found.measured = best, len(times)
        out.append(found)
    return out
