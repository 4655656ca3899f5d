"""The `cuda` target from the `gpu` stage to PTX, without a GPU.

Hand-written `gpu`-stage modules (docs/gpu.md: a host function launching
kernels of a `gpu.module`) go through the `llvm` stage's passes
(`backend.cuda.device.llvm_stage_passes`, verified after each), to LLVM IR
and PTX (`llvm_ir_text`, `ptx_text`), and the PTX through `ptxas` when it is
installed (one call for all kernels): a vector add with cyclic mapping and
dynamic extents, a block sum with shared memory, a barrier and warp
shuffles, math functions from libdevice on f32 and f64, and index
arithmetic on a 3-D memref with private and boolean buffers. MLIR 22's
`mlir-translate`, where installed, must translate the same llvm stage to
the same kernels and intrinsic calls; every math op the `cuda` table
accepts is compiled in a child process (an intrinsic NVPTX cannot lower
ends the process) and assembled.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from tcdialect.backend.cuda.device import (
    PTX_FEATURES,
    llvm_ir_text,
    llvm_stage_passes,
    ptx_text,
)
from tcdialect.backend.cuda.options import ARCHS, CudaOptions
from tcdialect.backend.cuda.target import GENERIC_GPU
from tcdialect.conversion.convert_to_llvm import cuda_handlers, libdevice
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.pipeline import make_context, run_passes

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas is not on PATH")
_TRANSLATE = Path("/usr/lib/llvm-22/bin/mlir-translate")
MLIR_TRANSLATE = (
    str(_TRANSLATE) if _TRANSLATE.exists() else shutil.which("mlir-translate-22")
)

VECTOR_ADD = """
  func.func @add(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %N: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c127 = arith.constant 127 : index
    %n = arith.addi %N, %c127 : index
    %grid = arith.divsi %n, %c128 : index
    gpu.launch_func @add_kernels::@add_k0 blocks in (%grid, %c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %B : memref<?xf32>, %C : memref<?xf32>, %N : index)
    func.return
  }
  gpu.module @add_kernels {
    gpu.func @add_k0(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %N: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %bx = gpu.block_id x
      %gx = gpu.grid_dim x
      %tx = gpu.thread_id x
      %bd = gpu.block_dim x
      %first = arith.muli %bx, %bd : index
      %start = arith.addi %first, %tx : index
      %step = arith.muli %gx, %bd : index
      scf.for %i = %start to %N step %step {
        %a = memref.load %A[%i] : memref<?xf32>
        %b = memref.load %B[%i] : memref<?xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %C[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
"""

# Each block sums 256 values: shuffles within warps, a shared buffer of one
# partial sum per warp, a barrier, then thread 0 adds the partial sums. Thread
# 0 also keeps the value of the lane below (`up` with its validity bit), and
# warp 0 exchanges an f64 (shuffled as two halves).
BLOCK_SUM = """
  func.func @sum(%X: memref<?xf32>, %S: memref<?xf32>, %D: memref<?xf64>, %N: index) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %g = arith.divsi %N, %c256 : index
    gpu.launch_func @sum_kernels::@sum_k0 blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(%X : memref<?xf32>, %S : memref<?xf32>, %D : memref<?xf64>, %N : index)
    func.return
  }
  gpu.module @sum_kernels {
    gpu.func @sum_k0(%X: memref<?xf32>, %S: memref<?xf32>, %D: memref<?xf64>, %N: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %part = memref.alloca() : memref<8xf32, 3 : i32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.000000e+00 : f32
      %w32 = arith.constant 32 : i32
      %o1 = arith.constant 1 : i32
      %o2 = arith.constant 2 : i32
      %o4 = arith.constant 4 : i32
      %o8 = arith.constant 8 : i32
      %o16 = arith.constant 16 : i32
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %bd = gpu.block_dim x
      %lane = gpu.lane_id
      %base = arith.muli %bx, %bd : index
      %i = arith.addi %base, %tx : index
      %in = arith.cmpi slt, %i, %N : index
      %x = scf.if %in -> (f32) {
        %v = memref.load %X[%i] : memref<?xf32>
        scf.yield %v : f32
      } else {
        scf.yield %zero : f32
      }
      %s16, %v16 = gpu.shuffle xor %x, %o16, %w32 : f32
      %x16 = arith.addf %x, %s16 : f32
      %s8, %v8 = gpu.shuffle xor %x16, %o8, %w32 : f32
      %x8 = arith.addf %x16, %s8 : f32
      %s4, %v4 = gpu.shuffle xor %x8, %o4, %w32 : f32
      %x4 = arith.addf %x8, %s4 : f32
      %s2, %v2 = gpu.shuffle xor %x4, %o2, %w32 : f32
      %x2 = arith.addf %x4, %s2 : f32
      %s1, %v1 = gpu.shuffle xor %x2, %o1, %w32 : f32
      %x1 = arith.addf %x2, %s1 : f32
      %warp = arith.divui %tx, %c32 : index
      %leader = arith.cmpi eq, %lane, %c0 : index
      scf.if %leader {
        memref.store %x1, %part[%warp] : memref<8xf32, 3 : i32>
      }
      gpu.barrier
      %below, %valid = gpu.shuffle up %x, %o1, %w32 : f32
      %kept = arith.select %valid, %below, %zero : f32
      %d = memref.load %D[%tx] : memref<?xf64>
      %d2, %dv = gpu.shuffle down %d, %o4, %w32 : f64
      memref.store %d2, %D[%tx] : memref<?xf64>
      %t0 = arith.cmpi eq, %tx, %c0 : index
      scf.if %t0 {
        %sum = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %kept) -> (f32) {
          %p = memref.load %part[%k] : memref<8xf32, 3 : i32>
          %a = arith.addf %acc, %p : f32
          scf.yield %a : f32
        }
        memref.store %sum, %S[%bx] : memref<?xf32>
      }
      gpu.return
    }
  }
"""

# Math from libdevice on f32 and f64, including C functions the frontend
# calls (`hypotf`) and an integer power.
MATH = """
  func.func @math(%X: memref<?xf32>, %Y: memref<?xf64>, %O: memref<?xf32>, %P: memref<?xf64>, %N: index) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @math_kernels::@math_k0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%X : memref<?xf32>, %Y : memref<?xf64>, %O : memref<?xf32>, %P : memref<?xf64>, %N : index)
    func.return
  }
  gpu.module @math_kernels {
    func.func private @hypotf(f32, f32) -> f32
    gpu.func @math_k0(%X: memref<?xf32>, %Y: memref<?xf64>, %O: memref<?xf32>, %P: memref<?xf64>, %N: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %tx = gpu.thread_id x
      %bd = gpu.block_dim x
      %three = arith.constant 3 : i32
      scf.for %i = %tx to %N step %bd {
        %x = memref.load %X[%i] : memref<?xf32>
        %e = math.exp %x : f32
        %t = math.tanh %x : f32
        %h = func.call @hypotf(%e, %t) : (f32, f32) -> f32
        %r = math.sqrt %h : f32
        %s = arith.addf %r, %t : f32
        memref.store %s, %O[%i] : memref<?xf32>
        %y = memref.load %Y[%i] : memref<?xf64>
        %ey = math.exp %y : f64
        %ty = math.tanh %y : f64
        %py = math.fpowi %y, %three : f64, i32
        %sy = arith.addf %ey, %ty : f64
        %sp = arith.addf %sy, %py : f64
        memref.store %sp, %P[%i] : memref<?xf64>
      }
      gpu.return
    }
  }
