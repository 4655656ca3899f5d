"""Call stubs (`tcdialect.backend.cpu.call_stub`): the host-code argument checks
of a known-shape call accept exactly the arrays `Kernel`'s Python checks
accept, pass their data pointers in the template's slots, and call nothing
when they reject."""

import ctypes
from collections.abc import Callable

import numpy as np
import pytest

from tcdialect.backend.cpu.call_stub import call_stub_ir, compile_call_stub
from tcdialect.backend.cpu.jit import jit_llvm_ir
from tcdialect.runtime.cpu import (
    NDARRAY_LAYOUT,
    StubArray,
    data_pointer,
    ndarray_layout,
)

# A stand-in kernel: records its arguments and counts its calls.
RECORDER_IR = """
@calls = global i64 0
@args = global [4 x i64] zeroinitializer
define void @record(i64 %x0, i64 %x1, i64 %x2, i64 %x3) {
  %n = load i64, ptr @calls
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @calls
  store i64 %x0, ptr @args
  %p1 = getelementptr [4 x i64], ptr @args, i64 0, i64 1
  store i64 %x1, ptr %p1
  %p2 = getelementptr [4 x i64], ptr @args, i64 0, i64 2
  store i64 %x2, ptr %p2
  %p3 = getelementptr [4 x i64], ptr @args, i64 0, i64 3
  store i64 %x3, ptr %p3
  ret void
}
"""

F32 = np.dtype(np.float32)


class Recorder:
    def __init__(self) -> None:
        self.engine = jit_llvm_ir(RECORDER_IR)
        self.address = self.engine.get_function_address("record")
        self._calls = ctypes.c_int64.from_address(
            self.engine.get_global_value_address("calls")
        )
        self._args = (ctypes.c_int64 * 4).from_address(
            self.engine.get_global_value_address("args")
        )

    @property
    def calls(self) -> int:
        return self._calls.value

    @property
    def args(self) -> list[int]:
        return list(self._args)


def _stub(rec: Recorder, arrays: list[StubArray]) -> Callable[..., int]:
    # template: A's pointer, a size 7, the output's pointer, an extent 5
    assert NDARRAY_LAYOUT is not None
    return compile_call_stub(rec.address, (0, 7, 0, 5), (0, 2), arrays, NDARRAY_LAYOUT)


SPECS = [
    StubArray((4, 3), (12, 4), F32, 48, output=False),
    StubArray((5,), (4,), F32, 20, output=True),
]


def test_layout_is_known_and_reads_the_data_pointer() -> None:
    layout = ndarray_layout()
    assert layout is not None and layout == NDARRAY_LAYOUT
    base = np.arange(10, dtype=np.float32)
    for a in (base, base[3:], base[::-2], np.empty(())):
        assert data_pointer(a) == a.ctypes.data


def test_good_call_passes_pointers_in_their_slots() -> None:
    rec = Recorder()
    stub = _stub(rec, SPECS)
    A, out = np.ones((4, 3), np.float32), np.empty(5, np.float32)
    assert stub(A, out) == 0
    assert rec.calls == 1
    assert rec.args == [A.ctypes.data, 7, out.ctypes.data, 5]
    view = np.ones((10, 3), np.float32)[2:6]  # contiguous view: accepted
    assert stub(view, out) == 0 and rec.args[0] == view.ctypes.data


def _bad_calls() -> dict[str, tuple[object, object]]:
    A, out = np.ones((4, 3), np.float32), np.empty(5, np.float32)
    readonly = np.empty(5, np.float32)
    readonly.flags.writeable = False

    class Sub(np.ndarray):
        pass

    shared = np.empty(12 + 5, np.float32)
    return {
        "not an array": (A.tolist(), out),
        "a subclass": (A.view(Sub), out),
        "a scalar": (np.float32(1), out),
        "rank": (A.reshape(12), out),
        "rank 0": (np.array(1.0, np.float32), out),
        "output rank 0": (A, np.array(1.0, np.float32)),
        "shape": (np.ones((3, 4), np.float32), out),
        "strides": (np.ones((3, 4), np.float32).T, out),
        "dtype": (A.astype(np.float64), out),
        "byte order": (A.astype(">f4"), out),
        "output rank": (A, out.reshape(5, 1)),
        "output strides": (A, np.empty(10, np.float32)[::2]),
        "read-only output": (A, readonly),
        "output is the input": (shared[:12].reshape(4, 3), shared[:5]),
        "output overlaps the input's end": (shared[:12].reshape(4, 3), shared[11:16]),
        "output not an array": (A, None),
    }


