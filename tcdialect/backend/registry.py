"""The registry of compilation targets, by name.

`get_backend("cpu")` returns the one `Backend` object of a target, made on
first use. Targets are registered lazily (a factory per name, imported only
when asked for), like xDSL's dialect and pass registries. `define`,
`Kernel.ir`, `tc-opt`'s named pipelines and the tests all look targets up
here.

A third-party package adds a target through the entry-point group
``tcdialect.targets``: each entry's name is the target's name and its value
a `Backend` subclass (or a factory returning an instance)::

    [project.entry-points."tcdialect.targets"]
    mychip = "mychip.tcbackend:MyChipBackend"

`register_backend` does the same at run time. A name registered twice keeps
the first registration (built-in targets cannot be replaced).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tcdialect.backend.base import Backend
from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "tcdialect.targets"

BackendFactory = Callable[[], Backend]


def _cpu() -> Backend:
    from tcdialect.backend.cpu.target import CpuBackend

    return CpuBackend()


def _cuda() -> Backend:
    from tcdialect.backend.cuda.target import CudaBackend

    return CudaBackend()


def _cuda_sim() -> Backend:
    from tcdialect.backend.cuda.target import CudaSimBackend

    return CudaSimBackend()


_FACTORIES: dict[str, BackendFactory] = {
    "cpu": _cpu,
    "cuda": _cuda,
    "cuda-sim": _cuda_sim,
}
_INSTANCES: dict[str, Backend] = {}
_LOCK = threading.Lock()
_entry_points_loaded = False


def register_backend(name: str, factory: BackendFactory | type[Backend]) -> None:
    """Register target `name`; `factory()` makes its `Backend` on first use."""
    with _LOCK:
        _FACTORIES.setdefault(name, factory)


def _from_entry_point(ep: EntryPoint) -> Backend:
    """The backend an entry point names (a `Backend` subclass or a factory)."""
    obj = ep.load()
    backend = obj() if callable(obj) else obj
    if not isinstance(backend, Backend):
        raise TCError(
            f"entry point '{ep.name}' of {ENTRY_POINT_GROUP} ({ep.value}) "
            "is not a tcdialect Backend"
        )
    return backend


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points  # (25 ms: only when needed)

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _FACTORIES.setdefault(ep.name, functools.partial(_from_entry_point, ep))


def target_names() -> list[str]:
    """The names of every registered target, sorted."""
    with _LOCK:
        _load_entry_points()
        return sorted(_FACTORIES)


def get_backend(name: str) -> Backend:
    """The `Backend` of target `name`; a `TCError` listing the targets if none."""
    with _LOCK:
        backend = _INSTANCES.get(name)
        if backend is not None:
            return backend
        factory = _FACTORIES.get(name)
        if factory is None:
            _load_entry_points()
            factory = _FACTORIES.get(name)
    if factory is None:
        raise TCError(
            f"unknown target '{name}'; the targets are: {', '.join(target_names())}"
        )
    backend = factory()
    if backend.name != name:
        raise TCError(
            f"the backend registered as target '{name}' calls itself '{backend.name}'"
        )
    with _LOCK:
        return _INSTANCES.setdefault(name, backend)
