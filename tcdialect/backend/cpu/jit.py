"""llvm-dialect module → optimised host machine code in an MCJIT engine.

`compile_cpu(module)`:

1. translates the module (`tcdialect.backend.llvm.translate`) for the host
   triple and data layout;
2. marks every pointer parameter of every function *defined* in it `noalias`.
   This is the buffer contract of the runtime: the buffers passed to a
   compiled function never overlap (each tensor is its own allocation, and
   the pipeline never passes one buffer twice), so LLVM may vectorise loops
   over several buffers without run-time overlap checks;
3. links the runtime module (`RUNTIME_IR`): the thread-count global
   `@__tc_num_threads` and `@__tc_parallel_for`, which runs a team of threads
   through the process-wide `__tc_parallel_team` (`team_openmp_ir`: libgomp's
   `GOMP_parallel` when libgomp can be loaded, a sequential call otherwise;
   compiled once, so each module pays only for a small dispatcher);
4. verifies, optimises with LLVM's default `O<opt_level>` pipeline (loop and
   SLP vectorisation on) for the host CPU and its features (with AVX-512,
   512-bit vectors preferred over LLVM's 256-bit tuning), and JIT-compiles
   with MCJIT, keeping the object code MCJIT made.

`CpuModule.payload()` is that object code with what a loader needs (the
functions, the renamed ones, the external symbols); `load_cpu(payload)` links
it into a new MCJIT engine without the pipeline or LLVM's optimiser, in this
or another process (the compilation cache, `tcdialect.cache`). The object
code refers to the process-wide team runtime and to C library functions by
name: `load_cpu` sets up the team first and checks every external symbol
with the JIT's own lookup, and gives None (compile afresh) when one is
missing, since MCJIT would abort the process on it.

The LLVM set-up (native target, host CPU name and features, libgomp, the
team engine) happens once per process, on first use. One lock serialises
every use of LLVM in this module; compiled functions are called without it.

libgomp reads `GOMP_SPINCOUNT` when it is loaded: unless the environment sets
it (or `OMP_WAIT_POLICY`), we set `DEFAULT_GOMP_SPINCOUNT` (see there).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llvmlite import binding

from tcdialect.backend.cpu.object_code import undefined_symbols
from tcdialect.backend.cpu.payload import ThreadTeam, decode_payload, encode_payload
from tcdialect.diagnostics import TCError
from tcdialect.runtime.abi import (
    DEFAULT_GOMP_SPINCOUNT,
    LLVM_LOCK,
    NUM_THREADS_SYMBOL,
    PARALLEL_FOR_SYMBOL,
    PARALLEL_TEAM_SYMBOL,
)

if TYPE_CHECKING:
    from llvmlite import ir
    from xdsl.dialects.builtin import ModuleOp

JIT_NAME_PREFIX = "__tc_jit."
"""A defined function whose name is already a symbol of the process (`exp`,
`log10`, ...) is renamed `__tc_jit.<name>` before optimisation: LLVM lowers
intrinsics to C library calls by name (`llvm.log10.f64` → `log10`), which
would otherwise bind to the function itself. `CpuModule.address` takes the
original name."""

RUNTIME_IR = f"""
@{NUM_THREADS_SYMBOL} = global i32 1

declare void @{PARALLEL_TEAM_SYMBOL}(ptr, ptr, i64, i32)

define void @{PARALLEL_FOR_SYMBOL}(ptr %fn, ptr %ctx, i64 %n) noinline {{
entry:
  %some = icmp sgt i64 %n, 0
  br i1 %some, label %check, label %done
check:
  %threads = load i32, ptr @{NUM_THREADS_SYMBOL}
  %one.thread = icmp sle i32 %threads, 1
  %one.iteration = icmp eq i64 %n, 1
  %serial = or i1 %one.thread, %one.iteration
  br i1 %serial, label %sequential, label %parallel
sequential:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  br label %done
parallel:
  call void @{PARALLEL_TEAM_SYMBOL}(ptr %fn, ptr %ctx, i64 %n, i32 %threads)
  br label %done
done:
  ret void
}}
"""
"""The runtime module linked into every CPU module.

