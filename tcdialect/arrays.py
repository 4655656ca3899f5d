"""Arrays in GPU memory, as a call's arguments: `DeviceArray` and `device_array`.

A `Kernel` on the `cuda` target takes, besides NumPy arrays, any array that
lives in CUDA device memory and says so through one of the standard
protocols, without copying it:

- PyTorch tensors on a CUDA device (read through their own accessors, which
  cost far less than building the protocol dictionaries);
- anything with `__cuda_array_interface__` (CuPy arrays, pycuda `GPUArray`s,
  Numba device arrays);
- anything with `__dlpack__` whose `__dlpack_device__()` is a CUDA device
  (JAX arrays, ...), through `torch.from_dlpack` or `cupy.from_dlpack`
  (whichever is installed).

`device_array(x)` describes such an `x` as a `DeviceArray` (its owner, data
pointer, shape, NumPy dtype, whether it is C-contiguous, its device and the
library it came from), or returns None for anything else. Nothing here
imports PyTorch, CuPy or pycuda: an object is recognised by its type's
module and its protocols. `bfloat16` tensors are described with dtype
uint16 (the bit patterns, as `tcdialect.bfloat16` stores them on the host)
and `bfloat16=True`::

    >>> t = torch.ones(4, 8, device="cuda")
    >>> device_array(t)
    DeviceArray(torch float32 (4, 8) on cuda:0)

The `cuda` runtime allocates outputs of the same kind as the first device
input (`kind`), and takes the pointers of all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcdialect.diagnostics import TCError

#: DLPack's device type of CUDA memory (`kDLCUDA`).
DLPACK_CUDA = 2

_TORCH_DTYPES = {
    "torch.float16": "float16",
    "torch.float32": "float32",
    "torch.float64": "float64",
    "torch.bfloat16": "uint16",
    "torch.int8": "int8",
    "torch.int16": "int16",
    "torch.int32": "int32",
    "torch.int64": "int64",
    "torch.uint8": "uint8",
    "torch.uint16": "uint16",
    "torch.uint32": "uint32",
    "torch.uint64": "uint64",
    "torch.bool": "bool",
}


@dataclass(frozen=True, eq=False)
class DeviceArray:
    """An array in CUDA device memory (see the module docstring)."""

    owner: Any
    ptr: int
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    c_contiguous: bool
    #: The CUDA device ordinal.
    device: int
    #: The library that made it: "torch", "cupy", "pycuda" or "cuda" (only
    #: `__cuda_array_interface__` known).
    kind: str
    bfloat16: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def overlaps(self, other: Any) -> bool:
        """Whether this array's bytes overlap `other`'s (a `DeviceArray`)."""
        if not isinstance(other, DeviceArray) or other.device != self.device:
            return False
        if not self.nbytes or not other.nbytes:
            return False
        return (
            self.ptr < other.ptr + other.nbytes and other.ptr < self.ptr + self.nbytes
        )

    def __repr__(self) -> str:
        dt = "bfloat16" if self.bfloat16 else str(self.dtype)
        return f"DeviceArray({self.kind} {dt} {self.shape} on cuda:{self.device})"


def _torch(x: Any) -> DeviceArray | None:
    if not x.is_cuda:
        return None
    name = str(x.dtype)
    dtype = _TORCH_DTYPES.get(name)
    if dtype is None:
        raise TCError(f"a PyTorch tensor of dtype {name} has no TC element type")
    return DeviceArray(
        x,
        x.data_ptr(),
        tuple(x.shape),
        np.dtype(dtype),
        x.is_contiguous(),
        x.device.index or 0,
        "torch",
        name == "torch.bfloat16",
    )


def _interface(x: Any, kind: str) -> DeviceArray:
    cai = x.__cuda_array_interface__
    shape = tuple(int(d) for d in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    contiguous = strides is None or tuple(strides) == _c_strides(shape, dtype.itemsize)
    device = 0
    if kind == "cupy":
        device = int(x.device.id)
    return DeviceArray(x, int(cai["data"][0]), shape, dtype, contiguous, device, kind)


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides: list[int] = []
    step = itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _from_dlpack(x: Any) -> DeviceArray:
    for module in ("torch", "cupy"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        return device_array(lib.from_dlpack(x))  # type: ignore[return-value]
    raise TCError(
        f"a {type(x).__name__} in CUDA memory (DLPack) can be passed only where "
        "PyTorch or CuPy is installed to read it; pass a PyTorch tensor or a "
        "CuPy array instead"
    )


def device_array(x: Any) -> DeviceArray | None:
    """`x` described as a `DeviceArray`, or None when it is not an array in
    CUDA memory (see the module docstring)."""
    if isinstance(x, np.ndarray | np.generic | int | float | bool):
        return None
    module = type(x).__module__
    if module.startswith("torch") and hasattr(x, "data_ptr"):
        return _torch(x)
    if hasattr(x, "__cuda_array_interface__"):
        kind = (
            "cupy"
            if module.startswith("cupy")
            else "pycuda"
            if module.startswith("pycuda")
            else "cuda"
        )
        return _interface(x, kind)
    dlpack_device = getattr(x, "__dlpack_device__", None)
    if dlpack_device is not None and hasattr(x, "__dlpack__"):
        try:
            device_type = int(dlpack_device()[0])
        except Exception:  # a broken protocol is not a device array
            return None
        if device_type == DLPACK_CUDA:
            return _from_dlpack(x)
    return None
