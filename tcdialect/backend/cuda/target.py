"""`CudaBackend` (`cuda`) and `CudaSimBackend` (`cuda-sim`): NVIDIA GPUs.

From `scheduled` (which, for these targets, is `affine` unchanged: the GPU
mapper schedules itself) they run::

    gpu:   affine-gpu-map{CudaOptions}, affine-gpu-promote (use_shared_memory
           or use_private_memory), convert-affine-to-scf,
           convert-parallel-loops-to-gpu, unroll-inner-loops{unroll} (unroll > 1),
           canonicalize, cse
    llvm:  the device side to the llvm dialect (`backend.cuda.device`)

Text stages: `llvm-ir` (LLVM IR of the device module for
`nvptx64-nvidia-cuda`) and `ptx` (PTX for `CudaOptions.arch`, else the
`TargetInfo`'s). Neither needs a GPU, a driver or pycuda.

`cuda-sim` has the same stages; `compile` runs the `gpu` stage in the
simulator (`tcdialect.runtime.cuda_sim`) instead of loading PTX.
`TCDIALECT_CUDA_SIM=1` makes `define(target="cuda")` use it (as numba's
`NUMBA_ENABLE_CUDASIM`): see `tcdialect.backend.registry`.

Importing this module imports neither llvmlite nor the passes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from tcdialect.backend.base import Backend, TargetInfo
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from tcdialect.backend.base import Launcher
    from tcdialect.poly.schedule import ScheduleOptions
    from tcdialect.runtime.cuda.driver import CudaDevice
    from tcdialect.signature import Signature

#: What the library and `tc-opt` assume without a device: an H100 (sm_90),
#: with the limits every sm_90 part shares.
GENERIC_GPU = TargetInfo(
    name="sm_90",
    triple="nvptx64-nvidia-cuda",
    features=("+ptx80",),
    vector_bits=128,
    cores=132,
    cache_bytes=(256 * 1024, 50 * 1024 * 1024),
    limits={
        "warp_size": 32,
        "max_threads_per_block": 1024,
        "max_shared_memory": 48 * 1024,
        "max_shared_memory_optin": 227 * 1024,
        "registers_per_block": 65536,
        "max_threads_per_sm": 2048,
        "max_grid_x": 2**31 - 1,
        "max_grid_y": 65535,
        "max_grid_z": 65535,
    },
)


class CudaBackend(Backend):
    """An NVIDIA GPU (see the module docstring)."""

    name = "cuda"
    options_class: ClassVar[type[Any]] = CudaOptions
    ir_stages = ("gpu", "llvm")
    text_stages = ("llvm-ir", "ptx")

    device_arrays = True

    def info(self) -> TargetInfo:
        """The GPU's `TargetInfo` (device 0, asked through the CUDA runtime),
        or the generic GPU where there is none (PTX can still be made)."""
        return _device_info()

    def generic_info(self) -> TargetInfo:
        return GENERIC_GPU

    def arch(self, options: CudaOptions, info: TargetInfo) -> str:
        """The PTX target: the option, else the `TargetInfo`'s processor."""
        return options.arch or info.name

    def schedule_options(
        self, options: CudaOptions, info: TargetInfo
    ) -> ScheduleOptions | bool:
        return False

    def stage_passes(
        self, stage: str, options: CudaOptions, info: TargetInfo
    ) -> list[ModulePass]:
        if stage == "gpu":
            from xdsl.transforms.canonicalize import CanonicalizePass
            from xdsl.transforms.common_subexpression_elimination import (
                CommonSubexpressionElimination,
            )

            from tcdialect.conversion.convert_affine_to_scf import (
                ConvertAffineToScfPass,
            )
            from tcdialect.conversion.convert_parallel_loops_to_gpu import (
                ConvertParallelLoopsToGpuPass,
            )
            from tcdialect.transforms.affine_gpu_map import AffineGpuMapPass
            from tcdialect.transforms.affine_gpu_promote import AffineGpuPromotePass
            from tcdialect.transforms.affine_gpu_register_tile import (
                AffineGpuRegisterTilePass,
            )
            from tcdialect.transforms.collapse_dims import CollapseDimsPass
            from tcdialect.transforms.contract_reduction_fma import (
                ContractReductionFmaPass,
            )
            from tcdialect.transforms.fuse_sibling_loops import FuseSiblingLoopsPass
            from tcdialect.transforms.gpu_async_copies import GpuAsyncCopiesPass
            from tcdialect.transforms.gpu_carry_registers import GpuCarryRegistersPass
            from tcdialect.transforms.gpu_double_buffer import GpuDoubleBufferPass
            from tcdialect.transforms.unroll_inner_loops import UnrollInnerLoopsPass

            unroll = (
                [UnrollInnerLoopsPass(options.unroll, options.unroll_copy_shared)]
                if options.unroll > 1
                else []
            )
            promote = (
                [AffineGpuPromotePass.from_options(options, info)]
                if options.use_shared_memory is not False or options.use_private_memory
                else []
            )
            # cp.async exists from sm_80 on
            arch = self.arch(options, info)
            copies: list[ModulePass] = []
            if options.async_copy and int(arch.removeprefix("sm_")) >= 80:
                copies.append(GpuAsyncCopiesPass())
                if options.double_buffer:
                    copies.append(GpuDoubleBufferPass.from_options(options, info))
            private = options.use_private_memory
            registers = [AffineGpuRegisterTilePass()] if private else []
            carry = [GpuCarryRegistersPass()] if private else []
            # explicit tile sizes name the members of the definition's bands
            collapse = [CollapseDimsPass()] if options.tile is None else []
            return [
                *collapse,
                AffineGpuMapPass.from_options(options, info),
                *promote,
                *registers,
                ConvertAffineToScfPass(),
                ConvertParallelLoopsToGpuPass(),
                *carry,
                *unroll,
                ContractReductionFmaPass(),
                CanonicalizePass(),
                CommonSubexpressionElimination(),
                # (after CSE: a shared reduction's loop bounds are one value)
                FuseSiblingLoopsPass(),
                *copies,
            ]
        if stage == "llvm":
            from tcdialect.backend.cuda.device import llvm_stage_passes

            return llvm_stage_passes(options, info)
        raise TCError(f"target '{self.name}' has no IR stage '{stage}'")

    def emit(self, stage: str, module: ModuleOp, options: CudaOptions) -> str:
        if stage == "llvm-ir":
            from tcdialect.backend.cuda.device import llvm_ir_text

            return llvm_ir_text(module)
        if stage == "ptx":
            from tcdialect.backend.cuda.device import ptx_text

            return ptx_text(module, self.arch(options, self.info()))
        return super().emit(stage, module, options)

    def compile(
        self, module: ModuleOp, entry: str, signature: Signature, options: CudaOptions
    ) -> Launcher:
        """PTX of the device code, loaded on GPU 0 (`runtime.cuda`); a
        `TCError` that says what to install where there is no GPU."""
        from tcdialect.backend.cuda.device import ptx_text
        from tcdialect.runtime.cuda.driver import cuda_device
        from tcdialect.runtime.cuda.launcher import CudaLauncher

        device = cuda_device(0)
        arch = self.arch(options, _info_of(device))
        return CudaLauncher(
            module, entry, signature, ptx_text(module, arch), arch, device
        )

    def new_outputs(
        self,
        shapes: Sequence[tuple[int, ...]],
        dtypes: Sequence[Any],
        inputs: Sequence[Any],
        bfloat16: Sequence[bool] = (),
    ) -> list[Any]:
        """Arrays like the first input in device memory (its library and
        device), else NumPy arrays."""
        from tcdialect.arrays import DeviceArray, device_array

        like = next((x for x in inputs if isinstance(x, DeviceArray)), None)
        if like is None:
            return super().new_outputs(shapes, dtypes, inputs)
        from tcdialect.runtime.cuda.launcher import empty_like_kind

        flags = tuple(bfloat16) or (False,) * len(shapes)
        return [
            device_array(empty_like_kind(like, tuple(shape), np.dtype(dt), bf))
            for shape, dt, bf in zip(shapes, dtypes, flags)
        ]