`void @__tc_parallel_for(ptr fn, ptr ctx, i64 n)` calls `fn(ctx, begin, end)`
(a `void(ptr, i64, i64)`) on disjoint chunks covering `[0, n)` and returns
when all are done; `n <= 0` calls nothing. With one thread (the module's
`@__tc_num_threads`, default 1) or one iteration it calls `fn(ctx, 0, n)`
directly; otherwise it hands over to the process-wide `__tc_parallel_team`
(below). It is `noinline`: inlined, it would let O3 inline the thunk and the
loop body on the sequential path as well, so every loop nest would be
optimised and compiled twice. It gets internal
linkage after linking, so it disappears from modules that do not use it.
"""

TEAM_CHUNKS_PER_THREAD = 8
"""`__tc_parallel_team` deals out chunks of `max(1, n // (8 * team))`
iterations."""
TEAM_MASTER_SPIN = 1 << 22
"""How long the calling thread polls for the others' last chunks before it
joins libgomp's barrier (where it would sleep after `GOMP_SPINCOUNT` polls and
need a wake-up): time-stamp counter ticks on x86 (about a millisecond), polls
elsewhere."""


def team_openmp_ir(x86: bool) -> str:
    """The libgomp team runtime (see `__tc_parallel_team` below); `x86`
    selects the `pause` spin-wait hint."""
    if x86:  # poll with `pause`, for TEAM_MASTER_SPIN ticks
        decls = (
            "declare void @llvm.x86.sse2.pause()\ndeclare i64 @llvm.readcyclecounter()"
        )
        start = "  %start = call i64 @llvm.readcyclecounter()\n"
        spent = (
            "  call void @llvm.x86.sse2.pause()\n"
            "  %now = call i64 @llvm.readcyclecounter()\n"
            "  %spent = sub i64 %now, %start\n"
        )
    else:  # TEAM_MASTER_SPIN polls
        decls = ""
        start = ""
        spent = "  %spent = add i64 %polls, 1\n"
    return f"""
declare void @GOMP_parallel(ptr, ptr, i32, i32)
declare i32 @omp_get_thread_num()
declare i64 @llvm.smin.i64(i64, i64)
declare i64 @llvm.smax.i64(i64, i64)
{decls}
%team = type {{ ptr, ptr, i64, i64, i64, i64 }}  ; fn, ctx, n, chunk, next, done

; Body of the OpenMP team: each thread takes chunks [b, min(b + chunk, n))
; from `next` until none is left, adding each chunk's size to `done`. Thread 0
; (the caller) then polls `done` until every iteration has run.
define internal void @__tc_parallel_chunk(ptr %data) {{
entry:
  %fn = load ptr, ptr %data
  %ctx.p = getelementptr inbounds %team, ptr %data, i32 0, i32 1
  %ctx = load ptr, ptr %ctx.p
  %n.p = getelementptr inbounds %team, ptr %data, i32 0, i32 2
  %n = load i64, ptr %n.p
  %chunk.p = getelementptr inbounds %team, ptr %data, i32 0, i32 3
  %chunk = load i64, ptr %chunk.p
  %next.p = getelementptr inbounds %team, ptr %data, i32 0, i32 4
  %done.p = getelementptr inbounds %team, ptr %data, i32 0, i32 5
  br label %take
take:
  %begin = atomicrmw add ptr %next.p, i64 %chunk monotonic
  %more = icmp slt i64 %begin, %n
  br i1 %more, label %run, label %ran
run:
  %end.0 = add i64 %begin, %chunk
  %end = call i64 @llvm.smin.i64(i64 %end.0, i64 %n)
  call void %fn(ptr %ctx, i64 %begin, i64 %end)
  %size = sub i64 %end, %begin
  %before = atomicrmw add ptr %done.p, i64 %size release
  br label %take
ran:
  %tid = call i32 @omp_get_thread_num()
  %caller = icmp eq i32 %tid, 0
  br i1 %caller, label %wait, label %exit
wait:
{start}  br label %poll
poll:
  %polls = phi i64 [ 0, %wait ], [ %spent, %again ]
  %done = load atomic i64, ptr %done.p acquire, align 8
  %all = icmp sge i64 %done, %n
  br i1 %all, label %exit, label %again
again:
{spent}  %enough = icmp uge i64 %spent, {TEAM_MASTER_SPIN}
  br i1 %enough, label %exit, label %poll
exit:
  ret void
}}

