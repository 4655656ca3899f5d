"""`TcCacheMain`: the `tc-cache` command, over `CacheStore`.

::

    tc-cache [--dir DIR] list             one line per entry: digest, bytes,
                                          last use, target, entry, sizes
                                          (and whether it is the tuner's record
                                          or a quick-start one)
    tc-cache [--dir DIR] info [DIGEST]    the directory, its size and cap; or
                                          one entry's key, meta and tuning
    tc-cache [--dir DIR] clear            remove every entry
    tc-cache [--dir DIR] prune [--max-bytes N]
                                          remove invalid entries, stale
                                          temporary files, and the least
                                          recently used entries down to N
                                          bytes (default: the cap)

The directory is `--dir`, else the library's (`TCDIALECT_CACHE_DIR`, else
the user's cache directory), also when `TCDIALECT_CACHE=0`. An entry that
does not validate is listed as `invalid` with the reason. Errors (an unknown
digest) go to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import IO

from tcdialect.cache.store import (
    CacheStore,
    Entry,
    InvalidEntry,
    default_directory,
    default_max_bytes,
)

TOOL_NAME = "tc-cache"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _sizes(entry: Entry) -> str:
    sizes = entry.key.get("sizes")
    if not isinstance(sizes, dict):
        return str(sizes)
    return ",".join(f"{k}={v}" for k, v in sizes.items())  # pyright: ignore[reportUnknownVariableType]


class TcCacheMain:
    """The command line (see the module docstring); `run(argv)` returns the
    exit status. Subclasses may add commands in `register_commands`."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None):
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.parser = argparse.ArgumentParser(
            prog=TOOL_NAME, description="Inspect and manage tcdialect's cache."
        )
        self.parser.add_argument(
            "--dir", help="the cache directory (default: the library's)"
        )
        self.commands = self.parser.add_subparsers(dest="command", required=True)
        self.register_commands()

    def register_commands(self) -> None:
        self.commands.add_parser("list", help="list the entries")
        info = self.commands.add_parser("info", help="the cache, or one entry")
        info.add_argument("digest", nargs="?", help="an entry's digest (a prefix)")
        self.commands.add_parser("clear", help="remove every entry")
        prune = self.commands.add_parser(
            "prune", help="remove invalid and least recently used entries"
        )
        prune.add_argument("--max-bytes", type=int, help="the size to prune down to")

    def store(self, args: argparse.Namespace) -> CacheStore:
        return CacheStore(args.dir or default_directory(), default_max_bytes())

    def run(self, argv: Sequence[str] | None = None) -> int:
        args = self.parser.parse_args(argv)
        store = self.store(args)
        handler = getattr(self, "cmd_" + args.command.replace("-", "_"))
        return handler(store, args)

    def print(self, text: str) -> None:
        print(text, file=self.out)

    def cmd_list(self, store: CacheStore, args: argparse.Namespace) -> int:
        for found in store.entries():
            if isinstance(found, tuple):
                path, why = found
                self.print(f"{path.stem[:16]}  invalid: {why}")
                continue
            key = found.key
            self.print(
                f"{found.path.stem[:16]}  {found.path.stat().st_size:>9}  "
                f"{_when(found.used)}  {key.get('target')}  "
                f"{key.get('entry')}  {_sizes(found)}"
                + ("  (tuning record)" if key.get("options") == "tuned" else "")
                + (f"  ({key['kind']} record)" if "kind" in key else "")
            )
        return 0

    def cmd_info(self, store: CacheStore, args: argparse.Namespace) -> int:
        if args.digest is None:
            entries = store.entries()
            invalid = sum(isinstance(e, tuple) for e in entries)
            self.print(f"directory: {store.directory}")
            self.print(f"entries:   {len(entries) - invalid} ({invalid} invalid)")
            self.print(f"bytes:     {store.total_bytes()} (cap {store.max_bytes})")
            return 0
        matches = [p for p in store.paths() if p.stem.startswith(args.digest)]
        if len(matches) != 1:
            what = "no entry" if not matches else f"{len(matches)} entries"
            print(
                f"{TOOL_NAME}: error: {what} with digest '{args.digest}'",
                file=self.err,
            )
            return 1
        try:
            entry = store.read(matches[0])
        except (OSError, InvalidEntry) as err:
            print(f"{TOOL_NAME}: error: invalid entry: {err}", file=self.err)
            return 1
        self.print(f"path:      {entry.path}")
        self.print(f"last used: {_when(entry.used)}")
        self.print(f"payload:   {len(entry.payload)} bytes")
        self.print("key: " + json.dumps(entry.key, indent=2, sort_keys=True))
        self.print("meta: " + json.dumps(entry.meta, indent=2, sort_keys=True))
        self.print("tuning: " + json.dumps(entry.tuning, indent=2, sort_keys=True))
        return 0

    def cmd_clear(self, store: CacheStore, args: argparse.Namespace) -> int:
        self.print(f"removed {store.clear()} entries from {store.directory}")
        return 0

    def cmd_prune(self, store: CacheStore, args: argparse.Namespace) -> int:
        report = store.prune(args.max_bytes)
        self.print(
            f"removed {len(report.invalid)} invalid and {len(report.evicted)} "
            f"least recently used entries, {report.temporaries} temporary files; "
            f"{store.total_bytes()} bytes left"
        )
        return 0
