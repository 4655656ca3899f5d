"""The on-disk store: one file per entry, atomic writes, checksums, LRU eviction.

An entry file is named `<sha256 of the key>.tce` and holds::

    b"TCDCACHE"                  magic (8 bytes)
    u32 little-endian            length of the header
    32 bytes                     sha256 of the header
    header                       UTF-8 JSON: {"format", "key", "meta", "tuning",
                                 "payload_sha256", "payload_bytes"}
    payload                      the target's compiled code (opaque bytes)

The guarantees:

- a reader sees a whole entry or none: an entry is written to a temporary
  file in the same directory, flushed to disk (`fsync`) and renamed over the
  entry (`os.replace`), under the directory's `filelock` (`.lock`);
- a reader never uses a damaged or foreign entry: a bad magic, header
  checksum, format version, payload length or checksum, or a key other than
  the one asked for (a hash collision, a file from elsewhere) makes the
  lookup a miss with one `CacheWarning` per entry per process, and the entry
  is removed. No cache problem is ever an exception for the caller: the
  caller compiles again;
- the directory stays under `max_bytes`: a hit touches the entry's mtime,
  and after a write the least recently used entries are removed until the
  total fits (the entry just written stays).

`meta` is what the caller needs besides the payload (the calling
convention), `tuning` the tuner's record (options tried, times). Compiled
code has an empty `tuning`; the tuner's record is an entry of its own with
an empty payload (`tcdialect.tune.record`), and its log
`<digest>.tune.jsonl` lies next to it (`clear` removes logs too).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from filelock import FileLock

FORMAT = 1
"""Version of the entry format (also part of every key)."""
MAGIC = b"TCDCACHE"
SUFFIX = ".tce"
LOG_SUFFIX = ".tune.jsonl"
"""The tuner's log of an entry: `<digest>.tune.jsonl` (`tcdialect.tune.record`)."""
DEFAULT_MAX_BYTES = 1 << 30
"""The default size cap (1 GiB); `TCDIALECT_CACHE_MAX_BYTES` overrides it."""
LOCK_TIMEOUT_S = 10.0
"""How long a writer waits for the directory lock before it skips the write."""
STALE_TEMP_S = 3600.0
"""`prune` removes temporary files older than this (left by a killed writer)."""

_PREFIX = struct.Struct("<8sI32s")

JSON = dict[str, Any]


class CacheWarning(UserWarning):
    """A cache entry could not be used or written (the kernel compiles instead)."""


class InvalidEntry(Exception):
    """An entry file that is damaged, truncated or not an entry of this format."""


def canonical_json(value: Any) -> str:
    """`value` as compact JSON with sorted keys (what keys are hashed as)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def key_digest(key: Mapping[str, Any]) -> str:
    """The sha256 (hex) of the key's canonical JSON: the entry's file name."""
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()


@dataclass(frozen=True)
class Entry:
    """A validated entry."""

    path: Path
    key: JSON
    meta: JSON
    tuning: JSON
    payload: bytes
    #: Last use (the file's mtime, seconds since the epoch).
    used: float = 0.0


@dataclass
class PruneReport:
    """What `CacheStore.prune` removed."""

    invalid: list[str] = field(default_factory=list[str])
    evicted: list[str] = field(default_factory=list[str])
    temporaries: int = 0


_WARNED: set[str] = set()


def _warn_once(path: Path, message: str) -> None:
    """One `CacheWarning` per entry file (or directory) per process."""
    if str(path) in _WARNED:
        return
    _WARNED.add(str(path))
    warnings.warn(f"tcdialect: {message}", CacheWarning, stacklevel=4)


def _ignored(path: Path, why: str) -> None:
    _warn_once(path, f"ignoring cache entry {path.name}: {why}; compiling instead")


def encode_entry(
    key: Mapping[str, Any],
    payload: bytes,
    meta: Mapping[str, Any] | None = None,
    tuning: Mapping[str, Any] | None = None,
) -> bytes:
    """The bytes of an entry file (see the module docstring)."""
    header = canonical_json(
        {
            "format": FORMAT,
            "key": key,
            "meta": dict(meta or {}),
            "tuning": dict(tuning or {}),
            "payload_sha256": hashlib.sha256(payload).hexdigest(),
            "payload_bytes": len(payload),
        }
    ).encode()
    prefix = _PREFIX.pack(MAGIC, len(header), hashlib.sha256(header).digest())
    return prefix + header + payload


def decode_header(data: bytes) -> tuple[JSON, int]:
    """The checked header of entry bytes `data` and where its payload starts;
    `InvalidEntry` when the prefix or header is damaged."""
    if len(data) < _PREFIX.size:
        raise InvalidEntry("truncated (no header)")
    magic, length, digest = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise InvalidEntry("not a tcdialect cache entry")
    end = _PREFIX.size + length
    raw = data[_PREFIX.size : end]
    if len(raw) != length:
        raise InvalidEntry("truncated header")
    if hashlib.sha256(raw).digest() != digest:
        raise InvalidEntry("header checksum mismatch")
    try:
        header = json.loads(raw)
    except ValueError:
        raise InvalidEntry("unreadable header") from None
    if not isinstance(header, dict):
        raise InvalidEntry("unreadable header")
    if header.get("format") != FORMAT:
        raise InvalidEntry(f"entry format {header.get('format')!r}, not {FORMAT}")
    for name, kind in (
        ("key", dict),
        ("meta", dict),
        ("tuning", dict),
        ("payload_sha256", str),
        ("payload_bytes", int),
    ):
        if not isinstance(header.get(name), kind):
            raise InvalidEntry(f"header field '{name}' missing")
    return header, end  # pyright: ignore[reportUnknownVariableType]


def decode_entry(path: Path, data: bytes, used: float = 0.0) -> Entry:
    """The entry in `data` (read from `path`), checksums verified;
    `InvalidEntry` otherwise."""
    header, start = decode_header(data)
    payload = data[start:]
    if len(payload) != header["payload_bytes"]:
        raise InvalidEntry(
            f"payload of {len(payload)} bytes, header says {header['payload_bytes']}"
        )
    if hashlib.sha256(payload).hexdigest() != header["payload_sha256"]:
        raise InvalidEntry("payload checksum mismatch")
    return Entry(path, header["key"], header["meta"], header["tuning"], payload, used)


def _env_disabled() -> bool:
    return os.environ.get("TCDIALECT_CACHE", "1").strip().lower() in (
        "0",
        "false",
        "off",
        "no",
    )


def default_directory() -> Path:
    """`TCDIALECT_CACHE_DIR`, else the user's cache directory for tcdialect."""
    where = os.environ.get("TCDIALECT_CACHE_DIR")
    if where:
        return Path(where)
    import platformdirs

    return Path(platformdirs.user_cache_dir("tcdialect"))