"""

# Index arithmetic: floor/ceil division and remainders, min/max, memref.dim,
# a 3-D memref with static and dynamic extents, a private buffer and i1/i64
# elements.
INDEX = """
  func.func @idx(%T: memref<?x4x?xf32>, %F: memref<?xi1>, %Q: memref<?xi64>, %n: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @idx_kernels::@idx_k0 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%T : memref<?x4x?xf32>, %F : memref<?xi1>, %Q : memref<?xi64>, %n : index)
    func.return
  }
  gpu.module @idx_kernels {
    gpu.func @idx_k0(%T: memref<?x4x?xf32>, %F: memref<?xi1>, %Q: memref<?xi64>, %n: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %priv = memref.alloca() : memref<4xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %d0 = memref.dim %T, %c0 : memref<?x4x?xf32>
      %d2 = memref.dim %T, %c2 : memref<?x4x?xf32>
      %tx = gpu.thread_id x
      %bd = gpu.block_dim x
      scf.for %i = %tx to %n step %bd {
        %q = arith.floordivsi %i, %d2 : index
        %row = arith.remsi %q, %d0 : index
        %col = arith.remui %i, %d2 : index
        %mid = arith.ceildivsi %i, %c3 : index
        %m4 = arith.remsi %mid, %c4 : index
        %lo = arith.minsi %m4, %c3 : index
        %k = arith.maxsi %lo, %c0 : index
        %v = memref.load %T[%row, %k, %col] : memref<?x4x?xf32>
        memref.store %v, %priv[%k] : memref<4xf32>
        %w = memref.load %priv[%c1] : memref<4xf32>
        %big = arith.cmpf ogt, %w, %v : f32
        memref.store %big, %F[%i] : memref<?xi1>
        %q64 = arith.index_cast %q : index to i64
        memref.store %q64, %Q[%i] : memref<?xi64>
      }
      gpu.return
    }
  }
