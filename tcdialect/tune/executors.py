"""Executors: where candidates compile and run, with time limits.

Both give the tuner two calls: `compile(jobs, timeout_s)` compiles a batch
in parallel and `measure(job, entry_name, timeout_s)` measures one candidate
(one at a time: timing is serialised on the device). A candidate that
crashes its process or does not answer within its limit is an "invalid"
`Outcome` with the reason; the process is killed and replaced.

- `LocalExecutor` (the default): `jobs` compile processes and one measuring
  process, started with multiprocessing's "forkserver" context (a process
  that can be killed: a hung kernel cannot be interrupted from inside; a
  fork of a server that imported the compiler once, `PRELOAD`, with the
  tuner's environment). Workers
  ignore SIGINT, so that Ctrl-C reaches only the tuner, which stops them.
- `RayExecutor` (`executor="ray"`, the `tcdialect[distributed]` extra):
  each compile is a Ray task (`num_cpus=1`, no retries) that returns the
  compiled cache entry's bytes, and the measuring is one Ray actor
  (`num_cpus=0`: it holds no CPU that compiles need) that writes them into
  its own scratch cache and loads them. It uses the Ray instance this
  process already started (`ray.init(address=...)` for a cluster), or
  starts a local one, which `close` shuts down.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcdialect.diagnostics import TCError
from tcdialect.tune.measure import (
    Job,
    Measurer,
    Outcome,
    Setup,
    compile_candidate,
    use_scratch,
)

Array = np.ndarray[Any, Any]

#: How long a new measuring process may take to start (imports included).
START_TIMEOUT_S = 120.0


class Executor(ABC):
    """Compiles and measures candidates (see the module docstring)."""

    def __init__(self, setup: Setup, inputs: Sequence[Array]):
        self.setup = setup
        self.inputs = list(inputs)
        #: The reference outputs, given to every new measuring process.
        self.reference: list[Array] | None = None

    @abstractmethod
    def compile(self, jobs: Sequence[Job], timeout_s: float) -> dict[int, Outcome]:
        """Compile `jobs` in parallel; their outcomes by `Job.ident`."""

    @abstractmethod
    def measure(self, job: Job, entry_name: str, timeout_s: float) -> Outcome:
        """Check and time one compiled candidate."""

    def entry_bytes(self, ident: int, entry_name: str) -> bytes | None:
        """The cache entry that compiling job `ident` made (None if none)."""
        path = Path(self.setup.scratch) / entry_name
        try:
            return path.read_bytes() if entry_name else None
        except OSError:
            return None

    @abstractmethod
    def close(self) -> None:
        """Stop every worker."""


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-exitcode).name}"
    return f"exit status {exitcode}"


def _compile_main(conn: Any, setup: Setup) -> None:
    """A compile process: compile each job received, answer its outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    use_scratch(setup)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        conn.send(compile_candidate(setup, job))


def _measure_main(
    conn: Any, setup: Setup, inputs: list[Array], reference: list[Array] | None
) -> None:
    """The measuring process: measure each (job, entry name) received."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    measurer = Measurer(setup, inputs)
    measurer.set_reference(reference)
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        job, entry_name = message
        conn.send(measurer.measure(job, entry_name))


#: What the fork server imports once, so that each worker forked from it
#: starts with the frontend, the pipeline and the JIT loaded (a spawned
#: worker spent about a second of CPU importing them).
PRELOAD = [
    "tcdialect.tune.executors",
    "tcdialect.kernel",
    "tcdialect.pipeline",
    "tcdialect.backend.cpu.target",
    "tcdialect.backend.cpu.jit",
]


def _child(target: Any, environ: dict[str, str], *args: Any) -> None:
    """A worker's entry: the environment of the tuner when the worker started
    (the fork server's is that of its own start), then `target`."""
    os.environ.clear()
    os.environ.update(environ)
    target(*args)


class _Process:
    """A worker process and our end of its pipe: a fork of multiprocessing's
    fork server (a clean single-threaded process that imported `PRELOAD`),
    not of the tuner."""

    def __init__(self, target: Any, *args: Any):
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_child, args=(target, dict(os.environ), child, *args), daemon=True
        )
        self.process.start()
        child.close()

    def kill(self) -> str:
        """Kill the process; how it ended, if it had already."""
        ended = self.process.exitcode
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        self.process.join(5)
        with contextlib.suppress(OSError):
            self.conn.close()
        return _death(ended if ended is not None else self.process.exitcode)

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(1)
        if self.process.is_alive():
            self.kill()


