"""The library API: `define` a TC definition, call the `Kernel` on NumPy arrays.

::

    mm = tcdialect.define('''
    def matmul(float(M, K) A, float(K, N) B) -> (C) {
        C(m, n) +=! A(m, r_k) * B(r_k, n)
    }''')
    C = mm(A, B)                       # compiles for these shapes, then runs
    mm(A, B, out=C)                    # into a preallocated output
    print(mm.ir(A, B, stage="loops"))  # any stage of docs/pipeline.md
    texts = mm.dump(A, B)              # every stage, from one pipeline run

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from tcdialect.backend.registry import get_backend
from tcdialect.compiled import KERNELS, CompiledKernel, clear_cache
from tcdialect.diagnostics import (
    Diagnostic,
    OutOfBoundsAccess,
    OutOfBoundsRead,
    Span,
    TCError,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from tcdialect.backend.base import CallPlan
    from tcdialect.cache.quick import Interface, QuickStart
    from tcdialect.dialects.tc import DefOp
    from tcdialect.frontend.sema import CheckedDef
    from tcdialect.pipeline import Lowering

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
    """A TC definition, compiled per input shapes on first call.

    `checked` (the frontend's checked definition) and `defop` (its `tc.def`)
    are made at `define`, except when the persistent cache's quick-start
    records (`tcdialect.cache.quick`) show that the frontend accepted this
    very source before: then on first use, and a call whose compiled code
    the cache holds runs without them.
    """

    checked: CheckedDef
    defop: DefOp
    #: Whether calls may use the cache's quick-start records (a kernel whose
    #: definition is not its source's, such as a derived one, may not).
    quick_start: ClassVar[bool] = True

    def __init__(
        self,
        source: str,
        entry: str | None = None,
        *,
        target: str = "cpu",
        options: Any = None,
        filename: str = "<string>",
    ):
        if target == "cuda" and os.environ.get("TCDIALECT_CUDA_SIM") == "1":
            target = "cuda-sim"  # as numba's NUMBA_ENABLE_CUDASIM
        self.backend = get_backend(target)
        self.options = self.backend.check_options(options)
        if not isinstance(source, str):
            self._frontend(source, entry, filename)  # (raises the TCError)
        self.source = source
        self.target = target
        self._filename = filename
        self._quick = self._quick_start(source, entry, options is None)
        interface = self._quick.interface() if self._quick is not None else None
        if interface is None:
            interface = self._frontend(source, entry, filename)
        self.entry = interface.entry
        if self._quick is not None:
            self._quick.resolved(self.entry)
        self.out_dtypes = [np.dtype(d) for d in interface.out_dtypes]
        self.out_names = list(interface.outputs)
        self.out_bfloat16 = interface.out_bfloat16
        self._specialize = self.backend.specialize(self.options)
        #: Scalar inputs that drive sizes: their values are part of every key.
        self._scalar_sizes = interface.scalar_sizes
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

    def _quick_start(
        self, source: str, entry: str | None, default_options: bool
    ) -> QuickStart | None:
        """This kernel's quick-start records; None when the cache is off or
        the target takes no part."""
        if not type(self).quick_start or os.environ.get("TCDIALECT_CACHE") == "0":
            return None
        identity = self.backend.quick_identity()
        if identity is None:
            return None
        from tcdialect.cache import CacheStore
        from tcdialect.cache.quick import QuickStart

        store = CacheStore.from_env()
        if store is None:
            return None
        # "default": the kernel may use tuned options, which the record names
        options = "default" if default_options else repr(self.options)
        return QuickStart(store, source, entry, self.target, options, identity)

    def _frontend(
        self, source: Any, entry: str | None, filename: str, record: bool = True
    ) -> Interface:
        """Run the frontend on `source` (`TCError` on a problem), keep
        `checked` and `defop`, and return the interface (recorded for quick
        starts when `record`)."""
        from xdsl.dialects.builtin import BFloat16Type

        from tcdialect.arguments import numpy_dtype
        from tcdialect.cache.quick import Interface
        from tcdialect.frontend import analyze, lower_def

        program = analyze(source, filename)
        checked = program.get(entry)
        defop = lower_def(checked)
        self.checked, self.defop = checked, defop
        interface = Interface(
            checked.name,
            tuple(defop.input_names),
            tuple(defop.output_names),
            tuple(numpy_dtype(t.element_type).str for t in defop.output_types),
            tuple(isinstance(t.element_type, BFloat16Type) for t in defop.output_types),
            tuple(defop.scalar_size_names),
        )
        quick = self.__dict__.get("_quick")
        if record and quick is not None and not program.warnings:
            quick.save_interface(interface)  # (warnings show at every define)
        return interface

    def __getattr__(self, name: str) -> Any:
        # `checked` and `defop` of a kernel defined from the quick-start
        # records: the frontend runs on first use (it accepted this source)
        if name in ("checked", "defop") and "_filename" in self.__dict__:
            self._frontend(self.source, self.entry, self._filename, record=False)
            return self.__dict__[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

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
        from tcdialect.pipeline import Lowering

        return Lowering(self.backend, self.options, self.backend.info())

    @property
    def stages(self) -> tuple[str, ...]:
        """Every stage `ir` can show for this kernel's target."""
        from tcdialect.pipeline import COMMON_STAGES

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
        from tcdialect.arguments import check_temporaries, prepare_inputs

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
        from tcdialect.arguments import check_outputs

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
            quick = self._quick if self._quick_key(key) else None
            tuning = self._tuning_state(bound.sizes) if quick is not None else None
            options = self._options_for(bound.sizes)
            compiled = KERNELS.get_or_compile(
                self._cache_key(key, options),
                lambda: self._compile(bound.sizes, options),
            )
            self._compiled[key] = compiled
            if quick is not None and compiled.cache_digest is not None:
                from tcdialect.cache.quick import CallRecord
                from tcdialect.tune.space import options_fields

                record = CallRecord(
                    compiled.cache_digest,
                    dict(bound.sizes),
                    list(bound.out_shapes),
                    options_fields(options),
                    tuning,
                )
                quick.save_call(key, record)
        return compiled

    def _quick_key(self, key: tuple[Any, ...]) -> bool:
        """Whether calls of shape key `key` may have a quick-start record:
        specialised code of plain NumPy inputs."""
        return (
            self._quick is not None
            and self._specialize
            and not self._scalar_sizes
            and len(key) == 2 * len(self.defop.input_names)
        )

    def _tuning_state(self, sizes: Mapping[str, int]) -> tuple[str, str | None] | None:
        """The state of the tuning record a call of `sizes` consults (None
        when it consults none), for its quick-start record."""
        if not (self._tunable and self._quick is not None):
            return None
        from tcdialect.cache.quick import tuning_state
        from tcdialect.tune.record import tuning_key

        return tuning_state(self._quick.store, tuning_key(self, sizes))

    def _quick_compiled(
        self, inputs: Sequence[Any]
    ) -> tuple[tuple[Any, ...], _Bound, CompiledKernel] | None:
        """The shape key, bound sizes and compiled code of a call of plain
        contiguous NumPy `inputs` from the quick-start records, loaded
        without the frontend or the compiler; None on any miss."""
        assert self._quick is not None
        key: list[Any] = []
        for x in inputs:
            if type(x) is not np.ndarray or not x.flags.c_contiguous:
                return None
            key += (x.shape, x.dtype)
        shape_key = tuple(key)
        found = self._quick.call(shape_key)
        if found is None:
            return None
        record, entry = found
        from tcdialect.cache import STATS
        from tcdialect.cache.key import signature_from_json
        from tcdialect.tune.space import options_from_fields

        start = time.perf_counter()
        signature = signature_from_json(entry.meta.get("signature"))
        try:
            options = options_from_fields(self.backend.options_class, record.options)
            launcher = (
                self.backend.load(entry.payload, self.entry, signature, options)
                if signature is not None
                and sum(a.kind == "input" for a in signature.args) == len(inputs)
                else None
            )
        except Exception:  # a cache problem is never the user's: full path
            return None
        if launcher is None or signature is None:
            return None
        STATS.hits += 1
        bound = _Bound(record.sizes, record.out_shapes)
        loaded = CompiledKernel(
            launcher,
            signature,
            dict(record.sizes),
            time.perf_counter() - start,
            cache_digest=record.kernel,
        )
        compiled = KERNELS.get_or_compile(
            (*self._key_prefix, "quick", record.kernel, shape_key), lambda: loaded
        )
        self._bound[shape_key] = bound
        self._compiled[shape_key] = compiled
        return shape_key, bound, compiled

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
        from xdsl.dialects.builtin import ModuleOp

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
        from xdsl.dialects.func import FuncOp

        from tcdialect import cache
        from tcdialect.arguments import signature_of
        from tcdialect.cache.store import key_digest
        from tcdialect.pipeline import format_sizes, make_context, run_passes

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
                    cache_digest=key_digest(slot[1]),
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
        stored = slot is not None and cache.remember(
            *slot, self.backend, launcher, signature
        )
        return CompiledKernel(
            launcher,
            signature,
            dict(sizes) if self._specialize else None,
            time.perf_counter() - start,
            cache_digest=key_digest(slot[1]) if slot is not None and stored else None,
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
        access (the index tensor's element and value, the valid range) and
        where it is in the source, when the inputs are host arrays (it runs
        the definition again)."""
        from tcdialect import reference
        from tcdialect.arguments import inputs_by_name

        args = list(inputs_by_name(self.defop, inputs, named) if named else inputs)
        if not all(isinstance(a, np.ndarray | np.generic | int | float) for a in args):
            return err
        try:
            reference.run(self.defop, None, args)
        except OutOfBoundsAccess as found:
            if found.tensor == err.tensor:
                message = (
                    str(found).removeprefix("error: ")
                    + "; the read was skipped, so the outputs are invalid"
                )
                span = self._access_span(found)
                return TCError(Diagnostic("error", message, span))
        except TCError:
            pass
        return err

    def _access_span(self, found: OutOfBoundsAccess) -> Span | None:
        """The source of the access `found` describes: in its statement, the
        first access of its tensor whose subscript `found.dim` reads a
        tensor (data-dependent), else the first access of that tensor."""
        from tcdialect.frontend import ast

        statements = [s for s in self.checked.statements if s.target == found.statement]
        if found.ordinal >= len(statements):
            return None
        st = statements[found.ordinal]
        accesses: list[ast.Access] = []
        pending: list[object] = [st.stmt.rhs, *st.lets.values()]
        while pending:
            node = pending.pop(0)
            if isinstance(node, ast.Access):
                if node.callee.name == found.tensor and len(node.args) > found.dim:
                    accesses.append(node)
                pending.extend(node.args)
            elif isinstance(node, ast.Expr):
                pending.extend(
                    v for v in vars(node).values() if isinstance(v, ast.Expr)
                )

        def reads_a_tensor(e: ast.Expr) -> bool:
            if isinstance(e, ast.Access) and e.callee.name in self.checked.tensors:
                return True
            return any(
                reads_a_tensor(v) for v in vars(e).values() if isinstance(v, ast.Expr)
            )

        for a in accesses:
            if reads_a_tensor(a.args[found.dim]):
                return a.span
        return accesses[0].span if accesses else None

    def _invoke(
        self,
        inputs: tuple[Any, ...],
        out: Any,
        stream: Any,
        named: Mapping[str, Any],
    ) -> Array | tuple[Array, ...]:
        if named:
            from tcdialect.arguments import inputs_by_name

            inputs = tuple(inputs_by_name(self.defop, inputs, named))
        last = self._last if not self._scalar_sizes else None
        if (
            self.backend.device_arrays
            and last is not None
            and self._seen_generation == KERNELS.generation
            and len(inputs) == last.in_count
        ):
            # the last call's plan checks these arguments and launches; it
            # declines calls that autograd or torch.compile must record
            outputs = last.call(inputs, out, stream)
            if outputs is not None:
                return _returned(out, outputs)
        for x in inputs:
            if type(x) is not np.ndarray and type(x).__module__.startswith("torch"):
                from tcdialect.torch_ops import torch_call

                result = torch_call(self, inputs, out, stream)
                if result is not None:
                    return result
                break
        if self.backend.device_arrays:
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
        from tcdialect.bfloat16 import ml_bfloat16_dtype, ml_dtypes_result

        outs = out if isinstance(out, tuple | list) else () if out is None else (out,)
        ml = ml_bfloat16_dtype(inputs)
        if ml is not None or ml_bfloat16_dtype(outs) is not None:
            # ml_dtypes.bfloat16 arrays: called on their uint16 views
            from tcdialect.arguments import ml_dtypes_as_bits

            arrays, views = ml_dtypes_as_bits(self.defop, inputs, out)
            result = self._invoke(arrays, views, stream, {})
            if out is not None:
                return _returned(out, list(outs))
            new = list(result) if isinstance(result, tuple) else [result]
            return _returned(None, ml_dtypes_result(new, self.out_bfloat16, ml))
        quick = (
            self._quick_compiled(inputs)
            if self._quick is not None
            and "defop" not in self.__dict__
            and not self._compiled
            else None
        )
        if quick is not None:
            key, bound, compiled = quick
            arrays = list(inputs)
        else:
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
        return self.dump(*inputs, stages=[stage], generic=generic)[stage]

    def dump(
        self,
        *inputs: Any,
        stages: Iterable[str] | None = None,
        generic: bool = False,
    ) -> dict[str, str]:
        """The text of each of `stages` (default: every stage of the target,
        IR stages then text ones), by stage name in pipeline order, from one
        run of the pipeline (`ir` of each stage would rerun the stages
        before it); inputs and `generic` as for `ir`.

            for stage, text in mm.dump(A, B).items():
                Path(f"mm.{stage}.mlir").write_text(text)
        """
        import io

        from xdsl.printer import Printer

        from tcdialect.pipeline import format_sizes, make_context, run_passes

        every = self.stages
        wanted = every if stages is None else tuple(stages)
        for stage in wanted:
            if stage not in every:
                raise TCError(
                    f"unknown stage '{stage}'; the stages are {', '.join(every)}"
                )
        if not wanted:
            return {}
        sizes: dict[str, int] = {}
        if inputs:
            _, _, bound = self._prepare(inputs)
            if self._specialize:
                sizes = bound.sizes
        lowering = self.lowering
        ir_stages = lowering.ir_stages
        last = max(
            ir_stages.index(s) if s in ir_stages else len(ir_stages) - 1 for s in wanted
        )
        ctx, module = make_context(), self._tc_module()
        texts: dict[str, str] = {}
        for stage in ir_stages[: last + 1]:
            run_passes(ctx, module, lowering.stage_passes(stage, format_sizes(sizes)))
            if stage in wanted:
                buf = io.StringIO()
                Printer(stream=buf, print_generic_format=generic).print_op(module)
                texts[stage] = buf.getvalue() + "\n"
        for stage in wanted:
            if stage not in ir_stages:
                texts[stage] = self.backend.emit(stage, module, self.options)
        return {stage: texts[stage] for stage in every if stage in wanted}


__all__ = ["CompiledKernel", "Kernel", "clear_cache", "define"]
