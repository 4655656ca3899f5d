"""Compiled kernels and the process-wide cache of them.

A `CompiledKernel` is one definition compiled by one target for one shape
key (or generic): the target's launcher, the calling convention, the bound
sizes and the call plans made for it. `KERNELS` shares them across every
`Kernel` of the same source, entry, target, options and `TargetInfo` in
this process;
`clear_cache()` empties it (each `Kernel` then drops what it holds too, at
its next call).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tcdialect.backend.base import CallPlan, Launcher
from tcdialect.signature import Signature


@dataclass
class CompiledKernel:
    """One definition compiled for one shape key: the launcher and its metadata."""

    launcher: Launcher
    signature: Signature
    #: Bound sizes when specialised (else None: sizes come from each call).
    sizes: dict[str, int] | None
    compile_seconds: float
    #: The call plans made for it, by shape key (shared by every `Kernel`
    #: that finds this compiled code in the cache).
    plans: dict[tuple[Any, ...], CallPlan] = field(default_factory=dict, repr=False)
    #: The digest of its entry in the persistent cache (None: not there).
    cache_digest: str | None = None


class KernelCache:
    """Compiled kernels by key, shared by threads; a generation counter tells
    holders of compiled code when it was cleared."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], CompiledKernel] = {}
        self._lock = threading.Lock()
        self.generation = 0

    def get_or_compile(
        self, key: tuple[Any, ...], compile: Callable[[], CompiledKernel]
    ) -> CompiledKernel:
        """The kernel cached under `key`, compiled (outside the lock) if none.

        Two threads that miss together both compile; the first to finish is
        kept and both get it."""
        with self._lock:
            found = self._entries.get(key)
        if found is not None:
            return found
        compiled = compile()
        with self._lock:
            return self._entries.setdefault(key, compiled)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.generation += 1


#: The process-wide cache.
KERNELS = KernelCache()


def clear_cache() -> None:
    """Forget every compiled kernel (the next call of any `Kernel` recompiles)."""
    KERNELS.clear()
