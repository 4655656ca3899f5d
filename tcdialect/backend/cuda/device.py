"""The device side of the `cuda` target: the `llvm` stage, LLVM IR and PTX.

`llvm_stage_passes(options, info)` are the passes from the `gpu` stage to
the `llvm` stage (docs/gpu.md)::

    convert-gpu-to-nvvm, convert-gpu-scf-to-cf, convert-to-llvm{target=cuda}

after which every `gpu.module` holds `llvm.func`s (kernels carry
`gpu.kernel`, `nvvm.kernel` and `nvvm.maxntid`), `nvvm` ops and shared
memory globals, and the host function is still at the `gpu` stage.

`llvm_ir_text(module)` is the LLVM IR of the functions and globals of every
`gpu.module` of a module at the `llvm` stage, in one LLVM module for
`nvptx64-nvidia-cuda` with NVPTX's data layout: kernels are `define
ptx_kernel` with `"nvvm.maxntid"="32,8,1"`, and their pointer parameters are
`noalias` (the buffer contract of docs/pipeline.md: the buffers of one
launch never overlap, except inputs, which are only read), which lets LLVM
load read-only buffers through the non-coherent cache (`ld.global.nc`).

`ptx_text(module, arch)` compiles that module for `arch` (`sm_90`, with the
PTX version of `PTX_FEATURES`): it links NVIDIA's libdevice when a `__nv_*`
function is called (`$CUDA_HOME/nvvm/libdevice/libdevice.10.bc`, else
`/usr/local/cuda/...`; a missing file is a `TCError`), makes every function
and global but the kernels internal (so that the unused part of libdevice
goes), runs LLVM's O3 pipeline (NVVMReflect picks libdevice's precise,
non-FTZ paths) and emits PTX. Neither needs a GPU, a driver or `ptxas`.

Importing this module imports neither llvmlite nor the passes; LLVM's NVPTX
target is set up on first use. One lock serialises every use of LLVM here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tcdialect.backend.cuda.options import ARCHS
from tcdialect.diagnostics import TCError
from tcdialect.runtime.abi import LLVM_LOCK

if TYPE_CHECKING:
    from llvmlite import binding, ir
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation
    from xdsl.passes import ModulePass

    from tcdialect.backend.base import TargetInfo
    from tcdialect.backend.cuda.options import CudaOptions

TRIPLE = "nvptx64-nvidia-cuda"
PTX_FEATURES: dict[str, str] = {
    "sm_70": "+ptx60",
    "sm_75": "+ptx63",
    "sm_80": "+ptx70",
    "sm_86": "+ptx71",
    "sm_89": "+ptx78",
    "sm_90": "+ptx80",
}
"""The PTX version of each target: the first that supports it (PTX 8.0 for
sm_90, which is also what MLIR's NVVM pipeline uses)."""
LIBDEVICE = Path("nvvm") / "libdevice" / "libdevice.10.bc"
"""libdevice inside a CUDA installation."""
DEFAULT_CUDA_HOME = Path("/usr/local/cuda")
LIBDEVICE_PREFIX = "__nv_"

_LOCK = LLVM_LOCK  # shared with the other LLVM users
_MACHINES: dict[str, binding.TargetMachine] = {}
_LIBDEVICE_BYTES: dict[Path, bytes] = {}


def llvm_stage_passes(options: CudaOptions, info: TargetInfo) -> list[ModulePass]:
    """The passes from the `gpu` stage to the `llvm` stage (see the module
    docstring); of the options only `min_blocks_per_sm` reaches them."""
    from tcdialect.conversion.convert_gpu_scf_to_cf import ConvertGpuScfToCfPass
    from tcdialect.conversion.convert_gpu_to_nvvm import ConvertGpuToNvvmPass
    from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass

    return [
        ConvertGpuToNvvmPass(options.min_blocks_per_sm),
        ConvertGpuScfToCfPass(),
        ConvertToLlvmPass(target="cuda"),
    ]


def _device_ops(module: ModuleOp) -> list[Operation]:
    from tcdialect.dialects import gpu

    ops: list[Operation] = []
    for op in module.ops:
        if isinstance(op, gpu.ModuleOp):
            ops.extend(op.body.block.ops)
    return ops


def _translated(module: ModuleOp, data_layout: str) -> tuple[ir.Module, list[str]]:
    """The LLVM module of the `gpu.module`s of `module`, and its kernels."""
    from llvmlite import ir
    from xdsl.dialects import llvm

    from tcdialect.backend.llvm import KERNEL_ATTRS, translate_ops

    ops = _device_ops(module)
    for op in ops:
        if not isinstance(op, llvm.FuncOp | llvm.GlobalOp):
            raise TCError(
                f"the device code is not at the llvm stage: '{op.name}' in a "
                "gpu.module (run the `llvm` stage's passes first)"
            )
    funcs = [op for op in ops if isinstance(op, llvm.FuncOp)]
    kernels = [
        f.sym_name.data for f in funcs if any(a in f.attributes for a in KERNEL_ATTRS)
    ]
    llvm_module = translate_ops(
        [op for op in ops if isinstance(op, llvm.FuncOp | llvm.GlobalOp)],
        TRIPLE,
        data_layout,
    )
    for name in kernels:
        for arg in llvm_module.get_global(name).args:
            if isinstance(arg.type, ir.PointerType):
                arg.add_attribute("noalias")
    return llvm_module, kernels


def _machine(arch: str) -> binding.TargetMachine:
    """The NVPTX target machine of `arch` (caller holds `_LOCK`)."""
    from llvmlite import binding

    if arch not in PTX_FEATURES:
        raise TCError(
            f"unknown CUDA architecture '{arch}' (expected one of {', '.join(ARCHS)})"
        )
    if arch not in _MACHINES:
        binding.initialize_all_targets()
        binding.initialize_all_asmprinters()
        target = binding.Target.from_triple(TRIPLE)
        _MACHINES[arch] = target.create_target_machine(
            cpu=arch, features=PTX_FEATURES[arch], opt=3, codemodel="default"
        )
    return _MACHINES[arch]


def llvm_ir_text(module: ModuleOp) -> str:
    """LLVM IR of the device code of a module at the `llvm` stage (not
    optimised, libdevice not linked; see the module docstring)."""
    with _LOCK:
        layout = str(_machine("sm_90").target_data)
        return str(_translated(module, layout)[0])


def libdevice_path() -> Path:
    """libdevice's bitcode: under `$CUDA_HOME`, else `/usr/local/cuda`."""
    home = os.environ.get("CUDA_HOME")
    path = (Path(home) if home else DEFAULT_CUDA_HOME) / LIBDEVICE
    if not path.is_file():
        raise TCError(
            f"libdevice not found at {path}: the kernel calls CUDA math functions "
            "(exp, tanh, ...), which come from libdevice; install the CUDA "
            "toolkit's nvvm component or set CUDA_HOME to its directory"
        )
    return path


def _libdevice(tm: binding.TargetMachine) -> binding.ModuleRef:
    from llvmlite import binding

    path = libdevice_path()
    if path not in _LIBDEVICE_BYTES:
        _LIBDEVICE_BYTES[path] = path.read_bytes()
    lib = binding.parse_bitcode(_LIBDEVICE_BYTES[path])
    lib.triple = TRIPLE
    lib.data_layout = str(tm.target_data)
    return lib


def ptx_text(module: ModuleOp, arch: str) -> str:
    """PTX for `arch` of the device code of a module at the `llvm` stage
    (see the module docstring)."""
    from llvmlite import binding

    with _LOCK:
        tm = _machine(arch)
        llvm_module, kernels = _translated(module, str(tm.target_data))
        try:
            mod = binding.parse_assembly(str(llvm_module))
            mod.verify()
        except RuntimeError as err:
            raise TCError(f"invalid LLVM IR from the llvm stage: {err}") from None
        if any(
            f.is_declaration and f.name.startswith(LIBDEVICE_PREFIX)
            for f in mod.functions
        ):
            mod.link_in(_libdevice(tm))
        keep = set(kernels)
        for f in mod.functions:
            if not f.is_declaration and f.name not in keep:
                f.linkage = binding.Linkage.internal
        for g in mod.global_variables:
            if not g.is_declaration:
                g.linkage = binding.Linkage.internal
        # Drop what no kernel uses (most of libdevice) before optimising.
        dce = binding.create_new_module_pass_manager()
        dce.add_global_dead_code_eliminate_pass()
        pto = binding.create_pipeline_tuning_options(speed_level=3)
        builder = binding.create_pass_builder(tm, pto)
        dce.run(mod, builder)
        builder.getModulePassManager().run(mod, builder)
        return tm.emit_assembly(mod)
