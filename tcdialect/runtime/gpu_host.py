"""Running the host function of a `gpu`-stage module against a `Device`.

The host function of the `gpu` stage (docs/gpu.md) holds size
arithmetic, `memref.alloc` / `memref.dealloc` of temporaries in device
memory, and `gpu.launch_func`s, in program order; the only loops are the
step loops of recurrences (`scf.for` marked `tc.recurrence`, without
iteration arguments), which launch their steps' kernels once per step. `HostProgram` runs it; a
`Device` does what only a device can: allocate and free its memory and launch
a kernel. The GPU simulator (`tcdialect.runtime.cuda_sim`) and the CUDA
runtime are two `Device`s sharing this interpretation of the host side::

    func.func @f(%A: memref<?xf32>, %N: index) {
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %g = arith.ceildivsi %N, %c32 : index
      %T = memref.alloc(%N) : memref<?xf32>
      gpu.launch_func @f_kernels::@f_k0 blocks in (%g, %c1, %c1)
          threads in (%c32, %c1, %c1) args(%A : memref<?xf32>, %T : memref<?xf32>, %N : index)
      memref.dealloc %T : memref<?xf32>
      func.return
    }

`HostProgram(module, "f").run([a, 100], device)` calls
`device.alloc(memref<?xf32>, (100,))` (returning some `t`),
`device.launch(<gpu.func @f_k0>, (4, 1, 1), (32, 1, 1), [a, t, 100])` and
`device.free(t)`.

Memref values are whatever the device's handles are (the caller passes the
arguments' handles); `index` and integer values are Python ints, floats
NumPy scalars, computed with the reference interpreter's semantics of
`arith` and `math`. Every launch is
checked before the device sees it: grid and block sizes non-negative and
within CUDA's limits, the block equal to the kernel's `known_block_size`;
the launch's `dynamic_shared_memory_size` (bytes, 0 without one) goes to
the device, which checks it against its limit.
A launch with an empty grid or block does nothing (CUDA cannot launch one;
the host code asks for one when a size is 0). Anything else in the host
function is a `TCError` when the program is made, naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np
from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tcdialect.backend.cuda.options import (
    MAX_BLOCK,
    MAX_GRID,
    MAX_THREADS_PER_BLOCK,
)
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.reference import _OPS, _coerce, _storage_dtype

Dim3 = tuple[int, int, int]


class Device(Protocol):
    """What a `HostProgram` asks of the device it runs on."""

    def alloc(self, type: MemRefType[Attribute], shape: tuple[int, ...]) -> Any:
        """A new buffer of `type` with these extents (its contents undefined)."""
        ...

    def free(self, buffer: Any) -> None:
        """Release a buffer `alloc` returned."""
        ...

    def launch(
        self,
        kernel: KernelOp,
        grid: Dim3,
        block: Dim3,
        args: list[Any],
        shared: int = 0,
    ) -> None:
        """Run `kernel` on `grid` blocks of `block` threads with `shared`
        bytes of dynamic shared memory per block; `args` are its arguments
        (buffer handles and ints), in order. Returns when it is done. A
        request for more shared memory than a block may have is a `TCError`
        naming the kernel."""
        ...


#: Unit attributes that make an `llvm.func` a kernel, and its launch bound
#: (as `convert-gpu-to-nvvm` sets them).
KERNEL_ATTRS = ("gpu.kernel", "nvvm.kernel")
NVVM_MAXNTID = "nvvm.maxntid"
#: A kernel: a `gpu.func` at the `gpu` stage, an `llvm.func` marked as a
#: kernel at the `llvm` stage.
KernelOp = gpu.FuncOp | llvm.FuncOp


def is_kernel(op: Operation) -> bool:
    """Whether `op` (in a `gpu.module`) is a kernel, at either stage."""
    if isinstance(op, gpu.FuncOp):
        return op.is_kernel
    return isinstance(op, llvm.FuncOp) and any(a in op.attributes for a in KERNEL_ATTRS)


def find_kernels(module: ModuleOp) -> dict[tuple[str, str], KernelOp]:
    """The kernels of `module`, by (gpu.module name, function name)."""
    kernels: dict[tuple[str, str], KernelOp] = {}
    for op in module.ops:
        if not isinstance(op, gpu.ModuleOp):
            continue
        for f in op.body.block.ops:
            if isinstance(f, gpu.FuncOp | llvm.FuncOp) and is_kernel(f):
                kernels[(op.sym_name.data, f.sym_name.data)] = f
    return kernels


def known_block_size(kernel: KernelOp) -> Dim3 | None:
    """The kernel's `known_block_size` (`nvvm.maxntid` at the `llvm` stage),
    padded to x, y, z (None: not known)."""
    known = (
        kernel.known_block_size
        if isinstance(kernel, gpu.FuncOp)
        else kernel.attributes.get(NVVM_MAXNTID)
    )
    if not isinstance(known, DenseArrayBase):
        return None
    values = cast("DenseArrayBase[IntegerType]", known).get_values()
    sizes = [int(v) for v in values]
    return (*sizes, *(1,) * (3 - len(sizes)))[:3]  # type: ignore[return-value]


def _is_scalar(t: Attribute) -> bool:
    return isinstance(t, IndexType | IntegerType | AnyFloat)


class HostProgram:
    """The host function `entry` of a `gpu`-stage `module`, ready to run."""

    def __init__(self, module: ModuleOp, entry: str):
        func = next(
            (
                op
                for op in module.ops
                if isinstance(op, FuncOp) and op.sym_name.data == entry
            ),
            None,
        )
        if func is None or not func.body.blocks:
            raise TCError(f"internal error: no host function @{entry} in the module")
        if len(func.body.blocks) != 1:
            raise TCError(
                f"internal error: the host function @{entry} is not structured "
                "(its control flow was lowered to blocks; the device code's "
                "lowering is convert-gpu-scf-to-cf, not convert-scf-to-cf)"
            )
        self.func = func
        self.entry = entry
        kernels = find_kernels(module)
        #: The kernel each launch runs.
        self.kernels: dict[gpu.LaunchFuncOp, KernelOp] = {}
        for op in func.body.block.ops:
            self._check(op, kernels)

    def arg_shape(self, position: int, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The extents of a caller's array of `shape` as argument `position`
        of the host function: `shape` itself, or, where `collapse-dims`
        merged adjacent static dimensions of the argument's memref, the
        type's (the same row-major bytes: a view, never a copy; its dynamic
        extents, outer to the merged ones, are the caller's)."""
        t = self.func.body.block.args[position].type
        if not isinstance(t, MemRefType) or len(t.get_shape()) == len(shape):
            return shape
        view = tuple(s if d < 0 else d for d, s in zip(t.get_shape(), shape))
        if math.prod(view) != math.prod(shape):
            raise TCError(
                f"internal error: @{self.entry} argument {position} of shape "
                f"{shape} cannot be viewed as {t}"
            )
        return view

    def _check(self, op: Operation, kernels: dict[tuple[str, str], KernelOp]) -> None:
        where = f"host function @{self.entry}"
        if isinstance(op, gpu.LaunchFuncOp):
            ref = op.kernel
            path = (ref.root_reference.data, *(r.data for r in ref.nested_references))
            kernel = kernels.get(path) if len(path) == 2 else None  # type: ignore[arg-type]
            if kernel is None:
                raise TCError(
                    f"internal error: {where} launches {ref}, which is not a kernel "
                    "of the module"
                )
            self.kernels[op] = kernel
            return
        if op.name in ("memref.alloc", "memref.dealloc", "func.return", "scf.yield"):
            return
        if isinstance(op, scf.ForOp) and not op.iter_args:
            for inner in op.body.block.ops:
                self._check(inner, kernels)
            return
        if op.name in _OPS and all(_is_scalar(r.type) for r in op.results):
            return
        raise TCError(
            f"internal error: {where} holds '{op.name}', which the host side of "
            "the gpu stage does not run (only size arithmetic, memref.alloc, "
            "memref.dealloc, gpu.launch_func and the scf.for of a recurrence)"
        )

    def run(self, args: Sequence[Any], device: Device) -> None:
        """Run the host function on `args` (buffer handles for memrefs, ints
        for sizes), allocating, freeing and launching on `device`."""
        block = self.func.body.block
        if len(args) != len(block.args):
            raise TCError(
                f"internal error: @{self.entry} takes {len(block.args)} arguments, "
                f"got {len(args)}"
            )
        env: dict[SSAValue, Any] = dict(zip(block.args, args))
        self._run(block, env, device)

    def _run(self, block: Block, env: dict[SSAValue, Any], device: Device) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                lb, ub, step = (int(env[v]) for v in (op.lb, op.ub, op.step))
                for i in range(lb, ub, step):
                    env[op.body.block.args[0]] = i
                    self._run(op.body.block, env, device)
            elif isinstance(op, scf.YieldOp):
                return
            elif isinstance(op, gpu.LaunchFuncOp):
                self._launch(op, env, device)
            elif op.name == "memref.alloc":
                t = op.results[0].type
                assert isinstance(t, MemRefType)
                sizes = iter(int(env[v]) for v in op.operands)
                shape = tuple(next(sizes) if d < 0 else d for d in t.get_shape())
                if any(d < 0 for d in shape):
                    raise TCError(
                        f"internal error: @{self.entry} allocates {t} with a "
                        f"negative extent {shape}"
                    )
                env[op.results[0]] = device.alloc(t, shape)
            elif op.name == "memref.dealloc":
                device.free(env[op.operands[0]])
            elif isinstance(op, ReturnOp):
                return
            else:
                xs = [np.asarray(env[v]) for v in op.operands]
                dt = _storage_dtype(op.results[0].type)
                value = _coerce(_OPS[op.name](op, xs), dt)
                env[op.results[0]] = value[()] if dt.kind == "f" else int(value)

    def _launch(
        self, op: gpu.LaunchFuncOp, env: dict[SSAValue, Any], device: Device
    ) -> None:
        kernel = self.kernels[op]
        name = kernel.sym_name.data
        grid: Dim3 = tuple(int(env[v]) for v in op.grid)  # type: ignore[assignment]
        block: Dim3 = tuple(int(env[v]) for v in op.block)  # type: ignore[assignment]
        for what, dims, most in (("grid", grid, MAX_GRID), ("block", block, MAX_BLOCK)):
            if any(d < 0 for d in dims) or any(d > m for d, m in zip(dims, most)):
                raise TCError(
                    f"@{self.entry} launches kernel @{name} with a {what} of "
                    f"{dims}: each size must be between 0 and {most}"
                )
        threads = block[0] * block[1] * block[2]
        if threads > MAX_THREADS_PER_BLOCK:
            raise TCError(
                f"@{self.entry} launches kernel @{name} with {threads} threads per "
                f"block {block}; at most {MAX_THREADS_PER_BLOCK} are possible"
            )
        known = known_block_size(kernel)
        if known is not None and threads and known != block:
            raise TCError(
                f"internal error: @{self.entry} launches kernel @{name} with a "
                f"block of {block} but the kernel's known_block_size is {known}"
            )
        shared = 0
        if op.dynamicSharedMemorySize is not None:
            shared = int(env[op.dynamicSharedMemorySize])
            if shared < 0:
                raise TCError(
                    f"internal error: @{self.entry} launches kernel @{name} with "
                    f"{shared} bytes of dynamic shared memory"
                )
        if threads == 0 or 0 in grid:
            return
        args = [env[v] for v in op.kernelOperands]
        device.launch(kernel, grid, block, args, shared)
