"""Calling a JIT-compiled kernel through ctypes (the CPU launcher).

The `affine`-stage function of a definition fixes the calling convention
(docs/pipeline.md): inputs, outputs, the optional error flag, then the unbound
sizes. In the `llvm` stage every memref argument is a pointer followed by one
`i64` per dynamic dimension, and every size is an `i64`. `ArgSpec` describes
one argument; `CpuLauncher.fixed` resolves everything that shapes and sizes
fix into a `FixedCall`, which then takes only the arrays' data pointers
(`CpuLauncher(...)(inputs, outputs, sizes)` does both). ctypes releases the GIL for the call, so the
kernel's worker threads and other Python threads run meanwhile.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IndexType, MemRefType, StringAttr
from xdsl.dialects.func import FuncOp

from tcdialect.diagnostics import TCError

ArgKind = Literal["input", "output", "error", "size"]


@dataclass(frozen=True)
class NdarrayLayout:
    """Byte offsets of the fields of NumPy's `PyArrayObject` in this process.

    NumPy's C API (`PyArrayObject_fields`) puts, after the object header
    (`ob_refcnt`, `ob_type`): `char *data`, `int nd`, `npy_intp *dimensions`,
    `npy_intp *strides`, `PyObject *base`, `PyArray_Descr *descr`, `int
    flags`. `ndarray_layout()` checks every offset against arrays it makes
    before anything relies on it."""

    type: int
    data: int
    nd: int
    dimensions: int
    strides: int
    descr: int
    flags: int

    #: `NPY_ARRAY_WRITEABLE`, the flag bit of writeable arrays.
    WRITEABLE = 0x0400


def ndarray_layout() -> NdarrayLayout | None:
    """The layout of `np.ndarray` objects in this process, None when this
    NumPy and CPython do not lay them out as NumPy's C API says (the callers
    then go through NumPy's Python attributes).

    Checked on arrays of 0 to 3 dimensions, views with negative and
    broadcast (zero) strides, several dtypes and a read-only array."""
    word = ctypes.sizeof(ctypes.c_void_p)
    if word != 8:
        return None
    layout = NdarrayLayout(
        type=word, data=2 * word, nd=3 * word, dimensions=4 * word,
        strides=5 * word, descr=7 * word, flags=8 * word,
    )  # fmt: skip
    base = np.arange(24, dtype=np.float32)
    readonly = np.zeros((2, 3), np.int32)
    readonly.flags.writeable = False
    probes: list[np.ndarray[Any, Any]] = [
        np.empty((), np.float64),
        base,
        base[::-1],
        base.reshape(2, 3, 4).transpose(2, 0, 1),
        np.broadcast_to(np.float32(1), (5, 2)),
        readonly,
    ]
    read_word = ctypes.c_ssize_t.from_address
    read_int = ctypes.c_int.from_address
    for a in probes:
        addr = id(a)
        if (
            read_word(addr + layout.type).value != id(np.ndarray)
            or read_word(addr + layout.data).value != a.ctypes.data
            or read_int(addr + layout.nd).value != a.ndim
            or read_word(addr + layout.descr).value != id(a.dtype)
            or bool(read_int(addr + layout.flags).value & NdarrayLayout.WRITEABLE)
            != a.flags.writeable
        ):
            return None
        dims = read_word(addr + layout.dimensions).value
        strides = read_word(addr + layout.strides).value
        for d in range(a.ndim):
            if (
                read_word(dims + d * word).value != a.shape[d]
                or read_word(strides + d * word).value != a.strides[d]
            ):
                return None
    return layout


NDARRAY_LAYOUT = ndarray_layout()
"""This process's `NdarrayLayout`, or None (see `ndarray_layout`)."""

_address_of = ctypes.c_void_p.from_address


def data_pointer(arr: np.ndarray[Any, Any]) -> int:
    """The address of `arr`'s first element.

    Read from the ndarray object when `NDARRAY_LAYOUT` is known: 0.26 µs per
    array, where `arr.ctypes.data` builds a helper object and costs 1.7 µs,
    most of the overhead of a small call."""
    if NDARRAY_LAYOUT is None:
        return arr.ctypes.data
    return _address_of(id(arr) + NDARRAY_LAYOUT.data).value or 0


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a compiled definition's entry function."""

    kind: ArgKind
    name: str
    #: For buffers: the dimensions whose extent is passed at run time.
    dynamic_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class Signature:
    """The calling convention of an `affine`-stage entry function."""

    args: tuple[ArgSpec, ...]
    #: Tensors whose reads are checked at run time, by error code - 1.
    checked: tuple[str, ...]


def _names(func: FuncOp, attr: str) -> list[str]:
    value = func.attributes.get(attr)
    if value is None:
        return []
    assert isinstance(value, ArrayAttr)
    return [s.data for s in value.data if isinstance(s, StringAttr)]