class LocalExecutor(Executor):
    """Spawned worker processes on this machine (see the module docstring)."""

    def __init__(self, setup: Setup, inputs: Sequence[Array], jobs: int):
        super().__init__(setup, inputs)
        self.jobs = max(1, jobs)
        self._idle: list[_Process] = []
        # started now, so that its imports overlap the first compiles
        self._measurer: _Process | None = self._start_measurer()
        self._started = False

    def compile(self, jobs: Sequence[Job], timeout_s: float) -> dict[int, Outcome]:
        pending = deque(jobs)
        running: dict[Any, tuple[_Process, Job, float]] = {}
        done: dict[int, Outcome] = {}
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    worker = (
                        self._idle.pop()
                        if self._idle
                        else _Process(_compile_main, self.setup)
                    )
                    job = pending.popleft()
                    worker.conn.send(job)
                    running[worker.conn] = (worker, job, time.monotonic() + timeout_s)
                wait = max(
                    0.0, min(d for _, _, d in running.values()) - time.monotonic()
                )
                for conn in multiprocessing.connection.wait(list(running), wait):
                    worker, job, _ = running.pop(conn)
                    try:
                        done[job.ident] = worker.conn.recv()
                        self._idle.append(worker)
                    except (EOFError, OSError):
                        why = worker.kill()
                        done[job.ident] = Outcome(
                            job.ident,
                            "invalid",
                            f"crash: the compile process died ({why})",
                        )
                now = time.monotonic()
                for conn, (worker, job, deadline) in list(running.items()):
                    if now >= deadline:
                        del running[conn]
                        worker.kill()
                        done[job.ident] = Outcome(
                            job.ident,
                            "invalid",
                            f"hang: no compile result within {timeout_s:.3g} s",
                        )
        finally:
            for worker, _, _ in running.values():  # interrupted: no half-done work
                worker.kill()
        return done

    def _start_measurer(self) -> _Process:
        return _Process(_measure_main, self.setup, self.inputs, self.reference)

    def _ready_measurer(self) -> _Process:
        if self._measurer is not None and self._started:
            return self._measurer
        worker = self._measurer or self._start_measurer()
        self._measurer = None
        if not worker.conn.poll(START_TIMEOUT_S):
            worker.kill()
            raise TCError("the tuner's measuring process did not start")
        try:
            worker.conn.recv()
        except (EOFError, OSError):
            raise TCError(
                f"the tuner's measuring process died at start ({worker.kill()})"
            ) from None
        self._measurer, self._started = worker, True
        return worker

    def measure(self, job: Job, entry_name: str, timeout_s: float) -> Outcome:
        worker = self._ready_measurer()
        try:
            worker.conn.send((job, entry_name))
            if worker.conn.poll(timeout_s):
                outcome: Outcome = worker.conn.recv()
                if outcome.outputs is not None:
                    self.reference = outcome.outputs
                return outcome
            reason = f"hang: no result within {timeout_s:.3g} s"
        except (EOFError, OSError):
            reason = f"crash: the measuring process died ({worker.kill()})"
        except BaseException:
            self._measurer = None
            worker.kill()
            raise
        self._measurer = None
        worker.kill()
        return Outcome(job.ident, "invalid", reason)

    def close(self) -> None:
        workers = self._idle + ([self._measurer] if self._measurer else [])
        self._idle, self._measurer = [], None
        for worker in workers:
            worker.stop()


