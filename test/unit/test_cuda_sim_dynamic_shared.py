"""Dynamic shared memory in the GPU simulator, on hand-written `gpu`-stage IR.

A kernel's shared buffer with a dynamic extent (`memref.alloca(%N)` in
memory space 3, in its entry block) is checked as a static one is (races,
out-of-bounds accesses), must fit in the bytes the launch gives
(`dynamic_shared_memory_size`), and a launch asking for more than a block
may have is a `TCError` naming the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from tcdialect.arguments import signature_of
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError
from tcdialect.pipeline import make_context
from tcdialect.runtime.cuda_sim import SimLauncher

#: Each of 32 threads writes its element of a buffer of N floats, then
#: (after the barrier) reads its neighbour's, (tx + 1) mod N.
TEXT = """
builtin.module attributes {gpu.container_module} {
  func.func @f(%O: memref<?xf32>, %N: index) attributes {tc.inputs = [], tc.outputs = ["O"], tc.sizes = ["N"]} {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %bytes = arith.constant BYTES : i32
    gpu.launch_func @f_kernels::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %bytes args(%O : memref<?xf32>, %N : index)
    func.return
  }
  gpu.module @f_kernels {
    gpu.func @k(%O: memref<?xf32>, %N: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %t = memref.alloca() : memref<2xf32, 3 : i32>
      %s = memref.alloca(%N) : memref<?xf32, 3 : i32>
      %tx = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %x = arith.index_cast %tx : index to i32
      %v = arith.sitofp %x : i32 to f32
      memref.store %v, %s[%tx] : memref<?xf32, 3 : i32>
      BARRIER
      %next = arith.addi %tx, %c1 : index
      %j = arith.remui %next, %N : index
      %w = memref.load %s[%j] : memref<?xf32, 3 : i32>
      memref.store %w, %O[%tx] : memref<?xf32>
      gpu.return
    }
  }
}
"""


def _run(n: int, nbytes: int, barrier: bool = True) -> np.ndarray:
    text = TEXT.replace("BYTES", str(nbytes))
    text = text.replace("BARRIER", "gpu.barrier" if barrier else "")
    m = Parser(make_context(), text).parse_module()
    host = next(op for op in m.ops if isinstance(op, FuncOp))
    launcher = SimLauncher(m, "f", signature_of(host), CudaOptions())
    out = np.zeros(32, np.float32)
    launcher([], [out], {"N": n})
    return out


def test_a_dynamic_buffer_holds_what_threads_share() -> None:
    np.testing.assert_array_equal(_run(32, 128), (np.arange(32) + 1) % 32)
    # more than the buffers need is fine
    np.testing.assert_array_equal(_run(32, 4096), (np.arange(32) + 1) % 32)


def test_a_missing_barrier_is_a_race_on_the_dynamic_buffer() -> None:
    with pytest.raises(TCError, match="race in kernel @k on shared memory 's'"):
        _run(32, 128, barrier=False)


def test_out_of_bounds_on_the_dynamic_buffer() -> None:
    with pytest.raises(
        TCError,
        match=r"out-of-bounds store in kernel @k: thread \(16, 0, 0\) .* shared "
        r"memory 's' \(memref<\?xf32, 3 : i32>\), whose extents are \[16\]",
    ):
        _run(16, 64)


def test_buffers_must_fit_in_what_the_launch_gives() -> None:
    with pytest.raises(
        TCError,
        match=r"kernel @k: memref.alloca: .*'s'.*, 128 bytes, does not fit in the "
        "112 bytes of dynamic shared memory the launch has left",
    ):
        _run(32, 112)


def test_a_launch_over_the_limit_names_the_kernel() -> None:
    # 8 static bytes (%t) and 48 KiB: one block may have 48 KiB in all
    with pytest.raises(
        TCError,
        match=r"cuda-sim: kernel @k is launched with 49152 bytes of dynamic shared "
        r"memory per block, on top of its 8 static bytes; a block may have 49152",
    ):
        _run(32, 48 * 1024)
