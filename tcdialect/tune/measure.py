"""What runs in the tuner's worker processes: compile a candidate, measure one.

Both sides see the kernel through a `Setup` (its source, entry, target, the
inputs) and a candidate through a `Job` (its options). `compile_candidate`
compiles with the persistent cache on in a scratch directory private to the
tuning run, so that the code it made can be loaded elsewhere: by the
measuring process on this machine (same directory), or from the entry's
bytes on another (`Job.entry_bytes`, for Ray). `Measurer.measure` loads or
compiles the candidate, runs it once, checks its outputs against the
reference (the default options' outputs), then times it: each timed call
after a write of `flush_bytes` that evicts the caches, the median of
`repeat` calls, and no more calls once the first took over `prune_s`.

A worker that crashes or hangs is the executor's to kill
(`tcdialect.tune.executors`): nothing here guards against it.

Test hook: `TCDIALECT_TUNE_FAULTS` holds a JSON list of faults, each
`{"match": {field: value, ...}, "unless": {...}, "fault": KIND,
"phase": "run"|"compile"}`: a candidate whose options have every field
value of `match` (tuples as lists), and not every one of `unless` if given,
crashes (`"crash"`: SIGSEGV), hangs (`"hang"`), computes a wrong result
(`"wrong"`), or sleeps `"seconds"` (default 0.05) in every call (`"slow"`).
The tuner reads the variable and sends the faults with each job.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcdialect.diagnostics import TCError

FAULTS_VARIABLE = "TCDIALECT_TUNE_FAULTS"

Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Setup:
    """The kernel being tuned, as a worker rebuilds it."""

    source: str
    entry: str
    target: str
    filename: str
    sizes: dict[str, int]
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    #: The private cache directory of this run (compile writes, measure reads).
    scratch: str
    repeat: int = 5
    flush_bytes: int = 32 << 20


@dataclass(frozen=True)
class Job:
    """One candidate to compile or measure."""

    ident: int
    options: Any
    faults: tuple[dict[str, Any], ...] = ()
    #: Measure: the compiled entry's bytes (None: read the scratch directory).
    entry_bytes: bytes | None = None
    #: Measure: stop timing when the first timed call takes longer.
    prune_s: float | None = None
    #: Measure: how many timed calls (None: `Setup.repeat`).
    repeat: int | None = None


@dataclass
class Outcome:
    """What a compile or measure job gave.

    status: "ok", or why the candidate is not a result: "invalid" (it
        failed to compile, crashed, hung or computed something else;
        `reason` says which), "pruned" (its first timed call was too slow).
    """

    ident: int
    status: str = "ok"
    reason: str = ""
    seconds: float = 0.0
    times: list[float] = field(default_factory=list[float])
    #: Compile: the entry's bytes, when asked for. Measure: the outputs of
    #: the check run, when it was the reference's.
    entry_bytes: bytes | None = None
    outputs: list[Array] | None = None
    #: Compile: the entry's file name in the scratch directory.
    entry_name: str = ""

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.times) if self.times else None


def faults_from_env() -> tuple[dict[str, Any], ...]:
    """The faults `TCDIALECT_TUNE_FAULTS` asks for (see the module docstring)."""
    text = os.environ.get(FAULTS_VARIABLE)
    if not text:
        return ()
    try:
        faults = json.loads(text)
    except ValueError:
        raise TCError(f"{FAULTS_VARIABLE} is not JSON: {text!r}") from None
    if not isinstance(faults, list):
        raise TCError(f"{FAULTS_VARIABLE} must be a JSON list of faults")
    return tuple(f for f in faults if isinstance(f, dict))  # pyright: ignore[reportUnknownVariableType]


def _matches(options: Any, match: Mapping[str, Any]) -> bool:
    def norm(v: Any) -> Any:
        return [norm(x) for x in v] if isinstance(v, tuple | list) else v

    return all(norm(getattr(options, k, object())) == norm(v) for k, v in match.items())


def _fault(job: Job, phase: str) -> dict[str, Any] | None:
    for fault in job.faults:
        unless = fault.get("unless")
        if (
            fault.get("phase", "run") == phase
            and _matches(job.options, fault.get("match", {}))
            and not (unless is not None and _matches(job.options, unless))
        ):
            return fault
    return None


def _inject(fault: dict[str, Any] | None) -> None:
    """Crash or hang now, if `fault` says so."""
    if fault is None:
        return
    if fault.get("fault") == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if fault.get("fault") == "hang":
        while True:
            time.sleep(3600)


def _kernel(setup: Setup, options: Any) -> Any:
    from tcdialect.kernel import Kernel

    return Kernel(
        setup.source,
        setup.entry,
        target=setup.target,
        options=options,
        filename=setup.filename,
    )


def use_scratch(setup: Setup) -> None:
    """Point this process's persistent cache at the run's scratch directory."""
    os.environ["TCDIALECT_CACHE"] = "1"
    os.environ["TCDIALECT_CACHE_DIR"] = setup.scratch


def compile_candidate(setup: Setup, job: Job, with_bytes: bool = False) -> Outcome:
    """Compile `job`'s candidate into the scratch cache (call `use_scratch`
    first); with `with_bytes`, return the entry's bytes too."""
    from tcdialect.cache.store import CacheStore
    from tcdialect.tune.record import compiled_key

    out = Outcome(job.ident)
    start = time.perf_counter()
    try:
        _inject(_fault(job, "compile"))
        kernel = _kernel(setup, job.options)
        inputs = [np.zeros(s, dtype=d) for s, d in zip(setup.shapes, setup.dtypes)]
        kernel.compile(*inputs)
        path = CacheStore(setup.scratch).path_of(
            compiled_key(kernel, setup.sizes, job.options)
        )
        out.entry_name = path.name
        if with_bytes and path.exists():
            out.entry_bytes = path.read_bytes()
    except Exception as err:  # any failure is this candidate's
        out.status, out.reason = "invalid", f"compile error: {_describe(err)}"
    out.seconds = time.perf_counter() - start
    return out


