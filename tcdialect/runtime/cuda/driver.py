"""The CUDA driver, through pycuda: devices, their primary contexts, modules,
launches and memory. The only module of tcdialect that imports pycuda.

`cuda_device(ordinal)` is the process's one `CudaDevice` per GPU. It uses
the device's *primary* context (the one the CUDA runtime, and so PyTorch and
CuPy, use), made current in each thread that needs it, so that their memory
and ours are the same and pointers pass freely between them.

pycuda does the driver's set-up, the device queries, the primary context,
the memory and the copies. Two things it cannot do are done with the
driver's own entry points (`cuModuleLoadData`, `cuModuleGetFunction`,
`cuLaunchKernel`, `cuMemAllocAsync`, ...) from the `libcuda` that pycuda
loaded: pycuda launches only on streams it created (its `Stream` cannot wrap
a `CUstream` made elsewhere, and its `Function` does not give its handle),
but a kernel must run on the caller's stream, PyTorch's or CuPy's; and
temporaries must be allocated in stream order (`cuMemAllocAsync`) so that a
call on one stream never waits for another.

Modules are loaded from a cubin when `ptxas` is found (`$CUDA_HOME/bin`,
else the PATH), which skips the driver's JIT, else from the PTX.

Without pycuda, or without a driver or a device, `cuda_device` raises a
`TCError` that says what to install (never an `ImportError`). A failed
driver call is a `TCError` naming the call, the CUDA error and, for a
launch, the kernel and its configuration.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcdialect.diagnostics import TCError

Dim3 = tuple[int, int, int]

_INSTALL = (
    "pip install 'tcdialect[gpu]' (pycuda) on a machine with an NVIDIA GPU and "
    "its driver; without one, target='cuda-sim' (or TCDIALECT_CUDA_SIM=1) runs "
    "the same code in the GPU simulator"
)


def _driver() -> Any:
    """pycuda.driver, initialised; a `TCError` when it cannot be."""
    try:
        import pycuda.driver as drv  # type: ignore[import-not-found]
    except ImportError as err:
        raise TCError(f"target 'cuda' needs pycuda ({err}): {_INSTALL}") from None
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as err:  # pycuda's errors, or a missing libcuda
        raise TCError(
            f"target 'cuda': the CUDA driver failed ({err}): {_INSTALL}"
        ) from None
    if count == 0:
        raise TCError(f"target 'cuda': no CUDA device on this machine: {_INSTALL}")
    return drv


def _libcuda() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    p, u, i, s = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_size_t
    lib.cuLaunchKernel.argtypes = [p, u, u, u, u, u, u, u, p, p, p]
    lib.cuModuleLoadData.argtypes = [ctypes.POINTER(p), ctypes.c_char_p]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(p), p, ctypes.c_char_p]
    lib.cuModuleUnload.argtypes = [p]
    lib.cuMemAllocAsync.argtypes = [ctypes.POINTER(ctypes.c_uint64), s, p]
    lib.cuMemFreeAsync.argtypes = [ctypes.c_uint64, p]
    lib.cuMemsetD32Async.argtypes = [ctypes.c_uint64, u, s, p]
    lib.cuMemcpyDtoHAsync_v2.argtypes = [p, ctypes.c_uint64, s, p]
    lib.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_uint64, p, s, p]
    lib.cuStreamSynchronize.argtypes = [p]
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(p)]
    lib.cuGetErrorName.argtypes = [i, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(i), i, p]
    lib.cuFuncSetAttribute.argtypes = [p, i, i]
    lib.cuDeviceGet.argtypes = [ctypes.POINTER(i), i]
    lib.cuDeviceGetMemPool.argtypes = [ctypes.POINTER(p), i]
    lib.cuMemPoolSetAttribute.argtypes = [p, i, p]
    return lib


#: `CUmemPool_attribute`: the bytes a memory pool keeps after a
#: synchronisation instead of releasing them to the driver.
MEMPOOL_ATTR_RELEASE_THRESHOLD = 4


#: `CUfunction_attribute`s: the static shared memory of a kernel, and the
#: most dynamic shared memory a launch of it may ask for.
SHARED_SIZE_BYTES = 1
MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
#: Shared memory a block may have without opting in (every GPU since sm_20).
DEFAULT_SHARED_MEMORY = 48 * 1024


@functools.lru_cache(maxsize=64)
def stream_argument(handle: int) -> ctypes.c_void_p | None:
    """The `CUstream` `handle` as `CudaDevice.launch_kernel` takes it
    (None: the default stream)."""
    return ctypes.c_void_p(handle) if handle else None


def error_name(lib: ctypes.CDLL, code: int) -> str:
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(code, ctypes.byref(name)) != 0 or not name.value:
        return f"CUDA error {code}"
    return name.value.decode()


def ptxas_path() -> str | None:
    """`ptxas` of `$CUDA_HOME`, else on the PATH, else /usr/local/cuda's, else None."""
    home = os.environ.get("CUDA_HOME")
    if home and (Path(home) / "bin" / "ptxas").is_file():
        return str(Path(home) / "bin" / "ptxas")
    found = shutil.which("ptxas")
    if found is None and Path("/usr/local/cuda/bin/ptxas").is_file():
        found = "/usr/local/cuda/bin/ptxas"
    return found


