"""bench/backward.py: one backward row at small sizes (ours, NumPy and
PyTorch's autograd checked against float64 autograd), its report table, and
the command line's selection of backward rows."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="PyTorch is not installed")

from bench.backward import BACKWARD, run_backward
from bench.harness import CacheFlusher, TimingConfig
from bench.report import backward_table
from bench.runner import _selected, parse_args  # pyright: ignore[reportPrivateUsage]


def test_softmax_backward_row() -> None:
    k = next(k for k in BACKWARD if k.name.startswith("softmax"))
    config = TimingConfig(rounds=1, calls_per_round=1, warmup=0, budget_s=1.0)
    row = run_backward(k, {"N": 5, "D": 7}, 1, config, CacheFlusher(enabled=False))
    assert row.saved == "mx, e, s, mx_first"
    for name in ("ours", "numpy", "torch"):
        assert row.impls[name].ok, (name, row.impls[name])
    row.bound_s, row.bound_kind = 1e-6, "m"
    (line,) = [x for x in backward_table([row]).splitlines() if x.startswith("| soft")]
    assert "| mx, e, s, mx_first |" in line


def test_backward_selection() -> None:
    forward, backward = _selected(parse_args(["--backward"]))
    assert forward == [] and backward == [k.name for k in BACKWARD]
    forward, backward = _selected(parse_args(["--only", "mlp2_bwd_512"]))
    assert forward == [] and backward == ["mlp2_bwd_512"]
    forward, backward = _selected(parse_args(["--no-backward"]))
    assert forward and backward == []
    with pytest.raises(SystemExit):
        parse_args(["--only", "nosuch_bwd"])
