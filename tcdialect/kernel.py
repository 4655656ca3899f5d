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
compiled code in memory (also across `Kernel`s of the same source, entry,
target and options, in the process-wide cache of `tcdialect.compiled` that
`clear_cache()` empties). With `specialize=True` options, the default, sizes
are compiled in as constants; with `specialize=False` one compiled function
serves every shape.

The kernel knows no target: it looks `target` up in the registry
(`tcdialect.backend.registry`) and compiles, emits and launches through
that `Backend`; argument checks are `tcdialect.arguments`'.

Every failure a user can cause raises `TCError`: bad source at `define`, bad
arguments at call time (count, dtype, rank, inconsistent sizes, literal
extents, non-contiguous arrays, bad `out=`), each naming the argument; an
out-of-bounds data-dependent read after the call; and internal pass failures,
naming the pass.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, ModuleOp
from xdsl.dialects.func import FuncOp

from tcdialect.arguments import (
    check_outputs,
    check_temporaries,
    inputs_by_name,
    numpy_dtype,
    prepare_inputs,
    signature_of,
)
from tcdialect.backend.base import CallPlan
from tcdialect.backend.registry import get_backend
from tcdialect.compiled import KERNELS, CompiledKernel, clear_cache
from tcdialect.diagnostics import OutOfBoundsRead, TCError
from tcdialect.dialects.tc import DefOp
from tcdialect.pipeline import (
    COMMON_STAGES,
    Lowering,
    format_sizes,
    lower,
    make_context,
    run_passes,
)

Array = np.ndarray[Any, Any]


def define(
    source: str,
    entry: str | None = None,
    *,
    target: str = "cpu",
    options: Any = None,
    filename: str = "<string>",
) -> Kernel:
    """Parse and check TC `source` and return a callable `Kernel` for `entry`.

    `entry` names the definition to run; it may be omitted when the source
    has exactly one. `target` names a registered target (`cpu`); `options`
    are an instance of that target's options class, None for its defaults.
    Errors in the source or a bad target or options raise `TCError` here,
    not at call time.
    """
    return Kernel(source, entry, target=target, options=options, filename=filename)