"""


def gpu_module(*parts: str) -> ModuleOp:
    """A `gpu`-stage module of the host functions and kernels `parts`."""
    body = "".join(parts)
    text = f"builtin.module attributes {{gpu.container_module}} {{{body}}}"
    return Parser(make_context(), text).parse_module()


def llvm_stage(*parts: str) -> ModuleOp:
    module = gpu_module(*parts)
    run_passes(make_context(), module, llvm_stage_passes(CudaOptions(), GENERIC_GPU))
    return module


@pytest.fixture(scope="module")
def everything() -> ModuleOp:
    return llvm_stage(VECTOR_ADD, BLOCK_SUM, MATH, INDEX)


@pytest.fixture(scope="module")
def ptx(everything: ModuleOp) -> str:
    return ptx_text(everything, "sm_90")


def ptxas(ptx: str, arch: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    assert PTXAS is not None
    src = tmp / f"kernels_{arch}.ptx"
    src.write_text(ptx)
    return subprocess.run(
        [PTXAS, f"-arch={arch}", "-v", str(src), "-o", str(tmp / "out.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )


def entry(ptx: str, name: str) -> str:
    """The PTX text of kernel `name`."""
    start = ptx.index(f".entry {name}(")
    end = ptx.find(".entry ", start + 1)
    return ptx[start : end if end >= 0 else len(ptx)]


def test_the_host_stays_at_the_gpu_stage(everything: ModuleOp) -> None:
    text = str(everything)
    assert "func.func @add(%A: memref<?xf32>, %B: memref<?xf32>" in text
    assert "gpu.launch_func @add_kernels::@add_k0 blocks in (%grid, %c1, %c1)" in text
    assert (
        "llvm.func @add_k0(%A: !llvm.ptr<1>, %A_d0: i64, %B: !llvm.ptr<1>, "
        "%B_d0: i64, %C: !llvm.ptr<1>, %C_d0: i64, %N: i64) attributes "
        "{gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>}"
    ) in text


def test_llvm_ir_kernels(everything: ModuleOp) -> None:
    ir = llvm_ir_text(everything)
    assert 'target triple = "nvptx64-nvidia-cuda"' in ir
    assert re.search(
        r'define ptx_kernel void @"add_k0"\(ptr addrspace\(1\) noalias %"A", '
        r'i64 %"A_d0", .*\) "nvvm.maxntid"="128,1,1"',
        ir,
    )
    assert '"nvvm.maxntid"="256,1,1"' in ir
    assert (
        '@"__wg_sum_k0_0" = internal addrspace(3) global [8 x float] undef, align 16'
        in ir
    )
    assert 'call void @"llvm.nvvm.barrier.cta.sync.aligned.all"(i32 0)' in ir
    assert 'call float @"llvm.nvvm.shfl.sync.bfly.f32"(i32 -1, float %"x", i32 16' in ir
    assert 'call {float, i1} @"llvm.nvvm.shfl.sync.up.f32p"(i32 -1' in ir
    assert ir.count('call i32 @"llvm.nvvm.shfl.sync.down.i32"(i32 -1') == 2
    for decl in (
        'float @"__nv_expf"(float',
        'float @"__nv_tanhf"(float',
        'float @"__nv_hypotf"(float',
        'double @"__nv_exp"(double',
        'double @"__nv_tanh"(double',
        'double @"__nv_powi"(double %".1", i32',
    ):
        assert f"declare {decl}" in ir
    # the C function's declaration went with its calls
    assert '@"hypotf"' not in ir
    # the private buffer is on the thread's stack, not in global memory
    assert '%"priv" = alloca float, i64 4, align 16' in ir


def _calls_and_kernels(ir: str) -> tuple[list[str], list[str]]:
    """The functions called (sorted, with repeats) and the kernels' parameter
    types of LLVM IR text, without quotes and value names."""
    ir = ir.replace('"', "")
    calls = sorted(re.findall(r"call [^@]*@([\w.]+)\(", ir))
    kernels = [
        re.sub(r" %[\w.]+", "", params)
        for params in re.findall(r"define ptx_kernel void @\w+\(([^)]*)\)", ir)
    ]
    return calls, kernels


@pytest.mark.skipif(MLIR_TRANSLATE is None, reason="mlir-22-tools not installed")
def test_mlir_translate_agrees(everything: ModuleOp) -> None:
    # MLIR 22 reads the device code of the llvm stage (nvvm ops included) and
    # translates it to the same kernels and intrinsic calls as the backend.
    device = ModuleOp(
        [
            op.clone()
            for module in everything.ops
            if isinstance(module, gpu.ModuleOp)
            for op in module.body.block.ops
        ]
    )
    buf = io.StringIO()
    Printer(stream=buf, print_generic_format=True).print_op(device)
    assert MLIR_TRANSLATE is not None
    result = subprocess.run(
        [MLIR_TRANSLATE, "--mlir-to-llvmir"],
        input=buf.getvalue(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    theirs = _calls_and_kernels(result.stdout)
    ours = _calls_and_kernels(llvm_ir_text(everything).replace(" noalias", ""))
    assert ours == theirs
    assert "llvm.nvvm.shfl.sync.up.f32p" in ours[0]


def test_ptx_vector_add(ptx: str) -> None:
    assert ".target sm_90" in ptx
    assert ".version 8.0" in ptx
    add = entry(ptx, "add_k0")
    assert ".maxntid 128, 1, 1" in add
    # read-only buffers through the non-coherent cache (noalias parameters)
    assert add.count("ld.global.nc.b32") >= 2
    assert "st.global.b32" in add
    assert "%ctaid.x" in add and "%nctaid.x" in add and "%tid.x" in add


def test_ptx_shared_memory_barrier_shuffles(ptx: str) -> None:
    assert ".shared .align 16 .b8 __wg_sum_k0_0[32];" in ptx
    body = entry(ptx, "sum_k0")
    assert re.search(r"bar\.sync\s+0;", body)
    assert body.count("shfl.sync.bfly.b32") == 5
    assert re.search(r"shfl\.sync\.up\.b32\s+%r\d+\|%p\d+", body)
    assert body.count("shfl.sync.down.b32") == 2  # an f64 as two halves
    assert "st.shared" in body and "ld.shared" in body


def test_ptx_libdevice_is_linked_and_internalised(ptx: str) -> None:
    body = entry(ptx, "math_k0")
    # libdevice's code is inlined or internal: nothing external or visible but
    # the kernels, and only the functions they use (all of libdevice is about
    # 700 KB of PTX)
    assert ".extern" not in ptx
    assert ".visible .func" not in ptx
    assert ptx.count(".visible .entry") == 4
    assert len(ptx) < 40_000
    assert "ex2.approx" in body  # __nv_expf
    assert "ld.global.nc.b64" in body and "st.global.b64" in body


@needs_ptxas
def test_ptxas_accepts_every_kernel(ptx: str, tmp_path: Path) -> None:
    result = ptxas(ptx, "sm_90", tmp_path)
    assert result.returncode == 0, result.stderr
    info = result.stdout + result.stderr
    for name in ("add_k0", "sum_k0", "math_k0", "idx_k0"):
        assert f"Compiling entry function '{name}' for 'sm_90'" in info
    assert "32 bytes smem" in info  # sum_k0's 8 partial sums


CONV = """def conv(float(N, C, H, W) I, float(K, C, KH, KW) Wt) -> (O) {
    O(n, k, h, w) +=! I(n, r_c, h + r_kh, w + r_kw) * Wt(k, r_c, r_kh, r_kw)
}"""


def test_min_blocks_per_sm_is_minnctapersm(tmp_path: Path) -> None:
    """`CudaOptions.min_blocks_per_sm` reaches every kernel as
    `.minnctapersm` beside `.maxntid`; 1 lets a thread keep every register
    it needs (here ptxas spills nothing), 0 (the default) leaves it out."""
    import numpy as np

    import tcdialect

    x = np.zeros((2, 16, 10, 10), np.float32)
    w = np.zeros((16, 16, 3, 3), np.float32)
    default = tcdialect.define(CONV, target="cuda").ir(x, w, stage="ptx")
    assert ".minnctapersm" not in default
    one = CudaOptions(min_blocks_per_sm=1)
    ptx = tcdialect.define(CONV, target="cuda", options=one).ir(x, w, stage="ptx")
    entries = re.findall(r"\.entry (\w+)\(", ptx)
    assert entries
    for name in entries:
        assert re.search(r"\.maxntid [\d, ]+\n\.minnctapersm 1\n", entry(ptx, name))
    if PTXAS is None:
        return
    result = ptxas(ptx, "sm_90", tmp_path)
    assert result.returncode == 0, result.stderr
    info = result.stdout + result.stderr
    assert re.findall(r"(\d+) bytes spill stores", info) == ["0"] * len(entries)


MATMUL = """def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""


