"""The host CPU as a `TargetInfo`, read once per process.

The only place that asks the machine what it is: LLVM's host CPU name and
features (vector registers, `vscalef`), the cores this process may run on and
the data cache sizes the OS reports. The CPU backend hands the result to the
passes as explicit options; nothing below `tcdialect.backend` reads the host.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from tcdialect.backend.base import TargetInfo


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _size(text: str) -> int:
    """`32K`, `1024K`, `32M` (sysfs's cache sizes) in bytes; 0 if unreadable."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * scale if digits.isdigit() else 0


def _cache_bytes() -> tuple[int, ...]:
    """Data (or unified) cache size per level of CPU 0, from Linux's sysfs."""
    sizes: dict[int, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in sorted(root.glob("index*")):
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            sizes[level] = _size((index / "size").read_text())
    except (OSError, ValueError):
        return ()
    return tuple(sizes.get(level, 0) for level in range(1, max(sizes, default=0) + 1))


def _vector_bits(features: set[str]) -> int:
    """512-bit registers with `avx512f`, 256-bit with `avx`, else 128-bit."""
    if "+avx512f" in features:
        return 512
    if "+avx" in features:
        return 256
    return 128


@functools.cache
def host_identity() -> str | None:
    """The CPU as Linux describes it (`/proc/cpuinfo`'s first model name and
    flags, the cores, the caches), hashed: what `host_info` reads from LLVM
    follows from it, and reading it imports nothing. None elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    wanted = ("vendor_id", "cpu family", "model", "model name", "flags", "Features",
              "CPU implementer", "CPU part")  # fmt: skip
    lines = sorted(
        line for line in first.splitlines() if line.split(":")[0].strip() in wanted
    )
    if not lines:
        return None
    described = "\n".join([*lines, f"cores {cores()}", f"caches {_cache_bytes()}"])
    return hashlib.sha256(described.encode()).hexdigest()


@functools.cache
def host_info() -> TargetInfo:
    """The `TargetInfo` of the CPU this process runs on."""
    from tcdialect.backend.cpu.jit import host

    h = host()
    features = set(h.features.split(","))
    return TargetInfo(
        name=h.cpu,
        triple=h.target.triple,
        features=tuple(sorted(f for f in features if f.startswith("+"))),
        vector_bits=_vector_bits(features),
        cores=cores(),
        cache_bytes=_cache_bytes(),
        # `llvm.ldexp` is x86's `vscalef` with AVX-512; elsewhere a libm call
        native_ldexp="+avx512f" in features,
    )
