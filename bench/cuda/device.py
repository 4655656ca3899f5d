"""torch on the device: inputs, references, L2 flush, event timing, limits.

`Device("cuda")` is the real thing: TF32 off for cuBLAS and cuDNN, a 256
MiB buffer whose `zero_()` before every timed call evicts the 50 MB L2, and
`torch.cuda.Event` pairs recorded around the call alone (on torch's current
stream, where our kernels launch too). The flush is enqueued before the
start event, so the host's launch overhead overlaps it: a call's time is
its GPU time unless the host takes longer to launch it than the flush takes
to run (~0.1 ms on an H100).

`Device("cpu")` is a dry run on the host (`--device cpu`): the same code
with torch CPU tensors, `time.perf_counter` for the events and a 32 MiB
flush; it exercises the whole run without a GPU, its times mean nothing.

Limits: device-to-device copy of 1 GiB (GB/s counting the read and the
write, decimal), and `torch.mm` of 8192 x 8192 float32 matrices with TF32
off (TFLOP/s); the best of a few calls each.
"""

from __future__ import annotations

import datetime
import gc
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from bench.cuda.kernels import Arg, Kernel
from bench.machine import git_commit
from bench.ours import short_error

MIB = 1024 * 1024
#: The flush buffer (bytes): five times the H100's L2.
FLUSH_BYTES = 256 * MIB
#: The copy-bandwidth probe's source array (bytes).
COPY_BYTES = 1024 * MIB
#: The SGEMM probe's size.
SGEMM_N = 8192
#: Host cost added to every timed call when sizing the sample.
LAUNCH_S = 20e-6

ROOT = Path(__file__).resolve().parents[2]


class DeviceLost(RuntimeError):
    """The device stopped answering (a sticky CUDA error): the process must end."""


def _version(*packages: str) -> str:
    """The installed version of the first of `packages` found, or `-`."""
    for package in packages:
        try:
            return version(package)
        except PackageNotFoundError:
            continue
    return "-"


def git_revision() -> str:
    """The checkout's short commit, `+dirty` with uncommitted changes."""
    return git_commit(ROOT, "bench/RESULTS-cuda.md", "unknown (no git checkout)")