def signature_of(func: FuncOp) -> Signature:
    """Read the calling convention off an `affine`-stage `func.func`."""
    inputs, outputs = _names(func, "tc.inputs"), _names(func, "tc.outputs")
    checked, sizes = _names(func, "tc.checked"), _names(func, "tc.sizes")
    kinds: list[tuple[ArgKind, str]] = [
        *(("input", n) for n in inputs),
        *(("output", n) for n in outputs),
        *([("error", "error")] if checked else []),
        *(("size", n) for n in sizes),
    ]
    types = func.function_type.inputs.data
    if len(types) != len(kinds):
        raise TCError(
            f"internal error: @{func.sym_name.data} has {len(types)} arguments "
            f"but its tc.* attributes describe {len(kinds)}"
        )
    args: list[ArgSpec] = []
    for (kind, name), t in zip(kinds, types):
        if kind == "size":
            if not isinstance(t, IndexType):
                raise TCError(f"internal error: size argument {name} is not an index")
            args.append(ArgSpec(kind, name))
            continue
        if not isinstance(t, MemRefType):
            raise TCError(f"internal error: argument {name} is not a memref")
        dyn = tuple(i for i, d in enumerate(t.get_shape()) if d < 0)
        args.append(ArgSpec(kind, name, dyn))
    return Signature(tuple(args), tuple(checked))


@dataclass(frozen=True)
class FixedCall:
    """A compiled function called for one set of shapes and sizes.

    Everything but the data pointers is fixed: `run(pointers)` takes the
    inputs' then the outputs' data pointers and makes the call. `Kernel`
    keeps one per shape key, so that a call builds no argument list from the
    signature.
    """

    fn: Any
    #: The argument list, with 0 where a pointer goes.
    template: tuple[int, ...]
    #: Where each data pointer goes, in `run`'s order.
    slots: tuple[int, ...]
    #: Where the error flag's pointer goes (checked reads), else None.
    error_slot: int | None
    #: Tensors whose reads are checked at run time, by error code - 1.
    checked: tuple[str, ...]
    #: The JIT engine holding the code, kept alive with the call.
    owner: Any = None

    def run(self, pointers: Sequence[int]) -> None:
        """Call the function; raise `TCError` if a checked read was out of bounds."""
        if self.error_slot is None and len(self.template) == len(pointers):
            self.fn(*pointers)  # no sizes or extents: pointers in call order
            return
        args = list(self.template)
        for slot, p in zip(self.slots, pointers):
            args[slot] = p
        error = None
        if self.error_slot is not None:
            error = np.zeros(1, dtype=np.int32)
            args[self.error_slot] = data_pointer(error)
        self.fn(*args)
        if error is not None and error[0] != 0:
            code = int(error[0])
            name = self.checked[code - 1] if 0 < code <= len(self.checked) else "?"
            raise TCError(
                f"out-of-bounds read of tensor '{name}': a data-dependent subscript "
                "fell outside its extent (the read was skipped; outputs are invalid)"
            )


class CpuLauncher:
    """Calls the compiled function at `address` with the convention `signature`.

    `owner` (the JIT engine) is kept alive as long as the launcher.
    """

    def __init__(self, address: int, signature: Signature, owner: Any = None):
        self.address = address
        self.signature = signature
        self._owner = owner
        argtypes: list[Any] = []
        for a in signature.args:
            if a.kind == "size":
                argtypes.append(ctypes.c_int64)
            else:
                argtypes.append(ctypes.c_void_p)
                argtypes += [ctypes.c_int64] * len(a.dynamic_dims)
        self._fn = ctypes.CFUNCTYPE(None, *argtypes)(address)

    def fixed(
        self,
        input_shapes: Sequence[tuple[int, ...]],
        output_shapes: Sequence[tuple[int, ...]],
        sizes: Mapping[str, int],
    ) -> FixedCall:
        """The call for arrays of these shapes and these sizes."""
        template: list[int] = []
        slots: list[int] = []
        error_slot = None
        it_in, it_out = iter(input_shapes), iter(output_shapes)
        for a in self.signature.args:
            if a.kind == "size":
                template.append(sizes[a.name])
                continue
            if a.kind == "error":
                error_slot = len(template)
                template.append(0)
                continue
            shape = next(it_in) if a.kind == "input" else next(it_out)
            slots.append(len(template))
            template.append(0)
            template += [shape[d] for d in a.dynamic_dims]
        return FixedCall(
            self._fn,
            tuple(template),
            tuple(slots),
            error_slot,
            self.signature.checked,
            self._owner,
        )

    def __call__(
        self,
        inputs: Sequence[np.ndarray[Any, Any]],
        outputs: Sequence[np.ndarray[Any, Any]],
        sizes: Mapping[str, int],
    ) -> None:
        """Run the kernel; raise `TCError` if a checked read was out of bounds."""
        call = self.fixed([a.shape for a in inputs], [a.shape for a in outputs], sizes)
        call.run([data_pointer(a) for a in (*inputs, *outputs)])
