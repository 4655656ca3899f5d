"""Quick start: a cached kernel's first call in a new process, without the compiler.

A kernel key (`tcdialect.cache.key.kernel_key`) holds the canonical
definition, which only the frontend can make, and the `TargetInfo`, which
the CPU target reads through LLVM: computing it costs a new process the
frontend, xDSL and llvmlite (most of a second) before the cache can answer.
Two small records, entries of the same store, let a new process skip both:

- the **interface** of a definition, keyed by the source text itself (its
  sha256), the entry name asked for and `fingerprint()`: the entry's name,
  input names, output names, dtypes and bfloat16 flags, and the scalars
  that drive sizes. `Kernel` writes it after the frontend accepted the
  source without warnings, so a later `define` of the same text skips the
  frontend and still raises nothing it would have raised;
- a **call record**, keyed by the source's sha256, the definition's name, the
  fingerprint, the target, the options
  (`repr`, or "default" when the kernel may use tuned ones), the target's
  quick identity (`Backend.quick_identity`: the CPU model, features, cores
  and caches as the OS lists them) and the input shapes and dtypes: the
  digest of the kernel entry compiled for them, the bound sizes, the output
  shapes, the fields of the options it was compiled with, and the state of
  the tuning record it consulted (the record's digest and the sha256 of its
  file, None when there was none).

A call whose record is found loads the kernel entry by digest, checks that
its key hashes to that digest (so the entry is exactly the one the full
lookup would find) and that the tuning record is unchanged (a later
`autotune` makes the record stale), and calls it. Anything missing,
damaged or different is a miss and the call takes the full path, which
writes the records again. Nothing here imports xDSL, islpy or llvmlite.

`fingerprint()` stands for the versions in a kernel key: tcdialect's
version, the paths, sizes and modification times of its source files and
of the code-generating packages' (xDSL, islpy, llvmlite) top modules, and
Python's version. An edit, an upgrade or a checkout changes it (a checkout
that changes no content only costs one full lookup).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcdialect.cache.store import (
    FORMAT,
    SUFFIX,
    CacheStore,
    Entry,
    InvalidEntry,
    key_digest,
)

#: What a record's key says it is (so that `tc-cache` can tell them apart).
INTERFACE = "quick-interface"
CALL = "quick-call"


def _stat_digest(paths: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            digest.update(path.encode() + b"\0-\0")
            continue
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


@functools.cache
def fingerprint() -> str:
    """A digest of what generates code, from file metadata only (module docstring)."""
    import tcdialect

    root = os.path.dirname(tcdialect.__file__)
    files: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    for package in ("xdsl", "islpy", "llvmlite"):
        spec = importlib.util.find_spec(package)
        files.append(spec.origin if spec is not None and spec.origin else package)
    files.sort()
    return hashlib.sha256(
        f"{FORMAT}\0{tcdialect.__version__}\0{sys.version}\0".encode()
        + _stat_digest(files).encode()
    ).hexdigest()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Interface:
    """What a call needs of a definition besides its compiled code."""

    entry: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    #: NumPy dtype strings of the outputs (`np.dtype.str`).
    out_dtypes: tuple[str, ...]
    out_bfloat16: tuple[bool, ...]
    scalar_sizes: tuple[str, ...]

    def json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "out_dtypes": list(self.out_dtypes),
            "out_bfloat16": list(self.out_bfloat16),
            "scalar_sizes": list(self.scalar_sizes),
        }

    @staticmethod
    def from_json(data: Any) -> Interface | None:
        try:
            found = Interface(
                str(data["entry"]),
                tuple(str(n) for n in data["inputs"]),
                tuple(str(n) for n in data["outputs"]),
                tuple(str(d) for d in data["out_dtypes"]),
                tuple(bool(b) for b in data["out_bfloat16"]),
                tuple(str(n) for n in data["scalar_sizes"]),
            )
        except (KeyError, TypeError, ValueError):
            return None
        if (
            len({len(found.outputs), len(found.out_dtypes), len(found.out_bfloat16)})
            != 1
        ):
            return None
        return found


@dataclass(frozen=True)
class CallRecord:
    """Which compiled entry serves a call of given shapes (module docstring)."""

    kernel: str
    sizes: dict[str, int]
    out_shapes: list[tuple[int, ...]]
    #: The options' fields (`tcdialect.tune.space.options_fields`).
    options: dict[str, Any]
    #: (digest, sha256 of the file or None) of the tuning record consulted.
    tuning: tuple[str, str | None] | None

    def json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "sizes": self.sizes,
            "out_shapes": [list(s) for s in self.out_shapes],
            "options": self.options,
            "tuning": list(self.tuning) if self.tuning is not None else None,
        }

    @staticmethod
    def from_json(data: Any) -> CallRecord | None:
        try:
            tuning = data["tuning"]
            return CallRecord(
                str(data["kernel"]),
                {str(k): int(v) for k, v in data["sizes"].items()},
                [tuple(int(d) for d in s) for s in data["out_shapes"]],
                dict(data["options"]),
                (str(tuning[0]), None if tuning[1] is None else str(tuning[1]))
                if tuning is not None
                else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None


def file_sha256(path: Path) -> str | None:
    """The sha256 of the file at `path`; None when there is none."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class QuickStart:
    """The records of one `Kernel` (source, entry asked for, target, options)."""

    def __init__(
        self,
        store: CacheStore,
        source: str,
        entry: str | None,
        target: str,
        options: str,
        identity: str,
    ):
        self.store = store
        self._interface_key = {
            "format": FORMAT,
            "kind": INTERFACE,
            "source": _sha256(source),
            "entry": entry,
            "fingerprint": fingerprint(),
        }
        self._call_base = {
            **self._interface_key,
            "kind": CALL,
            "target": target,
            "options": options,
            "identity": identity,
        }

    def resolved(self, entry: str) -> None:
        """Key the call records by the definition's name, once known (the
        same whether it was asked for by name or as the only one)."""
        self._call_base["entry"] = entry

    def interface(self) -> Interface | None:
        entry = self.store.get(self._interface_key)
        return Interface.from_json(entry.meta.get("interface")) if entry else None

    def save_interface(self, interface: Interface) -> None:
        self.store.put(self._interface_key, b"", {"interface": interface.json()})

    def _call_key(self, shapes: Sequence[Any]) -> dict[str, Any]:
        return {**self._call_base, "inputs": [str(s) for s in shapes]}

    def call(self, shapes: Sequence[Any]) -> tuple[CallRecord, Entry] | None:
        """The record for inputs of `shapes` (shape, dtype, ...) and the
        kernel entry it names, if both are there and still valid."""
        found = self.store.get(self._call_key(shapes))
        record = CallRecord.from_json(found.meta.get("call")) if found else None
        if record is None:
            return None
        if record.tuning is not None:
            digest, sha = record.tuning
            if file_sha256(self.store.directory / (digest + SUFFIX)) != sha:
                return None  # tuned since: the full path finds the new options
        path = self.store.directory / (record.kernel + SUFFIX)
        try:
            entry = self.store.read(path)
        except (OSError, InvalidEntry):
            return None
        if key_digest(entry.key) != record.kernel:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return record, entry

    def save_call(self, shapes: Sequence[Any], record: CallRecord) -> None:
        self.store.put(self._call_key(shapes), b"", {"call": record.json()})


def tuning_state(store: CacheStore, key: Mapping[str, Any]) -> tuple[str, str | None]:
    """(digest, sha256 of the file or None) of the tuning record `key`."""
    digest = key_digest(key)
    return digest, file_sha256(store.directory / (digest + SUFFIX))
