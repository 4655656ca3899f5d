"""tcdialect: Tensor Comprehensions as an xDSL dialect pipeline.

The public surface:

* `define(source, entry=None, *, target="cpu", options=None) -> Kernel`:
  compile a TC definition; call the `Kernel` on NumPy arrays.
* `CpuOptions`: threads, specialisation; `clear_cache()` drops compiled code.
* `TCError`: every user-facing failure, with located diagnostics.
* `parse_tc(source, filename)`: TC source to a verified module of `tc.def`s.
* `reference.run(module, entry, inputs)`: the NumPy reference interpreter.
"""

from typing import TYPE_CHECKING, Any

from tcdialect.diagnostics import Diagnostic, TCError

if TYPE_CHECKING:  # what `__getattr__` gives, for type checkers
    from tcdialect.frontend import parse_tc
    from tcdialect.kernel import CpuOptions, Kernel, clear_cache, define

__version__ = "0.1.0"

__all__ = [
    "CpuOptions",
    "Diagnostic",
    "Kernel",
    "TCError",
    "__version__",
    "clear_cache",
    "define",
    "parse_tc",
]

_LAZY = {
    "parse_tc": "tcdialect.frontend",
    "define": "tcdialect.kernel",
    "Kernel": "tcdialect.kernel",
    "CpuOptions": "tcdialect.kernel",
    "clear_cache": "tcdialect.kernel",
}


def __getattr__(name: str) -> Any:  # lazy: importing tcdialect stays cheap
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tcdialect' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
