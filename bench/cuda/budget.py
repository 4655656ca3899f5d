"""The run's wall-clock budget: each kernel's share, compile or not, samples.

The device run is one call with a hard limit, so `--budget-s` is the whole
run's wall time (start-up, limits, kernels). `END_RESERVE_S` of it is kept
for the machine limits measured at the end. Each kernel, when it starts,
gets an equal share of what is left; `torch.compile` (5-40 s a kernel) is
tried only while its estimated cost, for this kernel and every kernel still
to run where it writes its own code (`Kernel.fuses`: reductions, chains,
epilogues; elsewhere it calls the library eager calls), plus the base cost
of every kernel still to run, fits in what is left: the compile column goes
before any kernel does, and first where it says the least. The timed calls of a kernel get what its share has left after the
first calls (at least `MIN_TIMING_S`), split evenly between the
implementations; each gets between 1 and `--calls` samples.

Estimates come from the kernels already measured (their wall time without
the compile column, and their compile first calls), or the defaults below.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

#: Seconds kept for the end-of-run limits (copy bandwidth, SGEMM) and report.
END_RESERVE_S = 8.0
#: A kernel starts only with at least this much usable time left.
MIN_KERNEL_S = 1.5
#: The timed calls of a kernel get at least this long.
MIN_TIMING_S = 0.5
#: Cost of a kernel without the compile column before any is measured.
DEFAULT_BASE_S = 5.0
#: Cost of torch.compile's first call before any is measured.
DEFAULT_COMPILE_S = 20.0


@dataclass
class Budget:
    """The budget of one run started at `started` (epoch seconds)."""

    total_s: float
    started: float
    reserve_s: float = END_RESERVE_S
    #: Wall seconds of each finished kernel, less its compile first call.
    base_s: list[float] = field(default_factory=list)
    #: Seconds of each torch.compile first call so far.
    compile_s: list[float] = field(default_factory=list)

    def remaining(self, now: float) -> float:
        """Seconds left of the whole budget."""
        return self.total_s - (now - self.started)

    def usable(self, now: float) -> float:
        """Seconds left for kernels (the end reserve kept aside)."""
        return self.remaining(now) - self.reserve_s

    def may_start(self, now: float) -> bool:
        """Whether another kernel may start."""
        return self.usable(now) >= MIN_KERNEL_S

    def share(self, kernels_left: int, now: float) -> float:
        """An equal share of the usable time for each of `kernels_left`."""
        return max(self.usable(now), 0.0) / max(kernels_left, 1)

    def base_estimate(self) -> float:
        """Expected seconds of a kernel without the compile column."""
        return statistics.median(self.base_s) if self.base_s else DEFAULT_BASE_S

    def compile_estimate(self) -> float:
        """Expected seconds of a torch.compile first call."""
        return statistics.mean(self.compile_s) if self.compile_s else DEFAULT_COMPILE_S

    def compile_verdict(
        self, kernels_left: int, fusing_left: int, fuses: bool, now: float
    ) -> str | None:
        """None when torch.compile fits for this kernel, else why it is skipped.

        `kernels_left` counts the kernels still to run, this one included,
        `fusing_left` those among them whose kernel `fuses`: a kernel that
        does not fuse compiles only if every fusing one still can after it.
        """
        est = self.compile_estimate()
        compiles = fusing_left if fuses else fusing_left + 1
        left = self.usable(now)
        if est * compiles + self.base_estimate() * kernels_left <= left:
            return None
        if not fuses and est + self.base_estimate() * kernels_left <= left:
            return (
                f"skipped: budget kept for the {fusing_left} kernel(s) left "
                "where torch.compile writes its own code"
            )
        return (
            f"skipped: budget ({left:.0f} s left for {kernels_left} kernel(s), "
            f"compile ~{est:.0f} s)"
        )

    def timing_s(self, share_s: float, spent_s: float) -> float:
        """Seconds for the timed calls of a kernel given `share_s` at its start
        and `spent_s` already spent on it."""
        return max(share_s - spent_s, MIN_TIMING_S)


def sample_counts(
    call_s: dict[str, float], timing_s: float, calls: int, overhead_s: float
) -> dict[str, int]:
    """Timed calls per implementation: 1 to `calls`, within `timing_s`.

    `call_s` holds one call's seconds per implementation, `overhead_s` the
    flush and launch cost added to every timed call.
    """
    per_impl = timing_s / max(len(call_s), 1)
    return {
        name: max(1, min(calls, int(per_impl / (max(t, 0.0) + overhead_s))))
        for name, t in call_s.items()
    }
