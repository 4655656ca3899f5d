"""The library API: `define` a TC definition, call the `Kernel` on NumPy arrays.

::

    mm = tcdialect.define('''
    def matmul(float(M, K) A, float(K, N) B) -> (C) {
        C(m, n) +=! A(m, r_k) * B(r_k, n)
    }''')
    C = mm(A, B)                       # compiles for these shapes, then runs
    mm(A, B, out=C)                    # into a preallocated output
    print(mm.ir(A, B, stage="loops"))  # any stage of docs/pipeline.md

A `Kernel` compiles on the first call per (input shapes, dtypes) and keeps the
compiled code in memory (also across `Kernel`s of the same source, entry and
options, in a process-wide cache that `clear_cache()` empties). With
`CpuOptions(specialize=True)`, the default, sizes are compiled in as
constants; with `specialize=False` one compiled function serves every shape.

Every failure a user can cause raises `TCError`: bad source at `define`, bad
arguments at call time (count, dtype, rank, inconsistent sizes, literal
extents, non-contiguous arrays, bad `out=`), each naming the argument; an
out-of-bounds data-dependent read after the call; and internal pass failures,
naming the pass.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from tcdialect.poly.schedule import ScheduleOptions
from tcdialect.dialects.tc import DefOp
from tcdialect.pipeline import (
    IR_STAGES,
    STAGES,
    format_sizes,
    lower,
    make_context,
    passes_to,
    run_passes,
)
from tcdialect.reference import numpy_dtype, prepare_inputs
from tcdialect.runtime.cpu import (
    NDARRAY_LAYOUT,
    CpuLauncher,
    FixedCall,
    Signature,
    data_pointer,
    signature_of,
)

Array = np.ndarray[Any, Any]


def _default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 62


@dataclass(frozen=True)
class CpuOptions:
    """How to compile for the CPU. Frozen and hashable: part of the cache key.

    threads: worker threads for parallel loops (None: every core available
        to this process).
    specialize: compile sizes in as constants, once per shape (fastest code);
        False compiles one generic function for every shape.
    fusion: the scheduler's fusion strategy, "max" (fuse whatever isl can),
        "preserve3coincident" (fuse unless outer parallelism is lost) or
        "min" (one loop nest per statement).
    tile: tile sizes of each nest's outermost band (0 = do not tile that
        loop, so (0,) turns tiling off); None chooses them from the problem.
    schedule: False skips the isl scheduler (loops in the order the
        definition gives them).
    register_tile: False leaves reductions out of vector register tiles
        (the `register-tile` pass; vector width from the host).
    """

    threads: int | None = None
    specialize: bool = True
    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    schedule: bool = True
    register_tile: bool = True

    def __post_init__(self) -> None:
        from tcdialect.poly.schedule import ScheduleOptions

        # validates fusion and tile; the tile as a tuple of ints
        object.__setattr__(self, "tile", ScheduleOptions(self.fusion, self.tile).tile)
        if self.threads is not None and (
            not isinstance(self.threads, int) or self.threads < 1
        ):
            raise TCError(
                f"CpuOptions.threads must be a positive int, not {self.threads!r}"
            )

    @property
    def schedule_options(self) -> ScheduleOptions | bool:
        """What the `scheduled` stage runs with (False: no rescheduling)."""
        from tcdialect.poly.schedule import ScheduleOptions

        if not self.schedule:
            return False
        return ScheduleOptions(self.fusion, self.tile, threads=self.num_threads)

    @property
    def num_threads(self) -> int:
        return self.threads if self.threads is not None else _default_threads()


@dataclass
class CompiledKernel:
    """One definition compiled for one shape key: the launcher and its metadata."""

    launcher: CpuLauncher
    signature: Signature
    #: Bound sizes when specialised (else None: sizes come from each call).
    sizes: dict[str, int] | None
    compile_seconds: float
    #: The call plans made for it, by shape key (shared by every `Kernel`
    #: that finds this compiled code in the cache).
    plans: dict[tuple[Any, ...], _Plan] = field(default_factory=dict, repr=False)


_CACHE: dict[tuple[Any, ...], CompiledKernel] = {}
_CACHE_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every compiled kernel (the next call of any `Kernel` recompiles)."""
    with _CACHE_LOCK:
        _CACHE.clear()
    Kernel._generation += 1


