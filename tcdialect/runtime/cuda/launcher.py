"""`CudaLauncher`: the `Launcher` of the `cuda` target.

`CudaBackend.compile` makes one from a module at the `llvm` stage: the
device code becomes PTX (`backend.cuda.device.ptx_text`), loaded into the
device's primary context (`driver.CudaDevice.load`); the host function,
still at the `gpu` stage, is `gpu_host.HostProgram`'s to interpret.

A plan (one shape key) interprets the host function once, against a
recording device, into a list of steps — stream-ordered allocations and
frees of temporaries, and launches with their grid, block, dynamic shared
memory (the kernel opts in to more than 48 KiB then) and a prepared
argument block whose buffer slots are filled in at each call. A call then
only fills the slots and launches: no IR is looked at, no argument is
parsed twice (pycuda's "prepared call", done with the driver's
`cuLaunchKernel` so that it can run on any stream)::

    plan.run([A, B], [C], stream)   # A, B, C: NumPy or DeviceArray

Arrays in device memory (`tcdialect.arrays.DeviceArray`) are used in place;
NumPy inputs are copied to the device and NumPy outputs back, and such a
call waits for its stream. Launches go on the caller's stream
(`stream_handle`). A kernel with bounds-checked gathers has an error flag in
device memory: the call waits for the stream to read it, and raises a
`TCError` naming the tensor when a subscript fell outside it.
"""

from __future__ import annotations

import ctypes
import functools
import math
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from tcdialect.arrays import DeviceArray, device_array
from tcdialect.diagnostics import OutOfBoundsRead, TCError
from tcdialect.runtime.cuda.driver import (
    CudaDevice,
    cuda_device,
    error_name,
    stream_argument,
)
from tcdialect.runtime.gpu_host import Dim3, HostProgram, KernelOp
from tcdialect.signature import Signature

Array = np.ndarray[Any, Any]


# ------------------------------------------------------------------ streams