@functools.cache
def _device_info() -> TargetInfo:
    from tcdialect.runtime.cuda.driver import cuda_device

    try:
        return _info_of(cuda_device(0))
    except TCError:
        return GENERIC_GPU


def _info_of(device: CudaDevice) -> TargetInfo:
    """A GPU's `TargetInfo`: its architecture (the newest PTX target LLVM
    knows that it runs, newer GPUs JIT-compiling it), SMs and limits."""
    from tcdialect.backend.cuda.options import ARCHS

    cc = device.capability[0] * 10 + device.capability[1]
    runs = [a for a in ARCHS if int(a[3:]) <= cc]
    arch = runs[-1] if runs else ARCHS[0]
    return GENERIC_GPU.with_(
        name=arch,
        cores=device.multiprocessors,
        limits={
            **GENERIC_GPU.limits,
            "max_shared_memory_optin": device.max_shared_optin,
            "max_threads_per_sm": device.threads_per_sm,
        },
    )


class CudaSimBackend(CudaBackend):
    """The GPU simulator: the `gpu` stage run on the CPU with the GPU's
    semantics (grid, blocks, threads, barriers, shared memory, shuffles)."""

    name = "cuda-sim"
    ir_stages = ("gpu",)
    text_stages = ()
    device_arrays = False  # it runs on NumPy arrays

    def info(self) -> TargetInfo:
        # the simulated GPU is the generic one, on every machine
        return GENERIC_GPU

    def compile(
        self, module: ModuleOp, entry: str, signature: Signature, options: CudaOptions
    ) -> Launcher:
        from tcdialect.runtime.cuda_sim import SimLauncher

        return SimLauncher(module, entry, signature, options)
