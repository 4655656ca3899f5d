"""Call stubs: a kernel's argument checks and call, compiled to host code.

A `Kernel` call of known shapes (its `CpuPlan`) checks each array's type,
shape, strides, dtype and writeability, tests the outputs for overlap and
passes the data pointers to the kernel. In Python that is a few hundred
bytecodes and ctypes conversions, most of what a small call costs
(docs/perf/runtime.md).

`call_stub_ir` writes those checks and the call as one LLVM function,

::

    i32 @tc_call_stub(ptr %a0, ..., ptr %aN)   ; the ndarray objects

that reads the fields of each `np.ndarray` object at the offsets of
`tcdialect.runtime.cpu.NdarrayLayout` and

* returns 1, having run nothing, unless every argument is exactly an
  `np.ndarray` (not a subclass) with the expected number of dimensions
  (checked before the dimensions and strides are read: a 0-d array has
  none), shape, strides and dtype object, every output is writeable, and no output
  overlaps an input or an earlier output (address ranges, as `Kernel`'s
  Python checks);
* otherwise calls the kernel at `entry` with the fixed argument list
  `template` (sizes, extents), the data pointers in its `slots`, and returns
  0.

A rejected call takes `Kernel`'s Python path, which raises the precise error
or handles the case. `compile_call_stub` compiles the function for the host
and returns it as a ctypes function of `py_object`s (ctypes passes an
object's address and releases the GIL for the call; the caller's argument
tuple keeps the objects alive meanwhile).

Example, one input `A` of 4 x 3 float32 and one output: the stub checks
`A`'s type (`ob_type` is `np.ndarray`), `nd == 2`, dimensions `[4, 3]`,
strides `[12, 4]` and its `descr` pointer, then the output's, plus its
`NPY_ARRAY_WRITEABLE` flag and that `[out, out + nbytes)` is disjoint from
`[A, A + 48)`, then calls `entry(A.data, out.data)`.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tcdialect.backend.cpu.jit import jit_llvm_ir
from tcdialect.runtime.cpu import NdarrayLayout, StubArray

STUB_NAME = "tc_call_stub"


class _Writer:
    """Appends the lines of one function, with fresh value names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0

    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"%{stem}.{self._count}"

    def emit(self, line: str) -> None:
        self.lines.append(f"  {line}")

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def load(self, ty: str, obj: str, offset: int) -> str:
        """`ty` at `obj + offset`."""
        field = self.fresh("field")
        value = self.fresh("v")
        self.emit(f"{field} = getelementptr inbounds i8, ptr {obj}, i64 {offset}")
        self.emit(f"{value} = load {ty}, ptr {field}")
        return value

    def all_of(self, conditions: Sequence[str]) -> str:
        """The conjunction of i1 values (true when there are none)."""
        acc = "true"
        for c in conditions:
            nxt = self.fresh("ok")
            self.emit(f"{nxt} = and i1 {acc}, {c}")
            acc = nxt
        return acc

    def equal(self, ty: str, value: str, expected: int) -> str:
        c = self.fresh("eq")
        self.emit(f"{c} = icmp eq {ty} {value}, {expected}")
        return c


def call_stub_ir(
    entry: int,
    template: Sequence[int],
    slots: Sequence[int],
    arrays: Sequence[StubArray],
    layout: NdarrayLayout,
    ndarray_type: int,
) -> str:
    """LLVM IR of the stub `@tc_call_stub` (see the module docstring).

    `ndarray_type` is the address of the `np.ndarray` type object; `slots[i]`
    is where array `i`'s data pointer goes in `template`.
    """
    if len(slots) != len(arrays):
        raise ValueError(f"{len(arrays)} arrays but {len(slots)} pointer slots")
    w = _Writer()
    params = ", ".join(f"ptr %a{i}" for i in range(len(arrays)))
    data: list[str] = []
    ranges: list[tuple[str, int]] = []  # (data pointer, nbytes) of non-empty arrays
    w.label("entry")
    for i, spec in enumerate(arrays):
        obj = f"%a{i}"
        ty = w.load("i64", obj, layout.type)
        is_array = w.equal("i64", ty, ndarray_type)
        w.emit(f"br i1 {is_array}, label %fields{i}, label %reject")
        w.label(f"fields{i}")
        # the rank first: a 0-d array has no dimensions and strides to read
        rank = w.equal("i32", w.load("i32", obj, layout.nd), len(spec.shape))
        w.emit(f"br i1 {rank}, label %ranked{i}, label %reject")
        w.label(f"ranked{i}")
        checks: list[str] = []
        if spec.shape:
            dims = w.load("ptr", obj, layout.dimensions)
            strides = w.load("ptr", obj, layout.strides)
            for d, (extent, stride) in enumerate(zip(spec.shape, spec.strides)):
                checks.append(w.equal("i64", w.load("i64", dims, 8 * d), extent))
                checks.append(w.equal("i64", w.load("i64", strides, 8 * d), stride))
        checks.append(w.equal("i64", w.load("i64", obj, layout.descr), id(spec.dtype)))
        pointer = w.load("i64", obj, layout.data)
        if spec.output:
            flags = w.load("i32", obj, layout.flags)
            bit = w.fresh("writeable")
            w.emit(f"{bit} = and i32 {flags}, {NdarrayLayout.WRITEABLE}")
            checks.append(w.equal("i32", bit, NdarrayLayout.WRITEABLE))
            if spec.nbytes:
                end = w.fresh("end")
                w.emit(f"{end} = add i64 {pointer}, {spec.nbytes}")
                for other, nbytes in ranges:
                    # disjoint: end <= other or other + nbytes <= pointer
                    other_end = w.fresh("end")
                    w.emit(f"{other_end} = add i64 {other}, {nbytes}")
                    before, after, apart = (
                        w.fresh(s) for s in ("before", "after", "apart")
                    )
                    w.emit(f"{before} = icmp ule i64 {end}, {other}")
                    w.emit(f"{after} = icmp ule i64 {other_end}, {pointer}")
                    w.emit(f"{apart} = or i1 {before}, {after}")
                    checks.append(apart)
        if spec.nbytes:
            ranges.append((pointer, spec.nbytes))
        data.append(pointer)
        ok = w.all_of(checks)
        following = f"check{i + 1}" if i + 1 < len(arrays) else "call"
        w.emit(f"br i1 {ok}, label %{following}, label %reject")
        w.label(following)
    args = [f"i64 {v}" for v in template]
    for slot, pointer in zip(slots, data):
        args[slot] = f"i64 {pointer}"
    w.emit(f"%entry.fn = inttoptr i64 {entry} to ptr")
    w.emit(f"call void %entry.fn({', '.join(args)})")
    w.emit("ret i32 0")
    w.label("reject")
    w.emit("ret i32 1")
    body = "\n".join(w.lines)
    return f"define i32 @{STUB_NAME}({params}) {{\n{body}\n}}\n"


def compile_call_stub(
    entry: int,
    template: Sequence[int],
    slots: Sequence[int],
    arrays: Sequence[StubArray],
    layout: NdarrayLayout,
) -> Callable[..., int]:
    """The stub for the host, as a ctypes function of `len(arrays)` objects
    returning 0 (called) or 1 (rejected, nothing ran)."""
    text = call_stub_ir(entry, template, slots, arrays, layout, id(np.ndarray))
    engine = jit_llvm_ir(text)
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.py_object] * len(arrays)))
    stub: Any = proto(engine.get_function_address(STUB_NAME))
    # the code, and the dtypes it compares, live as long as the function
    stub.engine, stub.arrays = engine, tuple(arrays)
    return stub
