"""Real MLIR 22 accepts our `gpu` dialect: the oracle for the `gpu` stage.

- The module of test/filecheck/dialects/gpu/ops.mlir (every gpu op we have,
  every optional part of their syntax) printed by us in custom and in generic
  form reads into mlir-opt as the same module (compared in mlir-opt's own
  generic print), kernels staying kernels; what mlir-opt prints, custom or
  generic, reads back into us as that module again.
- For every catalog kernel, the `gpu` stage of the `cuda` target at its
  first test sizes (specialised; in generic and custom form) and generic in
  its sizes (generic form) passes mlir-opt's
  `gpu.module(convert-gpu-to-nvvm)`: MLIR's own lowering to NVVM accepts our
  kernels (this parses and verifies the whole module, host side included,
  and converts every op of the device side). Each launch's block is the
  constant `known_block_size` of its kernel, from which that lowering
  derives `nvvm.maxntid` and the range of `tid`.

No `--allow-unregistered-dialect` is needed: the `tc.*` attributes on the
host function are discardable attributes with builtin values. Skipped when
mlir-22-tools is not installed (`apt-get install mlir-22-tools`).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_reference_catalog import KERNELS, Kernel
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.printer import Printer
from xdsl.traits import SymbolTable

import tcdialect
from tcdialect.dialects import gpu
from tcdialect.dialects.dense_hex import DenseHexParser
from tcdialect.pipeline import make_context


def _mlir_opt() -> str | None:
    llvm22 = Path("/usr/lib/llvm-22/bin/mlir-opt")
    found = shutil.which("mlir-opt-22") or (str(llvm22) if llvm22.exists() else None)
    return found or shutil.which("mlir-opt")


MLIR_OPT = _mlir_opt()
pytestmark = pytest.mark.skipif(
    MLIR_OPT is None, reason="mlir-opt (mlir-22-tools) not installed"
)

OPS = Path(__file__).parents[1] / "filecheck" / "dialects" / "gpu" / "ops.mlir"
NVVM = "--pass-pipeline=builtin.module(gpu.module(convert-gpu-to-nvvm))"


def mlir_opt(args: list[str], text: str) -> str:
    assert MLIR_OPT is not None
    proc = subprocess.run(
        [MLIR_OPT, *args], input=text, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"mlir-opt {' '.join(args)} rejected:\n{proc.stderr}"
    return proc.stdout


def parse(text: str) -> ModuleOp:
    module = DenseHexParser(make_context(), text).parse_module()
    module.verify()
    return module


def show(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def canonical(text: str) -> str:
    """mlir-opt's generic print: the same for the same module, whatever our
    SSA names, attribute order or form."""
    return mlir_opt(["--mlir-print-op-generic"], text)


def test_mlir_reads_every_gpu_op_in_both_forms() -> None:
    module = parse(OPS.read_text())
    want = canonical(show(module, generic=True))
    assert canonical(show(module, generic=False)) == want
    # kernels stay kernels (an xDSL-style `kernel` property would be dropped)
    assert want.count("gpu.kernel") == 3
    assert "known_block_size = array<i32: 128, 1, 1>" in want


def test_we_read_what_mlir_prints() -> None:
    want = canonical(show(parse(OPS.read_text()), generic=True))
    for flags in ([], ["--mlir-print-op-generic"]):
        reread = parse(mlir_opt(flags, want))
        assert canonical(show(reread, generic=True)) == want, flags


def test_mlir_lowers_every_gpu_op_to_nvvm() -> None:
    out = mlir_opt([NVVM], show(parse(OPS.read_text()), generic=True))
    for lowered in (
        "nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>",
        "nvvm.read.ptx.sreg.tid.x range <i32, 0, 128>",
        "nvvm.read.ptx.sreg.ctaid.z",
        "nvvm.read.ptx.sreg.ntid.x",
        "nvvm.read.ptx.sreg.nctaid.y",
        "nvvm.read.ptx.sreg.laneid",
        "nvvm.shfl.sync  bfly",
        "nvvm.shfl.sync  down",
        "nvvm.shfl.sync  up",
        "nvvm.shfl.sync  idx",
        "nvvm.barrier0",
        "llvm.mlir.global internal @__wg_buffers_1() {addr_space = 3 : i32}",
    ):
        assert lowered in out
    assert "gpu.func" not in out


def check_known_block_sizes(module: ModuleOp) -> None:
    """Each launch's block is its kernel's `known_block_size`, which
    convert-gpu-to-nvvm trusts (`nvvm.maxntid`, the ranges of `tid`)."""
    launches = [op for op in module.walk() if isinstance(op, gpu.LaunchFuncOp)]
    assert launches
    for launch in launches:
        kernel = SymbolTable.lookup_symbol(module, launch.kernel)
        assert isinstance(kernel, gpu.FuncOp) and kernel.known_block_size is not None
        block: list[int] = []
        for size in launch.block:
            assert isinstance(size.owner, arith.ConstantOp), "a constant block"
            value = size.owner.value
            assert isinstance(value, IntegerAttr)
            block.append(value.value.data)
        assert tuple(block) == kernel.known_block_size.get_values()


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_mlir_lowers_the_gpu_stage_to_nvvm(kernel: Kernel) -> None:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    inputs = kernel.inputs(rng, kernel.sizes[0])
    k = tcdialect.define(kernel.source, kernel.entry, target="cuda")
    specialized = k.ir(*inputs, stage="gpu", generic=True)
    generic = k.ir(stage="gpu", generic=True)
    module = parse(specialized)
    check_known_block_sizes(module)
    custom = show(module, generic=False)
    modules = (specialized, generic, custom)
    out = mlir_opt(["--split-input-file", NVVM], "\n// -----\n".join(modules))
    kernels = 2 * specialized.count("gpu.kernel") + generic.count("gpu.kernel")
    assert out.count("nvvm.kernel") == kernels
    assert "gpu.func" not in out
