"""`convert-to-llvm`: func, cf, arith, math, memref, vector, tcrt → the llvm dialect.

The last real lowering of the CPU pipeline (see docs/pipeline.md, "llvm stage
ABI"), and with `target=cuda` that of the device side of the `cuda` target
(below). It accepts a module of `func.func`s (plus `llvm.func`s and
`llvm.mlir.global`s, kept) whose bodies hold only ops of func, cf, arith,
math, memref, vector, tcrt and llvm, with `index`, signless integers, floats,
fixed 1-D vectors of them and contiguous row-major memrefs; it produces a
module of llvm ops only, with no `builtin.unrealized_conversion_cast` left.
Unsupported input raises `TCError` naming the operation. Example::

    func.func @scale(%A: memref<?x4xf32>, %n: index) -> f32 {
      %c0 = arith.constant 0 : index
      %x = memref.load %A[%n, %c0] : memref<?x4xf32>
      func.return %x : f32
    }

becomes::

    llvm.func @scale(%A: !llvm.ptr, %A_d0: i64, %n: i64) -> f32 {
      %c0 = llvm.mlir.constant(0) : i64
      %0 = llvm.mlir.constant(4) : i64
      %1 = llvm.mul %n, %0 overflow<nsw> : i64
      %2 = llvm.add %1, %c0 overflow<nsw> : i64
      %3 = llvm.getelementptr inbounds %A[%2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %x = llvm.load %3 : !llvm.ptr -> f32
      llvm.return %x : f32
    }

The package is split by dialect, each module stating its own contract, so
that another target can reuse the parts it needs:

- `type_converter`: builtin types → llvm types, intrinsic name mangling;
- `memref_abi`: a memref as an element pointer plus its dynamic extents,
  row-major addressing (GEPs);
- `lowering`: the driver (`ModuleLowering`/`FunctionLowering`), which
  translates each `func.func` block by block with a table of op handlers;
- `arith`, `math`, `memref`, `vector`, `func_cf`: handler tables
  (`populate_<dialect>_to_llvm`) that call no library;
- `cpu_runtime`: what needs the CPU runtime: `tcrt.parallel_for` →
  `__tc_parallel_for`, `memref.alloc`/`dealloc` → `malloc`/`free`, math ops →
  C math library calls;
- `soft_bfloat16`: bf16 arithmetic through f32 and bf16 rounding in integer
  ops, for the CPU, where LLVM would call a library function the process
  lacks (f16 needs nothing: LLVM promotes it to float in registers);
- `sequential_atomics`: for the CPU, `memref.atomic_rmw` outside parallel
  loop bodies as a plain load, op and store (no `lock cmpxchg` loop);
- `nvvm`, `libdevice`: the device side of a CUDA GPU: `nvvm` ops and
  `gpu.return`, shared memory, math ops → libdevice calls.

`ConvertToLlvmPass` composes them: `cpu_handlers` by default, the whole
module as above. With `target=cuda` (`convert-to-llvm{target=cuda}`) it
lowers only the functions of each `gpu.module` (`gpu.func`s, after
`convert-gpu-to-nvvm` and `convert-gpu-scf-to-cf`) with `cuda_handlers`, in the
`gpu.module`, and leaves the host functions alone. There a memref is a
pointer to global memory, `!llvm.ptr<1>` (shared memory, memory space 3:
`!llvm.ptr<3>`; a thread's `memref.alloca`: `!llvm.ptr`), plus its dynamic
extents as on the CPU; `index` is `i64`::

    gpu.func @k(%A: memref<?xf32>, %n: index) kernel attributes {nvvm.kernel, ...}

becomes ``llvm.func @k(%A: !llvm.ptr<1>, %A_d0: i64, %n: i64) attributes
{gpu.kernel, nvvm.kernel, ...}``. Importing this package or a dialect module
does not import `cpu_runtime`, `nvvm` or `libdevice`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.conversion.convert_to_llvm.arith import populate_arith_to_llvm
from tcdialect.conversion.convert_to_llvm.func_cf import populate_func_cf_to_llvm
from tcdialect.conversion.convert_to_llvm.lowering import Handler, ModuleLowering
from tcdialect.conversion.convert_to_llvm.math import populate_math_to_llvm
from tcdialect.conversion.convert_to_llvm.memref import populate_memref_to_llvm
from tcdialect.conversion.convert_to_llvm.type_converter import CUDA_SPACES
from tcdialect.conversion.convert_to_llvm.vector import populate_vector_to_llvm
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu


def cpu_handlers() -> dict[str, Handler]:
    """The handler table of the CPU target: every dialect module's handlers and
    the CPU runtime's."""
    # Imported here: loading this package (for a dialect module) leaves the
    # CPU runtime lowering out.
    from tcdialect.conversion.convert_to_llvm.cpu_runtime import (
        populate_cpu_runtime_to_llvm,
    )
    from tcdialect.conversion.convert_to_llvm.soft_bfloat16 import (
        populate_soft_bfloat16,
    )

    handlers: dict[str, Handler] = {}
    populate_arith_to_llvm(handlers)
    populate_math_to_llvm(handlers)
    populate_memref_to_llvm(handlers)
    populate_vector_to_llvm(handlers)
    populate_func_cf_to_llvm(handlers)
    populate_cpu_runtime_to_llvm(handlers)
    populate_soft_bfloat16(handlers)
    return handlers


def cuda_handlers() -> dict[str, Handler]:
    """The handler table of a CUDA kernel: the dialect modules' scalar
    handlers, the device's (`nvvm`) and libdevice's."""
    from tcdialect.conversion.convert_to_llvm.libdevice import (
        populate_libdevice_to_llvm,
    )
    from tcdialect.conversion.convert_to_llvm.nvvm import populate_nvvm_to_llvm

    handlers: dict[str, Handler] = {}
    populate_arith_to_llvm(handlers)
    populate_math_to_llvm(handlers)
    populate_memref_to_llvm(handlers)
    populate_func_cf_to_llvm(handlers)
    populate_nvvm_to_llvm(handlers)
    populate_libdevice_to_llvm(handlers)
    return handlers


TARGETS = ("cpu", "cuda")
"""The values of `ConvertToLlvmPass.target`."""


@dataclass(frozen=True)
class ConvertToLlvmPass(ModulePass):
    """Translate func/cf/arith/math/memref/vector/tcrt functions to the llvm dialect.

    See the package docstring and docs/pipeline.md ("llvm stage ABI").
    `target`: `cpu` (the whole module) or `cuda` (the `gpu.module`s).
    """

    name = "convert-to-llvm"

    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target == "cpu":
            from tcdialect.conversion.convert_to_llvm.sequential_atomics import (
                plain_atomics,
            )
            from tcdialect.conversion.convert_to_llvm.soft_bfloat16 import (
                emulate_bfloat16,
            )

            plain_atomics(op)
            emulate_bfloat16(op)
            ModuleLowering(op, cpu_handlers()).run()
            return
        if self.target != "cuda":
            raise TCError(
                f"convert-to-llvm: unknown target '{self.target}' "
                f"(expected one of {', '.join(TARGETS)})"
            )
        from tcdialect.conversion.convert_to_llvm.libdevice import (
            drop_c_declarations,
        )

        handlers = cuda_handlers()
        for device in op.body.block.ops:
            if isinstance(device, gpu.ModuleOp):
                drop_c_declarations(device)
                ModuleLowering(device, handlers, CUDA_SPACES).run()