def import_ray() -> Any:
    """The `ray` module; a `TCError` naming the extra when it is missing."""
    try:
        import ray
    except ImportError:
        raise TCError(
            "executor='ray' needs Ray: pip install tcdialect[distributed]"
        ) from None
    return ray


def _ray_compile(setup: Setup, job: Job) -> Outcome:
    """A Ray task: compile into this worker's scratch cache, return the bytes."""
    use_scratch(setup)
    return compile_candidate(setup, job, with_bytes=True)


class _MeasureActor:
    """The Ray actor that measures (wraps a `Measurer`)."""

    def __init__(
        self, setup: Setup, inputs: list[Array], reference: list[Array] | None
    ):
        self.measurer = Measurer(setup, inputs)
        self.measurer.set_reference(reference)

    def ready(self) -> bool:
        return True

    def measure(self, job: Job, entry_name: str) -> Outcome:
        return self.measurer.measure(job, entry_name)


class RayExecutor(Executor):
    """Ray tasks compile, one Ray actor measures (see the module docstring)."""

    def __init__(self, setup: Setup, inputs: Sequence[Array]):
        super().__init__(setup, inputs)
        ray = import_ray()
        self.ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(include_dashboard=False, log_to_driver=False)
        self._compile = ray.remote(num_cpus=1, max_retries=0)(_ray_compile)
        self._actor_class = ray.remote(num_cpus=0, max_restarts=0)(_MeasureActor)
        self._actor: Any = None
        self._bytes: dict[int, bytes | None] = {}

    def compile(self, jobs: Sequence[Job], timeout_s: float) -> dict[int, Outcome]:
        ray = self.ray
        refs = {self._compile.remote(self.setup, job): job for job in jobs}
        deadline = time.monotonic() + timeout_s
        done: dict[int, Outcome] = {}
        try:
            while refs:
                wait = max(0.0, deadline - time.monotonic())
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=wait)
                if not ready:
                    break
                job = refs.pop(ready[0])
                try:
                    outcome: Outcome = ray.get(ready[0])
                except ray.exceptions.RayError as err:
                    outcome = Outcome(
                        job.ident,
                        "invalid",
                        f"crash: the compile task failed ({type(err).__name__})",
                    )
                self._bytes[job.ident] = outcome.entry_bytes
                outcome.entry_bytes = None
                done[job.ident] = outcome
        finally:
            for ref, job in refs.items():
                ray.cancel(ref, force=True)
                done[job.ident] = Outcome(
                    job.ident,
                    "invalid",
                    f"hang: no compile result within {timeout_s:.3g} s",
                )
        return done

    def measure(self, job: Job, entry_name: str, timeout_s: float) -> Outcome:
        ray = self.ray
        if self._actor is None:
            self._actor = self._actor_class.remote(
                self.setup, self.inputs, self.reference
            )
            ray.get(self._actor.ready.remote(), timeout=START_TIMEOUT_S)
        job = Job(
            job.ident,
            job.options,
            job.faults,
            self._bytes.get(job.ident),
            job.prune_s,
            job.repeat,
        )
        ref = self._actor.measure.remote(job, entry_name)
        ready, _ = ray.wait([ref], timeout=timeout_s)
        if ready:
            try:
                outcome: Outcome = ray.get(ref)
                if outcome.outputs is not None:
                    self.reference = outcome.outputs
                return outcome
            except ray.exceptions.RayError as err:
                reason = f"crash: the measuring actor died ({type(err).__name__})"
        else:
            reason = f"hang: no result within {timeout_s:.3g} s"
        ray.kill(self._actor)
        self._actor = None
        return Outcome(job.ident, "invalid", reason)

    def entry_bytes(self, ident: int, entry_name: str) -> bytes | None:
        return self._bytes.get(ident)

    def close(self) -> None:
        if self._actor is not None:
            with contextlib.suppress(Exception):
                self.ray.kill(self._actor)
            self._actor = None
        if self._owns:
            self.ray.shutdown()