@pytest.mark.parametrize(
    ("options", "copies"),
    [
        (CudaOptions(), True),
        (CudaOptions(async_copy=False), False),
        (CudaOptions(arch="sm_75"), False),  # cp.async exists from sm_80 on
    ],
)
def test_slices_are_copied_with_cp_async(
    options: CudaOptions, copies: bool, tmp_path: Path
) -> None:
    """A matmul's streamed slices reach shared memory by `cp.async`, waited
    for before each barrier, on sm_80 and later unless `async_copy=False`."""
    import numpy as np

    import tcdialect

    a = np.zeros((256, 256), np.float32)
    k = tcdialect.define(MATMUL, target="cuda", options=options)
    ptx = k.ir(a, a, stage="ptx")
    assert ("cp.async.ca.shared.global" in ptx) == copies
    assert ("cp.async.wait_group" in ptx) == copies
    if copies:
        body = entry(ptx, "matmul_k0")
        assert body.index("cp.async.wait_group") < body.index("bar.sync")
    if PTXAS is not None:
        arch = options.arch or "sm_90"
        result = ptxas(ptx, arch, tmp_path)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("arch", ARCHS)
def test_every_arch(arch: str, tmp_path: Path) -> None:
    ptx = ptx_text(llvm_stage(VECTOR_ADD), arch)
    version = PTX_FEATURES[arch].removeprefix("+ptx")
    assert f".version {version[0]}.{version[1]}" in ptx
    assert f".target {arch}" in ptx
    if PTXAS is None:
        return
    result = ptxas(ptx, arch, tmp_path)
    if "is not defined for option 'gpu-name'" in result.stderr:
        pytest.skip(f"this ptxas does not support {arch}")
    assert result.returncode == 0, result.stderr