def _describe(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(err, TCError):
        return first
    where = traceback.extract_tb(err.__traceback__)[-1:] or []
    at = f" at {Path(where[0].filename).name}:{where[0].lineno}" if where else ""
    return f"{type(err).__name__}: {first}{at}"


def differs(got: Sequence[Array], want: Sequence[Array]) -> str | None:
    """Why outputs `got` are not `want` (None: they agree). Floating-point
    outputs agree within a relative error of the largest magnitude (1e-3 for
    32-bit floats, 1e-9 for 64-bit, 1e-2 for 16-bit): other schedules sum
    reductions in another order."""
    if len(got) != len(want):
        return f"{len(got)} outputs, the default gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {i} is {g.dtype}{list(g.shape)}, the default's {w.dtype}{list(w.shape)}"
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g, w):
                return f"output {i} differs from the default options' output"
            continue
        rtol = {8: 1e-9, 4: 1e-3}.get(w.dtype.itemsize, 1e-2)
        gf, wf = g.astype(np.float64), w.astype(np.float64)
        if not np.array_equal(np.isnan(gf), np.isnan(wf)):
            return f"output {i} has NaNs where the default's has none, or not"
        finite = np.isfinite(wf)
        scale = float(np.max(np.abs(wf[finite]), initial=0.0))
        error = float(np.max(np.abs(gf[finite] - wf[finite]), initial=0.0))
        if error > rtol * scale + 1e-30 or not np.array_equal(
            gf[~finite & ~np.isnan(wf)], wf[~finite & ~np.isnan(wf)]
        ):
            return (
                f"output {i} differs from the default options' output "
                f"(max error {error:.3g}, largest value {scale:.3g})"
            )
    return None


class Measurer:
    """Runs and times candidates on this process's device (one at a time)."""

    def __init__(self, setup: Setup, inputs: Sequence[Array]):
        self.setup = setup
        self.inputs = list(inputs)
        self.reference: list[Array] | None = None
        self._flush = np.ones(max(1, setup.flush_bytes // 4), dtype=np.float32)
        self._flushes = 0
        use_scratch(setup)
        # the frontend's and the target's imports, before any time limit runs
        self.info = _kernel(setup, None).lowering.info

    def set_reference(self, outputs: Sequence[Array] | None) -> None:
        self.reference = None if outputs is None else list(outputs)

    def flush(self) -> None:
        self._flushes += 1
        self._flush.fill(float(self._flushes & 0xFFFF))

    def measure(self, job: Job, entry_name: str = "") -> Outcome:
        """Run `job`'s candidate once and check it (the first job, without
        a reference, gives the reference), then time it."""
        import tcdialect

        out = Outcome(job.ident)
        if job.entry_bytes is not None and entry_name:
            _write_entry(Path(self.setup.scratch) / entry_name, job.entry_bytes)
        fault = _fault(job, "run")
        _inject(fault)
        delay = (
            float(fault.get("seconds", 0.05))
            if fault and fault.get("fault") == "slow"
            else 0.0
        )
        try:
            kernel = _kernel(self.setup, job.options)
            result = kernel(*self.inputs)
            outputs = list(result) if isinstance(result, tuple) else [result]
            if fault is not None and fault.get("fault") == "wrong":
                outputs[0] = outputs[0] + 1
            if self.reference is None:
                self.reference = [o.copy() for o in outputs]
                out.outputs = self.reference
            elif (why := differs(outputs, self.reference)) is not None:
                out.status, out.reason = "invalid", f"wrong result: {why}"
                return out
            buffers = tuple(outputs)
            kernel(*self.inputs, out=buffers)  # warm: this call path's one-time work
            repeat = self.setup.repeat if job.repeat is None else job.repeat
            for i in range(repeat):
                self.flush()
                start = time.perf_counter()
                kernel(*self.inputs, out=buffers)
                if delay:
                    time.sleep(delay)
                out.times.append(time.perf_counter() - start)
                if i == 0 and job.prune_s is not None and out.times[0] > job.prune_s:
                    out.status = "pruned"
                    out.reason = (
                        f"first run {out.times[0] * 1e3:.3g} ms > "
                        f"{job.prune_s * 1e3:.3g} ms"
                    )
                    break
        except Exception as err:  # any failure is this candidate's
            out.status, out.reason = "invalid", f"run error: {_describe(err)}"
        finally:
            tcdialect.clear_cache()
        return out


def _write_entry(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