define void @{PARALLEL_TEAM_SYMBOL}(ptr %fn, ptr %ctx, i64 %n, i32 %threads) {{
entry:
  %threads.64 = sext i32 %threads to i64
  %team.64 = call i64 @llvm.smin.i64(i64 %threads.64, i64 %n)
  %team.32 = trunc i64 %team.64 to i32
  %parts = mul i64 %team.64, {TEAM_CHUNKS_PER_THREAD}
  %chunk.0 = udiv i64 %n, %parts
  %chunk = call i64 @llvm.smax.i64(i64 %chunk.0, i64 1)
  %data = alloca %team
  store ptr %fn, ptr %data
  %ctx.p = getelementptr inbounds %team, ptr %data, i32 0, i32 1
  store ptr %ctx, ptr %ctx.p
  %n.p = getelementptr inbounds %team, ptr %data, i32 0, i32 2
  store i64 %n, ptr %n.p
  %chunk.p = getelementptr inbounds %team, ptr %data, i32 0, i32 3
  store i64 %chunk, ptr %chunk.p
  %next.p = getelementptr inbounds %team, ptr %data, i32 0, i32 4
  store i64 0, ptr %next.p
  %done.p = getelementptr inbounds %team, ptr %data, i32 0, i32 5
  store i64 0, ptr %done.p
  call void @GOMP_parallel(ptr @__tc_parallel_chunk, ptr %data, i32 %team.32, i32 0)
  ret void
}}
"""


TEAM_SEQUENTIAL_IR = f"""
define void @{PARALLEL_TEAM_SYMBOL}(ptr %fn, ptr %ctx, i64 %n, i32 %threads) {{
entry:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  ret void
}}
"""
"""The team runtime: `void @__tc_parallel_team(ptr fn, ptr ctx, i64 n, i32 threads)`,
compiled once per process (its own engine, exported with `add_symbol`), for
`n >= 2`, `threads >= 2`. With libgomp (`team_openmp_ir`): `GOMP_parallel`
with a team of `min(threads, n)`, whose threads take chunks of
`max(1, n // (TEAM_CHUNKS_PER_THREAD * team))` iterations from a shared
counter until none is left (so a smaller team, e.g. inside another parallel
region, still covers `[0, n)`, and the caller, which starts at once, takes
more chunks while a sleeping worker wakes up); the caller then polls until
every chunk has run (at most `TEAM_MASTER_SPIN`) before it joins libgomp's
barrier, where it would sleep after `GOMP_SPINCOUNT` polls and wait tens of
microseconds for the last worker to wake it. Without (`TEAM_SEQUENTIAL_IR`):
`fn(ctx, 0, n)`.

