"""The key of a compiled kernel: everything that changes the code, as JSON.

`kernel_key` makes a dict such as::

    {"format": 1,
     "definition": "tc.def @matmul<M, K, N>(A, B) -> (C) {\\n^0(%0: ...",
     "entry": "matmul",
     "dtypes": ["float32", "float32"],
     "sizes": {"K": 4, "M": 5, "N": 3},           # or "generic"
     "target": "cpu",
     "target_info": {"name": "znver3", "features": ["+avx2", ...], ...},
     "options": "CpuOptions(threads=None, specialize=True, ...)",
     "versions": {"tcdialect": "0.1.0", "tcdialect-source": "<sha256>",
                  "xdsl": "0.74.0", "islpy": "...", "llvmlite": "...",
                  "llvm": "22.1.0"}}

The definition is the `tc.def` op after the frontend, printed with every SSA
name dropped (`canonical_definition`): comments, whitespace and the names of
index variables do not change it. Tensor and size names do: they are the
calling convention (the entry function's arguments, the size parameters)
and what run-time errors name, so a kernel whose input is renamed gets its
own entry. Sizes rather than input shapes: with the definition they fix the
shapes, and they are what specialised code is compiled for.

`versions` holds the versions of what generates code, including a hash of
tcdialect's own source files (an edit during development is a new key), and
what the target adds (`Backend.cache_versions`: llvmlite and LLVM for the CPU).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tcdialect.cache.store import FORMAT

if TYPE_CHECKING:
    from tcdialect.backend.base import Backend, TargetInfo
    from tcdialect.dialects.tc import DefOp
    from tcdialect.signature import Signature


def canonical_definition(defop: DefOp) -> str:
    """`defop` printed without SSA names (index variables, temporaries' values),
    so that only what the definition computes and its interface show."""
    from xdsl.printer import Printer

    clone = defop.clone()
    for op in clone.walk():
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    buf = io.StringIO()
    Printer(stream=buf).print_op(clone)
    return buf.getvalue()


@functools.cache
def source_digest() -> str:
    """sha256 of tcdialect's Python source files, read once per process."""
    import tcdialect

    return tree_digest(os.path.dirname(tcdialect.__file__))


def tree_digest(root: str) -> str:
    """sha256 of the paths (relative to `root`) and contents of the `.py`
    files under `root`."""
    digest = hashlib.sha256()
    files: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    for path in sorted(files):
        digest.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _version(distribution: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def _common_versions() -> tuple[tuple[str, str], ...]:
    import tcdialect

    return (
        ("tcdialect", tcdialect.__version__),
        ("tcdialect-source", source_digest()),
        ("xdsl", _version("xdsl")),
        ("islpy", _version("islpy")),
    )


def code_versions(backend: Backend) -> dict[str, str]:
    """The versions of everything that generates `backend`'s code."""
    return {**dict(_common_versions()), **backend.cache_versions()}


def info_json(info: TargetInfo) -> dict[str, Any]:
    """`info`'s fields as JSON values."""
    fields = dataclasses.asdict(info)
    fields["limits"] = dict(sorted(info.limits.items()))
    return fields


def kernel_key(
    *,
    defop: DefOp,
    entry: str,
    dtypes: list[str],
    sizes: Mapping[str, int] | None,
    backend: Backend,
    info: TargetInfo,
    options: Any,
) -> dict[str, Any]:
    """The key of `entry` compiled by `backend` for `info` with `options`,
    specialised to `sizes` (None: generic code)."""
    return {
        "format": FORMAT,
        "definition": canonical_definition(defop),
        "entry": entry,
        "dtypes": dtypes,
        "sizes": dict(sorted(sizes.items())) if sizes is not None else "generic",
        "target": backend.name,
        "target_info": info_json(info),
        "options": repr(options),
        "versions": code_versions(backend),
    }


def signature_json(signature: Signature) -> dict[str, Any]:
    """`signature` as JSON (stored with the entry: a hit runs no pipeline)."""
    return {
        "args": [[a.kind, a.name, list(a.dynamic_dims)] for a in signature.args],
        "checked": list(signature.checked),
    }


def signature_from_json(data: Any) -> Signature | None:
    """The `Signature` of `signature_json`'s output; None if it is not one."""
    from tcdialect.signature import ArgSpec, Signature

    try:
        args = tuple(
            ArgSpec(kind, str(name), tuple(int(d) for d in dims))
            for kind, name, dims in data["args"]
            if kind in ("input", "output", "error", "size")
        )
        if len(args) != len(data["args"]):
            return None
        return Signature(args, tuple(str(n) for n in data["checked"]))
    except (KeyError, TypeError, ValueError):
        return None