def assemble(ptx: str, arch: str) -> bytes | None:
    """A cubin of `ptx` for `arch` by `ptxas`, or None (no ptxas, or it
    refused: the driver's JIT then gets the PTX and reports the problem)."""
    ptxas = ptxas_path()
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory(prefix="tcdialect-") as tmp:
        src, out = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        done = subprocess.run(
            [ptxas, f"-arch={arch}", "-o", str(out), str(src)],
            capture_output=True,
            check=False,
        )
        return out.read_bytes() if done.returncode == 0 and out.is_file() else None


@dataclass
class LoadedModule:
    """A module loaded into a device's primary context, and its kernels."""

    handle: ctypes.c_void_p
    functions: dict[str, ctypes.c_void_p]
    #: "cubin" (assembled by ptxas) or "ptx" (the driver's JIT).
    image: str


@dataclass
class CudaDevice:
    """One GPU and its primary context (see the module docstring)."""

    ordinal: int
    drv: Any
    lib: ctypes.CDLL
    name: str
    capability: tuple[int, int]
    multiprocessors: int
    max_shared_optin: int
    context: Any
    threads_per_sm: int = 2048
    _ready: threading.local = field(default_factory=threading.local, repr=False)

    @property
    def arch(self) -> str:
        return f"sm_{self.capability[0]}{self.capability[1]}"

    @functools.cached_property
    def launch_kernel(self) -> Any:
        """`cuLaunchKernel` for the launch path, without `argtypes`, so that
        ctypes converts none of its 11 arguments (most of a launch's host
        cost from Python; docs/perf/runtime.md). The caller
        passes the function, the stream (`stream_argument`) and the
        parameter block as ctypes objects and the grid, the block and the
        shared bytes as ints (32 bits, as the prototype has them): a bare
        int in a pointer's place would be cut to 32 bits. A driver library
        that is not a `ctypes.CDLL` (a test's stand-in) is called as it is."""
        lib = self.lib
        if isinstance(lib, ctypes.CDLL):
            return lib["cuLaunchKernel"]  # a new function pointer, unprototyped
        return lib.cuLaunchKernel

    def enter(self) -> None:
        """Make the primary context current in this thread if this thread
        never did (the launch path: a launch that fails because another
        context became current calls `make_current` and tries again)."""
        if not getattr(self._ready, "entered", False):
            self.make_current()

    def make_current(self) -> bool:
        """Make the primary context the driver's current context in this
        thread, for the driver's own entry points (module loads, launches,
        stream-ordered memory); returns whether it had to (another context
        was current, or this thread never asked).

        The main thread pushes it on pycuda's context stack, once (and again
        if someone made another context current since), where pycuda's
        memory calls find it; those pushes are popped at exit. Another thread
        only sets it current (`cuCtxSetCurrent`) and leaves pycuda's stack
        empty, because pycuda aborts the whole process when a thread ends
        with a context on its stack: a worker thread that called a kernel,
        or PyTorch's autograd thread at exit. Its pycuda calls push for their
        own duration (`pycuda_context`)."""
        local = self._ready
        handle = getattr(self.context, "handle", None)
        if getattr(local, "entered", False):
            current = ctypes.c_void_p()
            self.lib.cuCtxGetCurrent(ctypes.byref(current))
            if current.value == handle:
                return False
        if threading.current_thread() is threading.main_thread():
            self.context.push()
            local.pushes = getattr(local, "pushes", 0) + 1
            if local.pushes == 1:
                atexit.register(self._pop_all, local)
        else:
            self.check(
                self.lib.cuCtxSetCurrent(ctypes.c_void_p(handle)), "cuCtxSetCurrent"
            )
        local.entered = True
        return True

    @contextlib.contextmanager
    def pycuda_context(self) -> Iterator[None]:
        """The primary context on pycuda's stack inside the `with`, for
        pycuda's memory calls: in the main thread `make_current`'s push,
        kept; in another thread pushed and popped again (see
        `make_current`)."""
        if threading.current_thread() is threading.main_thread():
            self.make_current()
            yield
            return
        self.context.push()
        try:
            yield
        finally:
            self.drv.Context.pop()

    def _pop_all(self, local: threading.local) -> None:
        for _ in range(getattr(local, "pushes", 0)):
            try:
                self.drv.Context.pop()
            except Exception:  # the driver is already gone at exit
                break
        local.pushes = 0
        local.entered = False

    def keep_freed_memory(self, nbytes: int) -> bool:
        """Let the device's current memory pool, which `cuMemAllocAsync` draws
        a call's temporaries and error flag from, keep up to `nbytes` of
        freed memory for the next call instead of releasing it to the driver
        at every synchronisation (the pool's default threshold is 0): with
        0, each call after a synchronisation (every NumPy or bounds-checked
        call waits for its stream) maps its temporaries afresh. The pool is
        the process's, shared with other `cuMemAllocAsync` users. Returns
        whether the driver took the setting (an old driver may not)."""
        dev = ctypes.c_int()
        pool = ctypes.c_void_p()
        value = ctypes.c_uint64(nbytes)
        lib = self.lib
        return (
            lib.cuDeviceGet(ctypes.byref(dev), self.ordinal) == 0
            and lib.cuDeviceGetMemPool(ctypes.byref(pool), dev.value) == 0
            and lib.cuMemPoolSetAttribute(
                pool, MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(value)
            )
            == 0
        )

    def check(self, code: int, what: str) -> None:
        if code != 0:
            raise TCError(f"CUDA error {error_name(self.lib, code)} in {what}")

    def load(self, ptx: str, arch: str, kernels: list[str]) -> LoadedModule:
        """Load `ptx` (assembled for `arch` when ptxas is there) and look up
        `kernels`."""
        self.enter()
        cubin = assemble(ptx, arch)
        image = cubin if cubin is not None else ptx.encode() + b"\0"
        handle = ctypes.c_void_p()
        code = self.lib.cuModuleLoadData(ctypes.byref(handle), image)
        if code != 0:
            raise TCError(
                f"CUDA error {error_name(self.lib, code)} loading the "
                f"{'cubin' if cubin else 'PTX'} of kernels {', '.join(kernels)} "
                f"on {self.name} ({self.arch})"
            )
        functions: dict[str, ctypes.c_void_p] = {}
        for name in kernels:
            fn = ctypes.c_void_p()
            self.check(
                self.lib.cuModuleGetFunction(ctypes.byref(fn), handle, name.encode()),
                f"cuModuleGetFunction({name})",
            )
            functions[name] = fn
        return LoadedModule(handle, functions, "cubin" if cubin else "ptx")

    def allow_dynamic_shared(
        self, function: ctypes.c_void_p, name: str, nbytes: int
    ) -> None:
        """Let kernel `name` (`function`) be launched with `nbytes` of
        dynamic shared memory: a `TCError` when its static and dynamic shared
        memory together exceed the device's opt-in limit; above the default
        48 KiB, the kernel opts in (pycuda's
        `function.set_attribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, n)`)."""
        static = ctypes.c_int()
        self.check(
            self.lib.cuFuncGetAttribute(
                ctypes.byref(static), SHARED_SIZE_BYTES, function
            ),
            f"cuFuncGetAttribute({name})",
        )
        if static.value + nbytes > self.max_shared_optin:
            raise TCError(
                f"kernel @{name} is launched with {nbytes} bytes of dynamic shared "
                f"memory per block, on top of its {static.value} static bytes; a "
                f"block may have {self.max_shared_optin} on {self.name}"
            )
        if static.value + nbytes > DEFAULT_SHARED_MEMORY:
            self.check(
                self.lib.cuFuncSetAttribute(
                    function, MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes
                ),
                f"cuFuncSetAttribute({name}, MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            )

    # ---------------------------------------------------------------- memory

    def alloc(self, nbytes: int) -> Any:
        """Device memory of `nbytes` (pycuda's allocation; freed with it),
        inside `pycuda_context`."""
        try:
            return self.drv.mem_alloc(max(nbytes, 1))
        except self.drv.Error as err:
            raise TCError(
                f"CUDA error allocating {nbytes} bytes on {self.name}: {err}"
            ) from None

    def alloc_async(self, nbytes: int, stream: int) -> int:
        """Stream-ordered device memory of `nbytes` (0 for none)."""
        if nbytes == 0:
            return 0
        ptr = ctypes.c_uint64()
        code = self.lib.cuMemAllocAsync(ctypes.byref(ptr), nbytes, stream)
        if code != 0:
            raise TCError(
                f"CUDA error {error_name(self.lib, code)} allocating {nbytes} bytes "
                f"of temporaries on {self.name}"
            )
        return ptr.value

    def free_async(self, ptr: int, stream: int) -> None:
        if ptr:
            self.check(self.lib.cuMemFreeAsync(ptr, stream), "cuMemFreeAsync")

    def to_device(self, buffer: Any, host: Any) -> None:
        self.drv.memcpy_htod(buffer, host)

    def to_host(self, host: Any, buffer: Any) -> None:
        self.drv.memcpy_dtoh(host, buffer)

    def synchronize(self, stream: int, what: str) -> None:
        """Wait for `stream`; a failure (a kernel's fault) names `what`."""
        code = self.lib.cuStreamSynchronize(stream)
        if code != 0:
            raise TCError(
                f"CUDA error {error_name(self.lib, code)} while running {what}"
                + (
                    " (the context is unusable after this error: restart the process)"
                    if code in _STICKY
                    else ""
                )
            )


#: Errors after which the context is lost (cuda.h: illegal address,
#: illegal instruction, misaligned address, invalid PC, launch failed, trap).
_STICKY = frozenset({700, 715, 716, 718, 719, 214})

_DEVICES: dict[int, CudaDevice] = {}
_LOCK = threading.Lock()


def cuda_device(ordinal: int = 0) -> CudaDevice:
    """The `CudaDevice` of GPU `ordinal` (set up on first use)."""
    with _LOCK:
        found = _DEVICES.get(ordinal)
        if found is not None:
            return found
        drv = _driver()
        if not 0 <= ordinal < drv.Device.count():
            raise TCError(
                f"no CUDA device {ordinal}: this machine has {drv.Device.count()}"
            )
        dev = drv.Device(ordinal)
        attrs = dev.get_attributes()
        context = dev.retain_primary_context()
        device = CudaDevice(
            ordinal=ordinal,
            drv=drv,
            lib=_libcuda(),
            name=dev.name(),
            capability=dev.compute_capability(),
            multiprocessors=int(attrs[drv.device_attribute.MULTIPROCESSOR_COUNT]),
            max_shared_optin=int(
                attrs.get(
                    drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                    attrs[drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK],
                )
            ),
            context=context,
            threads_per_sm=int(
                attrs[drv.device_attribute.MAX_THREADS_PER_MULTIPROCESSOR]
            ),
        )
        # freed temporaries stay in the pool, up to the device's memory
        device.keep_freed_memory(int(dev.total_memory()))
        _DEVICES[ordinal] = device
        return device


def gpuarray_empty(shape: tuple[int, ...], dtype: Any, ordinal: int) -> Any:
    """A pycuda `GPUArray` on GPU `ordinal` (outputs of calls whose device
    inputs have no library of their own)."""
    import pycuda.gpuarray as gpuarray  # type: ignore[import-not-found]

    with cuda_device(ordinal).pycuda_context():
        return gpuarray.empty(shape, dtype)
