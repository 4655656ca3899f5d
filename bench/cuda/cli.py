"""`python -m bench.cuda`: the command line and the supervisor.

The supervisor never imports torch. It writes a fresh state file (`--json`,
else `$OUT/bench-cuda.json`, else a temporary file), then runs workers
(`python -m bench.cuda --worker STATE`, `worker.py`) until one finishes the
list. A worker that dies (segfault, sticky CUDA error, uncaught exception),
spends more than `--kernel-timeout-s` on one kernel, or outlives the budget
by `GRACE_S` is killed; the supervisor records the crash against the kernel
and phase it was in and starts another worker, which retries that kernel
without the implementation that was running. After each kernel the state and
the Markdown report are rewritten, so a run killed from outside still leaves
all it measured.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.cuda import report, state
from bench.cuda.kernels import L2_BYTES, by_name

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = ROOT / "bench" / "RESULTS-cuda.md"
#: A worker still running this long after the budget ran out is killed.
GRACE_S = 30.0
#: Workers started at most (the first one and the restarts after crashes).
MAX_WORKERS = 8
PRESETS = ("default", "naive", "pointwise", "mlp", "conv", "group_conv")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line of `python -m bench.cuda`."""
    p = argparse.ArgumentParser(
        prog="python -m bench.cuda",
        description="Time tcdialect's CUDA kernels against PyTorch eager and "
        "torch.compile next to the GPU's roofline (bench/README.md).",
    )
    p.add_argument(
        "--budget-s",
        type=float,
        default=300.0,
        help="wall-clock seconds for the whole run (default 300)",
    )
    p.add_argument(
        "--no-compile", action="store_true", help="skip the torch.compile column"
    )
    p.add_argument(
        "--only",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        default=None,
        help="comma-separated kernel names (default: all; see --list)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes, one timed call each (smoke test)",
    )
    p.add_argument(
        "--calls",
        type=int,
        default=10,
        help="timed calls per implementation and kernel at most (default 10)",
    )
    p.add_argument(
        "--options",
        choices=PRESETS,
        default="default",
        help="ours' CudaOptions: the defaults or one of TC's presets",
    )
    p.add_argument(
        "--kernel-timeout-s",
        type=float,
        default=120.0,
        help="kill a worker stuck this long on one kernel (default 120)",
    )
    p.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        default="cuda",
        help="cpu: a dry run of the whole script on the host (ours on the cpu "
        "target; the times mean nothing)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help="Markdown report (default: bench/RESULTS-cuda.md for a full run "
        "on cuda, none otherwise)",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        help="the raw results, rewritten after every kernel "
        "(default: $OUT/bench-cuda.json when $OUT is set)",
    )
    p.add_argument("--list", action="store_true", help="list the kernels and exit")
    p.add_argument(
        "--validate",
        action="store_true",
        help="check each TC source, reference and peer at tiny sizes on the host",
    )
    p.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.calls < 1:
        p.error("--calls must be >= 1")
    try:
        by_name(args.only)
    except ValueError as exc:
        p.error(str(exc))
    return args


def list_text() -> str:
    """One line per kernel: name, origin, MB (L2 marked), GFLOP, sizes."""
    lines = [f"{'kernel':24s} {'from':5s} {'MB':>9s} {'GFLOP':>8s}  sizes"]
    for k in by_name(None):
        mb = k.nbytes(k.sizes) / 1e6
        l2 = "*" if k.nbytes(k.sizes) <= L2_BYTES else " "
        sizes = " ".join(f"{n}={v}" for n, v in k.sizes.items())
        lines.append(
            f"{k.name:24s} {k.origin:5s} {mb:8.1f}{l2} {k.flops(k.sizes) / 1e9:8.3g}  "
            f"{sizes}"
        )
    lines.append(f"(* fits in the {L2_BYTES / 1e6:.0f} MB L2)")
    return "\n".join(lines)


def config_of(args: argparse.Namespace) -> dict[str, Any]:
    """The options a worker needs, as stored in the state."""
    output = args.output
    full = not args.quick and not args.only and args.device == "cuda"
    if output is None and full:
        output = DEFAULT_OUTPUT
    return {
        "budget_s": args.budget_s,
        "compile": not args.no_compile,
        "quick": args.quick,
        "calls": 1 if args.quick else args.calls,
        "options": args.options,
        "device": args.device,
        "kernel_timeout_s": args.kernel_timeout_s,
        "output": str(output.resolve()) if output is not None else None,
    }


def _state_path(args: argparse.Namespace) -> tuple[Path, bool]:
    """Where the state lives, and whether it is a temporary file."""
    if args.json is not None:
        return args.json, False
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"]) / "bench-cuda.json", False
    fd, name = tempfile.mkstemp(prefix="bench-cuda-", suffix=".json")
    os.close(fd)
    return Path(name), True


