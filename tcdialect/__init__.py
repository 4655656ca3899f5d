"""tcdialect: Tensor Comprehensions as an xDSL dialect pipeline.

The public surface so far:

* `TCError`: every user-facing failure, with located diagnostics.
* `parse_tc(source, filename)`: TC source to a verified module of `tc.def`s.
* `reference.run(module, entry, inputs)`: the NumPy reference interpreter.

Compilation for the CPU and GPU (`define`, `Kernel`) comes with the later stages.
"""

from tcdialect.diagnostics import Diagnostic, TCError

__version__ = "0.1.0"

__all__ = ["Diagnostic", "TCError", "__version__", "parse_tc"]


def __getattr__(name: str):  # lazy: importing tcdialect stays cheap
    if name == "parse_tc":
        from tcdialect.frontend import parse_tc

        return parse_tc
    raise AttributeError(f"module 'tcdialect' has no attribute {name!r}")