def default_max_bytes() -> int:
    """`TCDIALECT_CACHE_MAX_BYTES` (a number of bytes), else `DEFAULT_MAX_BYTES`."""
    text = os.environ.get("TCDIALECT_CACHE_MAX_BYTES")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        warnings.warn(
            f"tcdialect: TCDIALECT_CACHE_MAX_BYTES={text!r} is not a number of "
            f"bytes; using {DEFAULT_MAX_BYTES}",
            CacheWarning,
            stacklevel=3,
        )
        return DEFAULT_MAX_BYTES
    return value


class CacheStore:
    """The entries in one directory (see the module docstring).

    Every method but `read` turns file-system errors (a lock that stays
    taken past `LOCK_TIMEOUT_S` included) into misses, skipped
    writes and `CacheWarning`s: none raises for a cache problem.
    """

    def __init__(self, directory: Path | str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes

    @classmethod
    def from_env(cls) -> CacheStore | None:
        """The store the environment asks for; None when `TCDIALECT_CACHE=0`."""
        if _env_disabled():
            return None
        return cls(default_directory(), default_max_bytes())

    def __repr__(self) -> str:
        return f"CacheStore({str(self.directory)!r}, max_bytes={self.max_bytes})"

    def path_of(self, key: Mapping[str, Any]) -> Path:
        return self.directory / (key_digest(key) + SUFFIX)

    def _lock(self) -> FileLock:
        """The directory's lock (filelock is imported here: a reader needs none)."""
        from filelock import FileLock

        return FileLock(self.directory / ".lock", timeout=LOCK_TIMEOUT_S)

    # ------------------------------------------------------------ reading

    def read(self, path: Path) -> Entry:
        """The entry at `path`, validated; `InvalidEntry` or `OSError` otherwise."""
        with open(path, "rb") as f:
            used = os.fstat(f.fileno()).st_mtime
            data = f.read()
        return decode_entry(path, data, used)

    def get(self, key: Mapping[str, Any]) -> Entry | None:
        """The entry of `key`, or None (a miss). A damaged or foreign entry is
        a miss with one `CacheWarning` and is removed; a hit marks the entry
        as just used."""
        path = self.path_of(key)
        try:
            entry = self.read(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:  # once per directory: each entry would fail alike
            _warn_once(self.directory, f"cannot read the cache ({err})")
            return None
        except InvalidEntry as err:
            self._discard(path, str(err))
            return None
        if canonical_json(entry.key) != canonical_json(key):
            self._discard(path, "written for another key")
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return entry

    def _discard(self, path: Path, why: str) -> None:
        """Warn about `path` and remove it, unless a writer replaced it meanwhile."""
        _ignored(path, why)
        with contextlib.suppress(OSError):
            before = path.stat()
            with self._lock():
                after = path.stat()
                if (before.st_ino, before.st_mtime_ns) == (
                    after.st_ino,
                    after.st_mtime_ns,
                ):
                    path.unlink()

    # ------------------------------------------------------------ writing

    def put(
        self,
        key: Mapping[str, Any],
        payload: bytes,
        meta: Mapping[str, Any] | None = None,
        tuning: Mapping[str, Any] | None = None,
    ) -> bool:
        """Write the entry of `key` (replacing any), then evict down to the
        cap. Returns whether it was written; a failure is a `CacheWarning`."""
        path = self.path_of(key)
        data = encode_entry(key, payload, meta, tuning)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._lock():
                self._write_atomically(path, data)
                self._evict(keep=path)
        except TimeoutError:  # filelock.Timeout
            _warn_once(path, f"{self.directory} stayed locked; {path.name} not written")
            return False
        except OSError as err:  # once per directory: each kernel would fail alike
            _warn_once(self.directory, f"cannot write to the cache ({err})")
            return False
        return True

    def adopt(self, data: bytes) -> bool:
        """Write the entry file `data` made by another store (the tuner's
        scratch cache) under its own key, if it validates; whether it was
        written (as `put`: a failure is a `CacheWarning`)."""
        try:
            entry = decode_entry(Path("<adopted>"), data)
        except InvalidEntry:
            return False
        return self.put(entry.key, entry.payload, entry.meta, entry.tuning)

    def _write_atomically(self, path: Path, data: bytes) -> None:
        import tempfile  # (only writes need it: not on a cache hit's path)

        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------ listing

    def paths(self) -> list[Path]:
        """The entry files (temporary files and the lock are not entries)."""
        try:
            return sorted(
                Path(e.path)
                for e in os.scandir(self.directory)
                if e.name.endswith(SUFFIX) and not e.name.startswith(".")
            )
        except OSError:
            return []

    def _sizes(self) -> Iterator[tuple[Path, int, float]]:
        """(path, bytes, mtime) of every entry."""
        for path in self.paths():
            with contextlib.suppress(OSError):
                st = path.stat()
                yield path, st.st_size, st.st_mtime

    def total_bytes(self) -> int:
        return sum(size for _, size, _ in self._sizes())

    def entries(self) -> list[Entry | tuple[Path, str]]:
        """Every entry, validated: an `Entry`, or (path, why) for an invalid one."""
        found: list[Entry | tuple[Path, str]] = []
        for path in self.paths():
            try:
                found.append(self.read(path))
            except FileNotFoundError:
                continue  # evicted meanwhile
            except (OSError, InvalidEntry) as err:
                found.append((path, str(err)))
        return found

    # ------------------------------------------------------------ removing

    def _evict(self, keep: Path | None, max_bytes: int | None = None) -> list[str]:
        """Remove least recently used entries until the total fits the cap
        (caller holds the lock); their names."""
        cap = self.max_bytes if max_bytes is None else max_bytes
        sizes = sorted(self._sizes(), key=lambda e: e[2])
        total = sum(size for _, size, _ in sizes)
        evicted: list[str] = []
        for path, size, _ in sizes:
            if total <= cap:
                break
            if path == keep:
                continue
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                evicted.append(path.name)
        return evicted

    def clear(self) -> int:
        """Remove every entry, tuning log and temporary file; the number of
        entries removed."""
        removed = 0
        try:
            with self._lock():
                for path in self.paths():
                    with contextlib.suppress(OSError):
                        path.unlink()
                        removed += 1
                for log in self.directory.glob("*" + LOG_SUFFIX):
                    with contextlib.suppress(OSError):
                        log.unlink()
                self._remove_temporaries(0.0)
        except OSError as err:
            warnings.warn(
                f"tcdialect: cannot clear {self.directory}: {err}",
                CacheWarning,
                stacklevel=2,
            )
        return removed

    def _remove_temporaries(self, older_than_s: float) -> int:
        removed = 0
        now = time.time()
        with contextlib.suppress(OSError):
            for e in os.scandir(self.directory):
                if not (e.name.startswith(".") and e.name.endswith(".tmp")):
                    continue
                with contextlib.suppress(OSError):
                    if now - e.stat().st_mtime >= older_than_s:
                        os.unlink(e.path)
                        removed += 1
        return removed

    def prune(self, max_bytes: int | None = None) -> PruneReport:
        """Remove invalid entries, temporary files older than `STALE_TEMP_S`,
        and least recently used entries down to `max_bytes` (default: the cap)."""
        report = PruneReport()
        if not self.directory.is_dir():
            return report
        try:
            with self._lock():
                for found in self.entries():
                    if isinstance(found, tuple):
                        path, _ = found
                        with contextlib.suppress(OSError):
                            path.unlink()
                            report.invalid.append(path.name)
                report.temporaries = self._remove_temporaries(STALE_TEMP_S)
                report.evicted = self._evict(None, max_bytes)
        except OSError as err:
            warnings.warn(
                f"tcdialect: cannot prune {self.directory}: {err}",
                CacheWarning,
                stacklevel=2,
            )
        return report
