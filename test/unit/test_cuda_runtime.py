"""The CUDA runtime without a GPU: device arrays, errors, and the launch
plans run against a recording stand-in for the driver.

`FakeLib` answers the driver entry points `runtime.cuda.driver` calls
through ctypes and records every launch with the arguments it decodes from
the prepared argument block; `fake_device` is a `CudaDevice` built on it.
The tests check what the device would be asked to do: which kernels, with
which grid and block, on which stream, with which pointers and extents.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import pytest
from test_reference_catalog import RNN_SOURCE

import tcdialect
from tcdialect.arrays import DeviceArray, device_array
from tcdialect.diagnostics import TCError
from tcdialect.runtime.cuda import driver

MATMUL = (
    "def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
)
GATHER = "def gather(float(V, W) In, int32(L) Idx) -> (O) { O(l, w) = In(Idx(l), w) }"


class FakeArray:
    """An array in (pretend) device memory, known by its
    `__cuda_array_interface__` only."""

    def __init__(
        self,
        shape: tuple[int, ...],
        ptr: int,
        dtype: Any = np.float32,
        strides: tuple[int, ...] | None = None,
    ):
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": self.dtype.str,
            "data": (ptr, False),
            "strides": strides,
            "version": 3,
        }


def _deref(p: int, kind: Any) -> int:
    return ctypes.cast(p, ctypes.POINTER(kind)).contents.value


def _handle(stream: ctypes.c_void_p | None) -> int:
    """The `CUstream` a launch was given (see `driver.stream_argument`)."""
    assert stream is None or isinstance(stream, ctypes.c_void_p)
    return stream.value or 0 if stream is not None else 0


class FakeLib:
    """The driver entry points the runtime uses, recording launches."""

    def __init__(self) -> None:
        self.launches: list[dict[str, Any]] = []
        self.pool_attributes: dict[tuple[int, int], int] = {}
        self.next_ptr = 0x7000_0000
        self.flag = 0
        self.freed: list[int] = []
        self.launch_code = 0
        self.set_current: list[tuple[int, int | None]] = []

    def cuCtxGetCurrent(self, current: Any) -> int:
        current._obj.value = 1
        return 0

    def cuCtxSetCurrent(self, context: ctypes.c_void_p) -> int:
        self.set_current.append((threading.get_ident(), context.value))
        return 0

    def cuModuleLoadData(self, handle: Any, image: bytes) -> int:
        handle._obj.value = 0x100
        return 0

    def cuModuleGetFunction(self, fn: Any, module: Any, name: bytes) -> int:
        fn._obj.value = 0x200 + len(name)
        return 0

    def cuLaunchKernel(
        self,
        fn: Any,
        gx: int,
        gy: int,
        gz: int,
        bx: int,
        by: int,
        bz: int,
        shared: int,
        stream: int,
        params: Any,
        extra: Any,
    ) -> int:
        self.launches.append(
            {
                "function": fn.value,
                "grid": (gx, gy, gz),
                "block": (bx, by, bz),
                "stream": _handle(stream),
                "params": [
                    _deref(params[i], ctypes.c_int64) for i in range(len(params))
                ],
            }
        )
        return self.launch_code

    def cuMemAllocAsync(self, ptr: Any, nbytes: int, stream: int) -> int:
        ptr._obj.value = self.next_ptr
        self.next_ptr += 0x10_0000
        return 0

    def cuMemFreeAsync(self, ptr: int, stream: int) -> int:
        self.freed.append(ptr)
        return 0

    def cuMemsetD32Async(self, ptr: int, value: int, count: int, stream: int) -> int:
        return 0

    def cuMemcpyDtoHAsync_v2(
        self, host: int, src: int, nbytes: int, stream: int
    ) -> int:
        ctypes.cast(host, ctypes.POINTER(ctypes.c_int32)).contents.value = self.flag
        return 0

    def cuStreamSynchronize(self, stream: int) -> int:
        return 0

    def cuDeviceGet(self, dev: Any, ordinal: int) -> int:
        dev._obj.value = 10 + ordinal
        return 0

    def cuDeviceGetMemPool(self, pool: Any, dev: int) -> int:
        pool._obj.value = 0x300 + dev
        return 0

    def cuMemPoolSetAttribute(self, pool: Any, attr: int, value: Any) -> int:
        self.pool_attributes[(pool.value, attr)] = value._obj.value
        return 0

    def cuGetErrorName(self, code: int, name: Any) -> int:
        name._obj.value = b"CUDA_ERROR_INVALID_HANDLE"
        return 0


class FakeContext:
    """The primary context; `stack` stands in for pycuda's context stack,
    which is per thread (a thread that ends with it not empty aborts the
    process)."""

    handle = 1

    def __init__(self) -> None:
        self.stack = threading.local()
        self.pushes = 0

    def depth(self) -> int:
        return getattr(self.stack, "depth", 0)

    def push(self) -> None:
        self.pushes += 1
        self.stack.depth = self.depth() + 1


class FakeDrv:
    """pycuda's driver module: `Context.pop` and NumPy arguments' copies,
    which, as pycuda's, need a context on this thread's stack."""

    def __init__(self, context: FakeContext) -> None:
        outer = self

        class Context:
            @staticmethod
            def pop() -> None:
                assert context.depth() > 0, "pop of an empty stack"
                context.stack.depth -= 1

        self.Context, self.context, self.next = Context, context, 0x8000_0000
        self.Error = RuntimeError

        class Allocation(int):
            def free(self) -> None:
                outer.need_context()

        self.Allocation = Allocation

    def need_context(self) -> None:
        if self.context.depth() == 0:
            raise RuntimeError("no currently active context")

    def mem_alloc(self, nbytes: int) -> int:
        self.need_context()
        self.next += 0x10_0000
        return self.Allocation(self.next)

    def memcpy_htod(self, buffer: int, host: Any) -> None:
        self.need_context()

    def memcpy_dtoh(self, host: Any, buffer: int) -> None:
        self.need_context()


def install_fake(monkeypatch: pytest.MonkeyPatch, lib: FakeLib) -> None:
    """Make `lib` the driver of a fake H100 that `cuda_device` returns."""
    context = FakeContext()
    device = driver.CudaDevice(
        ordinal=0,
        drv=FakeDrv(context),
        lib=lib,
        name="Fake H100",
        capability=(9, 0),  # type: ignore[arg-type]
        multiprocessors=132,
        max_shared_optin=227 * 1024,
        context=context,
    )
    monkeypatch.setattr(driver, "cuda_device", lambda ordinal=0: device)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLib]:
    lib = FakeLib()
    install_fake(monkeypatch, lib)
    yield lib
    tcdialect.clear_cache()


def test_device_array_from_the_interface() -> None:
    d = device_array(FakeArray((3, 4), 4096))
    assert isinstance(d, DeviceArray)
    assert (d.ptr, d.shape, d.dtype, d.c_contiguous, d.kind) == (
        4096,
        (3, 4),
        np.float32,
        True,
        "cuda",
    )
    assert not device_array(FakeArray((3, 4), 4096, strides=(4, 12))).c_contiguous
    assert device_array(FakeArray((3, 4), 4096, strides=(16, 4))).c_contiguous
    assert device_array(np.ones(3)) is None and device_array(3.0) is None
    a, b = device_array(FakeArray((4,), 0)), device_array(FakeArray((4,), 12))
    assert a is not None and b is not None and a.overlaps(b)
    c = device_array(FakeArray((4,), 16))
    assert c is not None and not a.overlaps(c)


def test_host_targets_refuse_device_arrays_and_streams() -> None:
    a, b = FakeArray((3, 4), 4096), np.ones((4, 5), np.float32)
    for target in ("cpu", "cuda-sim"):
        with pytest.raises(TCError, match=r"input 'A' \(argument 0\).*in CUDA memory"):
            tcdialect.define(MATMUL, target=target)(a, b)
    with pytest.raises(TCError, match="stream= is for GPU targets"):
        tcdialect.define(MATMUL)(np.ones((3, 4), np.float32), b, stream=1)


def test_without_pycuda_the_error_says_what_to_install() -> None:
    try:
        import pycuda.driver  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - a GPU machine
        pytest.skip("pycuda is installed")
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    k = tcdialect.define(MATMUL, target="cuda")
    with pytest.raises(TCError, match=r"needs pycuda.*tcdialect\[gpu\].*cuda-sim"):
        k(a, b)
    assert ".entry" in k.ir(a, b, stage="ptx")  # PTX needs neither


def test_launches_with_prepared_arguments(fake: FakeLib) -> None:
    k = tcdialect.define(MATMUL, target="cuda")
    a, b, c = (
        FakeArray((64, 32), 0x1000),
        FakeArray((32, 48), 0x9000),
        FakeArray((64, 48), 0x20000),
    )
    assert k(a, b, out=c) is c
    assert k(a, b, out=c, stream=77) is c  # the fast path: same plan
    a2 = FakeArray((64, 32), 0x5_0000)
    k(a2, b, out=c)
    assert len(fake.launches) == 3
    first, second, third = fake.launches
    assert first["stream"] == 0 and second["stream"] == 77
    assert first["grid"] == second["grid"] and first["block"] == second["block"]
    assert first["params"][:3] == [0x1000, 0x9000, 0x20000]  # A, B, C: static extents
    assert third["params"][:3] == [
        0x5_0000,
        0x9000,
        0x20000,
    ]
    gpu = k.ir(
        np.ones((64, 32), np.float32), np.ones((32, 48), np.float32), stage="gpu"
    )
    g, b_ = first["grid"], first["block"]
    assert "threads in (%" in gpu and b_[0] * b_[1] * b_[2] <= 1024 and g[0] >= 1


def test_other_threads_leave_pycuda_context_stack_empty(fake: FakeLib) -> None:
    """pycuda aborts the process when a thread ends with a context on its
    stack (PyTorch's autograd thread at exit, a worker thread at once): a
    call from another thread makes the primary context current for the
    driver alone, and pushes it on pycuda's stack only around its own
    copies of NumPy arguments; the main thread's push stays (popped at
    exit)."""
    k = tcdialect.define(MATMUL, target="cuda")
    a, b, c = (
        FakeArray((8, 4), 0x1000),
        FakeArray((4, 6), 0x9000),
        FakeArray((8, 6), 0x20000),
    )
    device = driver.cuda_device(0)
    context = cast(FakeContext, device.context)
    k(a, b, out=c)  # the main thread: pushed once
    assert context.depth() == 1
    depths: list[int] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            k(a, b, out=c)  # the main thread's plan, the short way
            k(a, b, out=c)
            # the general path, with copies of NumPy arguments
            k(np.ones((8, 4), np.float32), np.ones((4, 6), np.float32))
            depths.append(context.depth())
        except BaseException as err:  # reported below, in the main thread
            errors.append(err)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert not errors and depths == [0]
    assert len(fake.launches) == 4
    assert fake.set_current == [(thread.ident, 1)]  # once, in the worker
    assert context.depth() == 1 and context.pushes == 2  # the worker's copies


def test_the_launch_entry_passes_what_the_prototype_reads(fake: FakeLib) -> None:
    # `launch_kernel` has no argtypes (ctypes converts nothing): call it as
    # the driver would be called, through a C function of cuLaunchKernel's
    # prototype, and check every argument arrives whole (a 64-bit stream
    # handle passed as a bare int would arrive cut to 32 bits).
    p, u = ctypes.c_void_p, ctypes.c_uint
    seen: list[tuple[Any, ...]] = []

    def entry(*args: Any) -> int:
        fn, *dims, stream, params, extra = args
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        pointers = [_deref(slots[i], ctypes.c_uint64) for i in range(3)]
        seen.append((fn, tuple(dims), stream, pointers, extra))
        return 0

    prototype = ctypes.CFUNCTYPE(ctypes.c_int, p, u, u, u, u, u, u, u, p, p, p)
    callback = prototype(entry)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    unprototyped = ctypes.CFUNCTYPE(ctypes.c_int)(address)
    k = tcdialect.define(MATMUL, target="cuda")
    a, b, c = (
        FakeArray((64, 32), 0x7F00_0000_1000),
        FakeArray((32, 48), 0x7F00_0010_0000),
        FakeArray((64, 48), 0x7F00_0020_0000),
    )
    k(a, b, out=c)  # through FakeLib's recording entry: what to expect
    (expected,) = fake.launches
    driver.cuda_device(0).launch_kernel = unprototyped
    stream = 0x7FFF_0000_1234
    k(a, b, out=c, stream=stream)
    k(a, b, out=c)  # the default stream
    assert len(seen) == 2
    for fn, dims, _, pointers, extra in seen:
        assert fn == expected["function"]
        assert dims == (*expected["grid"], *expected["block"], 0)
        assert pointers == [0x7F00_0000_1000, 0x7F00_0010_0000, 0x7F00_0020_0000]
        assert extra is None
    assert [s for _, _, s, _, _ in seen] == [stream, None]


def test_the_memory_pool_keeps_freed_temporaries(fake: FakeLib) -> None:
    device = driver.cuda_device(0)
    assert device.keep_freed_memory(80 << 30)
    # the release threshold of device 0's current pool
    assert fake.pool_attributes == {
        (0x300 + 10, driver.MEMPOOL_ATTR_RELEASE_THRESHOLD): 80 << 30
    }


def test_a_recurrence_launches_its_steps_from_the_host_loop(fake: FakeLib) -> None:
    # The host function keeps its scf.for of step launches through the llvm
    # stage (convert-gpu-scf-to-cf lowers only the kernels): the device run
    # of 2026-11-28 failed here on a host function lowered to blocks.
    k = tcdialect.define(RNN_SOURCE, target="cuda")
    T, B, I, N = 4, 2, 3, 5
    args = [
        FakeArray(shape, 0x1000 * (i + 1))
        for i, shape in enumerate([(T, B, I), (B, N), (N, I), (N, N), (N,)])
    ]
    k(*args, out=FakeArray((T + 1, B, N), 0x10_0000))
    launches = fake.launches
    assert len(launches) == 2 + T  # xw and h's initial rows, then T steps
    steps = launches[2:]
    assert all(s["block"] == steps[0]["block"] for s in steps)
    # each step passes its t (1..T) among the scalar arguments
    for t, step in enumerate(steps, start=1):
        assert t in step["params"], (t, step["params"])


def test_generic_sizes_pass_extents(fake: FakeLib) -> None:
    k = tcdialect.define(
        MATMUL, target="cuda", options=tcdialect.CudaOptions(specialize=False)
    )
    k(
        FakeArray((5, 7), 0x1000),
        FakeArray((7, 9), 0x2000),
        out=FakeArray((5, 9), 0x3000),
    )
    (launch,) = fake.launches
    values = launch["params"]
    assert values[0] == 0x1000
    assert {5, 7, 9} <= set(values[1:])  # the dynamic extents follow the pointers


def test_device_arguments_are_checked(fake: FakeLib) -> None:
    k = tcdialect.define(MATMUL, target="cuda")
    a, b = FakeArray((64, 32), 0x1000), FakeArray((32, 48), 0x9000)
    with pytest.raises(TCError, match=r"input 'A' \(argument 0\).*not a contiguous"):
        k(FakeArray((64, 32), 0x1000, strides=(4, 256)), b)
    with pytest.raises(TCError, match=r"input 'B' \(argument 1\).*expected float32"):
        k(a, FakeArray((32, 48), 0x9000, np.float64))
    with pytest.raises(TCError, match=r"output 'C' \(out\[0\]\).*overlaps"):
        k(a, b, out=FakeArray((64, 48), 0x1000 + 64))
    with pytest.raises(TCError, match=r"output 'C' \(out\[0\]\).*expected shape"):
        k(a, b, out=FakeArray((48, 64), 0x20000))
    with pytest.raises(TCError, match="stream= must be a CUDA stream"):
        k(a, b, out=FakeArray((64, 48), 0x20000), stream="s")
    assert not fake.launches


def test_torch_compile_records_the_op_after_plain_calls(fake: FakeLib) -> None:
    # Kernel.__call__ tries the last call's plan before the PyTorch hook; the
    # plan must decline while Dynamo traces (the tensors are fake), so that
    # the op is recorded, without a graph break, as on a first call.
    import torch

    k = tcdialect.define(MATMUL, target="cuda")
    a, b, c = (
        FakeArray((8, 5), 0x1000),
        FakeArray((5, 3), 0x2000),
        FakeArray((8, 3), 0x3000),
    )
    k(a, b, out=c)
    plan = k._last  # pyright: ignore[reportPrivateUsage]
    assert plan is not None
    plan._torch_in = [torch.float32, torch.float32]  # pyright: ignore
    # CPU tensors stand in for CUDA ones: the fake device takes their ordinal
    driver.cuda_device(0).ordinal = -1
    graphs: list[Any] = []

    def backend(gm: Any, example: Any) -> Any:
        graphs.append(gm)
        return lambda *args: [torch.zeros(8, 3)]  # the op is not run here

    @torch.compile(backend=backend, fullgraph=True)
    def f(x: Any, y: Any) -> Any:
        return k(x, y) * 2

    f(torch.rand(8, 5), torch.rand(5, 3))
    assert len(graphs) == 1 and len(fake.launches) == 1
    assert "_traced_op_call" in str(graphs[0].graph)
    torch._dynamo.reset()  # pyright: ignore[reportPrivateImportUsage]


def test_the_fast_path_leaves_autograd_calls_to_the_op(fake: FakeLib) -> None:
    import torch

    k = tcdialect.define(MATMUL, target="cuda")
    k(FakeArray((8, 5), 0x1000), FakeArray((5, 3), 0x2000), out=FakeArray((8, 3), 0))
    plan = k._last  # pyright: ignore[reportPrivateUsage]
    assert plan is not None
    plan._torch_in = [torch.float32, torch.float32]  # pyright: ignore
    driver.cuda_device(0).ordinal = -1  # CPU tensors stand in for CUDA ones
    x, y = torch.rand(8, 5), torch.rand(5, 3)
    assert plan.call([x, y], None, stream=5) is not None
    x.requires_grad_()
    assert plan.call([x, y], None, stream=5) is None  # autograd records it
    with torch.no_grad():
        assert plan.call([x, y], None, stream=5) is not None
    assert len(fake.launches) == 3
    assert [launch["stream"] for launch in fake.launches[1:]] == [5, 5]


def test_launch_errors_name_the_kernel(fake: FakeLib) -> None:
    k = tcdialect.define(MATMUL, target="cuda")
    a, b, c = (
        FakeArray((64, 32), 0x1000),
        FakeArray((32, 48), 0x9000),
        FakeArray((64, 48), 0x20000),
    )
    fake.launch_code = 400
    with pytest.raises(
        TCError, match=r"CUDA_ERROR_INVALID_HANDLE launching kernel @\w+ \(grid"
    ):
        k(a, b, out=c)
    fake.launch_code = 0
    k(a, b, out=c)  # the next call works
    assert len(fake.launches) == 2


def test_error_flag_names_the_tensor(fake: FakeLib) -> None:
    k = tcdialect.define(GATHER, target="cuda")
    table, idx = FakeArray((50, 33), 0x1000), FakeArray((70,), 0x9000, np.int32)
    out = FakeArray((70, 33), 0x20000)
    k(table, idx, out=out)
    assert len(fake.freed) == 1  # the flag, freed in stream order
    fake.flag = 1
    with pytest.raises(TCError, match="out-of-bounds read of tensor 'In'"):
        k(table, idx, out=out)
    assert len(fake.freed) == 2
