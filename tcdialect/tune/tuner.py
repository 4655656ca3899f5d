"""`Tuner`: the search loop of `tcdialect.tune.autotune`.

One run, for one kernel and the sizes of its inputs:

1. the kernel's own options (the default) compile and run first: their
   outputs are the reference every candidate is checked against, and their
   time the one to beat;
2. the strategy proposes a batch; candidates seen before are answered from
   memory, candidates in the tuning log (a killed run's) from the log; the
   rest compile in parallel, then are measured one at a time, each pruned
   once its first timed call is `prune_factor` times the best median;
3. each result is appended to the log as it comes, and the progress bar
   shows the stage, the best time and its speedup over the default;
4. the run stops at `budget_s` seconds, after `trials` candidates, when the
   strategy is done, or on Ctrl-C (keeping what it measured); the best and
   the default are measured again, three times each in turn, and the best
   is kept only if its fastest time still beats the default's (so the
   result is never slower than the default);
5. the record goes to the cache (`tcdialect.tune.record`) and a summary
   table is printed.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from tcdialect.arguments import prepare_inputs
from tcdialect.cache.store import CacheStore
from tcdialect.diagnostics import TCError
from tcdialect.tune.executors import Executor, LocalExecutor, RayExecutor
from tcdialect.tune.measure import Job, Outcome, Setup, faults_from_env
from tcdialect.tune.record import (
    append_log,
    log_path,
    read_log,
    store_record,
    tuning_key,
)
from tcdialect.tune.space import SearchSpace, changed_fields, options_fields
from tcdialect.tune.strategies import Strategy, make_strategy

if TYPE_CHECKING:
    from tcdialect.kernel import Kernel

EXECUTORS = ("local", "ray")


@dataclass
class TuneResult:
    """What a run found: the options to use and the record stored."""

    options: Any
    record: dict[str, Any]
    interrupted: bool = False


#: How many times `_confirm` measures the best and the default, in turn.
CONFIRM_ROUNDS = 3


@dataclass
class _Trial:
    options: Any
    status: str
    median_s: float | None = None
    times: list[float] = field(default_factory=list[float])
    reason: str = ""
    compile_s: float = 0.0
    source: str = "measured"
    #: The compile job and the entry it made in the scratch cache.
    built: tuple[int, str] | None = None

    def json(self) -> dict[str, Any]:
        return {
            "options": repr(self.options),
            "fields": options_fields(self.options),
            "status": self.status,
            "median_s": self.median_s,
            "times": self.times,
            "reason": self.reason,
            "compile_s": self.compile_s,
            "source": self.source,
        }


class Tuner:
    """One tuning run (see the module docstring and `autotune`)."""

    def __init__(
        self,
        kernel: Kernel,
        inputs: Sequence[Any],
        *,
        budget_s: float = 60.0,
        strategy: str = "genetic",
        executor: str = "local",
        verbose: bool = True,
        trials: int | None = None,
        seed: int = 0,
        jobs: int | None = None,
        repeat: int = 5,
        prune_factor: float = 3.0,
        compile_timeout_s: float = 120.0,
        run_timeout_s: float | None = None,
        flush_bytes: int = 32 << 20,
        settings: Mapping[str, Any] | None = None,
        out: IO[str] | None = None,
    ):
        if executor not in EXECUTORS:
            raise TCError(
                f"unknown executor '{executor}' (expected one of {', '.join(EXECUTORS)})"
            )
        if budget_s <= 0 or repeat < 1:
            raise TCError("autotune: budget_s > 0 and repeat >= 1")
        self.kernel = kernel
        arrays, sizes = prepare_inputs(kernel.defop, inputs)
        kernel.checked.check_sizes(sizes)
        self.inputs: list[np.ndarray[Any, Any]] = [np.asarray(a) for a in arrays]
        self.sizes = sizes
        self.budget_s = budget_s
        self.executor_name = executor
        self.verbose = verbose
        self.trials = trials
        self.repeat = repeat
        self.prune_factor = prune_factor
        self.compile_timeout_s = compile_timeout_s
        self.run_timeout_s = run_timeout_s
        self.flush_bytes = flush_bytes
        self.jobs = jobs or min(os.cpu_count() or 1, 8)
        self.out = out if out is not None else sys.stdout
        self.default = kernel.options
        self.space = SearchSpace.of(self.default, sizes, kernel.lowering.info)
        self.strategy: Strategy = make_strategy(
            strategy,
            self.space,
            self.space.encode(self.default),
            random.Random(seed),
            settings or {},
        )
        self.faults = faults_from_env()
        self.store = CacheStore.from_env()
        self.key = tuning_key(kernel, sizes)
        self.log = log_path(self.store, self.key) if self.store is not None else None
        self.logged = read_log(self.log) if self.log is not None else {}
        self.results: dict[str, _Trial] = {}
        self.order: list[_Trial] = []
        self._ident = 0
        self._start = 0.0

    # ------------------------------------------------------------ helpers

    def _job(self, options: Any, **kw: Any) -> Job:
        self._ident += 1
        return Job(self._ident, options, self.faults, **kw)

    @property
    def measured(self) -> int:
        """Candidates measured by this run (derived from `order`, so that a
        Ctrl-C between two statements cannot make the counts disagree with
        the record's trials)."""
        return sum(t.source != "log" for t in self.order)

    @property
    def resumed(self) -> int:
        """Candidates taken from the log of an earlier, killed run."""
        return sum(t.source == "log" for t in self.order)

    def _left_s(self) -> float:
        return self.budget_s - (time.monotonic() - self._start)

    def _best(self) -> _Trial | None:
        ok = [t for t in self.order if t.status == "ok" and t.median_s is not None]
        return min(ok, key=lambda t: t.median_s or math.inf) if ok else None

    def _run_timeout(self, default: _Trial | None) -> float:
        if self.run_timeout_s is not None:
            return self.run_timeout_s
        if default is None or default.median_s is None:
            return self.compile_timeout_s
        return 5.0 + 20 * default.median_s * (self.repeat + 2)

    def _record(self, trial: _Trial, fresh: bool) -> None:
        self.results[repr(trial.options)] = trial
        self.order.append(trial)
        if fresh and self.log is not None:
            append_log(self.log, trial.json())

    # ------------------------------------------------------------ run

    def run(self) -> TuneResult:
        """Search, store the record, print the summary; the best options."""
        from tqdm import tqdm

        scratch = tempfile.mkdtemp(prefix="tcdialect-tune-")
        setup = Setup(
            self.kernel.source,
            self.kernel.entry,
            self.kernel.target,
            "<tune>",
            dict(self.sizes),
            tuple(a.shape for a in self.inputs),
            tuple(str(a.dtype) for a in self.inputs),
            scratch,
            self.repeat,
            self.flush_bytes,
        )
        executor: Executor = (
            RayExecutor(setup, self.inputs)
            if self.executor_name == "ray"
            else LocalExecutor(setup, self.inputs, self.jobs)
        )
        bar = tqdm(
            total=self.trials,
            disable=not self.verbose,
            unit="cand",
            desc=f"tune @{self.kernel.entry}",
            file=sys.stderr,
            dynamic_ncols=True,
        )
        self._start = time.monotonic()
        interrupted = False
        try:
            default = self._default(executor)
            bar.update(1)
            self._show(bar, default)
            try:
                self._search(executor, bar, default)
            except KeyboardInterrupt:
                interrupted = True
            try:
                best = self._confirm(executor, default)
            except KeyboardInterrupt:  # a second Ctrl-C: keep what was measured
                interrupted, best = True, self._best() or default
            if self.store is not None and best.built is not None:
                data = executor.entry_bytes(*best.built)
                if data is not None:  # the chosen code: a later call loads it
                    self.store.adopt(data)
        finally:
            bar.close()
            executor.close()
            shutil.rmtree(scratch, ignore_errors=True)
        record = self._record_json(best, default, interrupted)
        if self.store is not None:
            store_record(self.store, self.key, record)
        if self.verbose:
            self._summary(best, default, interrupted)
        return TuneResult(best.options, record, interrupted)

    def _default(self, executor: Executor) -> _Trial:
        """Compile and run the default options: the reference (and its time,
        unless the log has it)."""
        logged = self.logged.get(repr(self.default))
        timed = logged is None or logged.get("status") != "ok"
        job = self._job(self.default, repeat=None if timed else 0)
        compiled = executor.compile([job], self.compile_timeout_s)[job.ident]
        outcome = (
            executor.measure(job, compiled.entry_name, self.compile_timeout_s)
            if compiled.status == "ok"
            else compiled
        )
        if outcome.status != "ok":
            raise TCError(
                f"autotune: the default options of @{self.kernel.entry} fail "
                f"({outcome.reason}); nothing to tune against"
            )
        if not timed:
            trial = self._from_log(self.default, logged or {})
            trial.built = (job.ident, compiled.entry_name)
        else:
            trial = _Trial(
                self.default,
                "ok",
                outcome.median_s,
                outcome.times,
                "",
                compiled.seconds,
                built=(job.ident, compiled.entry_name),
            )
        self._record(trial, timed)
        return trial

    def _from_log(self, options: Any, logged: Mapping[str, Any]) -> _Trial:
        median = logged.get("median_s")
        return _Trial(
            options,
            str(logged.get("status", "invalid")),
            float(median) if isinstance(median, int | float) else None,
            [float(t) for t in logged.get("times", [])],
            str(logged.get("reason", "")),
            float(logged.get("compile_s", 0.0)),
            "log",
        )

    def _done(self) -> bool:
        return self._left_s() <= 0 or (
            self.trials is not None and len(self.order) >= self.trials
        )

    def _search(self, executor: Executor, bar: Any, default: _Trial) -> None:
        while not self._done():
            batch = self.strategy.propose()
            if not batch:
                return
            bar.set_description_str(f"tune @{self.kernel.entry} {self.strategy.stage}")
            observed: list[tuple[dict[str, Any], float | None]] = []
            todo: list[tuple[dict[str, Any], Any]] = []
            for genes in batch:
                options = self.space.decode(genes)
                if options is None:
                    observed.append((genes, None))
                    continue
                known = self.results.get(repr(options))
                if known is None and repr(options) in self.logged:
                    if self._done():
                        break
                    known = self._from_log(options, self.logged[repr(options)])
                    self._record(known, False)
                    bar.update(1)
                if known is not None:
                    observed.append((genes, self._time(known)))
                elif all(repr(o) != repr(options) for _, o in todo):
                    todo.append((genes, options))
            if self.trials is not None:
                todo = todo[: max(0, self.trials - len(self.order))]
            # in chunks of twice the compile processes, so that a large batch
            # (the genetic search's first generation) stops at the budget
            # instead of compiling every candidate first
            step = 2 * self.jobs
            for first in range(0, len(todo), step):
                if self._done():
                    break
                chunk = todo[first : first + step]
                for genes, trial in self._evaluate(executor, chunk, bar, default):
                    observed.append((genes, self._time(trial)))
            for genes, options in todo:
                if repr(options) not in self.results:
                    observed.append((genes, None))  # out of budget: not measured
            self.strategy.observe(observed)

    def _time(self, trial: _Trial) -> float | None:
        return trial.median_s if trial.status == "ok" else None

    def _evaluate(
        self,
        executor: Executor,
        todo: list[tuple[dict[str, Any], Any]],
        bar: Any,
        default: _Trial,
    ) -> list[tuple[dict[str, Any], _Trial]]:
        """Compile `todo` in parallel, then measure each in turn."""
        jobs = [self._job(options) for _, options in todo]
        compiled = executor.compile(
            jobs, min(self.compile_timeout_s, max(self._left_s(), 1.0))
        )
        done: list[tuple[dict[str, Any], _Trial]] = []
        for (genes, options), job in zip(todo, jobs):
            if self._done():
                break
            built = compiled.get(job.ident) or Outcome(
                job.ident, "invalid", "not compiled"
            )
            if built.status != "ok":
                trial = _Trial(
                    options, built.status, None, [], built.reason, built.seconds
                )
            else:
                best = self._best()
                prune = (
                    self.prune_factor * best.median_s
                    if best is not None and best.median_s is not None
                    else None
                )
                run = executor.measure(
                    dataclasses.replace(job, prune_s=prune),
                    built.entry_name,
                    self._run_timeout(default),
                )
                trial = _Trial(
                    options,
                    run.status,
                    run.median_s,
                    run.times,
                    run.reason,
                    built.seconds,
                    built=(job.ident, built.entry_name),
                )
            self._record(trial, True)
            done.append((genes, trial))
            bar.update(1)
            self._show(bar, default)
        return done

    def _show(self, bar: Any, default: _Trial) -> None:
        best = self._best()
        if best is None or best.median_s is None or default.median_s is None:
            return
        bar.set_postfix_str(
            f"best {best.median_s * 1e3:.4g} ms, "
            f"{default.median_s / best.median_s:.2f}x default"
        )

    def _confirm(self, executor: Executor, default: _Trial) -> _Trial:
        """The best trial, if measured again it still beats the default;
        else the default. The two are measured in turn, `CONFIRM_ROUNDS`
        times each, and their fastest medians compared: a burst of load on
        the machine during one measurement does not decide."""
        best = self._best()
        if best is None or best.options == self.default:
            return default
        built: dict[str, tuple[Job, str]] = {}
        for trial in (default, best):
            job = self._job(trial.options)
            done = executor.compile([job], self.compile_timeout_s)[job.ident]
            if done.status != "ok":
                return default
            built[repr(trial.options)] = (job, done.entry_name)
            trial.built = (job.ident, done.entry_name)
        again: dict[str, float] = {}
        for _ in range(CONFIRM_ROUNDS):
            for key, (job, entry) in built.items():
                run = executor.measure(job, entry, self._run_timeout(default))
                if run.status != "ok" or run.median_s is None:
                    return default
                again[key] = min(again.get(key, math.inf), run.median_s)
        if again[repr(best.options)] < again[repr(default.options)]:
            return best
        return default

    # ------------------------------------------------------------ report

    def _record_json(
        self, best: _Trial, default: _Trial, interrupted: bool
    ) -> dict[str, Any]:
        def point(trial: _Trial) -> dict[str, Any]:
            return {
                "options": repr(trial.options),
                "fields": options_fields(trial.options),
                "median_s": trial.median_s,
            }

        speedup = (
            default.median_s / best.median_s
            if default.median_s and best.median_s
            else 1.0
        )
        return {
            "best": point(best),
            "default": point(default),
            "speedup": speedup,
            "strategy": self.strategy.name,
            "executor": self.executor_name,
            "budget_s": self.budget_s,
            "elapsed_s": time.monotonic() - self._start,
            "measured": self.measured,
            "resumed": self.resumed,
            "interrupted": interrupted,
            "trials": [t.json() for t in self.order],
        }

    def _summary(self, best: _Trial, default: _Trial, interrupted: bool) -> None:
        ok = sorted(
            (t for t in self.order if t.status == "ok" and t.median_s is not None),
            key=lambda t: t.median_s or math.inf,
        )
        rest = [t for t in self.order if t.status != "ok"]
        base = default.median_s or math.nan
        w = self.out.write
        w(
            f"@{self.kernel.entry} {','.join(f'{k}={v}' for k, v in self.sizes.items())}: "
            f"{len(self.order)} candidates ({self.measured} measured, "
            f"{self.resumed} from the log), {len(rest)} invalid or pruned, "
            f"{time.monotonic() - self._start:.1f} s"
            f"{', interrupted' if interrupted else ''}\n"
        )
        w(f"{'rank':>4}  {'median ms':>10}  {'speedup':>7}  {'status':<7}  options\n")
        for i, t in enumerate(ok[:10], 1):
            w(
                f"{i:>4}  {(t.median_s or 0) * 1e3:>10.4g}  {base / (t.median_s or 1):>6.2f}x"
                f"  {t.status:<7}  {changed_fields(t.options, self.default)}\n"
            )
        for t in rest[:10]:
            w(
                f"{'-':>4}  {'-':>10}  {'-':>7}  {t.status:<7}  "
                f"{changed_fields(t.options, self.default)}: {t.reason}\n"
            )
        w(
            f"chosen: {changed_fields(best.options, self.default)} "
            f"({base / (best.median_s or base):.2f}x the default)\n"
        )