Chunks dealt out on demand beat one contiguous chunk per thread because a
thread that starts late takes fewer (docs/perf/runtime.md).
"""


@dataclass
class _Host:
    """Process-wide LLVM state, made once (under `_LOCK`)."""

    target: binding.Target
    cpu: str
    features: str
    openmp: bool
    team_engine: binding.ExecutionEngine


_LOCK = LLVM_LOCK  # shared with the other LLVM users
_HOST: _Host | None = None


def host() -> _Host:
    """The process-wide LLVM state: native target, host CPU name and features."""
    return _host()


def _host() -> _Host:
    global _HOST
    with _LOCK:
        if _HOST is None:
            binding.initialize_native_target()
            binding.initialize_native_asmprinter()
            openmp = _load_libgomp()
            target = binding.Target.from_default_triple()
            cpu = binding.get_host_cpu_name()
            features = binding.get_host_cpu_features().flatten()
            if "+avx512f" in features.split(","):
                # LLVM tunes AVX-512 server CPUs to prefer 256-bit vectors;
                # register-tile's tiles are 512-bit there, and the loop
                # vectoriser should use the same width (docs/perf/runtime.md).
                features += ",-prefer-256-bit"
            tm = target.create_target_machine(
                cpu=cpu, features=features, opt=3, jit=True
            )
            x86 = tm.triple.startswith(("x86_64", "i386", "i686"))
            team = binding.parse_assembly(
                team_openmp_ir(x86) if openmp else TEAM_SEQUENTIAL_IR
            )
            team.triple = tm.triple
            team.data_layout = str(tm.target_data)
            team_engine = binding.create_mcjit_compiler(team, tm)
            team_engine.finalize_object()
            binding.add_symbol(
                PARALLEL_TEAM_SYMBOL,
                team_engine.get_function_address(PARALLEL_TEAM_SYMBOL),
            )
            _HOST = _Host(target, cpu, features, openmp, team_engine)
        return _HOST


def _load_libgomp() -> bool:
    """Load libgomp for the JIT's symbol lookup; False when it is not there."""
    name = ctypes.util.find_library("gomp")
    if name is None:
        return False
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", DEFAULT_GOMP_SPINCOUNT)
    try:
        binding.load_library_permanently(name)
    except RuntimeError:
        return False
    return bool(binding.address_of_symbol("GOMP_parallel"))


def have_openmp() -> bool:
    """Whether `__tc_parallel_for` runs on libgomp threads in this process."""
    return _host().openmp


def _target_machine(opt_level: int, *, jit: bool) -> binding.TargetMachine:
    host = _host()
    return host.target.create_target_machine(
        cpu=host.cpu,
        features=host.features,
        opt=opt_level,
        reloc="default",
        codemodel="jitdefault" if jit else "default",
        jit=jit,
    )


def _translated(module: ModuleOp, tm: binding.TargetMachine) -> ir.Module:
    """The llvmlite module of `module` for the host, pointer params `noalias`."""
    from llvmlite import ir

    from tcdialect.backend.llvm import to_llvmlite

    llvm_module = to_llvmlite(module, triple=tm.triple)
    llvm_module.triple = tm.triple
    llvm_module.data_layout = str(tm.target_data)
    for func in llvm_module.functions:
        if func.is_declaration:
            continue
        for arg in func.args:
            if isinstance(arg.type, ir.PointerType):
                arg.add_attribute("noalias")
    return llvm_module


def _optimised(
    module: ModuleOp, tm: binding.TargetMachine, opt_level: int
) -> tuple[binding.ModuleRef, dict[str, str]]:
    """Translate, link the runtime, verify and optimise (caller holds `_LOCK`).

    Also returns the functions renamed because their name is a symbol of the
    process (see `JIT_NAME_PREFIX`), by original name.
    """
    text = str(_translated(module, tm))
    try:
        llvm_mod = binding.parse_assembly(text)
        llvm_mod.link_in(binding.parse_assembly(RUNTIME_IR))
        llvm_mod.verify()
    except RuntimeError as err:
        raise TCError(f"invalid LLVM IR from the llvm stage: {err}") from None
    llvm_mod.get_function(PARALLEL_FOR_SYMBOL).linkage = "internal"
    renamed: dict[str, str] = {}
    for func in llvm_mod.functions:
        if not func.is_declaration and binding.address_of_symbol(func.name):
            renamed[func.name] = func.name = JIT_NAME_PREFIX + func.name
    pto = binding.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    pto.loop_interleaving = opt_level >= 2
    pto.loop_unrolling = opt_level >= 2
    builder = binding.create_pass_builder(tm, pto)
    builder.getModulePassManager().run(llvm_mod, builder)
    return llvm_mod, renamed


