"""Calling a JIT-compiled kernel through ctypes (the CPU launcher).

The `affine`-stage function of a definition fixes the calling convention
(docs/pipeline.md): inputs, outputs, the optional error flag, then the unbound
sizes. In the `llvm` stage every memref argument is a pointer followed by one
`i64` per dynamic dimension, and every size is an `i64`
(`tcdialect.arguments.Signature` describes the arguments).
`CpuLauncher.fixed` resolves everything that shapes and sizes fix into a
`FixedCall`, which then takes only the arrays' data pointers
(`CpuLauncher(...)(inputs, outputs, sizes)` does both). ctypes releases the
GIL for the call, so the kernel's worker threads and other Python threads run
meanwhile.

`CpuLauncher.plan` makes the `CpuPlan` of one shape key, the `CallPlan` that
`Kernel.__call__` uses: a fast path that checks arrays of exactly the
planned shapes, dtypes and strides without the general path's helpers, and,
from the plan's second run on, a call stub that makes the same checks in
compiled code (the backend's `make_stub`).
"""

from __future__ import annotations

import ctypes
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcdialect.diagnostics import OutOfBoundsRead, TCError
from tcdialect.signature import Signature

Array = np.ndarray[Any, Any]


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

    Read from the ndarray object when `NDARRAY_LAYOUT` is known: much
    cheaper than `arr.ctypes.data`, which builds a helper object."""
    if NDARRAY_LAYOUT is None:
        return arr.ctypes.data
    return _address_of(id(arr) + NDARRAY_LAYOUT.data).value or 0


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
            raise OutOfBoundsRead(name)


@dataclass(frozen=True)
class StubArray:
    """What a call stub accepts for one argument."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    #: The dtype object (`PyArray_Descr`) the array must hold, compared by
    #: identity: NumPy's builtin dtypes are one object per type and byte order.
    dtype: object
    #: Bytes the array spans (overlap tests skip empty arrays).
    nbytes: int
    #: An output: must be writeable and must not overlap the arrays before it.
    output: bool