def test_no_libdevice_needed_without_math(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert ".entry add_k0" in ptx_text(llvm_stage(VECTOR_ADD), "sm_90")


def test_missing_libdevice_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    with pytest.raises(TCError, match=r"libdevice not found at .*libdevice\.10\.bc"):
        ptx_text(llvm_stage(MATH), "sm_90")


def test_unknown_arch_is_an_error() -> None:
    with pytest.raises(TCError, match="unknown CUDA architecture 'sm_61'"):
        ptx_text(llvm_stage(VECTOR_ADD), "sm_61")


def test_device_code_must_be_at_the_llvm_stage() -> None:
    with pytest.raises(TCError, match=r"not at the llvm stage: 'gpu\.func'"):
        ptx_text(gpu_module(VECTOR_ADD), "sm_90")


def test_every_arch_has_a_ptx_version() -> None:
    assert set(PTX_FEATURES) == set(ARCHS)


def _math_kernel() -> str:
    """A kernel applying every math op of the `cuda` table to f32 and f64
    (integer ops to i32 and i64), each result stored at its own index."""
    lines: list[str] = []
    stores = 0

    def store(value: str, buffer: str, t: str) -> None:
        nonlocal stores
        lines.append(f"%at{stores} = arith.constant {stores} : index")
        lines.append(f"memref.store {value}, %{buffer}[%at{stores}] : memref<?x{t}>")
        stores += 1

    unary = ["absf", "sqrt", "rsqrt", "floor", "ceil", "trunc", "round", "roundeven"]
    unary += [n.removeprefix("math.") for n in libdevice.MATH if n not in _BINARY]
    for t, buf in (("f32", "F"), ("f64", "D")):
        for i, name in enumerate(unary):
            lines.append(f"%{t}_{i} = math.{name} %x_{t} : {t}")
            store(f"%{t}_{i}", buf, t)
        for name in ("atan2", "powf", "copysign"):
            lines.append(f"%{t}_{name} = math.{name} %x_{t}, %y_{t} : {t}")
            store(f"%{t}_{name}", buf, t)
        lines.append(f"%{t}_fma = math.fma %x_{t}, %y_{t}, %x_{t} : {t}")
        store(f"%{t}_fma", buf, t)
        lines.append(f"%{t}_fpowi = math.fpowi %x_{t}, %n_i32 : {t}, i32")
        store(f"%{t}_fpowi", buf, t)
    for t, buf in (("i32", "I"), ("i64", "L")):
        for name in ("absi", "ctlz", "cttz", "ctpop"):
            lines.append(f"%{t}_{name} = math.{name} %n_{t} : {t}")
            store(f"%{t}_{name}", buf, t)
    body = "\n      ".join(lines)
    return f"""
  gpu.module @math_kernels {{
    gpu.func @every_math_op(%F: memref<?xf32>, %D: memref<?xf64>, %I: memref<?xi32>, %L: memref<?xi64>) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %x_f32 = memref.load %F[%c0] : memref<?xf32>
      %y_f32 = memref.load %F[%c1] : memref<?xf32>
      %x_f64 = memref.load %D[%c0] : memref<?xf64>
      %y_f64 = memref.load %D[%c1] : memref<?xf64>
      %n_i32 = memref.load %I[%c0] : memref<?xi32>
      %n_i64 = memref.load %L[%c0] : memref<?xi64>
      {body}
      gpu.return
    }}
  }}
"""


_BINARY = frozenset({"math.atan2", "math.powf", "math.fpowi"})

# Compiles the gpu-stage module on stdin to PTX (in a child process: an
# intrinsic that NVPTX cannot lower ends the process).
_COMPILE = """
import sys
from xdsl.parser import Parser
from tcdialect.backend.cuda.device import llvm_stage_passes, ptx_text
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.backend.cuda.target import GENERIC_GPU
from tcdialect.pipeline import make_context, run_passes
module = Parser(make_context(), sys.stdin.read()).parse_module()
run_passes(make_context(), module, llvm_stage_passes(CudaOptions(), GENERIC_GPU))
sys.stdout.write(ptx_text(module, "sm_90"))
"""


def test_math_ops_are_libdevice_calls_or_native() -> None:
    # Any other math op would reach NVPTX as an intrinsic it may not lower.
    math_ops = {name for name in cuda_handlers() if name.startswith("math.")}
    assert math_ops <= set(libdevice.MATH) | libdevice.NVPTX_NATIVE


def test_every_math_op_compiles(tmp_path: Path) -> None:
    text = f"builtin.module attributes {{gpu.container_module}} {{{_math_kernel()}}}"
    result = subprocess.run(
        [sys.executable, "-c", _COMPILE],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert ".entry every_math_op(" in result.stdout
    if PTXAS is not None:
        done = ptxas(result.stdout, "sm_90", tmp_path)
        assert done.returncode == 0, done.stderr
