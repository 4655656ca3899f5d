"""`tc-opt -t` output targets: text made from an llvm-dialect module.

- `llvm` (replaces xDSL's): the llvm-dialect module as LLVM IR text
  (`tcdialect.backend.llvm.translate`); `llvm{triple=nvptx64-nvidia-cuda}`
  picks the triple when the module has no `llvm.target_triple`.
- `asm`: host assembly after `O<opt_level>` (`tcdialect.backend.cpu.jit.host_asm`),
  runtime module linked in; `asm{opt_level=2}`.
- `ptx`: PTX of the device side of a `cuda` module at its `gpu` stage (lowered
  to `llvm` first, with the default `CudaOptions`) or its `llvm` stage
  (`tcdialect.backend.cuda.device.ptx_text`); `ptx{arch=sm_80}` (default
  sm_90).

Importing this module does not import llvmlite; emitting does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """LLVM IR text of an llvm-dialect module (not verified, not optimised)."""

    name = "llvm"

    triple: str | None = None

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcdialect.backend.llvm import translate

        output.write(translate(module, triple=self.triple))


@dataclass(frozen=True)
class HostAsmTarget(Target):
    """Host assembly of an llvm-dialect module after the O3 pipeline."""

    name = "asm"

    opt_level: int = 3

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcdialect.backend.cpu.jit import host_asm

        output.write(host_asm(module, opt_level=self.opt_level))


@dataclass(frozen=True)
class PtxTarget(Target):
    """PTX of the `gpu.module`s of a module at the `cuda` target's `llvm` stage."""

    name = "ptx"

    arch: str = "sm_90"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tcdialect.backend.cuda.device import llvm_stage_passes, ptx_text
        from tcdialect.backend.cuda.options import CudaOptions
        from tcdialect.backend.cuda.target import GENERIC_GPU
        from tcdialect.dialects import gpu
        from tcdialect.pipeline import run_passes

        if any(isinstance(op, gpu.FuncOp) for op in module.walk()):
            options = CudaOptions(arch=self.arch)
            run_passes(ctx, module, llvm_stage_passes(options, GENERIC_GPU))
        output.write(ptx_text(module, self.arch))


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """The backend's targets by name, as `xDSLOptMain.available_targets` wants."""
    return {
        "llvm": lambda: LLVMIRTarget,
        "asm": lambda: HostAsmTarget,
        "ptx": lambda: PtxTarget,
    }