@dataclass(eq=False)
class CpuModule(ThreadTeam):
    """Host code of one module, alive as long as this object.

    `address(name)` is the entry address of a function defined in the module
    (call it through ctypes with the llvm-stage ABI); `set_num_threads(n)`
    sets the team size of this module's `__tc_parallel_for` (default 1).
    `llvm_ir` is the optimised IR (runtime included), "" for a module loaded
    from object code (`load_cpu`); `asm` its host assembly, made on first
    access. `object_code` is the object file MCJIT linked (None if it made
    none), `payload()` the bytes `load_cpu` takes.
    """

    llvm_ir: str
    opt_level: int
    _engine: binding.ExecutionEngine = field(repr=False)
    _functions: frozenset[str] = field(repr=False)
    _renamed: dict[str, str] = field(repr=False)
    _num_threads: Any = field(repr=False)
    _asm: str | None = field(default=None, repr=False)
    object_code: bytes | None = field(default=None, repr=False)

    @property
    def functions(self) -> frozenset[str]:
        """Names of the functions defined in the module (runtime included),
        as in the source module (also when renamed, see `JIT_NAME_PREFIX`)."""
        return self._functions

    def address(self, name: str) -> int:
        """Entry address of function `name`; `KeyError` if it is not defined."""
        if name not in self._functions:
            raise KeyError(
                f"no function '{name}' in the compiled module (functions with "
                "internal or private linkage may have been inlined and removed)"
            )
        with _LOCK:
            return self._engine.get_function_address(self._renamed.get(name, name))

    @property
    def asm(self) -> str:
        """Host assembly of the optimised module (`TCError` for a module
        loaded from object code, which has no IR)."""
        if self._asm is None:
            if not self.llvm_ir:
                raise TCError("a kernel loaded from the cache has no LLVM IR")
            with _LOCK:
                tm = _target_machine(self.opt_level, jit=False)
                self._asm = tm.emit_assembly(binding.parse_assembly(self.llvm_ir))
        return self._asm

    def payload(self) -> bytes | None:
        """The object code, a shared library of the same code when the
        system's C compiler driver can link one (`shared_object`), and what
        the loaders need (`tcdialect.backend.cpu.payload`); None without
        object code or when its external symbols cannot be read (a format
        other than 64-bit ELF)."""
        if self.object_code is None:
            return None
        undefined = undefined_symbols(self.object_code)
        if undefined is None:
            return None
        return encode_payload(
            self.opt_level,
            self._functions,
            self._renamed,
            undefined,
            self.object_code,
            shared_object(self.llvm_ir, self.opt_level) if self.llvm_ir else None,
        )


LINK_TIMEOUT_S = 60.0
"""How long `shared_object` waits for the C compiler driver."""


def shared_object(llvm_ir: str, opt_level: int) -> bytes | None:
    """The optimised module `llvm_ir` and the team runtime compiled for the
    host as position-independent code and linked by the C compiler driver
    (`$CC`, else `cc`) into a shared library (`-Bsymbolic`, every symbol
    resolved at link time: libgomp and libm); None when there is no driver
    or it fails (the object file then serves alone)."""
    import shutil
    import subprocess
    import tempfile

    driver = os.environ.get("CC") or shutil.which("cc")
    if not driver:
        return None
    with _LOCK:
        host = _host()
        tm = host.target.create_target_machine(
            cpu=host.cpu, features=host.features, opt=opt_level, reloc="pic"
        )
        x86 = tm.triple.startswith(("x86_64", "i386", "i686"))
        objects: list[bytes] = []
        for text in (
            llvm_ir,
            team_openmp_ir(x86) if host.openmp else TEAM_SEQUENTIAL_IR,
        ):
            module = binding.parse_assembly(text)
            module.triple = tm.triple
            module.data_layout = str(tm.target_data)
            objects.append(tm.emit_object(module))
    with tempfile.TemporaryDirectory(prefix="tcdialect-link-") as folder:
        paths = []
        for i, obj in enumerate(objects):
            paths.append(os.path.join(folder, f"{i}.o"))
            with open(paths[-1], "wb") as f:
                f.write(obj)
        out = os.path.join(folder, "kernel.so")
        command = [driver, "-shared", "-o", out, *paths]
        command += ["-Wl,-Bsymbolic", "-Wl,--no-undefined"]
        command += [*(["-lgomp"] if host.openmp else []), "-lm"]
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=LINK_TIMEOUT_S, check=False
            )
            if done.returncode != 0:
                return None
            with open(out, "rb") as f:
                return f.read()
        except (OSError, subprocess.SubprocessError):
            return None


