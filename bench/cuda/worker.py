"""The worker process: measures the kernels still to do in a state file.

`python -m bench.cuda --worker STATE` (started by `cli.supervise`) loads the
state, measures the machine limits if the state has none, then each kernel
without a final row, in table order, and the limits again at the end. Per
kernel:

1. inputs generated on the device, the float64 reference computed there;
2. each implementation called once: ours (`tcdialect.define` then
   `k(*inputs, out=outs)`: define, cold compile, load and one run, timed
   as its first call), PyTorch eager, `torch.compile(eager, dynamic=False)`
   (when the budget allows), each checked against the reference; a failure
   is a short message in its column;
3. each one timed once more to size its sample (`budget.sample_counts`),
   then `Device.measure` interleaves the timed calls.

The state is saved at every phase, so the supervisor knows where a worker
that died (a segfault, a sticky CUDA error: exit status `LOST`) or hung was,
and the next worker retries that kernel without the implementation that was
running (`RETRY_WITHOUT`), at most once.
"""

from __future__ import annotations

import statistics
import sys
import time
import traceback
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.cuda import report, state
from bench.cuda.budget import Budget, sample_counts
from bench.cuda.device import LAUNCH_S, Device, DeviceLost
from bench.cuda.kernels import Kernel, by_name
from bench.harness import as_tuple
from bench.ours import short_error

IMPLS = ("ours", "eager", "compile")
#: Exit status of a worker whose device stopped answering.
LOST = 3
#: The implementation a retry leaves out, by the phase a worker died in
#: (a crash while timing is blamed on ours: the peers are PyTorch's).
RETRY_WITHOUT = {
    "ours": "ours",
    "eager": "eager",
    "compile": "compile",
    "timing": "ours",
}
#: A kernel whose workers died this many times is not tried again.
MAX_CRASHES = 2
#: Longest error text kept for the notes and the JSON.
DETAIL_CHARS = 300


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def new_row(kernel: Kernel, sizes: dict[str, int]) -> dict[str, Any]:
    """The row of `kernel` before anything ran."""
    return {
        "name": kernel.name,
        "origin": kernel.origin,
        "sizes": dict(sizes),
        "flops": kernel.flops(sizes),
        "nbytes": kernel.nbytes(sizes),
        "fits_l2": kernel.fits_l2(sizes),
        "note": kernel.note,
        "status": "running",
        "impls": {
            name: {
                "median_s": None,
                "samples": [],
                "rel_err": None,
                "error": None,
                "skipped": None,
                "first_call_s": None,
                "detail": None,
            }
            for name in IMPLS
        },
        "notes": [],
        "wall_s": None,
    }


