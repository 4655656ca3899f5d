"""`SimLauncher`: the `Launcher` of the `cuda-sim` target.

`CudaSimBackend.compile` makes one from the `gpu`-stage module; its plans
call the host function (`gpu_host.HostProgram`) with the calling convention
of `tcdialect.arguments.Signature` (inputs, outputs, the optional error flag,
then the sizes) on a `SimDevice`. Inputs are copied to device memory first,
as a GPU runtime would, so that a kernel that writes an input cannot change
the caller's array; outputs are device memory themselves. Plans have no fast
path (`call` returns None) and no stub: simulating costs far more than the
general path's checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import OutOfBoundsRead
from tcdialect.runtime.cuda_sim.device import MAX_SHARED_MEMORY, SimDevice
from tcdialect.runtime.gpu_host import HostProgram
from tcdialect.signature import Signature

Array = np.ndarray[Any, Any]


@dataclass
class SimPlan:
    """The simulated call of one shape key (a `CallPlan`). The simulator has
    no fast path: `stub` is None and `call` returns None, so every call takes
    `Kernel`'s checked general path (a simulated launch costs far more than
    the checks), and `ran` has no stub to make."""

    launcher: SimLauncher
    sizes: Mapping[str, int]
    out_shapes: tuple[tuple[int, ...], ...]
    out_dtypes: tuple[np.dtype[Any], ...]
    in_count: int
    stub: None = None

    def run(
        self, inputs: Sequence[Array], outputs: Sequence[Array], stream: Any = None
    ) -> None:
        self.launcher(inputs, outputs, self.sizes)

    def call(
        self, inputs: Sequence[Any], out: Any, stream: Any = None
    ) -> list[Array] | None:
        return None

    def ran(self) -> None:
        pass


class SimLauncher:
    """Runs `entry` of a `gpu`-stage `module` in the GPU simulator."""

    def __init__(
        self,
        module: ModuleOp,
        entry: str,
        signature: Signature,
        options: CudaOptions,
        device: SimDevice | None = None,
    ):
        self.program = HostProgram(module, entry)
        self.signature = signature
        self.device = device or SimDevice(
            max_shared_memory=options.max_shared_memory or MAX_SHARED_MEMORY
        )
        for kernel in self.program.kernels.values():
            self.device.prepare(kernel)  # unsupported ops fail at compile time

    def plan(
        self,
        inputs: Sequence[Array],
        out_shapes: Sequence[tuple[int, ...]],
        out_dtypes: Sequence[Any],
        sizes: Mapping[str, int],
    ) -> SimPlan:
        return SimPlan(
            self,
            dict(sizes),
            tuple(tuple(s) for s in out_shapes),
            tuple(np.dtype(dt) for dt in out_dtypes),
            len(inputs),
        )

    def __call__(
        self,
        inputs: Sequence[Array],
        outputs: Sequence[Array],
        sizes: Mapping[str, int],
    ) -> None:
        """Run the host function on `inputs` and `outputs`; a `TCError` if
        a checked read was out of bounds or the simulator found an error."""
        args: list[Any] = []
        error: Array | None = None
        it_in, it_out = iter(inputs), iter(outputs)
        view = self.program.arg_shape
        for i, a in enumerate(self.signature.args):
            if a.kind == "input":
                x = np.array(next(it_in), copy=True)
                args.append(x.reshape(view(i, x.shape)))
            elif a.kind == "output":
                x = next(it_out)
                args.append(x.reshape(view(i, x.shape)))
            elif a.kind == "error":
                error = np.zeros(1, np.int32)
                args.append(error)
            else:
                args.append(int(sizes[a.name]))
        self.program.run(args, self.device)
        if error is not None and error[0] != 0:
            code = int(error[0])
            checked = self.signature.checked
            name = checked[code - 1] if 0 < code <= len(checked) else "?"
            raise OutOfBoundsRead(name)
