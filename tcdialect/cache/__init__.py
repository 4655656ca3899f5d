"""The persistent compilation cache: compiled kernels on disk, across processes.

`Kernel` looks a kernel up here before it runs the pipeline and stores what
it compiled after (docs/cache.md)::

    key = kernel_key(defop=..., entry="matmul", dtypes=[...], sizes={...},
                     backend=cpu, info=cpu.info(), options=CpuOptions())
    found = lookup(store, key, cpu, "matmul", options)   # (launcher, signature)
    ...                                                   # or None: compile
    remember(store, key, cpu, launcher, signature)

- `store.CacheStore`: the directory (`platformdirs.user_cache_dir("tcdialect")`,
  `TCDIALECT_CACHE_DIR` to move it, `TCDIALECT_CACHE=0` to turn it off,
  `TCDIALECT_CACHE_MAX_BYTES` for the cap), atomic and checksummed entries,
  LRU eviction;
- `key`: the key of a kernel (canonical definition, entry, dtypes, sizes or
  "generic", target, `TargetInfo`, options, versions) and the calling
  convention as JSON;
- `STATS`: this process's hits, misses and compiles, for tests and tools.

A target takes part through `Backend.save` / `Backend.load` /
`Backend.cache_versions`; one whose `save` gives None (the CUDA targets
today) is looked up but never stored. Nothing here raises for a cache
problem: a bad entry is a miss with a `CacheWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from tcdialect.cache.key import kernel_key, signature_from_json, signature_json
from tcdialect.cache.store import CacheStore, CacheWarning

if TYPE_CHECKING:
    from tcdialect.backend.base import Backend, Launcher
    from tcdialect.signature import Signature


@dataclass
class CacheStats:
    """What the compilation cache did in this process."""

    #: Kernels loaded from the disk cache instead of compiled.
    hits: int = 0
    #: Lookups that found no usable entry.
    misses: int = 0
    #: Kernels compiled (the pipeline ran), with or without the cache.
    compiles: int = 0
    #: Entries written.
    stores: int = 0
    #: Valid entries whose code the target could not load here.
    unloadable: int = 0

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)


#: This process's counters.
STATS = CacheStats()


def lookup(
    store: CacheStore,
    key: Mapping[str, Any],
    backend: Backend,
    entry: str,
    options: Any,
) -> tuple[Launcher, Signature] | None:
    """The launcher and calling convention stored under `key`, loaded by
    `backend`; None (counted as a miss) when there is none or it cannot be
    used (then with one `CacheWarning`)."""
    found = store.get(key)
    if found is None:
        STATS.misses += 1
        return None
    signature = signature_from_json(found.meta.get("signature"))
    launcher = None
    if signature is not None:
        try:
            launcher = backend.load(found.payload, entry, signature, options)
        except Exception as err:  # a cache problem is never the user's error
            warnings.warn(
                f"tcdialect: cannot load cache entry {found.path.name} ({err}); "
                "compiling instead",
                CacheWarning,
                stacklevel=2,
            )
    if launcher is None or signature is None:
        STATS.misses += 1
        STATS.unloadable += 1
        return None
    STATS.hits += 1
    return launcher, signature


def remember(
    store: CacheStore,
    key: Mapping[str, Any],
    backend: Backend,
    launcher: Launcher,
    signature: Signature,
) -> bool:
    """Store `launcher`'s code under `key` if `backend` can save it."""
    payload = backend.save(launcher)
    if payload is None:
        return False
    stored = store.put(key, payload, {"signature": signature_json(signature)})
    STATS.stores += stored
    return stored


__all__ = [
    "STATS",
    "CacheStats",
    "CacheStore",
    "CacheWarning",
    "kernel_key",
    "lookup",
    "remember",
]