def define(
    source: str,
    entry: str | None = None,
    *,
    target: str = "cpu",
    options: CpuOptions | None = None,
    filename: str = "<string>",
) -> Kernel:
    """Parse and check TC `source` and return a callable `Kernel` for `entry`.

    `entry` names the definition to run; it may be omitted when the source
    has exactly one. Errors in the source raise `TCError` here, not at call time.
    """
    return Kernel(source, entry, target=target, options=options, filename=filename)


@dataclass
class _Bound:
    """What a shape key fixes: sizes and output shapes and dtypes."""

    sizes: dict[str, int]
    out_shapes: list[tuple[int, ...]]


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
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
class _Plan:
    """A call for one shape key with every check but the per-array ones done.

    `Kernel.__call__` takes it when the inputs and outputs have the canonical
    C-order strides (a sufficient test of contiguity): it checks each array's
    type, shape, dtype, strides and writeability, tests overlaps on address
    ranges and makes the call, without the general path's helpers
    (`prepare_inputs`, `np.may_share_memory`, the launcher's walk of the
    signature). Measured with the caches flushed before each call (bench/'s
    method), 2 threads: a one-row kernel 0.260 -> 0.225 ms, 1 thread
    0.094 -> 0.079 ms. Anything the checks do not accept takes the general
    path, which raises the precise error or handles the case.

    From its second run on, a plan has a `stub` that makes the same checks
    and the call in host code (`tcdialect.backend.call_stub`), taking the
    ndarray objects; a call tries the stub of the kernel's last plan first.
    Compiling a stub takes ~3 ms, so shapes seen once (a generic kernel fed
    ever new shapes) never pay for one. No stub where NumPy's object layout
    is unknown (`NDARRAY_LAYOUT`) or the kernel reports checked reads through
    an error flag. With the caches flushed before each call, 2 threads: a
    64-element kernel 46 -> 16 µs, `tbmm_500x26x72x26` 0.25 -> 0.20 ms; warm,
    the 64-element call 3.2 -> 0.8 µs.
    """

    call: FixedCall
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
    runs: int = 0
    stub: Callable[..., int] | None = None
    #: Why the stub could not be compiled (then no stub is tried again).
    stub_error: str | None = None

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
            or NDARRAY_LAYOUT is None
            or self.call.error_slot is not None
        ):
            return
        from tcdialect.backend.call_stub import StubArray, compile_call_stub

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
            self.stub = compile_call_stub(
                self.entry, self.call.template, self.call.slots, specs, NDARRAY_LAYOUT
            )
        except TCError as err:
            self.stub_error = str(err)
            warnings.warn(
                f"tcdialect: internal error: no call stub ({err}); "
                "calls of these shapes take the Python path",
                RuntimeWarning,
                stacklevel=3,
            )


def _returned(out: Any, outputs: list[Array]) -> Array | tuple[Array, ...]:
    """What a call returns: `out` as given (the same tuple or list object, as
    NumPy's ufuncs return their `out`), else the output or a tuple of them."""
    if out is not None:
        # a list `out` comes back as that list: the annotation says tuple
        return (
            cast(tuple[Array, ...], out)
            if isinstance(out, tuple | list)
            else outputs[0]
        )
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


