"""The passes tcdialect defines, registered lazily by name.

`get_all_passes()` maps a pass name (as used in `tc-opt -p`) to a factory that
imports the pass class only when it is first needed, like
`xdsl.transforms.get_all_passes`. Each pass lives in its own module (or
package), named like the pass with underscores (`register-tile` in
`register_tile`). This package holds the passes that transform IR within its
dialects; the dialect conversions (`convert-*`) live in `tcdialect.conversion`,
whose `get_all_passes()` is merged in here, so this is the one registry.
The named pipelines of `tcdialect.pipeline` are registered here too.
See docs/pipeline.md for the stages and the contracts between passes.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass

from tcdialect.conversion import get_all_passes as get_conversion_passes


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return a mapping from pass name to a factory returning the pass class."""

    def get_tc_specialize() -> type[ModulePass]:
        from tcdialect.transforms.tc_specialize import TcSpecializePass

        return TcSpecializePass

    def get_tc_differentiate() -> type[ModulePass]:
        from tcdialect.transforms.tc_differentiate import TcDifferentiatePass

        return TcDifferentiatePass

    def get_nontemporal_stores() -> type[ModulePass]:
        from tcdialect.transforms.nontemporal_stores import NontemporalStoresPass

        return NontemporalStoresPass

    def get_prefetch_next_slice() -> type[ModulePass]:
        from tcdialect.transforms.prefetch_next_slice import PrefetchNextSlicePass

        return PrefetchNextSlicePass

    def get_outline_parallel_loops() -> type[ModulePass]:
        from tcdialect.transforms.outline_parallel_loops import (
            OutlineParallelLoopsPass,
        )

        return OutlineParallelLoopsPass

    def get_expand_math_polynomials() -> type[ModulePass]:
        from tcdialect.transforms.expand_math_polynomials import (
            ExpandMathPolynomialsPass,
        )

        return ExpandMathPolynomialsPass

    def get_contract_temporaries() -> type[ModulePass]:
        from tcdialect.transforms.contract_temporaries import (
            ContractTemporariesPass,
        )

        return ContractTemporariesPass

    def get_collapse_dims() -> type[ModulePass]:
        from tcdialect.transforms.collapse_dims import CollapseDimsPass

        return CollapseDimsPass

    def get_affine_isl_schedule() -> type[ModulePass]:
        from tcdialect.transforms.affine_isl_schedule import AffineIslSchedulePass

        return AffineIslSchedulePass

    def get_affine_gpu_map() -> type[ModulePass]:
        from tcdialect.transforms.affine_gpu_map import AffineGpuMapPass

        return AffineGpuMapPass

    def get_affine_gpu_promote() -> type[ModulePass]:
        from tcdialect.transforms.affine_gpu_promote import AffineGpuPromotePass

        return AffineGpuPromotePass

    def get_affine_gpu_register_tile() -> type[ModulePass]:
        from tcdialect.transforms.affine_gpu_register_tile import (
            AffineGpuRegisterTilePass,
        )

        return AffineGpuRegisterTilePass

    def get_gpu_carry_registers() -> type[ModulePass]:
        from tcdialect.transforms.gpu_carry_registers import GpuCarryRegistersPass

        return GpuCarryRegistersPass

    def get_gpu_async_copies() -> type[ModulePass]:
        from tcdialect.transforms.gpu_async_copies import GpuAsyncCopiesPass

        return GpuAsyncCopiesPass

    def get_gpu_double_buffer() -> type[ModulePass]:
        from tcdialect.transforms.gpu_double_buffer import GpuDoubleBufferPass

        return GpuDoubleBufferPass

    def get_contract_reduction_fma() -> type[ModulePass]:
        from tcdialect.transforms.contract_reduction_fma import (
            ContractReductionFmaPass,
        )

        return ContractReductionFmaPass

    def get_unroll_inner_loops() -> type[ModulePass]:
        from tcdialect.transforms.unroll_inner_loops import UnrollInnerLoopsPass

        return UnrollInnerLoopsPass

    def get_register_tile() -> type[ModulePass]:
        from tcdialect.transforms.register_tile import RegisterTilePass

        return RegisterTilePass

    def get_fuse_sibling_loops() -> type[ModulePass]:
        from tcdialect.transforms.fuse_sibling_loops import FuseSiblingLoopsPass

        return FuseSiblingLoopsPass

    def get_tc_to_affine() -> type[ModulePass]:
        from tcdialect.pipeline import TcToAffinePipeline

        return TcToAffinePipeline

    def get_tc_to_scheduled() -> type[ModulePass]:
        from tcdialect.pipeline import TcToScheduledPipeline

        return TcToScheduledPipeline

    def get_tc_to_loops() -> type[ModulePass]:
        from tcdialect.pipeline import TcToLoopsPipeline

        return TcToLoopsPipeline

    def get_tc_to_gpu() -> type[ModulePass]:
        from tcdialect.pipeline import TcToGpuPipeline

        return TcToGpuPipeline

    def get_tc_to_llvm() -> type[ModulePass]:
        from tcdialect.pipeline import TcToLlvmPipeline

        return TcToLlvmPipeline

    return {
        **get_conversion_passes(),
        "tc-specialize": get_tc_specialize,
        "tc-differentiate": get_tc_differentiate,
        "collapse-dims": get_collapse_dims,
        "affine-isl-schedule": get_affine_isl_schedule,
        "affine-gpu-map": get_affine_gpu_map,
        "affine-gpu-promote": get_affine_gpu_promote,
        "affine-gpu-register-tile": get_affine_gpu_register_tile,
        "gpu-carry-registers": get_gpu_carry_registers,
        "gpu-async-copies": get_gpu_async_copies,
        "gpu-double-buffer": get_gpu_double_buffer,
        "contract-reduction-fma": get_contract_reduction_fma,
        "unroll-inner-loops": get_unroll_inner_loops,
        "contract-temporaries": get_contract_temporaries,
        "register-tile": get_register_tile,
        "fuse-sibling-loops": get_fuse_sibling_loops,
        "prefetch-next-slice": get_prefetch_next_slice,
        "outline-parallel-loops": get_outline_parallel_loops,
        "nontemporal-stores": get_nontemporal_stores,
        "expand-math-polynomials": get_expand_math_polynomials,
        "tc-to-affine": get_tc_to_affine,
        "tc-to-scheduled": get_tc_to_scheduled,
        "tc-to-loops": get_tc_to_loops,
        "tc-to-gpu": get_tc_to_gpu,
        "tc-to-llvm": get_tc_to_llvm,
    }
