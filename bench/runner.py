"""The benchmark run: command line, per-kernel measurement, thread control.

One row per kernel at T threads: our kernel, the NumPy peer and the torch
peer are each called once and checked against the float64 reference, then
timed interleaved (`harness.measure`). Machine limits are measured at the
start and at the end of the run; the best of both gives the roofline bound.
The elementwise chain is timed again at 1 and T threads for the scaling line.
Then the backward rows (`bench.backward`), unless `--no-backward`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench import floor, ours, tuning
from bench.harness import (
    TOLERANCE,
    CacheFlusher,
    TimingConfig,
    as_tuple,
    max_rel_error,
    measure,
)
from bench.kernels import CHAIN, KERNELS, Kernel, by_name, compulsory_bytes
from bench.machine import Limits, describe, measure_limits

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "RESULTS.md"
IMPLS = ("ours", "numpy", "torch")
#: The tuned kernel's label in `Row.impls` (with `--tune-budget-s`).
TUNED = "tuned"
#: The kernel whose tuning every strategy repeats, same budget (with
#: `--tune-budget-s`): which one converges faster.
CONVERGENCE_KERNEL = "matmul_512"


@dataclass
class ImplResult:
    """One implementation in one row."""

    median_s: float | None = None
    samples: int = 0
    rel_err: float | None = None
    error: str | None = None
    allocates: bool = False
    #: The only sample is the first call (it alone exceeded the budget).
    from_first_call: bool = False

    @property
    def ok(self) -> bool:
        """Ran, and its result matches the reference."""
        return (
            self.error is None
            and self.rel_err is not None
            and self.rel_err <= TOLERANCE
            and self.median_s is not None
        )


@dataclass
class Row:
    """One kernel at one thread count."""

    name: str
    threads: int
    sizes: dict[str, int]
    flops: float
    nbytes: int
    impls: dict[str, ImplResult] = field(default_factory=dict)
    cold_s: float | None = None
    cached_s: float | None = None
    note: str = ""
    bound_s: float = float("nan")
    bound_kind: str = "?"
    #: Median seconds of each stream floor (`bench.floor`) that ran, by kind.
    floors: dict[str, float] = field(default_factory=dict)
    #: Why a floor kind did not run.
    floor_errors: dict[str, str] = field(default_factory=dict)
    #: With `--tune-budget-s`: the tuning, and a new process's cold start.
    tuned: tuning.Tuned | None = None
    cold_start: tuning.ColdStart | None = None
    #: A backward row: the tensors our forward saved for the backward.
    saved: str = ""

    @property
    def floor_s(self) -> float | None:
        """The faster stream floor, or None when neither ran."""
        return min(self.floors.values()) if self.floors else None


@dataclass
class RunResult:
    """Everything the report needs."""

    threads: int
    quick: bool
    flush: bool
    machine: dict[str, str]
    limits: dict[int, Limits]
    limits_start: dict[int, Limits]
    limits_end: dict[int, Limits]
    rows: list[Row]
    scaling: list[Row]
    #: Ours at 1 and T threads timed interleaved in the same rounds (seconds).
    scaling_interleaved: tuple[float, float] | None
    overhead_us: dict[str, float | None]
    overhead_error: str | None
    api_error: str | None
    elapsed_s: float
    load_avg: tuple[float, float]
    timing: TimingConfig
    #: `--tune-budget-s` (0: no tuning) and `--tune-strategy`.
    tune_budget_s: float = 0.0
    tune_strategy: str = "model"
    #: The backward rows (`bench.backward`): ours, NumPy, PyTorch's autograd.
    backward: list[Row] = field(default_factory=lambda: list[Row]())
    #: With tuning: each strategy's search on `CONVERGENCE_KERNEL`.
    strategies: list[tuning.Convergence] = field(
        default_factory=lambda: list[tuning.Convergence]()
    )


@contextmanager
def thread_limits(threads: int) -> Iterator[None]:
    """Run NumPy's BLAS and torch with `threads` threads inside the block."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_kernel(
    kernel: Kernel,
    sizes: dict[str, int],
    threads: int,
    config: TimingConfig,
    flush: CacheFlusher,
    compile_repeats: tuple[int, int],
    with_floor: bool = True,
    tune: tuple[float, str, Path] | None = None,
) -> Row:
    """Measure one kernel at `threads` threads (applied by the caller).

    With `with_floor`, the stream floors of the kernel's arrays are timed in
    the same rounds as the implementations. With `tune` (budget in seconds,
    strategy, cache directory), the kernel is tuned first and the tuned
    kernel timed in the same rounds too (`TUNED`), and a new process's cold
    start on the cache it filled is measured.
    """
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    inputs = kernel.make_inputs(sizes, rng)
    want = kernel.reference_outputs(inputs)
    row = Row(
        name=kernel.name,
        threads=threads,
        sizes=dict(sizes),
        flops=kernel.flops(sizes),
        nbytes=compulsory_bytes(inputs, want),
        note=kernel.note,
    )
    calls: dict[str, Callable[[], Any]] = {}
    first_s: dict[str, float] = {}

    built = ours.build(
        kernel.source,
        kernel.entry,
        inputs,
        threads,
        cold_repeats=compile_repeats[0],
        cached_repeats=compile_repeats[1],
    )
    if built.cold_s:
        row.cold_s = built.cold_median_s
    if built.cached_s:
        row.cached_s = built.cached_median_s
    fn, outs, dt, err = ours.first_call(built, inputs, [w.shape for w in want])
    res = ImplResult(error=err)
    if fn is not None:
        res.rel_err = max_rel_error(outs, want)
        calls["ours"], first_s["ours"] = fn, dt
    row.impls["ours"] = res

    if tune is not None:
        budget_s, strategy, directory = tune
        with tuning.cache_env(directory):
            row.tuned, tuned = tuning.tune(
                kernel, sizes, inputs, threads, budget_s, strategy
            )
            res = ImplResult(error=row.tuned.error)
            if tuned is not None:
                fn, outs, dt, err = ours.first_call(
                    ours.Built(kernel=tuned), inputs, [w.shape for w in want]
                )
                res.error = err
                if fn is not None:
                    res.rel_err = max_rel_error(outs, want)
                    calls[TUNED], first_s[TUNED] = fn, dt
        row.impls[TUNED] = res
        if tuned is not None:
            row.cold_start = tuning.cold_start(kernel, inputs, directory)

    for label, factory in (("numpy", kernel.numpy_peer), ("torch", kernel.torch_peer)):
        res = ImplResult()
        try:
            peer = factory(inputs)
            res.allocates = peer.allocates
            t0 = time.perf_counter()
            out = peer.run()
            first_s[label] = time.perf_counter() - t0
            res.rel_err = max_rel_error(as_tuple(out), want)
            calls[label] = peer.run
        except Exception as exc:
            res.error = ours.short_error(exc)
        row.impls[label] = res

    if with_floor:
        outputs = [np.empty(w.shape, dtype=np.float32) for w in want]
        makers: dict[str, Callable[[], Callable[[], Any]]] = {
            "ours": lambda: floor.ours_floor(inputs, outputs, threads),
            "torch": lambda: floor.torch_floor(inputs, outputs),
        }
        for kind, make in makers.items():
            try:
                fn = make()
                t0 = time.perf_counter()
                fn()
                first_s[f"floor {kind}"] = time.perf_counter() - t0
                calls[f"floor {kind}"] = fn
            except Exception as exc:
                row.floor_errors[kind] = ours.short_error(exc)

    timings = measure(calls, first_s, config, flush)
    for label, timing in timings.items():
        if label.startswith("floor "):
            row.floors[label.removeprefix("floor ")] = timing.median_s
            continue
        res = row.impls[label]
        res.median_s = timing.median_s
        res.samples = timing.count
        res.from_first_call = timing.from_first_call
    return row