class Kernel:
    """A TC definition, compiled per input shapes on first call."""

    _generation = 0

    def __init__(
        self,
        source: str,
        entry: str | None = None,
        *,
        target: str = "cpu",
        options: CpuOptions | None = None,
        filename: str = "<string>",
    ):
        from tcdialect.frontend import analyze, lower_def

        if target != "cpu":
            raise TCError(
                f"target '{target}' is not available yet; the targets are: cpu"
            )
        if options is None:
            options = CpuOptions()
        if not isinstance(options, CpuOptions):
            raise TCError(
                f"options must be a tcdialect.CpuOptions, not {type(options).__name__}"
            )
        self.source = source
        self.target = target
        self.options = options
        program = analyze(source, filename)
        self.checked = program.get(entry)
        self.entry = self.checked.name
        self.defop: DefOp = lower_def(self.checked)
        self.out_dtypes = [numpy_dtype(t.element_type) for t in self.defop.output_types]
        self.out_names = list(self.defop.output_names)
        self._key_prefix = (source, self.entry, target, options)
        self._bound: dict[tuple[Any, ...], _Bound] = {}
        self._compiled: dict[tuple[Any, ...], CompiledKernel] = {}
        self._plans: dict[tuple[Any, ...], _Plan] = {}
        #: The plan of the last call, whose stub the next call tries first.
        self._last: _Plan | None = None
        self._seen_generation = Kernel._generation

    def __repr__(self) -> str:
        return f"<tcdialect.Kernel {self.entry} target={self.target} {self.options}>"

    # ------------------------------------------------------------ inputs

    def _shape_key(self, inputs: Sequence[Any]) -> tuple[Any, ...] | None:
        key: list[Any] = []
        for x in inputs:
            if type(x) is not np.ndarray:
                return None
            key.append(x.shape)
            key.append(x.dtype)
        return tuple(key)

    def _prepare(
        self, inputs: Sequence[Any]
    ) -> tuple[list[Array], tuple[Any, ...], _Bound]:
        """Check `inputs`; return them as arrays, their shape key and the bound sizes."""
        key = self._shape_key(inputs)
        bound = self._bound.get(key) if key is not None else None
        if bound is not None:
            arrays = list(inputs)
            for i, a in enumerate(arrays):
                if not a.flags.c_contiguous:
                    self._not_contiguous(i)
            return arrays, key, bound  # type: ignore[return-value]
        for i, x in enumerate(inputs):
            if isinstance(x, np.ndarray) and not x.flags.c_contiguous:
                self._not_contiguous(i)
        arrays, sizes = prepare_inputs(self.defop, inputs)
        self.checked.check_sizes(sizes)
        self._check_temporaries(sizes)
        key = self._shape_key(arrays)
        assert key is not None
        bound = _Bound(sizes, self.checked.output_extents(sizes))
        self._bound[key] = bound
        return arrays, key, bound

    def _check_temporaries(self, sizes: Mapping[str, int]) -> None:
        """Refuse sizes whose temporaries cannot fit in this machine's memory.

        Compiled code allocates temporaries (and copies of targets a statement
        reads at other positions) with `malloc`; asking for more than the
        machine has must be a `TCError` here, not a failed allocation there.
        """
        from tcdialect.frontend.ir_gen import element_type

        total, biggest = 0, ("", 0)
        for t in self.checked.tensors.values():
            if t.kind == "input" or t.extents is None or t.elem is None:
                continue
            count = math.prod(max(0, e.evaluate(sizes)) for e in t.extents)
            nbytes = count * numpy_dtype(element_type(t.elem)).itemsize
            biggest = max(biggest, (t.name, nbytes), key=lambda x: x[1])
            if t.kind == "temp":
                total += nbytes
        total += biggest[1]  # room for one snapshot copy
        if total > _physical_memory():
            gib = 1 << 30
            raise TCError(
                f"@{self.entry} needs {total / gib:.1f} GiB of temporaries and "
                f"outputs for these sizes ({', '.join(f'{k}={v}' for k, v in sizes.items())})"
                f"; this machine has {_physical_memory() / gib:.1f} GiB"
            )

    def _not_contiguous(self, i: int) -> None:
        names = self.defop.input_names
        raise TCError(
            f"input '{names[i]}' (argument {i}) of @{self.entry} is not a contiguous "
            f"(C-order) array; pass np.ascontiguousarray({names[i]})"
        )

    def _outputs(self, bound: _Bound, out: Any, inputs: Sequence[Array]) -> list[Array]:
        if out is None:
            return [
                np.empty(shape, dtype=dt)
                for shape, dt in zip(bound.out_shapes, self.out_dtypes)
            ]
        outs = list(out) if isinstance(out, tuple | list) else [out]
        n = len(self.out_names)
        if len(outs) != n:
            raise TCError(
                f"out= of @{self.entry} must give {n} array{'s' if n != 1 else ''} "
                f"({', '.join(self.out_names)}) but gives {len(outs)}"
            )
        for i, (o, shape, dt) in enumerate(
            zip(outs, bound.out_shapes, self.out_dtypes)
        ):
            if type(o) is not np.ndarray:
                self._bad_output(
                    i, f"expected a NumPy array but got {type(o).__name__}"
                )
            if o.shape != shape:
                self._bad_output(i, f"expected shape {shape} but got {o.shape}")
            if o.dtype != dt:
                self._bad_output(i, f"expected {dt} but got {o.dtype}")
            flags = o.flags
            if not flags.c_contiguous or not flags.writeable:
                self._bad_output(i, "must be a writeable contiguous (C-order) array")
            for other in (*inputs, *outs[:i]):
                if o.size and other.size and np.may_share_memory(o, other):
                    self._bad_output(i, "overlaps another argument of the call")
        return outs

    def _bad_output(self, i: int, problem: str) -> NoReturn:
        name = self.out_names[i]
        raise TCError(f"output '{name}' (out[{i}]) of @{self.entry}: {problem}")

    # ------------------------------------------------------------ compile

    def _cache_key(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.options.specialize:
            return (*self._key_prefix, key)
        # Generic code depends only on ranks and dtypes.
        return (
            *self._key_prefix,
            tuple(k if not isinstance(k, tuple) else len(k) for k in key),
        )

    def _get_compiled(self, key: tuple[Any, ...], bound: _Bound) -> CompiledKernel:
        if self._seen_generation != Kernel._generation:
            self._compiled.clear()
            self._plans.clear()
            self._last = None
            self._seen_generation = Kernel._generation
        compiled = self._compiled.get(key)
        if compiled is not None:
            return compiled
        ckey = self._cache_key(key)
        with _CACHE_LOCK:
            compiled = _CACHE.get(ckey)
        if compiled is None:
            compiled = self._compile(bound.sizes)
            with _CACHE_LOCK:
                compiled = _CACHE.setdefault(ckey, compiled)
        self._compiled[key] = compiled
        return compiled

    def _tc_module(self) -> ModuleOp:
        return ModuleOp([self.defop.clone()])

    def _compile(self, sizes: Mapping[str, int]) -> CompiledKernel:
        import time

        from tcdialect.backend.cpu import compile_cpu

        start = time.perf_counter()
        ctx = make_context()
        module = self._tc_module()
        spec = format_sizes(sizes) if self.options.specialize else ""
        run_passes(ctx, module, passes_to("affine", spec))
        func = next(
            (
                op
                for op in module.ops
                if isinstance(op, FuncOp) and op.sym_name.data == self.entry
            ),
            None,
        )
        if func is None:
            raise TCError(
                f"internal error: no function @{self.entry} after convert-tc-to-affine"
            )
        signature = signature_of(func)
        from tcdialect.pipeline import stage_passes

        schedule = self.options.schedule_options
        for stage in ("scheduled", "loops", "llvm"):
            passes = stage_passes(
                stage, schedule=schedule, register_tile=self.options.register_tile
            )
            run_passes(ctx, module, passes)
        cpu = compile_cpu(module)
        cpu.set_num_threads(self.options.num_threads)
        launcher = CpuLauncher(cpu.address(self.entry), signature, owner=cpu)
        return CompiledKernel(
            launcher,
            signature,
            dict(sizes) if self.options.specialize else None,
            time.perf_counter() - start,
        )

    def compile(self, *inputs: Any) -> CompiledKernel:
        """Compile for the shapes and dtypes of `inputs` (or fetch from the cache)."""
        _, key, bound = self._prepare(inputs)
        return self._get_compiled(key, bound)

    # ------------------------------------------------------------ call

    def __call__(self, *inputs: Any, out: Any = None) -> Array | tuple[Array, ...]:
        last = self._last
        if last is not None and self._seen_generation == Kernel._generation:
            # the shapes of the last call again: its stub checks and calls
            stub = last.stub
            if len(inputs) == len(last.in_nbytes) and stub is not None:
                kind = type(out)
                if kind is tuple or kind is list:
                    if len(out) == len(last.out_nbytes) and not stub(*inputs, *out):
                        return out
                elif out is None:
                    outputs = [
                        np.empty(shape, dtype=dt)
                        for shape, dt in zip(last.out_shapes, last.out_dtypes)
                    ]
                    if not stub(*inputs, *outputs):
                        return _returned(None, outputs)
                elif kind is np.ndarray:
                    if len(last.out_nbytes) == 1 and not stub(*inputs, out):
                        return out
        plan = self._plans.get(self._shape_key(inputs))  # type: ignore[arg-type]
        if plan is None or self._seen_generation != Kernel._generation:
            return self._call(inputs, out)
        for x, strides in zip(inputs, plan.in_strides):
            if x.strides != strides:
                return self._call(inputs, out)
        pointers = [data_pointer(x) for x in inputs]
        if out is None:
            outputs = [
                np.empty(shape, dtype=dt)
                for shape, dt in zip(plan.out_shapes, plan.out_dtypes)
            ]
        else:
            outputs = list(out) if isinstance(out, tuple | list) else [out]
            if len(outputs) != len(plan.out_shapes):
                return self._call(inputs, out)
            ends = [p + n for p, n in zip(pointers, plan.in_nbytes) if n]
            starts = [p for p, n in zip(pointers, plan.in_nbytes) if n]
            for o, shape, dt, strides, n in zip(
                outputs,
                plan.out_shapes,
                plan.out_dtypes,
                plan.out_strides,
                plan.out_nbytes,
            ):
                if (
                    type(o) is not np.ndarray
                    or o.shape != shape
                    or o.dtype != dt
                    or o.strides != strides
                    or not o.flags.writeable
                ):
                    return self._call(inputs, out)
                p = data_pointer(o)
                if n:
                    for start, end in zip(starts, ends):
                        if p < end and start < p + n:
                            return self._call(inputs, out)  # overlap: the error
                    starts.append(p)
                    ends.append(p + n)
                pointers.append(p)
        if out is None:
            pointers += [data_pointer(o) for o in outputs]
        plan.call.run(pointers)
        self._last = plan
        plan.ran()
        return _returned(out, outputs)

    def _call(self, inputs: Sequence[Any], out: Any) -> Array | tuple[Array, ...]:
        """The general call: every check, precise errors, then the plan for the key."""
        arrays, key, bound = self._prepare(inputs)
        compiled = self._compiled.get(key)
        if compiled is None or self._seen_generation != Kernel._generation:
            compiled = self._get_compiled(key, bound)
        outputs = self._outputs(bound, out, arrays)
        plan = self._plans.get(key)
        if plan is None:
            plan = compiled.plans.get(key)
            if plan is None:
                plan = compiled.plans.setdefault(
                    key, self._plan(compiled, arrays, bound)
                )
            self._plans[key] = plan
        plan.call.run([data_pointer(a) for a in (*arrays, *outputs)])
        self._last = plan
        plan.ran()
        return _returned(out, outputs)

    def _plan(
        self, compiled: CompiledKernel, arrays: Sequence[Array], bound: _Bound
    ) -> _Plan:
        dtypes = tuple(np.dtype(dt) for dt in self.out_dtypes)
        shapes = tuple(tuple(s) for s in bound.out_shapes)
        call = compiled.launcher.fixed(
            [a.shape for a in arrays], bound.out_shapes, bound.sizes
        )
        return _Plan(
            call,
            compiled.launcher.address,
            tuple(a.dtype for a in arrays),
            tuple(a.shape for a in arrays),
            tuple(_c_strides(a.shape, a.itemsize) for a in arrays),
            tuple(a.nbytes for a in arrays),
            shapes,
            dtypes,
            tuple(_c_strides(s, dt.itemsize) for s, dt in zip(shapes, dtypes)),
            tuple(math.prod(s) * dt.itemsize for s, dt in zip(shapes, dtypes)),
        )

    # ------------------------------------------------------------ inspect

    def ir(self, *inputs: Any, stage: str = "tc", generic: bool = False) -> str:
        """The textual IR of `stage` (docs/pipeline.md) for these inputs.

        With inputs (and `specialize`), sizes are bound as for a call; without
        inputs the IR is generic in every size. `generic=True` prints the
        generic op form (what `mlir-opt` reads).
        """
        from xdsl.printer import Printer

        if stage not in STAGES:
            raise TCError(
                f"unknown stage '{stage}'; the stages are {', '.join(STAGES)}"
            )
        sizes: dict[str, int] = {}
        if inputs:
            _, _, bound = self._prepare(inputs)
            if self.options.specialize:
                sizes = bound.sizes
        ir_stage = stage if stage in IR_STAGES else "llvm"
        module = lower(
            self._tc_module(),
            ir_stage,
            sizes,
            make_context(),
            self.options.schedule_options,
            self.options.register_tile,
        )
        if stage == "llvm-ir":
            from tcdialect.backend.cpu import llvm_ir_text

            return llvm_ir_text(module)
        if stage == "asm":
            from tcdialect.backend.cpu import host_asm

            return host_asm(module)
        import io

        buf = io.StringIO()
        Printer(stream=buf, print_generic_format=generic).print_op(module)
        return buf.getvalue() + "\n"


__all__ = ["CompiledKernel", "CpuOptions", "Kernel", "clear_cache", "define"]