def _torch_stream(torch: Any, ordinal: int) -> int:
    """PyTorch's current stream on device `ordinal`, as a `CUstream`."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(ordinal))
    return int(torch.cuda.current_stream(ordinal).cuda_stream)


def stream_handle(stream: Any, inputs: Sequence[Any]) -> int:
    """The `CUstream` a call launches on (see `Kernel.__call__`)."""
    if stream is None:
        for x in inputs:
            if isinstance(x, DeviceArray):
                x = x.owner
            module = type(x).__module__
            if module.startswith("torch"):
                return _torch_stream(sys.modules["torch"], x.get_device())
            if module.startswith("cupy"):
                return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attr in ("cuda_stream", "ptr", "handle"):  # PyTorch, CuPy, pycuda
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise TCError(
        f"stream= must be a CUDA stream (a PyTorch, CuPy or pycuda stream, an "
        f"object with __cuda_stream__, or a CUstream handle as an int), not "
        f"{type(stream).__name__}"
    )


def _recorded(torch: Any, x: Any) -> bool:
    """Whether a call on tensor `x` is for autograd or torch.compile to
    record (`torch_ops.torch_call`'s to make), not a plan's to launch."""
    return torch.compiler.is_compiling() or (
        x.requires_grad and torch.is_grad_enabled()
    )


# ------------------------------------------------------------------ outputs


def empty_like_kind(
    like: DeviceArray, shape: tuple[int, ...], dtype: np.dtype[Any], bfloat16: bool
) -> Any:
    """A new array in device memory of `like`'s library and device."""
    if like.kind == "torch":
        torch = sys.modules["torch"]
        tdt = torch.bfloat16 if bfloat16 else getattr(torch, _torch_name(dtype))
        return torch.empty(shape, dtype=tdt, device=like.owner.device)
    if like.kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(like.device):
            return cupy.empty(shape, dtype)
    from tcdialect.runtime.cuda.driver import gpuarray_empty

    return gpuarray_empty(shape, dtype, like.device)


def _torch_name(dtype: np.dtype[Any]) -> str:
    return "bool" if dtype == np.bool_ else str(dtype)


# ------------------------------------------------------------------ plans


@dataclass
class _Launch:
    """One launch of a plan: the kernel, its configuration and its prepared
    argument block, with the buffer slots filled in at each call."""

    name: str
    function: ctypes.c_void_p
    grid: Dim3
    block: Dim3
    params: Any  # (c_void_p * n), pointing at `values`
    values: list[Any]
    #: (slot, buffer index) of each pointer argument.
    slots: list[tuple[ctypes.c_uint64, int]]
    #: bytes of dynamic shared memory per block
    shared: int = 0
    #: cuLaunchKernel's arguments before the stream.
    head: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        # ints, as `CudaDevice.launch_kernel` passes them unconverted
        dims = (*self.grid, *self.block, self.shared)
        self.head = (self.function, *(int(d) for d in dims))

    def describe(self) -> str:
        return f"kernel @{self.name} (grid {self.grid}, block {self.block})"


@dataclass
class _Alloc:
    buffer: int
    nbytes: int


@dataclass
class _Free:
    buffer: int


Step = _Launch | _Alloc | _Free


@dataclass
class _Buffer:
    """A buffer of the recorded host program: its index among a call's
    buffers (inputs, outputs, the error flag, temporaries) and its shape."""

    index: int
    shape: tuple[int, ...]


class _Recorder:
    """A `gpu_host.Device` that records the host program's steps."""

    def __init__(self, launcher: CudaLauncher, first_temp: int):
        self.launcher = launcher
        self.steps: list[Step] = []
        self.next = first_temp

    def alloc(self, type: MemRefType[Attribute], shape: tuple[int, ...]) -> _Buffer:
        from tcdialect.arguments import numpy_dtype

        buf = _Buffer(self.next, shape)
        self.next += 1
        nbytes = (
            int(np.prod(shape, dtype=np.int64))
            * numpy_dtype(type.element_type).itemsize
        )
        self.steps.append(_Alloc(buf.index, nbytes))
        return buf

    def free(self, buffer: _Buffer) -> None:
        self.steps.append(_Free(buffer.index))

    def launch(
        self,
        kernel: KernelOp,
        grid: Dim3,
        block: Dim3,
        args: list[Any],
        shared: int = 0,
    ) -> None:
        name = kernel.sym_name.data
        types = self.launcher.operand_types[name]
        values: list[Any] = []
        slots: list[tuple[ctypes.c_uint64, int]] = []
        for t, a in zip(types, args, strict=True):
            if isinstance(t, MemRefType):
                assert isinstance(a, _Buffer)
                slot = ctypes.c_uint64(0)
                values.append(slot)
                slots.append((slot, a.index))
                values += [
                    ctypes.c_int64(a.shape[d])
                    for d, s in enumerate(t.get_shape())
                    if s < 0
                ]
            elif isinstance(t, IndexType) or (
                isinstance(t, IntegerType) and t.width.data == 64
            ):
                values.append(ctypes.c_int64(int(a)))
            elif isinstance(t, IntegerType) and t.width.data == 32:
                values.append(ctypes.c_int32(int(a)))
            else:
                raise TCError(
                    f"internal error: kernel @{name} takes an argument of type {t}, "
                    "which the CUDA runtime does not pass"
                )
        params = (ctypes.c_void_p * max(len(values), 1))(
            *(ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values)
        )
        function = self.launcher.module.functions[name]
        if shared:
            self.launcher.device.allow_dynamic_shared(function, name, shared)
        self.steps.append(
            _Launch(name, function, grid, block, params, values, slots, shared)
        )


@dataclass
class CudaPlan:
    """The call of one shape key on the device (a `CallPlan`; see the module
    docstring). `call` is the fast path for arrays already in device memory
    of one library (PyTorch tensors, CuPy arrays, ...); anything else takes
    `Kernel`'s general path and `run`."""

    launcher: CudaLauncher
    out_shapes: tuple[tuple[int, ...], ...]
    out_dtypes: tuple[np.dtype[Any], ...]
    in_shapes: tuple[tuple[int, ...], ...]
    in_dtypes: tuple[np.dtype[Any], ...]
    in_nbytes: tuple[int, ...]
    in_count: int
    steps: list[Step]
    buffers: int
    #: Index of the error flag among the buffers (None: no checked gathers).
    error: int | None
    out_bfloat16: tuple[bool, ...]
    stub: None = None
    _torch_out: list[Any] | None = field(default=None, repr=False)
    #: The PyTorch dtypes of the inputs, learnt from a checked call.
    _torch_in: list[Any] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -------------------------------------------------------------- general

    def run(
        self, inputs: Sequence[Any], outputs: Sequence[Any], stream: Any = None
    ) -> None:
        device = self.launcher.device
        device.make_current()
        handle = stream_handle(stream, [*inputs, *outputs])
        if self._torch_in is None and all(
            isinstance(x, DeviceArray) and x.kind == "torch" for x in inputs
        ):
            self._torch_in = [x.owner.dtype for x in inputs]  # checked ones
        ptrs = [0] * self.buffers
        host = [x for x in (*inputs, *outputs) if not isinstance(x, DeviceArray)]
        if not host:
            for k, x in enumerate((*inputs, *outputs)):
                self.launcher.check_device(x)
                ptrs[k] = x.ptr
            self._launch(ptrs, handle, wait=False)
            return
        with device.pycuda_context():  # NumPy arguments: pycuda's copies
            self._run_with_copies(inputs, outputs, ptrs, handle)

    def _run_with_copies(
        self,
        inputs: Sequence[Any],
        outputs: Sequence[Any],
        ptrs: list[int],
        handle: int,
    ) -> None:
        device = self.launcher.device
        copies: list[Any] = []  # pycuda allocations of NumPy arguments
        back: list[tuple[Array, Any]] = []
        try:
            for i, x in enumerate(inputs):
                if isinstance(x, DeviceArray):
                    self.launcher.check_device(x)
                    ptrs[i] = x.ptr
                else:
                    buf = device.alloc(x.nbytes)
                    copies.append(buf)
                    if x.nbytes:
                        device.to_device(buf, np.ascontiguousarray(x))
                    ptrs[i] = int(buf)
            for j, o in enumerate(outputs):
                if isinstance(o, DeviceArray):
                    self.launcher.check_device(o)
                    ptrs[self.in_count + j] = o.ptr
                else:
                    buf = device.alloc(o.nbytes)
                    copies.append(buf)
                    back.append((o, buf))
                    ptrs[self.in_count + j] = int(buf)
            # (NumPy arguments' device copies are freed after the kernels ran)
            self._launch(ptrs, handle, wait=True)
            for arr, buf in back:
                if arr.nbytes:
                    device.to_host(arr, buf)
        finally:
            for buf in copies:
                buf.free()

    # -------------------------------------------------------------- fast

    def call(
        self, inputs: Sequence[Any], out: Any, stream: Any = None
    ) -> list[Any] | None:
        torch = sys.modules.get("torch")
        if torch is not None and inputs and type(inputs[0]) is torch.Tensor:
            return self._call_torch(torch, inputs, out, stream)
        ptrs = [0] * self.buffers
        like: DeviceArray | None = None
        for i, x in enumerate(inputs):
            d = device_array(x)
            if (
                d is None
                or not d.c_contiguous
                or d.shape != self.in_shapes[i]
                or d.dtype != self.in_dtypes[i]
                or d.bfloat16 != self.launcher.in_bfloat16[i]
            ):
                return None
            if d.device != self.launcher.device.ordinal:
                return None
            if d.kind == "torch" and _recorded(sys.modules["torch"], d.owner):
                return None  # a tensor subclass, such as a Parameter
            like = like or d
            ptrs[i] = d.ptr
        if like is None:
            return None
        n = self.in_count
        if out is None:
            outputs = [
                empty_like_kind(like, shape, dt, bf)
                for shape, dt, bf in zip(
                    self.out_shapes, self.out_dtypes, self.out_bfloat16
                )
            ]
            for j, o in enumerate(outputs):
                d = device_array(o)
                assert d is not None
                ptrs[n + j] = d.ptr
        else:
            outputs = list(out) if isinstance(out, tuple | list) else [out]
            if len(outputs) != len(self.out_shapes):
                return None
            for j, o in enumerate(outputs):
                d = device_array(o)
                if (
                    d is None
                    or not d.c_contiguous
                    or d.shape != self.out_shapes[j]
                    or d.dtype != self.out_dtypes[j]
                    or d.device != self.launcher.device.ordinal
                ):
                    return None
                if self._overlaps(ptrs, n + j, d.ptr):
                    return None  # the general path says so
                ptrs[n + j] = d.ptr
        self.launcher.device.enter()
        self._launch(ptrs, stream_handle(stream, inputs), wait=False)
        return outputs

    def _call_torch(
        self, torch: Any, inputs: Sequence[Any], out: Any, stream: Any
    ) -> list[Any] | None:
        """`call` on PyTorch tensors, through their own accessors (a tenth
        of the cost of the protocols). Declines (None) where the call is
        `torch_ops.torch_call`'s to record: under torch.compile, or with an
        input that requires grad while grad is enabled."""
        tensor, ordinal = torch.Tensor, self.launcher.device.ordinal
        in_dtypes = self._torch_in
        if in_dtypes is None or torch.compiler.is_compiling():
            return None  # not yet learnt (the general path checks), or traced
        ptrs = [0] * self.buffers
        for i, x in enumerate(inputs):
            if (
                type(x) is not tensor
                or x.dtype is not in_dtypes[i]
                or x.get_device() != ordinal
                or not x.is_contiguous()
                or x.shape != self.in_shapes[i]
            ):
                return None
            if x.requires_grad and torch.is_grad_enabled():
                return None  # `_recorded`, its compile half checked above
            ptrs[i] = x.data_ptr()
        n = self.in_count
        dtypes = self._torch_dtypes(torch)
        if out is None:
            device = inputs[0].device
            outputs = [
                torch.empty(shape, dtype=dt, device=device)
                for shape, dt in zip(self.out_shapes, dtypes)
            ]
            for j, o in enumerate(outputs):
                ptrs[n + j] = o.data_ptr()
        else:
            kind = type(out)
            outputs = list(out) if kind is tuple or kind is list else [out]
            if len(outputs) != len(self.out_shapes):
                return None
            for j, o in enumerate(outputs):
                if (
                    type(o) is not tensor
                    or o.get_device() != ordinal
                    or not o.is_contiguous()
                    or o.dtype != dtypes[j]
                    or o.shape != self.out_shapes[j]
                ):
                    return None
                ptr = ptrs[n + j] = o.data_ptr()
                if self._overlaps(ptrs, n + j, ptr):
                    return None
        if stream is None:
            handle = _torch_stream(torch, ordinal)
        else:
            handle = stream_handle(stream, inputs)
        self.launcher.device.enter()
        self._launch(ptrs, handle, wait=False)
        return outputs

    def _torch_dtypes(self, torch: Any) -> list[Any]:
        found = self._torch_out
        if found is None:
            found = self._torch_out = [
                torch.bfloat16 if bf else getattr(torch, _torch_name(dt))
                for dt, bf in zip(self.out_dtypes, self.out_bfloat16)
            ]
        return found

    def _overlaps(self, ptrs: list[int], k: int, ptr: int) -> bool:
        """Whether output buffer `k` at `ptr` overlaps an earlier argument."""
        sizes = self._arg_nbytes
        size = sizes[k]
        for other in range(k):
            lo, other_size = ptrs[other], sizes[other]
            if size and other_size and lo < ptr + size and ptr < lo + other_size:
                return True
        return False

    @functools.cached_property
    def _arg_nbytes(self) -> tuple[int, ...]:
        """Bytes of each input and output, in buffer order."""
        return (
            *self.in_nbytes,
            *(
                math.prod(shape) * dt.itemsize
                for shape, dt in zip(self.out_shapes, self.out_dtypes)
            ),
        )

    def ran(self) -> None:
        """Nothing to count: a device plan has no call stub to make."""

    # -------------------------------------------------------------- launch

    def _start(self, step: _Launch, stream: int) -> None:
        """Launch `step` (its slots filled) on `stream`; a `TCError` naming
        it when the driver refuses."""
        device = self.launcher.device
        launch = device.launch_kernel
        handle = stream_argument(stream)
        code = launch(*step.head, handle, step.params, None)
        if code != 0 and device.make_current():
            # another context was current: launch again
            code = launch(*step.head, handle, step.params, None)
        if code != 0:
            raise TCError(
                f"CUDA error {error_name(device.lib, code)} launching "
                f"{step.describe()} of @{self.launcher.entry}"
            )

    def _launch(self, ptrs: list[int], stream: int, wait: bool) -> None:
        """Run the steps on `stream` with these buffers; wait for the stream
        when asked to or when the error flag must be read."""
        steps = self.steps
        if len(steps) == 1 and self.error is None and not wait:
            step = steps[0]  # one launch, nothing to allocate: the short way
            if isinstance(step, _Launch):
                with self._lock:
                    for slot, index in step.slots:
                        slot.value = ptrs[index]
                    self._start(step, stream)
                return
        launcher = self.launcher
        device, lib = launcher.device, launcher.device.lib
        flag = np.zeros(1, np.int32) if self.error is not None else None
        temps: list[int] = []
        last: _Launch | None = None
        with self._lock:
            try:
                if self.error is not None:
                    ptrs[self.error] = device.alloc_async(4, stream)
                    temps.append(self.error)
                    device.check(
                        lib.cuMemsetD32Async(ptrs[self.error], 0, 1, stream),
                        "cuMemsetD32Async",
                    )
                for step in self.steps:
                    if isinstance(step, _Launch):
                        for slot, index in step.slots:
                            slot.value = ptrs[index]
                        self._start(step, stream)
                        last = step
                    elif isinstance(step, _Alloc):
                        ptrs[step.buffer] = device.alloc_async(step.nbytes, stream)
                        temps.append(step.buffer)
                    else:
                        device.free_async(ptrs[step.buffer], stream)
                        temps.remove(step.buffer)
                if flag is not None:
                    assert self.error is not None
                    device.check(
                        lib.cuMemcpyDtoHAsync_v2(
                            flag.ctypes.data, ptrs[self.error], 4, stream
                        ),
                        "cuMemcpyDtoHAsync",
                    )
            finally:
                for index in temps:
                    device.free_async(ptrs[index], stream)
        if wait or self.error is not None:
            what = last.describe() if last is not None else "no kernel"
            device.synchronize(stream, f"@{launcher.entry} (last launch: {what})")
        if flag is not None and flag[0]:
            code = int(flag[0])
            checked = launcher.signature.checked
            name = checked[code - 1] if 0 < code <= len(checked) else "?"
            raise OutOfBoundsRead(name)


# ------------------------------------------------------------------ launcher


class CudaLauncher:
    """Runs `entry` of an `llvm`-stage module on a CUDA device (see the
    module docstring)."""

    def __init__(
        self,
        module: ModuleOp,
        entry: str,
        signature: Signature,
        ptx: str,
        arch: str,
        device: CudaDevice | None = None,
    ):
        self.entry = entry
        self.signature = signature
        self.program = HostProgram(module, entry)
        self.device = device or cuda_device(0)
        self.ptx = ptx
        #: The types of each kernel's operands (memref extents that are not
        #: static are passed after the pointer).
        self.operand_types: dict[str, list[Attribute]] = {
            kernel.sym_name.data: [v.type for v in op.kernelOperands]
            for op, kernel in self.program.kernels.items()
        }
        self.module = self.device.load(ptx, arch, sorted(self.operand_types))
        #: Which inputs and outputs are bfloat16 (PyTorch has the type).
        bf16 = [
            (
                a.kind,
                isinstance(t, MemRefType) and isinstance(t.element_type, BFloat16Type),
            )
            for a, t in zip(signature.args, self.program.func.function_type.inputs.data)
        ]
        self.in_bfloat16 = tuple(b for kind, b in bf16 if kind == "input")
        self.out_bfloat16 = tuple(b for kind, b in bf16 if kind == "output")

    def check_device(self, x: DeviceArray) -> None:
        if x.device != self.device.ordinal:
            raise TCError(
                f"@{self.entry} runs on cuda:{self.device.ordinal} but an argument "
                f"({x}) is on cuda:{x.device}"
            )

    def plan(
        self,
        inputs: Sequence[Any],
        out_shapes: Sequence[tuple[int, ...]],
        out_dtypes: Sequence[Any],
        sizes: Mapping[str, int],
    ) -> CudaPlan:
        args: list[Any] = []
        index = 0
        error: int | None = None
        it_in, it_out = iter(inputs), iter(out_shapes)
        view = self.program.arg_shape
        for i, a in enumerate(self.signature.args):
            if a.kind == "input":
                args.append(_Buffer(index, view(i, tuple(next(it_in).shape))))
            elif a.kind == "output":
                args.append(_Buffer(index, view(i, tuple(next(it_out)))))
            elif a.kind == "error":
                error = index
                args.append(_Buffer(index, (1,)))
            else:
                args.append(int(sizes[a.name]))
                continue
            index += 1
        recorder = _Recorder(self, index)
        self.program.run(args, recorder)
        return CudaPlan(
            self,
            tuple(tuple(s) for s in out_shapes),
            tuple(np.dtype(dt) for dt in out_dtypes),
            tuple(tuple(x.shape) for x in inputs),
            tuple(np.dtype(x.dtype) for x in inputs),
            tuple(int(x.nbytes) for x in inputs),
            len(inputs),
            recorder.steps,
            recorder.next,
            error,
            self.out_bfloat16,
        )