def _ours_scaling(
    kernel: Kernel,
    sizes: dict[str, int],
    threads: int,
    config: TimingConfig,
    flush: CacheFlusher,
) -> tuple[float, float] | None:
    """Ours at 1 and `threads` threads, timed interleaved in the same rounds.

    Timing both in one `measure` call cancels the drift of a shared VM
    between two separate runs, which the separate rows cannot.
    """
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    inputs = kernel.make_inputs(sizes, rng)
    shapes = [w.shape for w in kernel.reference_outputs(inputs)]
    calls: dict[str, Callable[[], Any]] = {}
    for t in (1, threads):
        built = ours.build(
            kernel.source, kernel.entry, inputs, t, cold_repeats=1, cached_repeats=1
        )
        fn, _, _, err = ours.first_call(built, inputs, shapes)
        if fn is None:
            _log(f"  interleaved scaling not measured: {err}")
            return None
        calls[f"{t}T"] = fn
    for fn in calls.values():
        fn()  # building the second kernel cleared the cache: compile again now
    # No first-call samples: the chain is fast, so every sample is a timed call.
    timings = measure(calls, {}, config, flush)
    one, many = timings["1T"].median_s, timings[f"{threads}T"].median_s
    _log(f"  ours interleaved: 1T {one * 1e3:.2f} ms, {threads}T {many * 1e3:.2f} ms")
    return one, many