def _wait(
    proc: subprocess.Popen[bytes], path: Path, cfg: dict[str, Any], started: float
) -> str | None:
    """Wait for the worker; kill it when stuck or past the budget.

    Returns why it was killed, or None when it exited by itself.
    """
    while proc.poll() is None:
        time.sleep(0.5)
        now = time.time()
        try:
            cur = state.load(path).get("current") or {}
        except (OSError, ValueError):
            cur = {}
        why = None
        since = cur.get("kernel_since")
        if since is not None and now - since > cfg["kernel_timeout_s"]:
            why = f"killed after {now - since:.0f} s on one kernel"
        elif now - started > cfg["budget_s"] + GRACE_S:
            why = f"killed {now - started:.0f} s into a {cfg['budget_s']:.0f} s budget"
        if why is not None:
            proc.kill()
            proc.wait()
            return why
    return None


def _exit_text(status: int) -> str:
    """`died of SIGSEGV` or `exited with status 3`."""
    if status < 0:
        try:
            return f"died of {signal.Signals(-status).name}"
        except ValueError:
            pass
    return f"exited with status {status}"


def _record_crash(st: dict[str, Any], message: str) -> None:
    """Charge a dead worker's crash to the kernel and phase it was in."""
    cur = st.get("current") or {}
    kernel, phase = cur.get("kernel"), cur.get("phase", "?")
    where = f"in {kernel} ({phase})" if kernel else "outside any kernel (start-up)"
    st["events"].append(f"worker {message} {where}")
    if kernel in st["kernels"]:
        st["crashes"].setdefault(kernel, []).append(
            {"phase": phase, "message": f"{message} in {phase}"}
        )
    st["current"] = None


def _finalize(st: dict[str, Any], why: str) -> None:
    """Rows that never reached a final state say why (and what crashed)."""
    for name in st["kernels"]:
        row = st["rows"].get(name)
        if row is not None and row["status"] != "running":
            continue
        if row is None:
            row = st["rows"][name] = _empty_row(name, st["config"]["quick"])
        row["status"] = "not run"
        row["notes"].append(why)
        for crash in st["crashes"].get(name, []):
            row["notes"].append(f"worker {crash['message']}")


def _empty_row(name: str, quick: bool) -> dict[str, Any]:
    from bench.cuda.worker import new_row

    kernel = by_name([name])[0]
    return new_row(kernel, kernel.quick if quick else kernel.sizes)


def supervise(args: argparse.Namespace) -> int:
    """Run workers until the kernels are done (see the module docstring)."""
    cfg = config_of(args)
    path, temporary = _state_path(args)
    path = path.resolve()
    started = time.time()
    st = state.new_state(cfg, [k.name for k in by_name(args.only)], started)
    state.save(path, st)
    _log(f"state: {path}" + (f"; report: {cfg['output']}" if cfg["output"] else ""))
    proc: subprocess.Popen[bytes] | None = None

    def on_term(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    stray = 0  # deaths in a row outside any kernel (start-up, limits)
    try:
        for _ in range(MAX_WORKERS):
            cmd = [sys.executable, "-m", "bench.cuda", "--worker", str(path)]
            proc = subprocess.Popen(cmd, cwd=ROOT)
            killed = _wait(proc, path, cfg, started)
            st = state.load(path)
            if killed is None and proc.returncode == 0 and st["finished"]:
                break
            in_kernel = (st.get("current") or {}).get("kernel") in st["kernels"]
            stray = 0 if in_kernel else stray + 1
            _record_crash(st, killed or _exit_text(proc.returncode))
            state.save(path, st)
            if stray >= 2:
                _log(f"{st['events'][-1]}; twice outside a kernel: giving up")
                break
            if time.time() - started > cfg["budget_s"]:
                break
            _log(f"{st['events'][-1]}; starting another worker")
        else:
            st["events"].append(f"gave up after {MAX_WORKERS} workers")
    except KeyboardInterrupt as exc:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        st = state.load(path)
        st["events"].append(f"interrupted ({exc})")
    if not st.get("finished"):
        _finalize(st, "not run: the run ended first")
    st["elapsed_s"] = time.time() - started
    state.save(path, st)
    if cfg["output"]:
        report.write(Path(cfg["output"]), st)
        _log(f"wrote {cfg['output']}")
    print(report.stdout_text(st) if cfg["output"] else report.markdown(st))
    if temporary:
        path.unlink(missing_ok=True)
    else:
        _log(f"wrote {path}")
    return 0 if st.get("finished") else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m bench.cuda`; returns the exit status."""
    args = parse_args(argv)
    if args.worker is not None:
        from bench.cuda import worker

        return worker.main(args.worker)
    if args.list:
        print(list_text())
        return 0
    if args.validate:
        from bench.cuda.validate import validate

        return 0 if validate(by_name(args.only)) else 1
    return supervise(args)