@dataclass
class _Bound:
    """What a shape key fixes: sizes and output shapes and dtypes."""

    sizes: dict[str, int]
    out_shapes: list[tuple[int, ...]]


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

    def __init__(
        self,
        source: str,
        entry: str | None = None,
        *,
        target: str = "cpu",
        options: Any = None,
        filename: str = "<string>",
    ):
        from tcdialect.frontend import analyze, lower_def

        if target == "cuda" and os.environ.get("TCDIALECT_CUDA_SIM") == "1":
            target = "cuda-sim"  # as numba's NUMBA_ENABLE_CUDASIM
        self.backend = get_backend(target)
        self.options = self.backend.check_options(options)
        self.source = source
        self.target = target
        program = analyze(source, filename)
        self.checked = program.get(entry)
        self.entry = self.checked.name
        self.defop: DefOp = lower_def(self.checked)
        self.out_dtypes = [numpy_dtype(t.element_type) for t in self.defop.output_types]
        self.out_names = list(self.defop.output_names)
        self.out_bfloat16 = tuple(
            isinstance(t.element_type, BFloat16Type) for t in self.defop.output_types
        )
        self._specialize = self.backend.specialize(self.options)
        #: Scalar inputs that drive sizes: their values are part of every key.
        self._scalar_sizes = self.defop.scalar_size_names
        #: Whether a call uses options the tuner stored for its sizes
        #: (`tcdialect.tune.tuned_options`): only when none were given.
        self._tunable = options is None
        self._key_prefix = (source, self.entry, target, self.options)
        self._bound: dict[tuple[Any, ...], _Bound] = {}
        self._compiled: dict[tuple[Any, ...], CompiledKernel] = {}
        self._plans: dict[tuple[Any, ...], CallPlan] = {}
        #: The plan of the last call, whose stub the next call tries first.
        self._last: CallPlan | None = None
        self._seen_generation = KERNELS.generation
        if "torch" in sys.modules:
            # PyTorch is in use: ready its custom ops before torch.compile
            # traces a call of this kernel (tcdialect.torch_ops)
            import tcdialect.torch_ops  # noqa: F401

    # Identity (as object's), spelled out: a Kernel is a constant argument of
    # functions torch.compile does not trace (`tcdialect.torch_ops`).
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<tcdialect.Kernel {self.entry} target={self.target} {self.options}>"

    @cached_property
    def lowering(self) -> Lowering:
        """The target, options and machine this kernel is compiled for
        (the machine is read on first use, not at `define`)."""
        return Lowering(self.backend, self.options, self.backend.info())

    @property
    def stages(self) -> tuple[str, ...]:
        """Every stage `ir` can show for this kernel's target."""
        return (*COMMON_STAGES, *self.backend.stages)

    # ------------------------------------------------------------ inputs

    def _shape_key(self, inputs: Sequence[Any]) -> tuple[Any, ...] | None:
        if self._scalar_sizes:
            return None  # the key needs their values: see `_prepare`
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
        arrays, sizes = prepare_inputs(
            self.defop, inputs, device=self.backend.device_arrays
        )
        self.checked.check_sizes(sizes)
        check_temporaries(self.entry, self.checked.tensors, sizes)
        # (NumPy and device arrays of the same shapes and dtypes share a key)
        key = tuple(k for a in arrays for k in (a.shape, a.dtype))
        key += tuple((n, sizes[n]) for n in self._scalar_sizes)
        bound = _Bound(sizes, self.checked.output_extents(sizes))
        self._bound[key] = bound
        return arrays, key, bound

    def _not_contiguous(self, i: int) -> None:
        names = self.defop.input_names
        raise TCError(
            f"input '{names[i]}' (argument {i}) of @{self.entry} is not a contiguous "
            f"(C-order) array; pass np.ascontiguousarray({names[i]})"
        )

    def _outputs(self, bound: _Bound, out: Any, inputs: Sequence[Any]) -> list[Any]:
        if out is None:
            return self.backend.new_outputs(
                bound.out_shapes, self.out_dtypes, inputs, self.out_bfloat16
            )
        return check_outputs(
            self.defop,
            out,
            bound.out_shapes,
            self.out_dtypes,
            inputs,
            device=self.backend.device_arrays,
        )

    # ------------------------------------------------------------ compile

    def _cache_key(self, key: tuple[Any, ...], options: Any) -> tuple[Any, ...]:
        prefix = (*self._key_prefix, options, self.lowering.info)
        if self._specialize:
            return (*prefix, key)
        # Generic code depends only on ranks and dtypes.
        return (*prefix, tuple(k if not isinstance(k, tuple) else len(k) for k in key))

    def _get_compiled(self, key: tuple[Any, ...], bound: _Bound) -> CompiledKernel:
        if self._seen_generation != KERNELS.generation:
            self._compiled.clear()
            self._plans.clear()
            self._last = None
            self._seen_generation = KERNELS.generation
        compiled = self._compiled.get(key)
        if compiled is None:
            options = self._options_for(bound.sizes)
            compiled = KERNELS.get_or_compile(
                self._cache_key(key, options),
                lambda: self._compile(bound.sizes, options),
            )
            self._compiled[key] = compiled
        return compiled

    def _options_for(self, sizes: Mapping[str, int]) -> Any:
        """The options to compile `sizes` with: the tuner's for these sizes
        when the cache holds them and none were given, else `self.options`."""
        if self._tunable and self._specialize:
            from tcdialect.tune import tuned_options

            tuned = tuned_options(self, sizes)
            if tuned is not None:
                return tuned
        return self.options

    def autotune(self, *inputs: Any, **settings: Any) -> Any:
        """Search this target's options for the sizes of `inputs` and store
        the best in the cache, where later calls find them (see
        `tcdialect.tune.autotune` for `settings`); returns the best options."""
        from tcdialect.tune import autotune

        best = autotune(self, *inputs, **settings)
        self._compiled.clear()
        self._plans.clear()
        self._last = None
        return best

    def _tc_module(self) -> ModuleOp:
        return ModuleOp([self.defop.clone()])

    def _disk_slot(
        self, sizes: Mapping[str, int], options: Any
    ) -> tuple[Any, dict[str, Any]] | None:
        """The persistent cache's store and the key of the code for `sizes`;
        None when the cache is off (`TCDIALECT_CACHE=0`)."""
        from tcdialect.cache import CacheStore, kernel_key

        store = CacheStore.from_env()
        if store is None:
            return None
        return store, kernel_key(
            defop=self.defop,
            entry=self.entry,
            dtypes=[str(t.element_type) for t in self.defop.input_types],
            sizes=sizes if self._specialize else None,
            backend=self.backend,
            info=self.lowering.info,
            options=options,
        )

    def _compile(self, sizes: Mapping[str, int], options: Any) -> CompiledKernel:
        """Compiled code for `sizes`: from the persistent cache
        (`tcdialect.cache`, unless `TCDIALECT_CACHE=0`) when it holds it,
        else the pipeline runs and the code is stored there."""
        from tcdialect import cache

        start = time.perf_counter()
        slot = self._disk_slot(sizes, options)
        if slot is not None:
            found = cache.lookup(*slot, self.backend, self.entry, options)
            if found is not None:
                launcher, signature = found
                return CompiledKernel(
                    launcher,
                    signature,
                    dict(sizes) if self._specialize else None,
                    time.perf_counter() - start,
                )
        cache.STATS.compiles += 1
        lowering = dataclasses.replace(self.lowering, options=options)
        ctx = make_context()
        module = self._tc_module()
        spec = format_sizes(sizes) if self._specialize else ""
        run_passes(ctx, module, lowering.passes_to("affine", spec))
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
        stages = lowering.ir_stages
        for stage in stages[stages.index("affine") + 1 :]:
            run_passes(ctx, module, lowering.stage_passes(stage))
        launcher = self.backend.compile(module, self.entry, signature, options)
        if slot is not None:
            cache.remember(*slot, self.backend, launcher, signature)
        return CompiledKernel(
            launcher,
            signature,
            dict(sizes) if self._specialize else None,
            time.perf_counter() - start,
        )

    def compile(self, *inputs: Any) -> CompiledKernel:
        """Compile for the shapes and dtypes of `inputs` (or fetch from the cache)."""
        _, key, bound = self._prepare(inputs)
        return self._get_compiled(key, bound)

    # ------------------------------------------------------------ call

    def __call__(
        self, *inputs: Any, out: Any = None, stream: Any = None, **named: Any
    ) -> Array | tuple[Array, ...]:
        """Run on `inputs` (NumPy arrays; on the `cuda` target also arrays in
        CUDA memory, see `tcdialect.arrays`) into new outputs or `out=`.

        `stream` (on the `cuda` target only) is the CUDA stream to launch
        on: a PyTorch or CuPy stream, a pycuda `Stream`, an object with
        `__cuda_stream__`, or a raw `CUstream` handle as an int; by default,
        PyTorch's current stream when an input is a PyTorch tensor, else
        CuPy's for CuPy arrays, else the default stream.

        Inputs may also be passed by keyword, with their declared names
        (``k(I, W, S=2)``).
        """
        try:
            return self._invoke(inputs, out, stream, named)
        except OutOfBoundsRead as err:
            raise self._located(err, inputs, named) from None

    def _located(
        self, err: OutOfBoundsRead, inputs: Sequence[Any], named: Mapping[str, Any]
    ) -> TCError:
        """`err` with the reference interpreter's account of the first bad
        read (the index tensor's element and value, the valid range), when
        the inputs are host arrays (it runs the definition again)."""
        from tcdialect import reference

        args = list(inputs_by_name(self.defop, inputs, named) if named else inputs)
        if not all(isinstance(a, np.ndarray | np.generic | int | float) for a in args):
            return err
        try:
            reference.run(self.defop, None, args)
        except TCError as found:
            detail = str(found).removeprefix("error: ")
            if detail.startswith(f"read of tensor '{err.tensor}' out of bounds"):
                return TCError(
                    f"{detail}; the read was skipped, so the outputs are invalid"
                )
        return err

    def _invoke(
        self,
        inputs: tuple[Any, ...],
        out: Any,
        stream: Any,
        named: Mapping[str, Any],
    ) -> Array | tuple[Array, ...]:
        if named:
            inputs = tuple(inputs_by_name(self.defop, inputs, named))
        for x in inputs:
            if type(x) is not np.ndarray and type(x).__module__.startswith("torch"):
                from tcdialect.torch_ops import torch_call

                result = torch_call(self, inputs, out, stream)
                if result is not None:
                    return result
                break
        last = self._last if not self._scalar_sizes else None
        if self.backend.device_arrays:
            # the last call's plan checks these arguments and launches
            if (
                last is not None
                and self._seen_generation == KERNELS.generation
                and len(inputs) == last.in_count
            ):
                outputs = last.call(inputs, out, stream)
                if outputs is not None:
                    return _returned(out, outputs)
            last = None
        elif stream is not None:
            raise TCError(
                f"stream= is for GPU targets; target '{self.target}' runs on the host"
            )
        if last is not None and self._seen_generation == KERNELS.generation:
            # the shapes of the last call again: its stub checks and calls
            stub = last.stub
            if stub is not None and len(inputs) == last.in_count:
                kind = type(out)
                if kind is tuple or kind is list:
                    if len(out) == len(last.out_shapes) and not stub(*inputs, *out):
                        return out
                elif out is None:
                    outputs = [
                        np.empty(shape, dtype=dt)
                        for shape, dt in zip(last.out_shapes, last.out_dtypes)
                    ]
                    if not stub(*inputs, *outputs):
                        return _returned(None, outputs)
                elif kind is np.ndarray:
                    if len(last.out_shapes) == 1 and not stub(*inputs, out):
                        return out
        plan = self._plans.get(self._plan_key(inputs))  # type: ignore[arg-type]
        if plan is None or self._seen_generation != KERNELS.generation:
            return self._call(inputs, out, stream)
        outputs = plan.call(inputs, out, stream)
        if outputs is None:
            return self._call(inputs, out, stream)
        self._last = plan
        plan.ran()
        return _returned(out, outputs)

    def _plan_key(self, inputs: Sequence[Any]) -> tuple[Any, ...] | None:
        """The key of the plan to try for `inputs`: the shape key of NumPy
        arrays; on a target with `device_arrays`, also (type, shape, dtype)
        of other array objects, such as PyTorch tensors (the plan's `call`
        checks the rest)."""
        key = self._shape_key(inputs)
        if key is not None or not self.backend.device_arrays or self._scalar_sizes:
            return key
        parts: list[Any] = []
        for x in inputs:
            shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
            if shape is None or dtype is None:
                return None
            parts.append((type(x), tuple(shape), dtype))
        return tuple(parts)

    def _call(
        self, inputs: Sequence[Any], out: Any, stream: Any = None
    ) -> Array | tuple[Array, ...]:
        """The general call: every check, precise errors, then the plan for the key."""
        arrays, key, bound = self._prepare(inputs)
        compiled = self._compiled.get(key)
        if compiled is None or self._seen_generation != KERNELS.generation:
            compiled = self._get_compiled(key, bound)
        outputs = self._outputs(bound, out, arrays)
        plan = self._plans.get(key)
        if plan is None:
            plan = compiled.plans.get(key)
            if plan is None:
                plan = compiled.plans.setdefault(
                    key,
                    compiled.launcher.plan(
                        arrays, bound.out_shapes, self.out_dtypes, bound.sizes
                    ),
                )
            self._plans[key] = plan
        plan.run(arrays, outputs, stream)
        raw_key = self._plan_key(inputs)
        if raw_key is not None and raw_key != key:
            self._plans[raw_key] = plan  # the next such call takes the fast path
        self._last = plan
        plan.ran()
        return _returned(out, [getattr(o, "owner", o) for o in outputs])

    # ------------------------------------------------------------ inspect

    def ir(self, *inputs: Any, stage: str = "tc", generic: bool = False) -> str:
        """The textual IR of `stage` (docs/pipeline.md) for these inputs.

        With inputs (and `specialize`), sizes are bound as for a call; without
        inputs the IR is generic in every size. `generic=True` prints the
        generic op form (what `mlir-opt` reads).
        """
        import io

        from xdsl.printer import Printer

        stages = self.stages
        if stage not in stages:
            raise TCError(
                f"unknown stage '{stage}'; the stages are {', '.join(stages)}"
            )
        sizes: dict[str, int] = {}
        if inputs:
            _, _, bound = self._prepare(inputs)
            if self._specialize:
                sizes = bound.sizes
        lowering = self.lowering
        ir_stages = lowering.ir_stages
        ir_stage = stage if stage in ir_stages else ir_stages[-1]
        module = lower(self._tc_module(), ir_stage, sizes, make_context(), lowering)
        if stage not in ir_stages:
            return self.backend.emit(stage, module, self.options)
        buf = io.StringIO()
        Printer(stream=buf, print_generic_format=generic).print_op(module)
        return buf.getvalue() + "\n"


__all__ = ["CompiledKernel", "Kernel", "clear_cache", "define"]
