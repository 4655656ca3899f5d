"""Render a `RunResult` as Markdown (bench/RESULTS.md) and as stdout text.

Times are medians in ms; `(×N)` is time / roofline bound (1.0 = at the
bound; lower is better); `ours / best` is our time over the faster correct
peer (below 1 = we win); `floor` is the stream floor of the kernel's arrays
(`bench.floor`) and `×floor` our time over it.
"""

from __future__ import annotations

import math
import os
import statistics

from bench import GOMP_SPINCOUNT_AT_START, tuning
from bench.harness import TOLERANCE
from bench.machine import Limits
from bench.runner import (
    CONVERGENCE_KERNEL,
    IMPLS,
    TUNED,
    ImplResult,
    Row,
    RunResult,
)

HEADER = (
    "| kernel | GFLOP | MB | bound ms | ours ms (×bound) | numpy ms (×bound) "
    "| torch ms (×bound) | ours / best peer | floor ms (ours ×floor) "
    "| cold compile s | cached compile s |"
)


def _gomp_note() -> str:
    """How libgomp, loaded by torch and shared by our kernels, waits."""
    spin = GOMP_SPINCOUNT_AT_START
    if spin is None:
        return (
            "libgomp (torch's, which our kernels share) loaded by torch with "
            "`GOMP_SPINCOUNT` unset: idle workers poll ~300000 times (ms) "
            "before sleeping, so they are awake after the flush (tcdialect "
            "alone sets 300: a 2-thread call after an idle gap then waits "
            "~50-100 µs for its worker on this VM); "
        )
    return f"libgomp (torch's, shared by ours) loaded with `GOMP_SPINCOUNT={spin}`; "


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 1 else f"{ms:.2f}"


def impl_cell(r: ImplResult, bound_s: float) -> str:
    """`12.34 (×1.5)`, `*` when the API allocates, ERR for wrong or failed."""
    if r.error is not None:
        return f"ERR: {r.error}"
    if r.median_s is None or math.isnan(r.median_s):
        return "-"
    mark = "*" if r.allocates else ""
    mark += "†" if r.from_first_call else ""
    if not r.ok:
        return f"ERR {_ms(r.median_s)}{mark} (rel err {r.rel_err:.1e})"
    ratio = r.median_s / bound_s if bound_s > 0 else float("nan")
    return f"{_ms(r.median_s)}{mark} (×{ratio:.1f})"


def best_peer_s(row: Row) -> float | None:
    """The faster correct peer's median time, if any peer is correct."""
    times = [
        row.impls[n].median_s
        for n in ("numpy", "torch")
        if n in row.impls and row.impls[n].ok
    ]
    return min(t for t in times if t is not None) if times else None


def ratio_cell(row: Row) -> str:
    """Our time over the best peer's, or `-`."""
    ours = row.impls.get("ours")
    best = best_peer_s(row)
    if ours is None or not ours.ok or best is None or ours.median_s is None:
        return "-"
    return f"{ours.median_s / best:.2f}"


def floor_cell(row: Row) -> str:
    """`0.913 (×1.82)`: the stream floor and our time over it, or `-`."""
    fl = row.floor_s
    if fl is None or math.isnan(fl):
        return "-"
    ours = row.impls.get("ours")
    if ours is None or not ours.ok or ours.median_s is None:
        return _ms(fl)
    return f"{_ms(fl)} (×{ours.median_s / fl:.2f})"