def _limits(threads: list[int], repeats: int) -> dict[int, Limits]:
    out = {}
    for t in threads:
        with thread_limits(t):
            out[t] = measure_limits(t, ours.stream_probes(t), repeats=repeats)
        lim = out[t]
        _log(
            f"  limits {t}T: peak {lim.peak_gflops:.1f} GFLOP/s, "
            f"bw {lim.bw_gbs:.1f} GB/s"
        )
    return out


def _peer_overhead_us(calls: int = 2000) -> dict[str, float]:
    import torch

    a = np.ones(1, dtype=np.float32)
    c = np.empty(1, dtype=np.float32)
    ta, tc = torch.from_numpy(a), torch.from_numpy(c)
    fns = {
        "numpy": lambda: np.add(a, a, out=c),
        "torch": lambda: torch.add(ta, ta, out=tc),
    }
    out = {}
    for name, fn in fns.items():
        samples = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        out[name] = float(np.median(samples)) * 1e6
    return out


def run(args: argparse.Namespace) -> RunResult:
    """The whole benchmark run described by the parsed `args`."""
    t_start = time.perf_counter()
    from bench.backward import BACKWARD, run_backward

    threads: int = args.threads
    kernels, backward = _selected(args)
    if args.quick:
        config = TimingConfig(
            rounds=1, calls_per_round=1, warmup=0, budget_s=args.budget
        )
        compile_repeats = (1, 2)
        limit_repeats = 2
    else:
        config = TimingConfig(budget_s=args.budget)
        compile_repeats = (3, 5)
        limit_repeats = 5
    flush = CacheFlusher(enabled=not args.no_flush)
    # The persistent cache off: "cold compile" is a compile, not a load from
    # an earlier run's cache. Tuning turns it on in a private directory.
    os.environ["TCDIALECT_CACHE"] = "0"
    api_err = ours.api_error()
    if api_err is not None:
        _log(f"tcdialect column unavailable: {api_err}")
    machine = describe(ROOT)
    load_start = os.getloadavg()[0]
    thread_counts = sorted({1, threads})

    _log("measuring machine limits (start)")
    limits_start = _limits(thread_counts, limit_repeats)

    rows: list[Row] = []
    tune_dir = (
        Path(tempfile.mkdtemp(prefix="tcdialect-bench-cache-"))
        if args.tune_budget_s > 0
        else None
    )
    tune = (
        (args.tune_budget_s, args.tune_strategy, tune_dir)
        if tune_dir is not None
        else None
    )
    with thread_limits(threads):
        for kernel in kernels:
            sizes = kernel.quick if args.quick else kernel.sizes
            t0 = time.perf_counter()
            row = run_kernel(
                kernel, sizes, threads, config, flush, compile_repeats, tune=tune
            )
            rows.append(row)
            _log(
                f"  {kernel.name}: {_progress(row)} [{time.perf_counter() - t0:.1f} s]"
            )

    scaling: list[Row] = []
    scaling_interleaved: tuple[float, float] | None = None
    chain = [k for k in kernels if k.name == CHAIN]
    if chain and threads > 1:
        _log("elementwise chain at 1 and T threads")
        for t in (1, threads):
            with thread_limits(t):
                sizes = chain[0].quick if args.quick else chain[0].sizes
                row = run_kernel(
                    chain[0], sizes, t, config, flush, compile_repeats, with_floor=False
                )
            scaling.append(row)
            _log(f"  {CHAIN} {t}T: {_progress(row)}")
        sizes = chain[0].quick if args.quick else chain[0].sizes
        scaling_interleaved = _ours_scaling(chain[0], sizes, threads, config, flush)

    if tune_dir is not None:
        shutil.rmtree(tune_dir, ignore_errors=True)

    strategies: list[tuning.Convergence] = []
    first = next((k for k in kernels if k.name == CONVERGENCE_KERNEL), None)
    if tune is not None and first is not None:
        _log(f"strategies on {first.name}: genetic, model, random")
        sizes = first.quick if args.quick else first.sizes
        inputs = first.make_inputs(sizes, np.random.default_rng(0))
        with thread_limits(threads):
            strategies = tuning.convergence(
                first, sizes, inputs, threads, args.tune_budget_s
            )

    backward_rows: list[Row] = []
    if backward:
        _log("backward: ours, numpy, torch autograd")
    with thread_limits(threads):
        for bk in by_name(backward, BACKWARD) if backward else []:
            sizes = bk.quick if args.quick else bk.sizes
            t0 = time.perf_counter()
            row = run_backward(bk, sizes, threads, config, flush)
            backward_rows.append(row)
            _log(f"  {bk.name}: {_progress(row)} [{time.perf_counter() - t0:.1f} s]")

    with thread_limits(threads):
        overhead = {"ours": None, **_peer_overhead_us()}
        overhead["ours"], overhead_err = ours.call_overhead_us(threads)

    _log("measuring machine limits (end)")
    limits_end = _limits(thread_counts, limit_repeats)
    limits: dict[int, Limits] = {}
    for t in thread_counts:
        best = Limits(t)
        best.merge(limits_start[t])
        best.merge(limits_end[t])
        # More threads can always leave one idle: a lower figure at T than at
        # fewer threads is noise (other load), so the bound uses the best.
        for fewer in limits.values():
            best.peak_gflops = max(best.peak_gflops, fewer.peak_gflops)
            best.bw_gbs = max(best.bw_gbs, fewer.bw_gbs)
        limits[t] = best
    for row in rows + scaling + backward_rows:
        row.bound_s, row.bound_kind = limits[row.threads].bound_s(row.flops, row.nbytes)

    return RunResult(
        threads=threads,
        quick=args.quick,
        flush=not args.no_flush,
        machine=machine,
        limits=limits,
        limits_start=limits_start,
        limits_end=limits_end,
        rows=rows,
        scaling=scaling,
        scaling_interleaved=scaling_interleaved,
        overhead_us=overhead,
        overhead_error=overhead_err,
        api_error=api_err,
        elapsed_s=time.perf_counter() - t_start,
        load_avg=(load_start, os.getloadavg()[0]),
        timing=config,
        tune_budget_s=args.tune_budget_s,
        tune_strategy=args.tune_strategy,
        backward=backward_rows,
        strategies=strategies,
    )


