"""bench/report.py: the warning when the host changes phase during a run."""

from __future__ import annotations

from bench.machine import Limits
from bench.report import DRIFT, drift_lines


def _limits(peak: float, bw: float) -> Limits:
    return Limits(2, peak_gflops=peak, bw_gbs=bw)


def test_steady_host_gives_no_warning() -> None:
    assert drift_lines(2, _limits(519.5, 59.5), _limits(498.8, 62.9)) == []


def test_bandwidth_phase_change_is_reported_with_its_figures() -> None:
    (line,) = drift_lines(2, _limits(505.7, 58.9), _limits(502.2, 102.9))
    assert "bandwidth at 2 thread(s) was 58.9 GB/s at the start and 102.9" in line
    assert "×1.75" in line and "(m) rows" in line


def test_peak_and_bandwidth_each_get_a_line() -> None:
    lines = drift_lines(2, _limits(300.0, 100.0), _limits(500.0, 50.0))
    assert len(lines) == 2
    assert "(m) rows" in lines[0] and "(c) rows" in lines[1]


def test_threshold_and_unmeasured_limits() -> None:
    just_inside = drift_lines(2, _limits(100.0, 100.0), _limits(100.0, 100.0 * DRIFT))
    assert just_inside == []
    assert drift_lines(2, _limits(0.0, 0.0), _limits(500.0, 60.0)) == []
