"""Where tuning results live: the tuning record in the cache, and the log.

The record of a kernel for some sizes is a cache entry (`tcdialect.cache`)
whose key is the kernel's key (`kernel_key`: canonical definition, entry,
dtypes, sizes, target, `TargetInfo`, versions) with `"options": "tuned"`.
Its payload is empty; its `tuning` holds the best options, the default's and
every trial::

    {"best": {"options": "CpuOptions(threads=2, ...)", "fields": {...},
              "median_s": 0.00021},
     "default": {"options": "CpuOptions(...)", "fields": {...}, "median_s": 0.00034},
     "speedup": 1.62, "strategy": "genetic", "elapsed_s": 9.8,
     "measured": 31, "resumed": 0,
     "trials": [{"options": "...", "status": "ok", "median_s": ..., ...}, ...]}

A plain call finds the options with `tuned_options(kernel, sizes)`. The log,
`<digest of the key>.tune.jsonl` next to the entry, gets one JSON line per
candidate as soon as it is measured (appended with `O_APPEND`, so several
tuners may share it); a tuner killed at any point leaves at most a partial
last line, which the next run skips. A run for the same key reads the log
and does not measure a candidate that it already holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcdialect.cache.key import kernel_key
from tcdialect.cache.store import LOG_SUFFIX, CacheStore, CacheWarning, key_digest
from tcdialect.diagnostics import TCError
from tcdialect.tune.space import options_from_fields

if TYPE_CHECKING:
    from tcdialect.kernel import Kernel

#: The key's `options` field of a tuning record.
TUNED = "tuned"


def compiled_key(
    kernel: Kernel, sizes: Mapping[str, int], options: Any
) -> dict[str, Any]:
    """The cache key of `kernel`'s code for `sizes` compiled with `options`
    (what `Kernel` looks up: specialised to the sizes)."""
    return kernel_key(
        defop=kernel.defop,
        entry=kernel.entry,
        dtypes=[str(t.element_type) for t in kernel.defop.input_types],
        sizes=sizes,
        backend=kernel.backend,
        info=kernel.lowering.info,
        options=options,
    )


def tuning_key(kernel: Kernel, sizes: Mapping[str, int]) -> dict[str, Any]:
    """The cache key of `kernel`'s tuning record for `sizes`."""
    return {**compiled_key(kernel, sizes, None), "options": TUNED}


def log_path(store: CacheStore, key: Mapping[str, Any]) -> Path:
    """The tuning log of the record `key`, next to its entry."""
    return store.directory / (key_digest(key) + LOG_SUFFIX)


def read_log(path: Path) -> dict[str, dict[str, Any]]:
    """The logged trials by options `repr` (a damaged line is skipped)."""
    found: dict[str, dict[str, Any]] = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    trial = json.loads(line)
                except ValueError:
                    continue
                if isinstance(trial, dict) and isinstance(trial.get("options"), str):
                    found[trial["options"]] = trial  # pyright: ignore[reportUnknownArgumentType]
    except OSError:
        return {}
    return found


def append_log(path: Path, trial: Mapping[str, Any]) -> None:
    """Append `trial` as one line (one `write` of an `O_APPEND` file)."""
    line = (json.dumps(trial, sort_keys=True) + "\n").encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError as err:
        warnings.warn(
            f"tcdialect: cannot write the tuning log {path} ({err})",
            CacheWarning,
            stacklevel=2,
        )


def store_record(
    store: CacheStore, key: Mapping[str, Any], record: Mapping[str, Any]
) -> bool:
    """Write the tuning record `record` under `key`."""
    return store.put(key, b"", {"kind": "tuning"}, record)


def tuning_record(kernel: Kernel, sizes: Mapping[str, int]) -> dict[str, Any] | None:
    """The stored tuning record of `kernel` for `sizes`, or None."""
    store = CacheStore.from_env()
    if store is None:
        return None
    entry = store.get(tuning_key(kernel, sizes))
    return dict(entry.tuning) if entry is not None and entry.tuning else None


def tuned_options(kernel: Kernel, sizes: Mapping[str, int]) -> Any | None:
    """The options the tuner stored for `kernel` and `sizes` (None when it
    stored none, or the cache is off). A record whose options no longer
    validate is ignored with a `CacheWarning`."""
    record = tuning_record(kernel, sizes)
    if record is None:
        return None
    best = record.get("best")
    cls = kernel.backend.options_class
    with contextlib.suppress(TCError, TypeError, AttributeError):
        options = options_from_fields(cls, best["fields"])  # pyright: ignore[reportOptionalSubscript]
        if repr(options) == best["options"]:  # pyright: ignore[reportOptionalSubscript]
            return options
    warnings.warn(
        f"tcdialect: the tuning record of @{kernel.entry} holds no valid "
        f"{cls.__name__}; using the default options",
        CacheWarning,
        stacklevel=2,
    )
    return None
