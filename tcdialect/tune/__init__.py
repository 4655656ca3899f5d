"""The autotuner: search a target's options for one kernel and its sizes,
and keep the best in the compilation cache for every later process.

::

    mm = tcdialect.define(MATMUL)
    best = tcdialect.tune.autotune(mm, A, B, budget_s=30)     # or mm.autotune(A, B)
    # CpuOptions(threads=2, fusion='max', tile=(64, 32), ...)
    mm(A, B)               # here or in any process: compiled with `best`

- the space is the options class's own (`CpuOptions.search_space`,
  `CudaOptions.search_space`: candidate values by field), so the tuner
  knows neither target (`space.SearchSpace`);
- strategies (`strategies`): "genetic" (TC's, with its parameters),
  "model" (a cost model fitted on the measurements ranks many candidates
  and the best few are measured), "random";
- candidates compile in parallel worker processes and are measured one at
  a time in another, each with a time limit; a crash, hang or wrong result
  makes a candidate invalid with the reason (`executors`, `measure`);
- the record (best, default, every trial) is a cache entry keyed by the
  kernel's key with `"options": "tuned"`; a log next to it lets a killed
  run resume (`record`); `tuned_options` is what `Kernel` asks;
- `tc-tune` is the command line (`cli`). See docs/tuning.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tcdialect.tune.record import tuned_options, tuning_record

if TYPE_CHECKING:
    from tcdialect.kernel import Kernel


def autotune(
    kernel: Kernel,
    *inputs: Any,
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
) -> Any:
    """Search `kernel`'s target options for the sizes of `inputs`; store
    the best in the cache and return it (never slower than the kernel's own
    options, which are measured first).

    budget_s: wall-clock seconds for the search; trials: at most this many
        candidates (the default included); the search also ends when the
        strategy is done (the genetic one after its generations) or on
        Ctrl-C, keeping the best so far.
    strategy: "genetic", "model" or "random"; `settings` are its keyword
        arguments (genetic: population, generations, crossover, mutation,
        elites, near_start; model: batch, samples, explore, ridge,
        neighbours; random: batch).
    executor: "local" (worker processes) or "ray" (Ray tasks and an actor;
        `pip install tcdialect[distributed]`).
    verbose: a progress bar and a summary table; False prints nothing.
    seed: of the strategy's random choices (a rerun proposes the same
        candidates, so a killed run resumes from its log).
    jobs: compile processes (default: the cores, at most 8); repeat: timed
        calls per candidate (the median counts); prune_factor: a candidate
        whose first timed call exceeds this many times the best median is
        not timed further; compile_timeout_s, run_timeout_s: limits per
        candidate (run: default from the default options' time);
        flush_bytes: written before each timed call to evict the caches.
    """
    from tcdialect.tune.tuner import Tuner

    best = (
        Tuner(
            kernel,
            inputs,
            budget_s=budget_s,
            strategy=strategy,
            executor=executor,
            verbose=verbose,
            trials=trials,
            seed=seed,
            jobs=jobs,
            repeat=repeat,
            prune_factor=prune_factor,
            compile_timeout_s=compile_timeout_s,
            run_timeout_s=run_timeout_s,
            flush_bytes=flush_bytes,
            settings=settings,
        )
        .run()
        .options
    )
    _prime_quick_start(kernel, inputs)
    return best


def _prime_quick_start(kernel: Kernel, inputs: tuple[Any, ...]) -> None:
    """Load the tuned code once through a kernel of `kernel`'s source with
    default options (those that use tuned ones): that writes the cache's
    quick-start record (`tcdialect.cache.quick`), so that the first call of
    these shapes in a new process loads the tuned code without the compiler."""
    from tcdialect.diagnostics import TCError
    from tcdialect.kernel import Kernel

    if not type(kernel).quick_start:
        return
    try:
        plain = Kernel(kernel.source, kernel.entry, target=kernel.target)
        if plain._quick is not None:  # pyright: ignore[reportPrivateUsage]
            plain.compile(*inputs)
    except TCError:
        pass  # (only a head start: the first plain call does the same)


__all__ = ["autotune", "tuned_options", "tuning_record"]