class Worker:
    """Runs the kernels of one state file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state = state.load(path)
        self.config: dict[str, Any] = self.state["config"]
        self.budget = Budget(self.config["budget_s"], self.state["started"])
        for row in self.state["rows"].values():
            self._account(row)
        self.compile_failures: list[str] = []
        self.dev = Device(self.config["device"])

    # ------------------------------------------------------------- state

    def _account(self, row: dict[str, Any]) -> None:
        """Feed a finished row's costs to the budget's estimates."""
        if row.get("wall_s") is None:
            return
        first = row["impls"]["compile"]["first_call_s"]
        self.budget.base_s.append(row["wall_s"] - (first or 0.0))
        if first is not None:
            self.budget.compile_s.append(first)

    def phase(self, kernel: str | None, phase: str, since: float | None = None) -> None:
        """Record where the worker is (the supervisor reads it) and save."""
        if kernel is None:
            self.state["current"] = None
        else:
            cur = self.state.get("current") or {}
            if cur.get("kernel") != kernel:
                cur = {"kernel": kernel, "kernel_since": since or time.time()}
            cur["phase"] = phase
            self.state["current"] = cur
        self.save()

    def save(self) -> None:
        """Save the state and, when configured, the Markdown report."""
        self.state["elapsed_s"] = time.time() - self.state["started"]
        state.save(self.path, self.state)
        if self.config.get("output"):
            report.write(Path(self.config["output"]), self.state)

    # --------------------------------------------------------------- run

    def run(self) -> int:
        """Measure everything still to do; returns the exit status."""
        st = self.state
        if not st["machine"]:
            st["machine"] = self.dev.describe()
        if st["limits_start"] is None:
            self.phase("(limits)", "limits")
            st["limits_start"] = self.dev.limits()
            _log(f"limits at start: {_limits_text(st['limits_start'])}")
        kernels = by_name(st["kernels"])
        for i, kernel in enumerate(kernels):
            row = st["rows"].get(kernel.name)
            if row is not None and row["status"] != "running":
                continue
            now = time.time()
            if not self.budget.may_start(now):
                for k in kernels[i:]:
                    self._not_run(k, "not run: the budget was spent")
                break
            crashes = st["crashes"].get(kernel.name, [])
            if len(crashes) >= MAX_CRASHES or any(
                c["phase"] not in RETRY_WITHOUT for c in crashes
            ):
                self._not_run(
                    kernel,
                    "crashed: " + "; ".join(f"{c['message']}" for c in crashes),
                    "crashed",
                )
                continue
            todo = [
                k
                for k in kernels[i:]
                if st["rows"].get(k.name, {}).get("status", "running") == "running"
            ]
            fusing = sum(1 for k in todo if k.fuses)
            try:
                self.run_kernel(kernel, len(todo), fusing, crashes)
            except Exception as exc:
                where = (st.get("current") or {}).get("phase")
                lost = isinstance(exc, DeviceLost) or not self.dev.healthy()
                msg = f"{kernel.name} ({where}): {short_error(exc)}"
                _log(("device lost in " if lost else "failed: ") + msg)
                if lost:
                    st["events"].append("device lost in " + msg)
                    self.save()
                    return LOST
                row = st["rows"][kernel.name]
                row["status"] = "failed"
                row["notes"].append(f"failed in {where}: {short_error(exc)}")
                traceback.clear_frames(exc.__traceback__)  # drop its tensors
                self.dev.free()
                self.phase(None, "")
        self.phase("(limits)", "limits")
        st["limits_end"] = self.dev.limits()
        _log(f"limits at end: {_limits_text(st['limits_end'])}")
        st["finished"] = True
        self.phase(None, "")
        return 0

    def _not_run(self, kernel: Kernel, why: str, status: str = "not run") -> None:
        sizes = kernel.quick if self.config["quick"] else kernel.sizes
        row = new_row(kernel, sizes)
        row["status"] = status
        row["notes"].append(why)
        self.state["rows"][kernel.name] = row
        self.save()

    def run_kernel(
        self,
        kernel: Kernel,
        kernels_left: int,
        fusing_left: int,
        crashes: list[dict[str, str]],
    ) -> None:
        """Measure one kernel into its row (see the module docstring).

        `kernels_left` counts the kernels still to run, this one included;
        `fusing_left` those among them that `fuses` (for the budget).
        """
        t0 = time.time()
        share = self.budget.share(kernels_left, t0)
        sizes = kernel.quick if self.config["quick"] else kernel.sizes
        row = new_row(kernel, sizes)
        impls = row["impls"]
        self.state["rows"][kernel.name] = row
        for c in crashes:
            left_out = RETRY_WITHOUT[c["phase"]]
            impls[left_out]["error"] = f"left out: {c['message']}"
            row["notes"].append(f"{left_out} left out on the retry: {c['message']}")
        self.phase(kernel.name, "setup", t0)

        dev = self.dev
        inputs = dev.make_inputs(kernel.args(sizes), zlib.crc32(kernel.name.encode()))
        want = dev.reference(kernel, inputs)
        shapes = kernel.outputs(sizes)
        if [tuple(w.shape) for w in want] != [tuple(s) for s in shapes]:
            row["notes"].append(
                f"table bug: output shapes {shapes} but the reference gives "
                f"{[tuple(w.shape) for w in want]}"
            )

        calls: dict[str, Callable[[], Any]] = {}
        for name in IMPLS:
            impl = impls[name]
            if impl["error"] is not None:
                continue
            if name == "compile" and (
                why := self._compile_verdict(kernel, kernels_left, fusing_left)
            ):
                impl["skipped"] = why
                continue
            self.phase(kernel.name, name)
            try:
                call, outs = self._prepare(name, kernel, inputs, shapes)
                start = time.perf_counter()
                result = call()
                dev.sync()
                impl["first_call_s"] = time.perf_counter() - start
                got = outs if outs is not None else as_tuple(result)
                n = len(want) if name == "ours" else (kernel.peer_outputs or len(want))
                impl["rel_err"] = dev.rel_error(got, want[:n])
                del result, got
                calls[name] = call
                if name == "compile":
                    self.compile_failures.clear()
            except Exception as exc:
                _fail(impl, kernel.name, name, exc)
                if name == "compile":
                    self.compile_failures.append(impl["error"])
                if not dev.healthy():
                    raise DeviceLost(impl["error"]) from exc

        self.phase(kernel.name, "timing")
        call_s: dict[str, float] = {}
        for name, call in list(calls.items()):
            try:
                call_s[name] = dev.time_once(call)
            except Exception as exc:
                _fail(impls[name], kernel.name, name, exc)
                del calls[name]
                if not dev.healthy():
                    raise DeviceLost(impls[name]["error"]) from exc
        timing_s = self.budget.timing_s(share, time.time() - t0)
        overhead = dev.flush_s + LAUNCH_S
        counts = sample_counts(call_s, timing_s, self.config["calls"], overhead)
        samples, errors = dev.measure(calls, counts)
        for name, times in samples.items():
            impls[name]["samples"] = times
            impls[name]["median_s"] = statistics.median(times) if times else None
        for name, err in errors.items():
            impls[name]["error"] = "timed call: " + err

        del inputs, want, calls
        dev.free()
        row["wall_s"] = time.time() - t0
        row["status"] = "done"
        self._account(row)
        self.phase(None, "")
        _log(f"[{self.state['elapsed_s']:6.1f} s] {_progress(row)}")

    def _compile_verdict(
        self, kernel: Kernel, kernels_left: int, fusing_left: int
    ) -> str | None:
        """Why the compile column is skipped for `kernel`, or None."""
        if not self.config["compile"]:
            return "off (--no-compile)"
        if len(self.compile_failures) >= 2:
            return f"skipped: failed twice in a row ({self.compile_failures[-1]})"
        return self.budget.compile_verdict(
            kernels_left, fusing_left, kernel.fuses, time.time()
        )

    def _prepare(
        self, name: str, kernel: Kernel, inputs: list[Any], shapes: list[Any]
    ) -> tuple[Callable[[], Any], tuple[Any, ...] | None]:
        """The call of implementation `name`, and ours' preallocated outputs."""
        torch = self.dev.torch
        if name == "ours":
            return self._ours(kernel, inputs, shapes)
        fn = kernel.peer(torch)
        if name == "compile":
            fn = torch.compile(fn, dynamic=False)
        return (lambda: fn(*inputs)), None

    def _ours(
        self, kernel: Kernel, inputs: list[Any], shapes: list[Any]
    ) -> tuple[Callable[[], Any], tuple[Any, ...]]:
        """`k(*inputs, out=outs)` with torch tensors (numpy views on the CPU)."""
        import tcdialect

        torch = self.dev.torch
        tcdialect.clear_cache()  # the first call is a cold compile
        options = None
        if self.dev.cuda and self.config["options"] != "default":
            options = tcdialect.CudaOptions.preset(self.config["options"])
        target = "cuda" if self.dev.cuda else "cpu"
        k = tcdialect.define(
            kernel.source, kernel.entry, target=target, options=options
        )
        outs = tuple(
            torch.empty(s, dtype=torch.float32, device=self.dev.dev) for s in shapes
        )
        args: list[Any] = list(inputs)
        out_args: list[Any] = list(outs)
        if not self.dev.cuda:
            args = [x.numpy() for x in inputs]
            out_args = [o.numpy() for o in outs]
        out_arg = out_args[0] if len(out_args) == 1 else tuple(out_args)
        return (lambda: k(*args, out=out_arg)), outs


