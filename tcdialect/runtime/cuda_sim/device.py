"""`SimDevice`: a simulated GPU, the `gpu_host.Device` of the `cuda-sim` target.

Its memory is NumPy arrays: `alloc` returns a new array filled with NaN (or
0xA5 bytes), so that reading a temporary before writing it shows. `launch`
runs a kernel over its grid in chunks of whole blocks, at most `max_lanes`
threads at a time (at least one block): the blocks are taken in a shuffled
order, seeded by the device's seed and the kernel's name, so a result that
depends on the order of blocks does not hide behind the natural one, yet
every run is the same. A block's static and dynamic shared memory together
may be `max_shared_memory` bytes (the budget of `affine-gpu-promote`):
a launch that asks for more is a `TCError` naming the kernel. Each chunk runs in lockstep
(`interpreter.KernelRun`); the race checker of global memory sees the whole
launch.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute

from tcdialect.arguments import numpy_dtype
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.runtime.cuda_sim.interpreter import KernelRun, PreparedKernel
from tcdialect.runtime.cuda_sim.lanes import Dim3, Lanes
from tcdialect.runtime.cuda_sim.memory import Buffer, poison
from tcdialect.runtime.gpu_host import KernelOp

Array = np.ndarray[Any, Any]

#: The most threads one chunk runs in lockstep.
MAX_LANES = 1 << 14
#: Shared memory per block on every CUDA GPU since sm_20 (without opting in).
MAX_SHARED_MEMORY = 48 * 1024


class SimDevice:
    """A simulated GPU (see the module docstring)."""

    def __init__(
        self,
        seed: int = 0,
        max_lanes: int = MAX_LANES,
        max_shared_memory: int = MAX_SHARED_MEMORY,
    ):
        self.seed = seed
        self.max_lanes = max_lanes
        self.max_shared_memory = max_shared_memory
        self._prepared: dict[gpu.FuncOp, PreparedKernel] = {}

    def prepare(self, kernel: KernelOp) -> PreparedKernel:
        """The kernel checked for what the simulator runs (once per kernel);
        the simulator runs `gpu.func`s, the `gpu` stage."""
        if not isinstance(kernel, gpu.FuncOp):
            raise TCError(
                f"internal error: the simulator runs the gpu stage, not kernel "
                f"@{kernel.sym_name.data} at the llvm stage"
            )
        prepared = self._prepared.get(kernel)
        if prepared is None:
            prepared = PreparedKernel(kernel, self.max_shared_memory)
            self._prepared[kernel] = prepared
        return prepared

    def alloc(self, type: MemRefType[Attribute], shape: tuple[int, ...]) -> Array:
        return poison(np.empty(shape, numpy_dtype(type.element_type)))

    def free(self, buffer: Any) -> None:
        pass  # NumPy frees it with its last reference

    def launch(
        self,
        kernel: KernelOp,
        grid: Dim3,
        block: Dim3,
        args: list[Any],
        shared: int = 0,
    ) -> None:
        prepared = self.prepare(kernel)
        name = prepared.name
        if prepared.shared_bytes + shared > self.max_shared_memory:
            raise TCError(
                f"cuda-sim: kernel @{name} is launched with {shared} bytes of "
                f"dynamic shared memory per block, on top of its "
                f"{prepared.shared_bytes} static bytes; a block may have "
                f"{self.max_shared_memory}"
            )
        params = kernel.body.block.args[: prepared.params]
        if len(args) != len(params):
            raise TCError(
                f"internal error: kernel @{name} takes {len(params)} arguments, "
                f"the launch passes {len(args)}"
            )
        values: list[Any] = []
        buffers: dict[int, Buffer] = {}  # an array passed twice is one buffer
        for param, arg_name, arg in zip(params, prepared.arg_names, args):
            t = param.type
            if not isinstance(t, MemRefType):
                values.append(np.asarray(arg, numpy_dtype(t)))
                continue
            assert isinstance(arg, np.ndarray)
            buffer = buffers.get(id(arg))
            if buffer is None:
                buffer = Buffer(
                    arg_name, str(t), "global", arg.reshape(-1), tuple(arg.shape)
                )
                buffers[id(arg)] = buffer
            values.append(buffer)
        threads = math.prod(block)
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        order = rng.permutation(math.prod(grid))
        per_chunk = max(1, self.max_lanes // threads)
        with np.errstate(all="ignore"):
            for start in range(0, len(order), per_chunk):
                lanes = Lanes.of(name, grid, block, order[start : start + per_chunk])
                KernelRun(prepared, lanes, values, shared).run()
