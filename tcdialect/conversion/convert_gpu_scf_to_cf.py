"""`convert-gpu-scf-to-cf`: xDSL's `convert-scf-to-cf` on the device code only.

The second pass of the `cuda` target's `llvm` stage (docs/gpu.md), between
`convert-gpu-to-nvvm` and `convert-to-llvm{target=cuda}`: in every
`gpu.module`, `scf.for`, `scf.if` and `scf.index_switch` become blocks and
`cf` branches (xDSL's patterns, MLIR's lowering). Everything outside the
`gpu.module`s is left alone, so the host function stays at the `gpu` stage,
structured: the CUDA runtime interprets it (`runtime.gpu_host.HostProgram`
runs a recurrence's `scf.for` of launches), and an unstructured host function
is not one it can run.

Example::

    func.func @host(...) {
      scf.for %t = %c1 to %T step %c1 {
        gpu.launch_func @kernels::@k ... args(..., %t : index)
      }
      func.return
    }
    gpu.module @kernels {
      gpu.func @k(...) kernel {
        scf.for %r = %c0 to %c5 step %c1 { ... }
        gpu.return
      }
    }

keeps the host `scf.for`; the kernel's loop becomes `cf.br` / `cf.cond_br`
between blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering

from tcdialect.dialects import gpu


@dataclass(frozen=True)
class ConvertGpuScfToCfPass(ModulePass):
    """The structured control flow of each `gpu.module` → `cf` (see the
    module docstring)."""

    name = "convert-gpu-scf-to-cf"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier([SwitchLowering(), IfLowering(), ForLowering()])
        )
        for inner in op.walk():
            if isinstance(inner, gpu.ModuleOp):
                walker.rewrite_region(inner.body)