class Device:
    """One torch device ("cuda" or "cpu") set up for the benchmark."""

    def __init__(self, kind: str) -> None:
        import torch

        self.torch = torch
        self.cuda = kind == "cuda"
        if self.cuda and not torch.cuda.is_available():
            raise RuntimeError(
                "torch sees no CUDA device (use --device cpu to dry-run)"
            )
        self.dev = torch.device(kind)
        # The float32 matmuls and convolutions must be float32, not TF32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        torch.set_grad_enabled(False)
        nbytes = FLUSH_BYTES if self.cuda else 32 * MIB
        self._flush = torch.empty(nbytes // 4, dtype=torch.float32, device=self.dev)
        self.flush_bytes = nbytes
        self.flush()
        self.sync()
        #: Seconds of one flush, measured once.
        self.flush_s = statistics.median(
            self.time_once(self.flush, False) for _ in range(5)
        )

    # -------------------------------------------------------------- basics

    def sync(self) -> None:
        """Wait for the device."""
        if self.cuda:
            self.torch.cuda.synchronize()

    def flush(self) -> None:
        """Write the flush buffer (evicts the L2)."""
        self._flush.zero_()

    def healthy(self) -> bool:
        """Whether the device still runs work (False after a sticky CUDA error)."""
        if not self.cuda:
            return True
        try:
            self.torch.cuda.synchronize()
            return self.torch.ones(1, device=self.dev).add_(1).item() == 2.0
        except Exception:
            return False

    def free(self) -> None:
        """Return the memory of dropped tensors to the device."""
        gc.collect()
        if self.cuda:
            self.torch.cuda.empty_cache()

    def describe(self) -> dict[str, str]:
        """Device name, compute capability, memory, library versions, commit."""
        torch = self.torch
        info: dict[str, str] = {}
        if self.cuda:
            p = torch.cuda.get_device_properties(self.dev)
            l2 = getattr(p, "L2_cache_size", 0)
            info["device"] = p.name
            info["capability"] = f"{p.major}.{p.minor}"
            info["SMs"] = str(p.multi_processor_count)
            info["memory"] = f"{p.total_memory / 2**30:.1f} GiB"
            info["L2"] = f"{l2 / MIB:.0f} MiB" if l2 else "?"
            info["CUDA (torch)"] = str(torch.version.cuda)
            info["cuDNN"] = str(torch.backends.cudnn.version())
        else:
            info["device"] = (
                f"CPU dry run ({platform.processor() or platform.machine()})"
            )
            info["capability"] = "-"
        info["torch"] = torch.__version__
        info["triton"] = _version("triton")
        info["cupy"] = _version("cupy", "cupy-cuda13x", "cupy-cuda12x")
        info["pycuda"] = _version("pycuda")
        info["python"] = platform.python_version()
        info["host cores"] = str(os.cpu_count())
        info["tcdialect commit"] = git_revision()
        info["date"] = datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"
        )
        return info

    # -------------------------------------------------------------- timing

    def enqueue_timed(
        self, fn: Callable[[], Any], flush: bool = True
    ) -> Callable[[], float]:
        """Flush, then call `fn` between two timing marks; returns the reader
        of its seconds, valid after `sync()`."""
        if flush:
            self.flush()
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            return lambda: dt
        start = self.torch.cuda.Event(enable_timing=True)
        end = self.torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        return lambda: start.elapsed_time(end) / 1e3

    def time_once(self, fn: Callable[[], Any], flush: bool = True) -> float:
        """Seconds of one call of `fn` (after a flush)."""
        read = self.enqueue_timed(fn, flush)
        self.sync()
        return read()

    def measure(
        self, calls: dict[str, Callable[[], Any]], counts: dict[str, int]
    ) -> tuple[dict[str, list[float]], dict[str, str]]:
        """Time `calls` interleaved: round r times once, in an order rotated by
        r, every implementation with more than r samples wanted (`counts`).

        Each timed call waits for the device before the next one is queued,
        so every call has the same head start on the host (the flush) and
        none hides its launch behind an earlier call.

        Returns the samples (seconds) and the errors of implementations that
        raised (dropped from the later rounds). Raises DeviceLost when the
        device stops answering.
        """
        names = list(calls)
        samples: dict[str, list[float]] = {n: [] for n in names}
        errors: dict[str, str] = {}
        for r in range(max(counts.values(), default=0)):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                if name in errors or r >= counts.get(name, 0):
                    continue
                try:
                    samples[name].append(self.time_once(calls[name]))
                except Exception as exc:
                    errors[name] = short_error(exc)
                    if not self.healthy():
                        raise DeviceLost(f"{name}: {errors[name]}") from exc
        return samples, errors

    # -------------------------------------------------------------- limits

    def limits(self) -> dict[str, float]:
        """Copy bandwidth (GB/s) and SGEMM rate (TFLOP/s) measured now."""
        copy_bytes = COPY_BYTES if self.cuda else 64 * MIB
        n = SGEMM_N if self.cuda else 1024
        copy_s = self._copy_s(copy_bytes)
        mm_s = self._sgemm_s(n)
        self.free()
        return {
            "copy_gbs": 2 * copy_bytes / copy_s / 1e9,
            "copy_bytes": float(copy_bytes),
            "sgemm_tflops": 2.0 * n**3 / mm_s / 1e12,
            "sgemm_n": float(n),
            "flush_s": self.flush_s,
        }

    def _copy_s(self, nbytes: int) -> float:
        """Best seconds of a device-to-device copy of `nbytes`."""
        torch = self.torch
        src = torch.ones(nbytes // 4, dtype=torch.float32, device=self.dev)
        dst = torch.empty_like(src)
        dst.copy_(src)
        return min(self.time_once(lambda: dst.copy_(src), False) for _ in range(5))

    def _sgemm_s(self, n: int) -> float:
        """Best seconds of an n x n x n float32 `torch.mm` (TF32 off)."""
        torch = self.torch
        a = torch.rand(n, n, dtype=torch.float32, device=self.dev)
        b = torch.rand(n, n, dtype=torch.float32, device=self.dev)
        c = torch.empty(n, n, dtype=torch.float32, device=self.dev)
        torch.mm(a, b, out=c)
        return min(
            self.time_once(lambda: torch.mm(a, b, out=c), False) for _ in range(3)
        )

    # -------------------------------------------------------------- data

    def make_inputs(self, args: Sequence[Arg], seed: int) -> list[Any]:
        """Inputs on the device: float32 uniform in [-1, 1), int32 in [0, high)."""
        torch = self.torch
        gen = torch.Generator(device=self.dev)
        gen.manual_seed(seed)
        out = []
        for a in args:
            if a.dtype == "int32":
                x = torch.randint(
                    0,
                    a.high,
                    a.shape,
                    generator=gen,
                    device=self.dev,
                    dtype=torch.int32,
                )
            else:
                x = torch.rand(a.shape, generator=gen, device=self.dev)
                x.mul_(2.0).sub_(1.0)
            out.append(x)
        return out

    def reference(self, kernel: Kernel, inputs: Sequence[Any]) -> tuple[Any, ...]:
        """The kernel's float64 reference outputs, computed on the device."""
        x64 = [x.double() if x.is_floating_point() else x for x in inputs]
        want = kernel.reference(self.torch, *x64)
        del x64
        return tuple(w.contiguous() for w in want)

    def rel_error(self, got: Sequence[Any], want: Sequence[Any]) -> float:
        """Normwise max relative error over the outputs: max|got - want| / max|want|.

        A count or shape mismatch, or a non-finite difference, gives +inf.
        """
        if len(got) != len(want):
            return math.inf
        worst = 0.0
        for g, w in zip(got, want, strict=True):
            if tuple(g.shape) != tuple(w.shape):
                return math.inf
            if w.numel() == 0:
                continue
            diff = float((g.double() - w).abs().max().item())
            scale = max(float(w.abs().max().item()), 1e-30)
            if not math.isfinite(diff):
                return math.inf
            worst = max(worst, diff / scale)
        return worst
