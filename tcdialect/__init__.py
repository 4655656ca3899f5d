"""tcdialect: Tensor Comprehensions as an xDSL dialect pipeline.

The public surface:

* `define(source, entry=None, *, target="cpu", options=None) -> Kernel`:
  compile a TC definition; call the `Kernel` on NumPy arrays.
* `CpuOptions`: the `cpu` target's options; `clear_cache()` drops compiled code.
* `CudaOptions`: the `cuda` and `cuda-sim` targets' mapping options (TC's
  `MappingOptions`, with its presets). `target="cuda-sim"` runs the GPU code
  in a simulator on the CPU; `TCDIALECT_CUDA_SIM=1` makes `target="cuda"` do so.
* `targets()`: the names of the registered targets; `get_backend(name)`:
  a target's `Backend` object (`.info()` is its machine as a `TargetInfo`);
  `register_backend(name, factory)`: add one at run time (or through the
  `tcdialect.targets` entry-point group).
* `grad(kernel, wrt=None) -> Kernel`: the derived backward kernel
  (the `tc-differentiate` pass; docs/autodiff.md). A `Kernel` called on
  PyTorch tensors is a `torch.library` custom op with autograd
  (docs/pytorch.md).
* `autotune(kernel, *inputs, budget_s=...)` (also `Kernel.autotune`): search
  the target's options for these sizes and keep the best in the cache,
  where every later process finds them (docs/tuning.md; `tc-tune`).
* `TCError`: every user-facing failure, with located diagnostics.
* `parse_tc(source, filename)`: TC source to a verified module of `tc.def`s.
* `reference.run(module, entry, inputs)`: the NumPy reference interpreter.
"""

from typing import TYPE_CHECKING, Any

from tcdialect.diagnostics import Diagnostic, TCError

if TYPE_CHECKING:  # what `__getattr__` gives, for type checkers
    from tcdialect.autodiff import grad
    from tcdialect.backend.base import TargetInfo
    from tcdialect.backend.cpu.options import CpuOptions
    from tcdialect.backend.cuda.options import CudaOptions
    from tcdialect.backend.registry import get_backend, register_backend
    from tcdialect.backend.registry import target_names as targets
    from tcdialect.compiled import clear_cache
    from tcdialect.frontend import parse_tc
    from tcdialect.kernel import Kernel, define
    from tcdialect.tune import autotune

__version__ = "0.1.0"

__all__ = [
    "CpuOptions",
    "CudaOptions",
    "Diagnostic",
    "Kernel",
    "TCError",
    "TargetInfo",
    "__version__",
    "autotune",
    "clear_cache",
    "define",
    "get_backend",
    "grad",
    "parse_tc",
    "register_backend",
    "targets",
]

_LAZY = {
    "parse_tc": "tcdialect.frontend",
    "define": "tcdialect.kernel",
    "Kernel": "tcdialect.kernel",
    "CpuOptions": "tcdialect.backend.cpu.options",
    "CudaOptions": "tcdialect.backend.cuda.options",
    "clear_cache": "tcdialect.compiled",
    "TargetInfo": "tcdialect.backend.base",
    "targets": "tcdialect.backend.registry",
    "get_backend": "tcdialect.backend.registry",
    "register_backend": "tcdialect.backend.registry",
    "grad": "tcdialect.autodiff",
    "autotune": "tcdialect.tune",
}


_RENAMED = {"targets": "target_names"}


def __getattr__(name: str) -> Any:  # lazy: importing tcdialect stays cheap
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tcdialect' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), _RENAMED.get(name, name))
