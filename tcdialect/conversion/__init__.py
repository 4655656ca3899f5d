"""Conversions: passes that take IR from one set of dialects to another.

As in MLIR's `lib/Conversion/` (against `lib/Transforms/` and the dialects'
own `Transforms/`), a pass here lowers ops of some dialects into others and
leaves the rest alone; passes that rewrite IR within its dialects live in
`tcdialect.transforms`. Each conversion is one module (or package) named
after its pass:

- `convert_tc_to_affine` (`convert-tc-to-affine`): `tc.def` → `func.func` of
  affine loop nests over memrefs;
- `convert_affine_to_scf` (`convert-affine-to-scf`): affine → scf/arith/memref;
- `convert_parallel_loops_to_gpu` (`convert-parallel-loops-to-gpu`): loop
  nests with block/thread-mapped `scf.parallel`s → `gpu.func` kernels and
  `gpu.launch_func`s (their dynamic shared memory: `gpu_dynamic_shared`);
- `convert_gpu_to_nvvm` (`convert-gpu-to-nvvm`): the `gpu` ops of kernels →
  `nvvm` ops;
- `convert_gpu_scf_to_cf` (`convert-gpu-scf-to-cf`): xDSL's
  `convert-scf-to-cf` inside `gpu.module`s only (the host function stays
  structured);
- `convert_to_llvm/` (`convert-to-llvm`): func, cf, arith, math, memref,
  vector, tcrt (and nvvm for the `cuda` target) → llvm, split by dialect so
  that another target can reuse the parts it needs.

`get_all_passes()` maps their names to lazy factories;
`tcdialect.transforms.get_all_passes()` merges it into the one registry
`tc-opt` uses.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return a mapping from conversion pass name to a factory of its class."""

    def get_convert_tc_to_affine() -> type[ModulePass]:
        from tcdialect.conversion.convert_tc_to_affine import ConvertTcToAffinePass

        return ConvertTcToAffinePass

    def get_convert_affine_to_scf() -> type[ModulePass]:
        from tcdialect.conversion.convert_affine_to_scf import ConvertAffineToScfPass

        return ConvertAffineToScfPass

    def get_convert_to_llvm() -> type[ModulePass]:
        from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass

        return ConvertToLlvmPass

    def get_convert_parallel_loops_to_gpu() -> type[ModulePass]:
        from tcdialect.conversion.convert_parallel_loops_to_gpu import (
            ConvertParallelLoopsToGpuPass,
        )

        return ConvertParallelLoopsToGpuPass

    def get_convert_gpu_to_nvvm() -> type[ModulePass]:
        from tcdialect.conversion.convert_gpu_to_nvvm import ConvertGpuToNvvmPass

        return ConvertGpuToNvvmPass

    def get_convert_gpu_scf_to_cf() -> type[ModulePass]:
        from tcdialect.conversion.convert_gpu_scf_to_cf import ConvertGpuScfToCfPass

        return ConvertGpuScfToCfPass

    return {
        "convert-tc-to-affine": get_convert_tc_to_affine,
        "convert-parallel-loops-to-gpu": get_convert_parallel_loops_to_gpu,
        "convert-gpu-to-nvvm": get_convert_gpu_to_nvvm,
        "convert-gpu-scf-to-cf": get_convert_gpu_scf_to_cf,
        "convert-affine-to-scf": get_convert_affine_to_scf,
        "convert-to-llvm": get_convert_to_llvm,
    }
