"""What this machine allows: peak GFLOP/s, streaming GB/s, and its description.

`measure_limits(threads)` must run with the thread count already applied
(`runner.thread_limits`). Peak compute is the best of NumPy (OpenBLAS) and
torch sgemm at 2048 and a loop of independent vector FMAs on `threads`
threads (`bench/peak.py`: the FMA units' rate, which a BLAS kernel
built for an older ISA reaches only half of); bandwidth is the best of
STREAM-style kernels (copy counts 2 arrays, triad 3, read 1; 128 MiB
arrays; decimal GB) by NumPy, torch and, when it works, our own copy and
triad kernels. The roofline
bound of a kernel is max(flops / peak, compulsory bytes / bandwidth).
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: STREAM convention: arrays far larger than the last-level cache.
STREAM_BYTES = 128 * 1024 * 1024
SGEMM_N = 2048

COPY_TC = "def copy(float(N) I) -> (O) { O(i) = I(i) }"
TRIAD_TC = "def triad(float(N) B, float(N) C) -> (A) { A(i) = B(i) + 3.0 * C(i) }"


@dataclass
class Limits:
    """Measured peaks at one thread count; `details` holds every probe."""

    threads: int
    peak_gflops: float = 0.0
    bw_gbs: float = 0.0
    details: dict[str, float] = field(default_factory=dict)

    def merge(self, other: Limits) -> None:
        """Keep the best of two measurements (start and end of a run)."""
        self.peak_gflops = max(self.peak_gflops, other.peak_gflops)
        self.bw_gbs = max(self.bw_gbs, other.bw_gbs)
        for key, value in other.details.items():
            self.details[key] = max(self.details.get(key, 0.0), value)

    def bound_s(self, flops: float, nbytes: float) -> tuple[float, str]:
        """Roofline bound in seconds and its kind: "c" compute or "m" memory."""
        tc = flops / (self.peak_gflops * 1e9) if self.peak_gflops else 0.0
        tm = nbytes / (self.bw_gbs * 1e9) if self.bw_gbs else 0.0
        return (tc, "c") if tc >= tm else (tm, "m")


def _best(fn: Callable[[], Any], repeats: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure_limits(
    threads: int,
    ours_stream: Callable[[np.ndarray, np.ndarray, np.ndarray], dict[str, float]]
    | None = None,
    repeats: int = 5,
) -> Limits:
    """Peak GFLOP/s and GB/s at `threads` threads (already applied).

    `ours_stream(a, b, c)` may add our own streaming probes (name -> GB/s);
    it receives three float32 arrays of `STREAM_BYTES` each.
    """
    import torch

    lim = Limits(threads)
    rng = np.random.default_rng(1)
    n = SGEMM_N
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = np.empty((n, n), dtype=np.float32)
    flops = 2.0 * n**3
    lim.details["numpy sgemm GFLOP/s"] = (
        flops / _best(lambda: np.matmul(A, B, out=C), repeats) / 1e9
    )
    tA, tB, tC = torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(C)
    lim.details["torch sgemm GFLOP/s"] = (
        flops / _best(lambda: torch.mm(tA, tB, out=tC), repeats) / 1e9
    )
    from bench.peak import fma_peak_gflops

    lim.details["fma loop GFLOP/s"] = fma_peak_gflops(threads)
    lim.peak_gflops = max(v for k, v in lim.details.items() if k.endswith("GFLOP/s"))

    m = STREAM_BYTES // 4
    a = np.ones(m, dtype=np.float32)
    b = np.full(m, 2.0, dtype=np.float32)
    c = np.full(m, 0.5, dtype=np.float32)
    nb = float(STREAM_BYTES)
    ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
    probes: dict[str, tuple[Callable[[], Any], float]] = {
        "numpy copy GB/s": (lambda: np.copyto(a, b), 2 * nb),
        "torch copy GB/s": (lambda: ta.copy_(tb), 2 * nb),
        "torch triad GB/s": (lambda: torch.add(tb, tc, alpha=3.0, out=ta), 3 * nb),
        "torch read GB/s": (lambda: torch.sum(tb), nb),
    }
    for name, (fn, nbytes) in probes.items():
        lim.details[name] = nbytes / _best(fn, repeats) / 1e9
    if ours_stream is not None:
        lim.details.update(ours_stream(a, b, c))
    lim.bw_gbs = max(v for k, v in lim.details.items() if k.endswith("GB/s"))
    return lim


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key and key not in info:
            info[key] = value.strip()
    return info


def _caches() -> str:
    parts = []
    for idx in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (idx / "level").read_text().strip()
            kind = (idx / "type").read_text().strip()
            size = (idx / "size").read_text().strip()
        except OSError:
            continue
        tag = {"Data": "d", "Instruction": "i", "Unified": ""}.get(kind, kind)
        parts.append(f"L{level}{tag} {size}")
    return ", ".join(parts)


def _mem_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kib = int(line.split()[1])
                return f"{kib / 1024**2:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "?"


def git_commit(
    root: Path, report: str = "bench/RESULTS.md", unknown: str = "unknown"
) -> str:
    """The checkout's short commit, `+dirty` with uncommitted changes other
    than `report` (the file a run rewrites); `unknown` without git.

    `TC_BENCH_COMMIT`, when set, is taken as it is: a copy of the working
    tree sent to another machine (the GPU machine's) can carry a `.git` of
    another commit than the files it holds."""
    given = os.environ.get("TC_BENCH_COMMIT")
    if given:
        return given
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            # The report a run rewrites is no change to what it measures.
            ["git", "status", "--porcelain", "--untracked-files=no", "--"]
            + [".", f":!{report}"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return unknown
    return head + ("+dirty" if dirty else "")


def describe(root: Path) -> dict[str, str]:
    """CPU, cores, caches, memory, library versions, commit and date."""
    from importlib.metadata import version

    import torch

    cpu = _cpuinfo()
    flags = set(cpu.get("flags", "").split())
    isa = [f for f in ("avx", "avx2", "fma", "avx512f", "avx512_bf16") if f in flags]
    blas = "?"
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                blas = (
                    f"{pool.get('internal_api')} {pool.get('version')} "
                    f"({pool.get('architecture')})"
                )
                break
    except ImportError:
        pass
    return {
        "cpu": cpu.get("model name", platform.processor() or "?"),
        "cores": str(len(os.sched_getaffinity(0))),
        "isa": " ".join(isa),
        "caches": _caches(),
        "memory": _mem_total(),
        "python": platform.python_version(),
        "numpy": f"{np.__version__} (BLAS: {blas})",
        "torch": f"{torch.__version__} (MKL: {torch.backends.mkl.is_available()})",
        "llvmlite": version("llvmlite"),
        "tcdialect commit": git_commit(root),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
