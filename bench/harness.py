"""Timing harness: cache flush, interleaved timed calls, medians, error metric.

Method (anchor-perf.md): every implementation of a kernel runs in the same
process; each round visits them in a rotated order; each timed call is
preceded by a 96 MiB write that evicts the last-level cache; the figure is the
median of the timed calls. An implementation that has spent more than its
time budget stops early (it keeps at least one sample), so a slow
implementation costs a bounded time and no row is ever skipped.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Size of the buffer written before each timed call (larger than the L3).
FLUSH_BYTES = 96 * 1024 * 1024

#: Results whose normwise max relative error exceeds this are wrong (ERR).
TOLERANCE = 2e-3


class CacheFlusher:
    """Evicts the caches by writing a 96 MiB buffer (a new value each time)."""

    def __init__(self, nbytes: int = FLUSH_BYTES, enabled: bool = True) -> None:
        self.enabled = enabled
        self._buf = np.ones(nbytes // 4, dtype=np.float32) if enabled else None
        self._count = 0

    def __call__(self) -> None:
        """Write the whole buffer once (no-op when disabled)."""
        if self._buf is None:
            return
        self._count += 1
        self._buf.fill(float(self._count & 0xFFFF))


@dataclass(frozen=True)
class TimingConfig:
    """How much to time each implementation of one kernel.

    `rounds` rounds, each with `calls_per_round` timed calls per
    implementation; `warmup` untimed calls first; an implementation stops once
    its timed calls add up to more than `budget_s` seconds.
    """

    rounds: int = 5
    calls_per_round: int = 3
    warmup: int = 1
    budget_s: float = 5.0


@dataclass
class Timing:
    """The timed samples (seconds) of one implementation."""

    samples: list[float] = field(default_factory=list)
    #: True when the samples include the first (correctness-check) call,
    #: because one call alone exceeded the budget.
    from_first_call: bool = False

    @property
    def median_s(self) -> float:
        """Median of the samples (NaN when there are none)."""
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def count(self) -> int:
        """Number of samples."""
        return len(self.samples)


def time_call(fn: Callable[[], Any]) -> float:
    """Seconds taken by one call of `fn`."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(
    impls: Mapping[str, Callable[[], Any]],
    first_call_s: Mapping[str, float],
    config: TimingConfig,
    flush: CacheFlusher,
) -> dict[str, Timing]:
    """Time `impls` interleaved; return the samples of each.

    `first_call_s` holds the duration of each implementation's first
    (correctness-check) call: an implementation whose first call already
    exceeded the budget is not called again and reports that one call.
    """
    names = list(impls)
    timings = {name: Timing() for name in names}
    spent = dict.fromkeys(names, 0.0)
    active = set(names)
    for name in names:
        first = first_call_s.get(name, 0.0)
        if first > config.budget_s:
            timings[name] = Timing([first], from_first_call=True)
            active.discard(name)
            continue
        for _ in range(config.warmup):
            if time_call(impls[name]) > config.budget_s:
                break
    for r in range(config.rounds):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            if name not in active:
                continue
            for _ in range(config.calls_per_round):
                flush()
                t = time_call(impls[name])
                timings[name].samples.append(t)
                spent[name] += t
                if spent[name] > config.budget_s:
                    active.discard(name)
                    break
    return timings


def as_tuple(value: Any) -> tuple[Any, ...]:
    """An output or a tuple/list of outputs as a tuple."""
    if isinstance(value, tuple | list):
        return tuple(value)
    return (value,)


def to_numpy(value: Any) -> np.ndarray:
    """A NumPy view of an ndarray or a CPU torch tensor."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # torch.Tensor, without importing torch here
        return value.detach().numpy()
    return np.asarray(value)


def max_rel_error(got: Sequence[Any], want: Sequence[np.ndarray]) -> float:
    """Normwise max relative error over all outputs: max|got - want| / max|want|.

    A count or shape mismatch, or any non-finite value where the reference is
    finite, gives +inf.
    """
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        g64 = to_numpy(g).astype(np.float64)
        w64 = np.asarray(w, dtype=np.float64)
        if g64.shape != w64.shape:
            return float("inf")
        if w64.size == 0:
            continue
        diff = np.abs(g64 - w64)
        if not np.all(np.isfinite(diff)):
            return float("inf")
        scale = max(float(np.max(np.abs(w64))), 1e-30)
        worst = max(worst, float(np.max(diff)) / scale)
    return worst