def _fail(impl: dict[str, Any], kernel: str, name: str, exc: BaseException) -> None:
    """Record a failed call: a short message for the cell, more for the notes
    and the JSON, the last frames of the traceback on stderr."""
    impl["error"] = short_error(exc)
    impl["detail"] = f"{type(exc).__name__}: {str(exc).strip()[:DETAIL_CHARS]}"
    frames = traceback.format_exception(exc, limit=-3)
    _log(f"{kernel} {name} failed:\n" + "".join(frames)[-2000:].rstrip())


def _limits_text(lim: dict[str, float]) -> str:
    return (
        f"copy {lim['copy_gbs']:.0f} GB/s, SGEMM {lim['sgemm_tflops']:.1f} TFLOP/s, "
        f"flush {lim['flush_s'] * 1e6:.0f} µs"
    )


def _progress(row: dict[str, Any]) -> str:
    parts = []
    for name in IMPLS:
        impl = row["impls"][name]
        if impl["error"] is not None:
            parts.append(f"{name} ERR ({impl['error']})")
        elif impl["skipped"] is not None:
            parts.append(f"{name} {impl['skipped']}")
        elif impl["median_s"] is not None:
            ok = report.impl_ok(impl)
            parts.append(
                f"{name} {impl['median_s'] * 1e6:.1f} µs"
                + ("" if ok else f" WRONG (rel err {impl['rel_err']:.1e})")
            )
    first = row["impls"]["ours"]["first_call_s"]
    tail = f"; ours first call {first:.2f} s" if first is not None else ""
    return f"{row['name']}: {', '.join(parts)}{tail} [{row['wall_s']:.1f} s]"


def main(path: Path) -> int:
    """Entry point of the worker; returns its exit status."""
    worker = Worker(path)
    try:
        return worker.run()
    except DeviceLost as exc:  # while measuring the limits
        worker.state["events"].append(f"device lost: {exc}")
        worker.save()
        return LOST
