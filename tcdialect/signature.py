"""The calling convention of a compiled entry function: `Signature`.

Read off the `affine`-stage `func.func` by `tcdialect.arguments.signature_of`
and stored with a cached kernel (`tcdialect.cache.key.signature_json`); kept
in a module of its own, free of xDSL, so that a kernel loaded from the cache
is called without importing the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ArgKind = Literal["input", "output", "error", "size"]


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a compiled definition's entry function."""

    kind: ArgKind
    name: str
    #: For buffers: the dimensions whose extent is passed at run time.
    dynamic_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class Signature:
    """The calling convention of an `affine`-stage entry function."""

    args: tuple[ArgSpec, ...]
    #: Tensors whose reads are checked at run time, by error code - 1.
    checked: tuple[str, ...]
