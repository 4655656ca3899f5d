"""The CPU target's cache payload, and its shared library loaded without LLVM.

`CpuModule.payload()` (`tcdialect.backend.cpu.jit`) gives::

    b"TCPU0002"        PAYLOAD_MAGIC (8 bytes)
    u32 little-endian  length of the JSON header
    header             {"opt_level", "functions", "renamed", "undefined",
                        "object_bytes", "shared_bytes"}
    object file        the relocatable object MCJIT linked (`object_bytes`)
    shared library     the same code linked by the system's C compiler
                       driver into a position-independent shared library
                       with its runtime (`shared_bytes`, 0 when none)

A process loads the shared library with `ctypes` (`load_shared`): neither
llvmlite nor LLVM is loaded, which is most of what a cached kernel's first
call costs a new process (tcdialect.cache.quick). Without one (no `cc` when
it was compiled, or `dlopen` refusing it, e.g. on a `noexec` temporary
directory), `jit.load_cpu` links the object file into MCJIT instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import struct
import tempfile
from dataclasses import dataclass
from typing import Any

from tcdialect.diagnostics import TCError
from tcdialect.runtime.abi import DEFAULT_GOMP_SPINCOUNT, NUM_THREADS_SYMBOL

PAYLOAD_MAGIC = b"TCPU0002"
_PREFIX = struct.Struct("<8sI")


@dataclass(frozen=True)
class Payload:
    """A decoded payload (module docstring)."""

    opt_level: int
    functions: frozenset[str]
    renamed: dict[str, str]
    undefined: list[str]
    object_code: bytes
    shared_object: bytes


def encode_payload(
    opt_level: int,
    functions: frozenset[str],
    renamed: dict[str, str],
    undefined: list[str],
    object_code: bytes,
    shared_object: bytes | None,
) -> bytes:
    shared = shared_object or b""
    meta = json.dumps(
        {
            "opt_level": opt_level,
            "functions": sorted(functions),
            "renamed": renamed,
            "undefined": undefined,
            "object_bytes": len(object_code),
            "shared_bytes": len(shared),
        },
        sort_keys=True,
    ).encode()
    return _PREFIX.pack(PAYLOAD_MAGIC, len(meta)) + meta + object_code + shared


def decode_payload(payload: bytes) -> Payload | None:
    """The parts of `encode_payload`'s bytes; None when they are not such."""
    try:
        magic, length = _PREFIX.unpack_from(payload)
        start = _PREFIX.size
        meta = json.loads(payload[start : start + length])
        opt_level = int(meta["opt_level"])
        functions = frozenset(str(f) for f in meta["functions"])
        renamed = {str(k): str(v) for k, v in meta["renamed"].items()}
        undefined = [str(name) for name in meta["undefined"]]
        object_bytes, shared_bytes = (
            int(meta["object_bytes"]),
            int(meta["shared_bytes"]),
        )
    except (struct.error, ValueError, KeyError, TypeError, AttributeError):
        return None
    body = payload[start + length :]
    if (
        magic != PAYLOAD_MAGIC
        or not 0 <= opt_level <= 3
        or object_bytes <= 0
        or shared_bytes < 0
        or len(body) != object_bytes + shared_bytes
    ):
        return None
    return Payload(
        opt_level,
        functions,
        renamed,
        undefined,
        body[:object_bytes],
        body[object_bytes:],
    )


class ThreadTeam:
    """The team size of a module's `__tc_parallel_for`, its
    `__tc_num_threads` variable (a `ctypes.c_int32` in `_num_threads`):
    shared by the JIT's modules and the shared libraries of the cache."""

    _num_threads: Any

    def set_num_threads(self, n: int) -> None:
        """Run `__tc_parallel_for` on `max(n, 1)` threads (one: sequentially)."""
        self._num_threads.value = max(1, min(int(n), 2**31 - 1))

    @property
    def num_threads(self) -> int:
        return int(self._num_threads.value)


class SharedModule(ThreadTeam):
    """A kernel's shared library, loaded with `ctypes` (`CpuModule`'s
    interface: `functions`, `address`, `set_num_threads`, `payload`)."""

    llvm_ir = ""

    def __init__(self, library: ctypes.CDLL, parts: Payload, payload: bytes):
        self._library = library
        self._parts = parts
        self._payload = payload
        self._num_threads = ctypes.c_int32.in_dll(library, NUM_THREADS_SYMBOL)

    @property
    def functions(self) -> frozenset[str]:
        return self._parts.functions

    def address(self, name: str) -> int:
        """Entry address of function `name`; `KeyError` if it is not defined."""
        if name not in self._parts.functions:
            raise KeyError(f"no function '{name}' in the compiled module")
        function = self._library[self._parts.renamed.get(name, name)]
        return ctypes.cast(function, ctypes.c_void_p).value or 0

    @property
    def asm(self) -> str:
        raise TCError("a kernel loaded from the cache has no LLVM IR")

    def payload(self) -> bytes:
        return self._payload


def load_shared(payload: bytes) -> SharedModule | None:
    """The shared library in `payload`, loaded into this process; None when
    there is none or the dynamic loader refuses it."""
    parts = decode_payload(payload)
    if parts is None or not parts.shared_object:
        return None
    if "OMP_WAIT_POLICY" not in os.environ:  # as `jit` does for the JIT's libgomp
        os.environ.setdefault("GOMP_SPINCOUNT", DEFAULT_GOMP_SPINCOUNT)
    fd, path = tempfile.mkstemp(prefix="tcdialect-", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(parts.shared_object)
        # (the mapping outlives the file; RTLD_LOCAL: its symbols stay its own)
        library = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        return SharedModule(library, parts, payload)
    except (OSError, ValueError):
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
