"""The tcdialect column: compile timing and a ready-to-time call, or an error.

Everything that touches the library goes through here, and every failure
(missing API, compile error, crash in a call) becomes a short message in the
row instead of an exception, so a benchmark run always completes.

API used (the library's public surface)::

    k = tcdialect.define(source, entry=None, options=tcdialect.CpuOptions(threads=T))
    outs = k(*inputs)            # one ndarray or a tuple, declared order
    k(*inputs, out=outs)         # into preallocated outputs
    k.compile(*inputs)           # compile or fetch from the cache
    tcdialect.clear_cache()      # drop the in-memory compile caches
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Longest error text shown in a table cell.
MAX_ERROR_CHARS = 60


def short_error(exc: BaseException) -> str:
    """`Type: first line of the message`, truncated for a table cell."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    # Located diagnostics start with "file:line:col: error: ..."; keep the message.
    if ": error: " in first:
        first = first.split(": error: ", 1)[1]
    msg = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(msg) > MAX_ERROR_CHARS:
        msg = msg[: MAX_ERROR_CHARS - 1] + "…"
    return msg.replace("|", "/")


def api_error() -> str | None:
    """None when `tcdialect.define` and `CpuOptions` exist, else why not."""
    try:
        import tcdialect

        tcdialect.define
        tcdialect.CpuOptions
    except Exception as exc:
        return short_error(exc)
    return None


@dataclass
class Built:
    """A compiled kernel ready to time, or the error that prevented it."""

    error: str | None = None
    kernel: Any = None
    cold_s: list[float] = field(default_factory=list)
    cached_s: list[float] = field(default_factory=list)

    @property
    def cold_median_s(self) -> float:
        """Median cold compile time (NaN when not measured)."""
        return statistics.median(self.cold_s) if self.cold_s else float("nan")

    @property
    def cached_median_s(self) -> float:
        """Median cached compile time (NaN when not measured)."""
        return statistics.median(self.cached_s) if self.cached_s else float("nan")


def define(source: str, entry: str | None, threads: int) -> Any:
    """`tcdialect.define(source, entry, CpuOptions(threads=threads))`."""
    import tcdialect

    return tcdialect.define(
        source, entry=entry, options=tcdialect.CpuOptions(threads=threads)
    )


def build(
    source: str,
    entry: str | None,
    inputs: list[np.ndarray],
    threads: int,
    cold_repeats: int = 3,
    cached_repeats: int = 5,
    cold_budget_s: float = 3.0,
) -> Built:
    """Compile `source` for `inputs`, timing cold and cached compiles.

    Cold: `clear_cache()`, a new `define`, then `compile(*inputs)`; repeated
    up to `cold_repeats` times while the total stays under `cold_budget_s`.
    Cached: a new `define` of the same source, then `compile(*inputs)`.
    The returned kernel comes from the last cached define.
    """
    import tcdialect

    out = Built()
    if (err := api_error()) is not None:
        out.error = err
        return out
    try:
        spent = 0.0
        for _ in range(max(1, cold_repeats)):
            tcdialect.clear_cache()
            k = define(source, entry, threads)
            t0 = time.perf_counter()
            k.compile(*inputs)
            dt = time.perf_counter() - t0
            out.cold_s.append(dt)
            spent += dt
            if spent > cold_budget_s:
                break
        for _ in range(max(1, cached_repeats)):
            k = define(source, entry, threads)
            t0 = time.perf_counter()
            k.compile(*inputs)
            out.cached_s.append(time.perf_counter() - t0)
            out.kernel = k
    except Exception as exc:
        out.error = short_error(exc)
    return out


def first_call(
    built: Built, inputs: list[np.ndarray], shapes: list[tuple[int, ...]]
) -> tuple[Callable[[], Any] | None, tuple[Any, ...], float, str | None]:
    """Run the kernel once into preallocated float32 outputs of `shapes`.

    The first call already goes through `out=` (the path that is timed), so a
    very slow kernel is called only once when that call exceeds the budget.
    Returns (timed call, outputs, seconds of the first call, error).
    """
    if built.kernel is None:
        return None, (), 0.0, built.error or "not built"
    k = built.kernel
    outs = tuple(np.empty(shape, dtype=np.float32) for shape in shapes)
    out_arg: Any = outs[0] if len(outs) == 1 else outs

    def run() -> Any:
        return k(*inputs, out=out_arg)

    try:
        t0 = time.perf_counter()
        run()
        dt = time.perf_counter() - t0
    except Exception as exc:
        return None, (), 0.0, "out=: " + short_error(exc)
    return run, outs, dt, None


def stream_probes(threads: int) -> Callable[..., dict[str, float]]:
    """Our copy and triad kernels as bandwidth probes for `machine`.

    A probe that fails to compile or gives a wrong result is left out.
    """

    def probes(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> dict[str, float]:
        from bench.machine import COPY_TC, TRIAD_TC

        found: dict[str, float] = {}
        if api_error() is not None:
            return found
        cases = [
            ("tcdialect copy GB/s", COPY_TC, [b], lambda: b, 2),
            ("tcdialect triad GB/s", TRIAD_TC, [b, c], lambda: b + 3.0 * c, 3),
        ]
        for name, src, ins, expect, narrays in cases:
            try:
                k = define(src, None, threads)
                k(*ins, out=a)
                if not np.allclose(a, expect(), rtol=1e-6):
                    continue
                k(*ins, out=a)
                best = float("inf")
                for _ in range(5):
                    t0 = time.perf_counter()
                    k(*ins, out=a)
                    best = min(best, time.perf_counter() - t0)
                found[name] = narrays * a.nbytes / best / 1e9
            except Exception:
                continue
        return found

    return probes


def call_overhead_us(
    threads: int, calls: int = 2000
) -> tuple[float | None, str | None]:
    """Median µs of `k(a, b, out=c)` for a 1-element add (cached kernel)."""
    if (err := api_error()) is not None:
        return None, err
    a = np.ones(1, dtype=np.float32)
    b = np.ones(1, dtype=np.float32)
    c = np.empty(1, dtype=np.float32)
    try:
        k = define(
            "def add1(float(N) A, float(N) B) -> (C) { C(i) = A(i) + B(i) }",
            None,
            threads,
        )
        k(a, b, out=c)
        samples = []
        for _ in range(calls):
            t0 = time.perf_counter()
            k(a, b, out=c)
            samples.append(time.perf_counter() - t0)
    except Exception as exc:
        return None, short_error(exc)
    return statistics.median(samples) * 1e6, None