@pytest.mark.parametrize("case", sorted(_bad_calls()))
def test_rejects_without_calling(case: str) -> None:
    rec = Recorder()
    stub = _stub(rec, SPECS)
    A, out = _bad_calls()[case]
    assert stub(A, out) == 1
    assert rec.calls == 0


def test_adjacent_output_is_not_an_overlap() -> None:
    rec = Recorder()
    stub = _stub(rec, SPECS)
    shared = np.empty(12 + 5, np.float32)
    assert stub(shared[:12].reshape(4, 3), shared[12:]) == 0
    assert rec.calls == 1


def test_outputs_are_checked_against_earlier_outputs() -> None:
    rec = Recorder()
    specs = [
        StubArray((2,), (4,), F32, 8, output=True),
        StubArray((2,), (4,), F32, 8, output=True),
    ]
    assert NDARRAY_LAYOUT is not None
    stub = compile_call_stub(rec.address, (0, 0, 1, 1), (0, 1), specs, NDARRAY_LAYOUT)
    buf = np.empty(4, np.float32)
    assert stub(buf[:2], buf[1:3]) == 1 and rec.calls == 0
    assert stub(buf[:2], buf[2:]) == 0 and rec.calls == 1
    # inputs may overlap each other (they are only read)
    specs_in = [StubArray((2,), (4,), F32, 8, output=False)] * 2
    stub_in = compile_call_stub(
        rec.address, (0, 0, 1, 1), (0, 1), specs_in, NDARRAY_LAYOUT
    )
    assert stub_in(buf[:2], buf[:2]) == 0 and rec.calls == 2


def test_zero_dimensional_and_empty_arrays() -> None:
    rec = Recorder()
    specs = [
        StubArray((), (), F32, 4, output=False),
        StubArray((0,), (0,), F32, 0, output=True),
    ]
    assert NDARRAY_LAYOUT is not None
    stub = compile_call_stub(rec.address, (0, 0, 0, 0), (0, 1), specs, NDARRAY_LAYOUT)
    scalar = np.array(2.0, np.float32)
    empty = np.empty(0, np.float32)  # stride 0 in NumPy 2
    assert stub(scalar, empty) == 0 and rec.calls == 1
    assert rec.args[:2] == [scalar.ctypes.data, empty.ctypes.data]
    assert stub(np.array([2.0], np.float32), empty) == 1


def test_ir_checks_each_field() -> None:
    assert NDARRAY_LAYOUT is not None
    text = call_stub_ir(0x1000, (0, 7, 0, 5), (0, 2), SPECS, NDARRAY_LAYOUT, 0x2000)
    assert "define i32 @tc_call_stub(ptr %a0, ptr %a1)" in text
    assert text.count(", 8192\n") == 2  # ob_type is np.ndarray, for both
    for value in (2, 4, 3, 12):  # rank, shape and strides of A
        assert f", {value}\n" in text
    assert f", {id(F32)}\n" in text
    assert text.count("and i32") == 1  # the writeable flag, of the output only
    assert "call void %entry.fn(i64 %" in text and ", i64 7, i64 %" in text
    assert text.count("ret i32 1") == 1 and text.count("ret i32 0") == 1


def test_slot_count_must_match() -> None:
    assert NDARRAY_LAYOUT is not None
    with pytest.raises(ValueError, match="2 arrays but 1 pointer slots"):
        call_stub_ir(0, (0,), (0,), SPECS, NDARRAY_LAYOUT, 0)
