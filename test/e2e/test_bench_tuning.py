"""bench/tuning.py and its report: a new process's cold start on a filled
cache loads the kernel (counted, not timed), and the tuned table renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tcdialect
from bench.kernels import by_name
from bench.report import tuned_summary, tuned_table
from bench.runner import TUNED, ImplResult, Row
from bench.tuning import ColdStart, Tuned, cache_env, cold_start


def test_cold_start_of_a_cached_kernel_compiles_nothing(tmp_path: Path) -> None:
    kernel = by_name(["ew_chain_16M"])[0]
    inputs = [np.ones(shape, np.float32) for shape in kernel.shapes({"N": 64})]
    with cache_env(tmp_path):
        tcdialect.clear_cache()
        tcdialect.define(kernel.source, kernel.entry).compile(*inputs)
    tcdialect.clear_cache()
    cold = cold_start(kernel, inputs, tmp_path)
    assert cold.error is None
    assert (cold.compiles, cold.hits) == (0, 1)
    assert cold.process_s is not None and cold.call_s is not None
    assert cold.define_s is not None and cold.import_s is not None
    assert cold.process_s > cold.call_s >= cold.define_s


def test_tuned_table_puts_default_tuned_and_peers_side_by_side() -> None:
    row = Row("k", 2, {"N": 4}, flops=1e6, nbytes=1000, bound_s=1e-4, bound_kind="m")
    row.impls = {
        "ours": ImplResult(median_s=4e-4, rel_err=0.0),
        "numpy": ImplResult(median_s=3e-4, rel_err=0.0),
        "torch": ImplResult(error="RuntimeError: no"),
        TUNED: ImplResult(median_s=2e-4, rel_err=0.0),
    }
    row.tuned = Tuned("CpuOptions(threads=1)", "threads=1", 12.3, 9, 2.1)
    row.cold_start = ColdStart(0.5, 0.3, 0.04, 0.03, compiles=0, hits=1)
    line = tuned_table([row]).splitlines()[2]
    assert line == (
        "| k | 0.4 (×4.0) | 0.2 (×2.0) | 0.3 (×3.0) | ERR: RuntimeError: no "
        "| 0.50 | 0.67 | 12.3 (9) | 500 (import 300) | 40.0 (define 30.0, +39.8) "
        "| threads=1 |"
    )
    assert tuned_summary([row]) == (
        "tuning 12 s in all; tuned / default geomean 0.50 (1 rows); define + "
        "first call in a new process: median 40.0 ms, max 40.0 ms (target ≤ 50 ms); "
        "beyond the kernel's own run: median 39.8 ms, max 39.8 ms"
    )
