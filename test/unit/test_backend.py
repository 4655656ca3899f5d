"""The llvmlite backend: translation of hand-written llvm-dialect modules to LLVM
IR (every op kind `convert-to-llvm` emits), and the CPU JIT (`compile_cpu`)
called through ctypes on NumPy buffers, including `__tc_parallel_for`.
"""

import ctypes
import math
import threading

import numpy as np
import pytest
from llvmlite import binding
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.llvm import LLVM
from xdsl.parser import Parser

from tcdialect.backend.cpu.jit import (
    TEAM_CHUNKS_PER_THREAD,
    CpuModule,
    compile_cpu,
    have_openmp,
    host_asm,
    llvm_ir_text,
    team_openmp_ir,
)
from tcdialect.backend.llvm import translate
from tcdialect.diagnostics import TCError

PTR = ctypes.c_void_p
I64 = ctypes.c_int64


def parse(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(LLVM)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def verify_ir(text: str) -> None:
    binding.parse_assembly(text).verify()


def function(cm: CpuModule, name: str, restype: object, *argtypes: object):
    return ctypes.CFUNCTYPE(restype, *argtypes)(cm.address(name))


def buf(a: np.ndarray) -> int:
    return a.ctypes.data


# --------------------------------------------------------------------------
# Translation

ALL_OPS = """
builtin.module {
  llvm.mlir.global internal @counter(0 : i32) {addr_space = 0 : i32} : i32
  llvm.mlir.global external @defined(7 : i64) {addr_space = 0 : i32} : i64
  llvm.mlir.global external @declared() {addr_space = 0 : i32} : i32
  llvm.mlir.global internal constant @table(dense<[1.0, 2.0]> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @expf(f32) -> f32
  llvm.func @__tc_parallel_for(!llvm.ptr, !llvm.ptr, i64)
  llvm.func internal @body__thunk(%ctx: !llvm.ptr, %b: i64, %e: i64) {
    llvm.return
  }
  llvm.func @all(%a: !llvm.ptr, %n: i64, %x: f32, %d: f64) -> f32 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %one = llvm.mlir.constant(1 : i32) : i32
    %t = llvm.mlir.constant(true) : i1
    %tenth = llvm.mlir.constant(0.1 : f32) : f32
    %inf = llvm.mlir.constant(0x7F800000 : f32) : f32
    %vec = llvm.mlir.constant(dense<1.5> : vector<8xf32>) : vector<8xf32>
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    %p = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %p : !llvm.ptr -> f32
    %e = llvm.call @expf(%v) : (f32) -> f32
    llvm.store %e, %p : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    %ctx = llvm.alloca %one x !llvm.struct<(ptr, i64)> : (i32) -> !llvm.ptr
    llvm.store %a, %ctx : !llvm.ptr, !llvm.ptr
    %f1 = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i64)>
    llvm.store %n, %f1 : i64, !llvm.ptr
    %fn = llvm.mlir.addressof @body__thunk : !llvm.ptr
    llvm.call @__tc_parallel_for(%fn, %ctx, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %g = llvm.mlir.addressof @counter : !llvm.ptr
    %gv = llvm.load %g : !llvm.ptr -> i32
    %tb = llvm.mlir.addressof @table : !llvm.ptr
    %t1 = llvm.getelementptr inbounds %tb[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x f32>
    %bytes = llvm.mul %n, %c1 : i64
    %m = llvm.call @malloc(%bytes) : (i64) -> !llvm.ptr
    llvm.call @free(%m) : (!llvm.ptr) -> ()
    %z = llvm.mlir.zero : !llvm.ptr
    %u = llvm.mlir.undef : !llvm.struct<(f32, i64)>
    %u1 = llvm.insertvalue %x, %u[0] : !llvm.struct<(f32, i64)>
    %x1 = llvm.extractvalue %u1[0] : !llvm.struct<(f32, i64)>
    %s = llvm.fadd %x1, %tenth : f32
    %neg = llvm.fneg %s : f32
    %cmp = llvm.fcmp "olt" %neg, %inf : f32
    %cmp2 = llvm.fcmp "_true" %neg, %inf : f32
    %cmp3 = llvm.fcmp "uno" %neg, %inf : f32
    %sel = llvm.select %cmp, %neg, %s : i1, f32
    %sat = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%sel) : (f32) -> i32
    %fl = llvm.sitofp %sat : i32 to f32
    %mn = llvm.call_intrinsic "llvm.minimum.f32"(%fl, %x) : (f32, f32) -> f32
    %lg = llvm.call_intrinsic "llvm.log10.f64"(%d) : (f64) -> f64
    %lgf = llvm.fptrunc %lg : f64 to f32
    %fma = llvm.intr.fma(%mn, %lgf, %x) : (f32, f32, f32) -> f32
    %mx = llvm.intr.maxnum(%fma, %x) : (f32, f32) -> f32
    %mxd = llvm.intr.maxnum(%d, %d) : (f64, f64) -> f64
    %vm = llvm.intr.minnum(%vec, %vec) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    %sq = llvm.intr.sqrt(%mx) : (f32) -> f32
    %ext = llvm.zext %t : i1 to i64
    %tr = llvm.trunc %ext : i64 to i32
    %sx = llvm.sext %tr : i32 to i64
    %pi = llvm.ptrtoint %a : !llvm.ptr to i64
    %ip = llvm.inttoptr %pi : i64 to !llvm.ptr
    %ic = llvm.icmp "ult" %sx, %pi : i64
    llvm.return %sq : f32
  }
}
"""


def test_translate_covers_the_ops_of_convert_to_llvm():
    text = translate(parse(ALL_OPS))
    verify_ir(text)
    # Opaque pointers throughout: no typed-pointer spelling, no bitcasts.
    assert "*" not in text.replace("; ", "")
    assert "bitcast" not in text
    assert 'call ccc void @"__tc_parallel_for"(ptr @"body__thunk"' in text
    assert 'getelementptr {ptr, i64}, ptr %"ctx", i32 0, i32 1' in text
    assert '@"llvm.maxnum.f32"' in text and '@"llvm.maxnum.f64"' in text
    assert '@"llvm.minnum.v8f32"' in text
    assert "fcmp true" in text and "fcmp uno" in text
    assert '@"defined" = global i64 7' in text
    assert '@"declared" = external global i32' in text
    assert 'define internal void @"body__thunk"' in text


def test_constant_size_alloca_is_hoisted_to_the_entry_block():
    text = translate(parse(ALL_OPS))
    entry = text.split('define float @"all"')[1].split("loop")[0]
    assert "alloca {ptr, i64}" in entry


def test_translate_uses_the_given_triple_unless_the_module_has_one():
    module = parse("builtin.module {\n}")
    assert 'triple = "nvptx64-nvidia-cuda"' in translate(
        module, triple="nvptx64-nvidia-cuda"
    )
    module.attributes["llvm.target_triple"] = parse(
        'builtin.module attributes {llvm.target_triple = "x86_64-pc-linux-gnu"} {\n}'
    ).attributes["llvm.target_triple"]
    assert 'triple = "x86_64-pc-linux-gnu"' in translate(module, triple="other")


NVPTX_KERNEL = """
builtin.module {
  llvm.func @relu(%p: !llvm.ptr<1>, %i: i64) attributes {gpu.kernel} {
    %q = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %x = llvm.load %q : !llvm.ptr<1> -> f32
    %zero = llvm.mlir.constant(0.0 : f32) : f32
    %tid = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
    %y = llvm.intr.maxnum(%x, %zero) : (f32, f32) -> f32
    llvm.store %y, %q : f32, !llvm.ptr<1>
    llvm.return
  }
}
"""


def test_nvptx_kernel_calling_convention_and_addrspace_gep():
    text = translate(parse(NVPTX_KERNEL), triple="nvptx64-nvidia-cuda")
    verify_ir(text)
    assert 'define ptx_kernel void @"relu"' in text
    assert "getelementptr inbounds float, ptr addrspace(1)" in text
    assert "bitcast" not in text


def test_translation_errors_are_tc_errors():
    module = parse("builtin.module {\n  builtin.module {\n  }\n}")
    with pytest.raises(TCError, match=r"cannot translate 'builtin\.module'"):
        translate(module)


# --------------------------------------------------------------------------
# CPU JIT

ADD = """
builtin.module {
  llvm.func @add(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %n: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    %pa = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %pb = llvm.getelementptr inbounds %b[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %x = llvm.load %pa : !llvm.ptr -> f32
    %y = llvm.load %pb : !llvm.ptr -> f32
    %s = llvm.fadd %x, %y : f32
    %pc = llvm.getelementptr inbounds %c[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %s, %pc : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
}
"""


def test_add_loop_is_vectorised_and_correct():
    cm = compile_cpu(parse(ADD))
    add = function(cm, "add", None, PTR, PTR, PTR, I64)
    for n in (0, 1, 7, 1000):
        a = np.arange(n, dtype=np.float32)
        b = np.full(n, 0.5, dtype=np.float32)
        c = np.zeros(n + 1, dtype=np.float32)
        add(buf(a), buf(b), buf(c), n)
        np.testing.assert_array_equal(c[:n], a + b)
        assert c[n] == 0
    assert "noalias" in cm.llvm_ir
    assert "vaddps" in cm.asm
    features = binding.get_host_cpu_features().flatten().split(",")
    if "+avx512f" in features:  # the backend prefers 512-bit vectors there
        assert "zmm" in cm.asm
    elif "+avx" in features:
        assert "ymm" in cm.asm


EXP = """
builtin.module {
  llvm.func @expf(f32) -> f32
  llvm.func @exp_all(%a: !llvm.ptr, %out: !llvm.ptr, %n: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    %pa = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %x = llvm.load %pa : !llvm.ptr -> f32
    %y = llvm.call @expf(%x) : (f32) -> f32
    %po = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %y, %po : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
}
"""


def test_loop_calling_expf():
    cm = compile_cpu(parse(EXP))
    exp_all = function(cm, "exp_all", None, PTR, PTR, I64)
    a = np.linspace(-5, 5, 101, dtype=np.float32)
    out = np.zeros_like(a)
    exp_all(buf(a), buf(out), a.size)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


PARALLEL = """
builtin.module {
  llvm.func @__tc_parallel_for(!llvm.ptr, !llvm.ptr, i64)
  llvm.func @omp_get_thread_num() -> i32
  llvm.func internal @count_par0(%begin: i64, %end: i64, %out: !llvm.ptr, %tid: !llvm.ptr) {
    %one = llvm.mlir.constant(1 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %t = llvm.call @omp_get_thread_num() : () -> i32
    %t1 = llvm.add %t, %one : i32
    llvm.br ^loop(%begin : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %end : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    %p = llvm.getelementptr inbounds %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %v = llvm.load %p : !llvm.ptr -> i32
    %v1 = llvm.add %v, %one : i32
    llvm.store %v1, %p : i32, !llvm.ptr
    %q = llvm.getelementptr inbounds %tid[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.store %t1, %q : i32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
  llvm.func internal @count_par0__thunk(%ctx: !llvm.ptr, %begin: i64, %end: i64) {
    %out = llvm.load %ctx : !llvm.ptr -> !llvm.ptr
    %tp = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr)>
    %tid = llvm.load %tp : !llvm.ptr -> !llvm.ptr
    llvm.call @count_par0(%begin, %end, %out, %tid) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @count(%out: !llvm.ptr, %tid: !llvm.ptr, %n: i64) {
    %one = llvm.mlir.constant(1 : i32) : i32
    %ctx = llvm.alloca %one x !llvm.struct<(ptr, ptr)> : (i32) -> !llvm.ptr
    llvm.store %out, %ctx : !llvm.ptr, !llvm.ptr
    %tp = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr)>
    llvm.store %tid, %tp : !llvm.ptr, !llvm.ptr
    %fn = llvm.mlir.addressof @count_par0__thunk : !llvm.ptr
    llvm.call @__tc_parallel_for(%fn, %ctx, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.return
  }
}
"""


@pytest.fixture(scope="module")
def parallel_module() -> CpuModule:
    if not have_openmp():
        # The test module calls omp_get_thread_num itself.
        pytest.skip("libgomp is not available")
    return compile_cpu(parse(PARALLEL))


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000])
def test_parallel_for_runs_every_iteration_once(
    parallel_module: CpuModule, threads: int, n: int
):
    cm = parallel_module
    cm.set_num_threads(threads)
    count = function(cm, "count", None, PTR, PTR, I64)
    out = np.zeros(n + 1, dtype=np.int32)
    tid = np.zeros(n + 1, dtype=np.int32)
    count(buf(out), buf(tid), n)
    np.testing.assert_array_equal(out[:n], 1)
    assert out[n] == 0 and tid[n] == 0
    # Chunks of max(1, n // (8 * team)) iterations, each run by one thread of
    # the team (libgomp may give a smaller team than asked for, e.g. under
    # OMP_THREAD_LIMIT).
    team = max(1, min(threads, n))
    assert set(tid[:n].tolist()) <= set(range(1, team + 1))
    chunk = max(1, n // (TEAM_CHUNKS_PER_THREAD * team) if team > 1 else n)
    for begin in range(0, n, chunk):
        assert len(set(tid[begin : min(begin + chunk, n)].tolist())) == 1


@pytest.mark.parametrize("x86", [True, False])
def test_team_runtime_is_valid_ir_for_every_target(x86: bool):
    # The host runs one variant; the other (a plain poll count instead of
    # `pause` and the time-stamp counter) must still be well-formed.
    module = binding.parse_assembly(team_openmp_ir(x86))
    module.verify()
    text = str(module)
    assert ("llvm.x86.sse2.pause" in text) == x86
    assert ("llvm.readcyclecounter" in text) == x86


def test_set_num_threads(parallel_module: CpuModule):
    cm = parallel_module
    assert cm.num_threads >= 1
    cm.set_num_threads(0)
    assert cm.num_threads == 1
    cm.set_num_threads(2)
    assert cm.num_threads == 2
    # Each module has its own thread count.
    other = compile_cpu(parse(PARALLEL))
    assert other.num_threads == 1
    cm.set_num_threads(1)


def test_parallel_for_from_several_python_threads(parallel_module: CpuModule):
    cm = parallel_module
    cm.set_num_threads(2)
    count = function(cm, "count", None, PTR, PTR, I64)
    n = 10_000
    outs = [np.zeros(n, dtype=np.int32) for _ in range(4)]
    tids = [np.zeros(n, dtype=np.int32) for _ in range(4)]

    def run(k: int) -> None:
        for _ in range(20):
            count(buf(outs[k]), buf(tids[k]), n)

    workers = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for out in outs:
        np.testing.assert_array_equal(out, 20)
    cm.set_num_threads(1)


SCALARS = """
builtin.module {
  llvm.func @to_i32(%x: f32) -> i32 {
    %r = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%x) : (f32) -> i32
    llvm.return %r : i32
  }
  llvm.func @minimum(%x: f32, %y: f32) -> f32 {
    %r = llvm.call_intrinsic "llvm.minimum.f32"(%x, %y) : (f32, f32) -> f32
    llvm.return %r : f32
  }
  llvm.func @log10(%x: f64) -> f64 {
    %r = llvm.call_intrinsic "llvm.log10.f64"(%x) : (f64) -> f64
    llvm.return %r : f64
  }
  llvm.func @fma(%a: f32, %b: f32, %c: f32) -> f32 {
    %r = llvm.intr.fma(%a, %b, %c) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
  llvm.func @maxnum(%a: f64, %b: f64) -> f64 {
    %r = llvm.intr.maxnum(%a, %b) : (f64, f64) -> f64
    llvm.return %r : f64
  }
  llvm.func @floor_pow(%a: f32, %b: f32) -> f32 {
    %f = llvm.intr.floor(%a) : (f32) -> f32
    %r = llvm.intr.pow(%f, %b) : (f32, f32) -> f32
    llvm.return %r : f32
  }
  llvm.func @casts(%x: i32) -> f64 {
    %w = llvm.sext %x : i32 to i64
    %t = llvm.trunc %w : i64 to i8
    %z = llvm.zext %t : i8 to i64
    %f = llvm.sitofp %z : i64 to f32
    %d = llvm.fpext %f : f32 to f64
    llvm.return %d : f64
  }
  llvm.func @narrow(%x: f64) -> f32 {
    %f = llvm.fptrunc %x : f64 to f32
    llvm.return %f : f32
  }
  llvm.func @select_max(%x: f32, %y: f32) -> f32 {
    %c = llvm.fcmp "ogt" %x, %y : f32
    %r = llvm.select %c, %x, %y : i1, f32
    llvm.return %r : f32
  }
  llvm.func @is_nan(%x: f32) -> i1 {
    %c = llvm.fcmp "uno" %x, %x : f32
    llvm.return %c : i1
  }
}
"""


@pytest.fixture(scope="module")
def scalars() -> CpuModule:
    return compile_cpu(parse(SCALARS))


F32, F64, I32 = ctypes.c_float, ctypes.c_double, ctypes.c_int32


def test_saturating_float_to_int(scalars: CpuModule):
    to_i32 = function(scalars, "to_i32", I32, F32)
    assert to_i32(-3.7) == -3
    assert to_i32(1e10) == 2**31 - 1
    assert to_i32(-1e10) == -(2**31)
    assert to_i32(math.nan) == 0


def test_minimum_propagates_nan_and_orders_zeros(scalars: CpuModule):
    minimum = function(scalars, "minimum", F32, F32, F32)
    assert minimum(1.0, 2.0) == 1.0
    assert math.isnan(minimum(math.nan, 1.0))
    assert math.copysign(1.0, minimum(0.0, -0.0)) == -1.0


def test_math_intrinsics(scalars: CpuModule):
    # `log10` is also libm's name, which `llvm.log10.f64` is lowered to: the
    # backend renames our function so the call does not bind to itself.
    assert "log10" in scalars.functions
    assert function(scalars, "log10", F64, F64)(1000.0) == pytest.approx(3.0)
    assert function(scalars, "fma", F32, F32, F32, F32)(2.0, 3.0, 1.0) == 7.0
    assert function(scalars, "maxnum", F64, F64, F64)(math.nan, 2.0) == 2.0
    assert function(scalars, "floor_pow", F32, F32, F32)(2.7, 3.0) == 8.0


def test_casts_and_compares(scalars: CpuModule):
    casts = function(scalars, "casts", F64, I32)
    assert casts(300) == 44.0  # 300 wraps to 44 through i8
    assert casts(-1) == 255.0
    assert function(scalars, "narrow", F32, F64)(0.1) == np.float32(0.1)
    select_max = function(scalars, "select_max", F32, F32, F32)
    assert select_max(1.0, 2.0) == 2.0 and select_max(3.0, 2.0) == 3.0
    is_nan = function(scalars, "is_nan", ctypes.c_bool, F32)
    assert is_nan(math.nan) and not is_nan(1.0)


def test_address_of_unknown_function(scalars: CpuModule):
    with pytest.raises(KeyError, match="no function 'nope'"):
        scalars.address("nope")


def test_stage_texts():
    module = parse(ADD)
    ir_text = llvm_ir_text(module)
    verify_ir(ir_text)
    assert "noalias" in ir_text and "target datalayout" in ir_text
    assert "add:" in host_asm(module)


def test_invalid_llvm_ir_is_a_tc_error():
    # Returns nothing from a function that should return an f32.
    bad = parse("builtin.module {\n  llvm.func @f() -> f32 {\n    llvm.return\n  }\n}")
    with pytest.raises(TCError, match="invalid LLVM IR"):
        compile_cpu(bad)


def test_compiling_from_several_threads():
    module_text = ADD
    results: list[CpuModule] = []

    def run() -> None:
        results.append(compile_cpu(parse(module_text)))

    workers = [threading.Thread(target=run) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 3
    for cm in results:
        add = function(cm, "add", None, PTR, PTR, PTR, I64)
        a = np.ones(9, dtype=np.float32)
        c = np.zeros(9, dtype=np.float32)
        add(buf(a), buf(a), buf(c), 9)
        np.testing.assert_array_equal(c, 2)