def compile_cpu(module: ModuleOp, *, opt_level: int = 3) -> CpuModule:
    """Compile an llvm-stage module to host code (see the module docstring).

    Raises `TCError` when the module cannot be translated or is not valid
    LLVM IR.
    """
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be 0..3, got {opt_level}")
    with _LOCK:
        tm = _target_machine(opt_level, jit=True)
        llvm_mod, renamed = _optimised(module, tm, opt_level)
        llvm_ir = str(llvm_mod)
        original = {new: old for old, new in renamed.items()}
        functions = frozenset(
            original.get(str(f.name), str(f.name))
            for f in llvm_mod.functions
            if not f.is_declaration
        )
        engine = binding.create_mcjit_compiler(llvm_mod, tm)
        objects: list[bytes] = []
        engine.set_object_cache(lambda _module, obj: objects.append(bytes(obj)))
        engine.finalize_object()
        num_threads = ctypes.c_int32.from_address(
            engine.get_global_value_address(NUM_THREADS_SYMBOL)
        )
    return CpuModule(
        llvm_ir,
        opt_level,
        engine,
        functions,
        renamed,
        num_threads,
        object_code=objects[0] if len(objects) == 1 else None,
    )


def load_cpu(payload: bytes) -> CpuModule | None:
    """The module of `CpuModule.payload()`'s object file, linked into this
    process without compiling; None when `payload` is not such bytes or an
    external symbol it needs is not in this process (see the module
    docstring)."""
    parts = decode_payload(payload)
    if parts is None:
        return None
    opt_level, functions, renamed = parts.opt_level, parts.functions, parts.renamed
    undefined, obj = parts.undefined, parts.object_code
    with _LOCK:
        _host()  # the team runtime's symbol, which the code calls
        if not all(binding.address_of_symbol(name) for name in undefined):
            return None
        tm = _target_machine(opt_level, jit=True)
        empty = binding.parse_assembly("")
        empty.triple = tm.triple
        empty.data_layout = str(tm.target_data)
        engine = binding.create_mcjit_compiler(empty, tm)
        try:
            engine.add_object_file(binding.ObjectFileRef.from_data(obj))
        except RuntimeError:
            return None
        engine.finalize_object()
        address = engine.get_global_value_address(NUM_THREADS_SYMBOL)
        if not address:
            return None
        num_threads = ctypes.c_int32.from_address(address)
    return CpuModule(
        "", opt_level, engine, functions, renamed, num_threads, object_code=obj
    )


def jit_llvm_ir(text: str) -> binding.ExecutionEngine:
    """An MCJIT engine for hand-written LLVM IR `text`, for the host CPU.

    The text is verified and code-generated as it is: no runtime module and
    no optimisation pipeline (for probes whose instructions must stay as
    written, such as bench/peak.py). Invalid IR raises `TCError`.
    """
    with _LOCK:
        tm = _target_machine(3, jit=True)
        try:
            module = binding.parse_assembly(text)
            module.triple = tm.triple
            module.data_layout = str(tm.target_data)
            module.verify()
        except RuntimeError as err:
            raise TCError(f"invalid LLVM IR: {err}") from None
        engine = binding.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        return engine


def llvm_ir_text(module: ModuleOp) -> str:
    """The `llvm-ir` stage: the unoptimised LLVM IR `compile_cpu` starts from.

    Host triple and data layout, `noalias` pointer parameters; the runtime
    module is not linked in.
    """
    with _LOCK:
        return str(_translated(module, _target_machine(3, jit=False)))


def host_asm(module: ModuleOp, *, opt_level: int = 3) -> str:
    """The `asm` stage: host assembly of the module after `O<opt_level>`."""
    with _LOCK:
        tm = _target_machine(opt_level, jit=False)
        return tm.emit_assembly(_optimised(module, tm, opt_level)[0])