def _selected(args: argparse.Namespace) -> tuple[list[Kernel], list[str]]:
    """The forward kernels and the names of the backward rows to run:
    `--only` names rows of either table; `--backward` keeps only the
    backward rows, `--no-backward` only the forward ones."""
    from bench.backward import BACKWARD

    names: list[str] | None = args.only
    backward = [k.name for k in BACKWARD if names is None or k.name in names]
    forward = [k.name for k in KERNELS if names is None or k.name in names]
    if args.backward:
        forward = []
    if args.no_backward:
        backward = []
    return by_name(forward) if forward else [], backward


def _progress(row: Row) -> str:
    parts = []
    for name in (*IMPLS, TUNED):
        r = row.impls.get(name)
        if r is None:
            continue
        if r.error is not None:
            parts.append(f"{name} ERR")
        elif r.median_s is not None:
            bad = "" if r.ok else " WRONG"
            parts.append(f"{name} {r.median_s * 1e3:.2f} ms{bad}")
    return ", ".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line of `python -m bench`."""
    cores = len(os.sched_getaffinity(0))
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Time tcdialect kernels against NumPy and PyTorch CPU "
        "next to this machine's roofline.",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=cores,
        help=f"threads for every implementation (default: all cores = {cores})",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, one timed call each (smoke test; no report unless --output)",
    )
    p.add_argument(
        "--only",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        default=None,
        help="comma-separated kernel names (default: all)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=5.0,
        help="seconds of timed calls per implementation and kernel before it "
        "stops repeating (default 5)",
    )
    p.add_argument(
        "--no-flush", action="store_true", help="skip the cache flush (warm cache)"
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"Markdown report (default: {DEFAULT_OUTPUT.relative_to(ROOT)} "
        "for a full run of all kernels, none otherwise)",
    )
    p.add_argument("--json", type=Path, default=None, help="also dump raw results")
    p.add_argument(
        "--tune-budget-s",
        type=float,
        default=0.0,
        metavar="S",
        help="tune each kernel for about S seconds (tcdialect.tune.autotune) and "
        "time the tuned kernel too, with a new process's cold start on the cache "
        "it filled (default 0: no tuning)",
    )
    p.add_argument(
        "--tune-strategy",
        default="model",
        choices=("model", "genetic", "random"),
        help="the tuner's search strategy (default: model)",
    )
    p.add_argument(
        "--validate",
        action="store_true",
        help="only check TC sources and peers against the reference interpreter",
    )
    p.add_argument("--list", action="store_true", help="list the kernels and exit")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--backward",
        action="store_true",
        help="only the backward rows (derived backward against PyTorch's autograd)",
    )
    which.add_argument(
        "--no-backward", action="store_true", help="skip the backward rows"
    )
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be >= 1")
    if args.tune_budget_s < 0:
        p.error("--tune-budget-s must be >= 0")
    if args.only:
        from bench.backward import BACKWARD

        try:
            by_name(args.only, [*KERNELS, *BACKWARD])
        except ValueError as exc:
            p.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m bench`; returns the exit status."""
    from bench import report

    args = parse_args(argv)
    if args.list:
        from bench.backward import BACKWARD

        for k in [*by_name(None), *BACKWARD]:
            print(f"{k.name:32s} {k.sizes}")
        return 0
    if args.validate:
        from bench.validate import validate

        return 0 if validate(_selected(args)[0]) else 1
    result = run(args)
    print(report.stdout_text(result))
    output = args.output
    partial = args.quick or args.only or args.backward or args.no_backward
    if output is None and not partial:
        output = DEFAULT_OUTPUT
    if output is not None:
        output.write_text(report.markdown(result))
        _log(f"wrote {output}")
    if args.json is not None:
        args.json.write_text(json.dumps(asdict(result), indent=1, default=str))
        _log(f"wrote {args.json}")
    return 0