def _s(value: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if value is None or math.isnan(value) else fmt.format(value)


def table(rows: list[Row]) -> str:
    """The main Markdown table."""
    lines = [HEADER, "|" + "---|" * 11]
    for row in rows:
        cells = [
            row.name,
            f"{row.flops / 1e9:.3f}",
            f"{row.nbytes / 1e6:.1f}",
            f"{_ms(row.bound_s)} ({row.bound_kind})",
            *(impl_cell(row.impls[n], row.bound_s) for n in IMPLS),
            ratio_cell(row),
            floor_cell(row),
            _s(row.cold_s),
            _s(row.cached_s, "{:.2g}"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


BACKWARD_HEADER = (
    "| kernel | GFLOP | MB | bound ms | ours ms (×bound) | numpy ms (×bound) "
    "| torch autograd ms (×bound) | ours / torch | ours saves "
    "| derive + compile s |"
)


def backward_table(rows: list[Row]) -> str:
    """The backward rows: the derived backward (ours), a hand-written NumPy
    backward and PyTorch's autograd, backward only."""
    lines = [BACKWARD_HEADER, "|" + "---|" * 10]
    for row in rows:
        ours, torch = row.impls["ours"], row.impls["torch"]
        ratio = "-"
        if ours.ok and torch.ok and ours.median_s and torch.median_s:
            ratio = f"{ours.median_s / torch.median_s:.2f}"
        cells = [
            row.name,
            f"{row.flops / 1e9:.3f}",
            f"{row.nbytes / 1e6:.1f}",
            f"{_ms(row.bound_s)} ({row.bound_kind})",
            *(impl_cell(row.impls[n], row.bound_s) for n in IMPLS),
            ratio,
            row.saved or "-",
            _s(row.cold_s),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def backward_section(result: RunResult) -> list[str]:
    """The "Backward" section, when backward rows ran."""
    if not result.backward:
        return []
    return [
        f"## Backward (T = {result.threads})",
        "",
        "The derived backward (`tcdialect.autodiff.forward_backward`, "
        '`save="auto"`: the forward kernel also returns the reductions the '
        "backward reads, listed under *ours saves*), called as "
        "`bwd(*inputs, *saved, d_out, out=grads)` after one forward call, "
        "against PyTorch's autograd (forward once, then "
        "`torch.autograd.grad(out, inputs, d_out, retain_graph=True)` timed) and "
        "a hand-written NumPy backward where one is short (its forward "
        "intermediates computed before timing); gradients of every input, "
        "checked against PyTorch's autograd in float64 first, timed as above. "
        "Bound: the backward's flops; bytes = inputs and `d_out` read once, "
        "gradients written once. *derive + compile*: `forward_backward` and "
        "compiling both kernels. `ours / torch` below 1 = ours is faster.",
        "",
        backward_table(result.backward),
        "",
        *(f"- {r.name}: {r.note}" for r in result.backward if r.note),
        "",
    ]


TUNED_HEADER = (
    "| kernel | ours default ms | ours tuned ms | numpy ms | torch ms "
    "| tuned / default | tuned / best peer | tuning s (candidates) "
    "| new process: start → first call ms | define + first call ms "
    "(beyond the kernel's run) | tuned options (vs default) |"
)


def _ratio(a: ImplResult | None, b: float | None) -> str:
    if a is None or not a.ok or a.median_s is None or not b:
        return "-"
    return f"{a.median_s / b:.2f}"


def _run_s(row: Row) -> float | None:
    """The steady time of the code a new process calls: tuned, else default."""
    for impl in (row.impls.get(TUNED), row.impls["ours"]):
        if impl is not None and impl.ok and impl.median_s is not None:
            return impl.median_s
    return None


def _overhead_s(row: Row) -> float | None:
    """A new process's define + first call, less the kernel's own run: what
    the cache's cold start costs (the ≤ 50 ms target is on the call; for a
    kernel that runs 20 ms itself, that leaves 30 ms)."""
    cold, run = row.cold_start, _run_s(row)
    if cold is None or cold.call_s is None or run is None:
        return None
    return max(0.0, cold.call_s - run)


def _cold_cells(row: Row) -> list[str]:
    cold = row.cold_start
    if cold is None:
        return ["-", "-"]
    if cold.error is not None or cold.process_s is None or cold.call_s is None:
        return [f"ERR: {cold.error}", "-"]
    hit = (
        ""
        if (cold.compiles, cold.hits) == (0, 1)
        else f" ({cold.compiles} compiles, {cold.hits} hits)"
    )
    over = _overhead_s(row)
    beyond = f", +{over * 1e3:.1f}" if over is not None else ""
    return [
        f"{cold.process_s * 1e3:.0f} (import {(cold.import_s or 0) * 1e3:.0f}){hit}",
        f"{cold.call_s * 1e3:.1f} (define {(cold.define_s or 0) * 1e3:.1f}{beyond})",
    ]


def tuned_table(rows: list[Row]) -> str:
    """Default and tuned ours next to the peers, with the tuning's cost and
    a new process's cold start on the cache the tuning filled."""
    lines = [TUNED_HEADER, "|" + "---|" * 11]
    for row in rows:
        tuned = row.impls.get(TUNED)
        info = row.tuned
        default = row.impls["ours"]
        cost = (
            f"{info.tune_s:.1f} ({info.measured})"
            if info is not None and info.tune_s is not None
            else "-"
        )
        options = (
            f"ERR: {info.error}"
            if info is not None and info.error
            else (info.changed.replace("|", "/") if info is not None else "-")
        )
        cells = [
            row.name,
            impl_cell(default, row.bound_s),
            impl_cell(tuned, row.bound_s) if tuned is not None else "-",
            impl_cell(row.impls["numpy"], row.bound_s),
            impl_cell(row.impls["torch"], row.bound_s),
            _ratio(tuned, default.median_s if default.ok else None),
            _ratio(tuned, best_peer_s(row)),
            cost,
            *_cold_cells(row),
            options,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tuned_summary(rows: list[Row]) -> str:
    """Geomean of tuned / default, total tuning time, worst cold start."""
    ratios = [
        t.median_s / d.median_s
        for r in rows
        if (t := r.impls.get(TUNED)) is not None
        and t.ok
        and t.median_s
        and (d := r.impls["ours"]).ok
        and d.median_s
    ]
    spent = sum(r.tuned.tune_s or 0.0 for r in rows if r.tuned is not None)
    calls = [
        r.cold_start.call_s
        for r in rows
        if r.cold_start is not None and r.cold_start.call_s is not None
    ]
    parts = [f"tuning {spent:.0f} s in all"]
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        parts.append(f"tuned / default geomean {geo:.2f} ({len(ratios)} rows)")
    if calls:
        parts.append(
            f"define + first call in a new process: median "
            f"{statistics.median(calls) * 1e3:.1f} ms, max {max(calls) * 1e3:.1f} ms "
            "(target ≤ 50 ms)"
        )
    beyond = [o for r in rows if (o := _overhead_s(r)) is not None]
    if beyond:
        parts.append(
            f"beyond the kernel's own run: median "
            f"{statistics.median(beyond) * 1e3:.1f} ms, max {max(beyond) * 1e3:.1f} ms"
        )
    return "; ".join(parts)


def tuned_section(result: RunResult) -> list[str]:
    """The report's tuning section (empty without `--tune-budget-s`)."""
    if result.tune_budget_s <= 0:
        return []
    return [
        f"## Tuned (`--tune-budget-s {result.tune_budget_s:g}`, strategy "
        f"{result.tune_strategy})",
        "",
        "Each kernel tuned by `tcdialect.tune.autotune` from the default "
        "column's options (`CpuOptions(threads=T)`; the search may change "
        "the threads too) with the persistent cache in a directory private "
        "to this run; the tuned kernel is timed in the same rounds as the "
        "others (ms (×bound)). Tuning s: wall time of `autotune` (the "
        "candidates it measured). New process: `python -c` that imports "
        "numpy and tcdialect, makes the inputs, `tcdialect.define(source)` "
        "without options (so the tuned ones, from the cache) and calls it "
        "once: from just before the process starts to the end of that call "
        "(its imports in brackets), and define + first call alone (define "
        "in brackets, then what it takes beyond the kernel's own run: the "
        "tuned column's time); the median of three such processes; a cold "
        "start that compiled says so.",
        "",
        tuned_table(result.rows),
        "",
        tuned_summary(result.rows),
        "",
        *strategy_section(result),
    ]


def strategy_section(result: RunResult) -> list[str]:
    """Which strategy converges faster: each one's best time after the first
    candidates it measured, on one kernel, with the same budget."""
    if not result.strategies:
        return []
    marks = tuning.CHECKPOINTS
    lines = [
        "### Strategies, same budget",
        "",
        f"`{CONVERGENCE_KERNEL}` tuned once per strategy from an empty cache, "
        f"{result.tune_budget_s:g} s each: the best time (ms) after the first "
        "5, 10 and 20 candidates in the order they were measured, and at the "
        "end.",
        "",
        "| strategy | "
        + " | ".join(f"best after {n}" for n in marks)
        + " | best at the end (candidates) | tuning s |",
        "|---|" + "---|" * (len(marks) + 2),
    ]
    for c in result.strategies:
        if c.error is not None:
            lines.append(
                f"| {c.strategy} | ERR: {c.error} |" + " - |" * (len(marks) + 1)
            )
            continue
        cells = [
            "-" if (b := c.best_after.get(n)) is None else f"{b * 1e3:.3f}"
            for n in marks
        ]
        end = "-" if c.best_s is None else f"{c.best_s * 1e3:.3f}"
        spent = "-" if c.tune_s is None else f"{c.tune_s:.1f}"
        lines.append(
            f"| {c.strategy} | "
            + " | ".join(cells)
            + f" | {end} ({c.measured}) | {spent} |"
        )
    return [*lines, ""]


def correctness_table(rows: list[Row]) -> str:
    """Max relative error and sample count per implementation."""
    lines = [
        "| kernel | sizes | ours rel err (n) | numpy rel err (n) | torch rel err (n) |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [row.name, " ".join(f"{k}={v}" for k, v in row.sizes.items())]
        for n in IMPLS:
            r = row.impls[n]
            if r.error is not None or r.rel_err is None:
                cells.append("-")
            else:
                flag = "" if r.rel_err <= TOLERANCE else " ERR"
                cells.append(f"{r.rel_err:.1e}{flag} ({r.samples})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scaling_text(result: RunResult) -> str:
    """The elementwise chain at 1 and T threads, one line per implementation."""
    if len(result.scaling) < 2:
        return "(not run: needs the chain kernel and T > 1)"
    one, many = result.scaling[0], result.scaling[-1]
    t = many.threads
    parts = []
    for n in IMPLS:
        a, b = one.impls[n], many.impls[n]
        if a.ok and b.ok and a.median_s and b.median_s:
            parts.append(
                f"{n} {_ms(a.median_s)} → {_ms(b.median_s)} ms "
                f"(speedup {a.median_s / b.median_s:.2f}×)"
            )
        else:
            parts.append(
                f"{n} {impl_cell(a, one.bound_s)} → {impl_cell(b, many.bound_s)}"
            )
    head = (
        f"{one.name}, 1 → {t} threads (bound {_ms(one.bound_s)} → "
        f"{_ms(many.bound_s)} ms): "
    )
    text = head + "; ".join(parts)
    if result.scaling_interleaved is not None:
        a, b = result.scaling_interleaved
        text += (
            f". Ours at 1 and {t} threads timed interleaved in the same rounds: "
            f"{_ms(a)} → {_ms(b)} ms (speedup {a / b:.2f}×)"
        )
    return text


def overhead_text(result: RunResult) -> str:
    """Median per-call time of a 1-element add with preallocated outputs."""
    o = result.overhead_us
    ours = (
        f"{o['ours']:.1f} µs"
        if o.get("ours") is not None
        else f"ERR: {result.overhead_error}"
    )
    return (
        f"k(a, b, out=c) on 1 element: ours {ours}; "
        f"numpy np.add(out=) {o.get('numpy', float('nan')):.1f} µs; "
        f"torch.add(out=) {o.get('torch', float('nan')):.1f} µs"
    )


def compile_text(rows: list[Row]) -> str:
    """Median and max cold compile, median cached compile over the rows."""
    cold = [r.cold_s for r in rows if r.cold_s is not None]
    cached = [r.cached_s for r in rows if r.cached_s is not None]
    if not cold:
        return "(no compile times: the tcdialect column did not compile)"
    text = (
        f"cold: median {statistics.median(cold):.3f} s, max {max(cold):.3f} s "
        f"over {len(cold)} kernels"
    )
    if cached:
        text += f"; cached: median {statistics.median(cached) * 1e3:.2f} ms"
    return text


def summary_text(rows: list[Row]) -> str:
    """Geometric means of ×bound per implementation and of ours / best peer."""
    parts = []
    for n in IMPLS:
        xs = [
            m / r.bound_s
            for r in rows
            if r.impls[n].ok and r.bound_s > 0 and (m := r.impls[n].median_s)
        ]
        if xs:
            geo = math.exp(sum(math.log(x) for x in xs) / len(xs))
            parts.append(f"{n} ×{geo:.2f} ({len(xs)}/{len(rows)} rows)")
    ratios = []
    for r in rows:
        best = best_peer_s(r)
        o = r.impls["ours"]
        if o.ok and best and o.median_s:
            ratios.append(o.median_s / best)
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        parts.append(f"ours / best peer {geo:.2f}")
    floors = [
        r.impls["ours"].median_s / r.floor_s
        for r in rows
        if r.bound_kind == "m"
        and r.floor_s
        and r.impls["ours"].ok
        and r.impls["ours"].median_s
    ]
    if floors:
        geo = math.exp(sum(math.log(x) for x in floors) / len(floors))
        parts.append(f"ours ×floor on the (m) rows {geo:.2f}")
    return "geomean ×bound: " + ("; ".join(parts) if parts else "-")


def floor_errors(rows: list[Row]) -> list[str]:
    """One line per stream floor that did not run (with a blank line after)."""
    lines = [
        f"- stream floor ({kind}) of {r.name} not measured: {err}"
        for r in rows
        for kind, err in r.floor_errors.items()
    ]
    return [*lines, ""] if lines else []


#: Start and end probes further apart than this (ratio): the host changed
#: phase during the run (this VM's 2-thread bandwidth moves between ~60 and
#: ~110 GB/s from one minute to the next).
DRIFT = 1.2


def drift_lines(t: int, start: Limits, end: Limits) -> list[str]:
    """A warning per limit at `t` threads whose start and end probes differ
    by more than `DRIFT`: the bound takes the better one, which the kernels
    timed in the other phase never saw."""
    lines: list[str] = []
    for what, a, b, unit, kind in (
        ("bandwidth", start.bw_gbs, end.bw_gbs, "GB/s", "(m)"),
        ("peak", start.peak_gflops, end.peak_gflops, "GFLOP/s", "(c)"),
    ):
        if min(a, b) <= 0 or max(a, b) / min(a, b) <= DRIFT:
            continue
        lines.append(
            f"- **The host changed phase during the run:** {what} at {t} "
            f"thread(s) was {a:.1f} {unit} at the start and {b:.1f} at the end "
            f"(×{max(a, b) / min(a, b):.2f}). The bound uses the better figure, "
            f"so ×bound of the {kind} rows timed in the other phase is "
            "inflated; ×floor, timed in the same rounds as ours, is not."
        )
    return lines


def _limits_line(result: RunResult, t: int) -> str:
    lim = result.limits[t]
    s, e = result.limits_start[t], result.limits_end[t]
    details = ", ".join(f"{k} {v:.1f}" for k, v in lim.details.items())
    return (
        f"- {t} thread(s): peak **{lim.peak_gflops:.1f} GFLOP/s**, bandwidth "
        f"**{lim.bw_gbs:.1f} GB/s** (start {s.peak_gflops:.1f} / {s.bw_gbs:.1f}, "
        f"end {e.peak_gflops:.1f} / {e.bw_gbs:.1f}); best probes: {details}"
    )


def markdown(result: RunResult) -> str:
    """The full report."""
    m = result.machine
    t = result.threads
    mode = "quick (small sizes, 1 timed call)" if result.quick else "full"
    out = [
        "# tcdialect CPU benchmark",
        "",
        "Generated by `python -m bench` (`make bench`); do not edit by hand.",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in m.items()),
        f"- load average (1 min) at start / end: {result.load_avg[0]:.2f} / "
        f"{result.load_avg[1]:.2f} (other processes add noise)",
        "",
        "Measured limits (best of start and end of the run; the figure at T threads "
        "is at least the one at fewer threads):",
        "",
        *(_limits_line(result, tt) for tt in sorted(result.limits)),
        "",
        *_drift(result),
        "## Method",
        "",
        f"Run mode: {mode}; threads T = {t} for every implementation (NumPy's BLAS "
        "via threadpoolctl, `torch.set_num_threads`, ours via "
        "`CpuOptions(threads=T)`); float32. Peers interleaved in one process, "
        "order rotated each round; warm-up first; OpenBLAS's idle workers "
        f"sleep at once (`OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset')}`: "
        "their default spin of ~0.1 s took the cores from the next timed call); "
        "`OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` unset, so OpenBLAS picks its "
        "own kernel; "
        + _gomp_note()
        + (
            "96 MiB cache flush before each timed call; "
            if result.flush
            else "no cache flush (warm caches); "
        )
        + f"median of the timed calls ({result.timing.rounds} round(s) × "
        f"{result.timing.calls_per_round} call(s), fewer once an implementation "
        f"has spent {result.timing.budget_s:g} s). Every result is checked against a float64 "
        f"NumPy reference (normwise max relative error; > {TOLERANCE:g} = ERR). "
        "Roofline bound = max(flops / peak, compulsory bytes / bandwidth), with "
        "peak (the best of the sgemms and a loop of vector FMAs) and bandwidth "
        "measured in this run; compulsory bytes = inputs read "
        "once + outputs written once; (c) compute-, (m) memory-bound. "
        "`×N` = time / bound. Stream floor (`bench/floor.py`): the faster of "
        "two plain streaming codes (ours, torch) that read every input once and "
        "write every output once and compute nothing, timed in the same rounds "
        "with the same flush; it is what this machine gives for the kernel's "
        "bytes at that moment, and `×floor` = our time / floor cancels the drift "
        "that moves ×bound between runs. "
        "`*` = the peer's API allocates its output "
        "(no `out=`); `†` = a single call (it alone exceeded the budget). "
        "Ours is called as `k(*inputs, out=outs)`.",
        "",
        f"## Results (T = {t})",
        "",
        table(result.rows),
        "",
        summary_text(result.rows),
        "",
        *floor_errors(result.rows),
        *tuned_section(result),
        *backward_section(result),
        "## Thread scaling (elementwise chain)",
        "",
        scaling_text(result),
        "",
        "## Call overhead and compile time",
        "",
        "- " + overhead_text(result),
        "- compile (tcdialect): " + compile_text(result.rows),
        "",
        "## Correctness and sizes",
        "",
        correctness_table(result.rows + result.backward),
        "",
        "Kernel notes:",
        "",
        *(f"- {r.name}: {r.note}" for r in result.rows if r.note),
        "",
        f"Run time: {result.elapsed_s:.0f} s.",
        "",
    ]
    if result.api_error:
        out.insert(4, f"**tcdialect column unavailable: {result.api_error}**\n")
    return "\n".join(out)


def _drift(result: RunResult) -> list[str]:
    """`drift_lines` at the run's thread count, with a blank line after."""
    t = result.threads
    if t not in result.limits_start or t not in result.limits_end:
        return []
    lines = drift_lines(t, result.limits_start[t], result.limits_end[t])
    return [*lines, ""] if lines else []


def stdout_text(result: RunResult) -> str:
    """The table and the summary lines, for the terminal."""
    lims = ", ".join(
        f"{t}T {lim.peak_gflops:.1f} GFLOP/s / {lim.bw_gbs:.1f} GB/s"
        for t, lim in sorted(result.limits.items())
    )
    return "\n".join(
        [
            "",
            f"limits: {lims}; threads T = {result.threads}"
            + (" (quick)" if result.quick else ""),
            table(result.rows),
            summary_text(result.rows),
            *(
                [tuned_table(result.rows), tuned_summary(result.rows)]
                if result.tune_budget_s > 0
                else []
            ),
            *(
                ["backward:", backward_table(result.backward)]
                if result.backward
                else []
            ),
            "scaling: " + scaling_text(result),
            "overhead: " + overhead_text(result),
            "compile: " + compile_text(result.rows),
            f"run time {result.elapsed_s:.0f} s",
            *(line.removeprefix("- ") for line in _drift(result)),
        ]
    )