#: Compiles a call stub: (entry address, call template, pointer slots,
#: array specs, ndarray layout) -> the stub (see `CpuPlan`).
StubCompiler = Callable[
    [int, tuple[int, ...], tuple[int, ...], list[StubArray], NdarrayLayout],
    Callable[..., int],
]


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The strides NumPy gives a new C-contiguous array of `shape` with at
    least one element (an empty array's strides are 0 in NumPy 2: such calls
    take the general path)."""
    strides: list[int] = []
    step = itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


@dataclass
class CpuPlan:
    """A call for one shape key with every check but the per-array ones done.

    `call(inputs, out)` takes arrays with the canonical C-order strides (a
    sufficient test of contiguity): it checks each array's type, shape,
    dtype, strides and writeability, tests overlaps on address ranges and
    makes the call, without the general path's helpers (`prepare_inputs`,
    `np.may_share_memory`, the launcher's walk of the signature). Anything
    it does not accept returns None: the general path raises the precise
    error or handles the case.

    From its second run on, a plan has a `stub` that makes the same checks
    and the call in host code, taking the ndarray objects. Compiling a stub
    costs milliseconds, so shapes seen once (a generic kernel fed ever new
    shapes) never pay for one. No stub where NumPy's object layout is unknown
    (`NDARRAY_LAYOUT`), where the kernel reports checked reads through an
    error flag, or where the backend gave no stub compiler.
    """

    fixed_call: FixedCall
    #: Address of the compiled entry function.
    entry: int
    in_dtypes: tuple[np.dtype[Any], ...]
    in_shapes: tuple[tuple[int, ...], ...]
    in_strides: tuple[tuple[int, ...], ...]
    in_nbytes: tuple[int, ...]
    out_shapes: tuple[tuple[int, ...], ...]
    out_dtypes: tuple[np.dtype[Any], ...]
    out_strides: tuple[tuple[int, ...], ...]
    out_nbytes: tuple[int, ...]
    make_stub: StubCompiler | None = None
    runs: int = 0
    stub: Callable[..., int] | None = None
    #: Why the stub could not be compiled (then no stub is tried again).
    stub_error: str | None = None

    @property
    def in_count(self) -> int:
        return len(self.in_nbytes)

    def run(
        self, inputs: Sequence[Array], outputs: Sequence[Array], stream: Any = None
    ) -> None:
        """Call on arrays the general path has checked."""
        self.fixed_call.run([data_pointer(a) for a in (*inputs, *outputs)])

    def call(
        self, inputs: Sequence[Any], out: Any, stream: Any = None
    ) -> list[Array] | None:
        """Check and call on arrays of exactly this plan's layout; the
        outputs, or None (nothing called) when anything differs."""
        for x, strides in zip(inputs, self.in_strides):
            if type(x) is not np.ndarray or x.strides != strides:
                return None
        pointers = [data_pointer(x) for x in inputs]
        if out is None:
            outputs = [
                np.empty(shape, dtype=dt)
                for shape, dt in zip(self.out_shapes, self.out_dtypes)
            ]
            pointers += [data_pointer(o) for o in outputs]
        else:
            outputs = list(out) if isinstance(out, tuple | list) else [out]
            if len(outputs) != len(self.out_shapes):
                return None
            ends = [p + n for p, n in zip(pointers, self.in_nbytes) if n]
            starts = [p for p, n in zip(pointers, self.in_nbytes) if n]
            for o, shape, dt, strides, n in zip(
                outputs,
                self.out_shapes,
                self.out_dtypes,
                self.out_strides,
                self.out_nbytes,
            ):
                if (
                    type(o) is not np.ndarray
                    or o.shape != shape
                    or o.dtype != dt
                    or o.strides != strides
                    or not o.flags.writeable
                ):
                    return None
                p = data_pointer(o)
                if n:
                    for start, end in zip(starts, ends):
                        if p < end and start < p + n:
                            return None  # overlap: the general path's error
                    starts.append(p)
                    ends.append(p + n)
                pointers.append(p)
        self.fixed_call.run(pointers)
        return outputs

    def ran(self) -> None:
        """Count a run; make the stub on the second (once: racing threads
        may both make one, and either serves). A stub that fails to compile
        is an internal error, but the call it would speed up has already
        run: it becomes a `RuntimeWarning` and calls keep the Python path."""
        self.runs += 1
        if (
            self.runs < 2
            or self.stub is not None
            or self.stub_error is not None
            or self.make_stub is None
            or NDARRAY_LAYOUT is None
            or self.fixed_call.error_slot is not None
        ):
            return
        # NumPy's builtin dtype objects, which new arrays of these types hold
        specs = [
            StubArray(shape, strides, np.dtype(dt.str), n, output=False)
            for shape, strides, dt, n in zip(
                self.in_shapes, self.in_strides, self.in_dtypes, self.in_nbytes
            )
        ] + [
            StubArray(shape, strides, np.dtype(dt.str), n, output=True)
            for shape, strides, dt, n in zip(
                self.out_shapes, self.out_strides, self.out_dtypes, self.out_nbytes
            )
        ]
        try:
            self.stub = self.make_stub(
                self.entry,
                self.fixed_call.template,
                self.fixed_call.slots,
                specs,
                NDARRAY_LAYOUT,
            )
        except TCError as err:
            self.stub_error = str(err)
            warnings.warn(
                f"tcdialect: internal error: no call stub ({err}); "
                "calls of these shapes take the Python path",
                RuntimeWarning,
                stacklevel=4,
            )


class CpuLauncher:
    """Calls the compiled function at `address` with the convention `signature`.

    `owner` (the JIT engine) is kept alive as long as the launcher;
    `make_stub` compiles the call stubs of its plans (None: no stubs).
    """

    def __init__(
        self,
        address: int,
        signature: Signature,
        owner: Any = None,
        make_stub: StubCompiler | None = None,
    ):
        self.address = address
        self.signature = signature
        self._owner = owner
        self._make_stub = make_stub
        argtypes: list[Any] = []
        for a in signature.args:
            if a.kind == "size":
                argtypes.append(ctypes.c_int64)
            else:
                argtypes.append(ctypes.c_void_p)
                argtypes += [ctypes.c_int64] * len(a.dynamic_dims)
        self._fn = ctypes.CFUNCTYPE(None, *argtypes)(address)

    @property
    def owner(self) -> Any:
        """What holds the code (the backend's compiled module)."""
        return self._owner

    def plan(
        self,
        inputs: Sequence[Array],
        out_shapes: Sequence[tuple[int, ...]],
        out_dtypes: Sequence[Any],
        sizes: Mapping[str, int],
    ) -> CpuPlan:
        """The plan of calls on arrays laid out as `inputs` (checked) are."""
        dtypes = tuple(np.dtype(dt) for dt in out_dtypes)
        shapes = tuple(tuple(s) for s in out_shapes)
        return CpuPlan(
            self.fixed([a.shape for a in inputs], shapes, sizes),
            self.address,
            tuple(a.dtype for a in inputs),
            tuple(a.shape for a in inputs),
            tuple(c_strides(a.shape, a.itemsize) for a in inputs),
            tuple(a.nbytes for a in inputs),
            shapes,
            dtypes,
            tuple(c_strides(s, dt.itemsize) for s, dt in zip(shapes, dtypes)),
            tuple(math.prod(s) * dt.itemsize for s, dt in zip(shapes, dtypes)),
            self._make_stub,
        )

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
