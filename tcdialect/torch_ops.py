"""PyTorch tensors as a `Kernel`'s arguments; TC definitions as PyTorch custom ops.

`Kernel.__call__` hands a call to `torch_call` when an input is a PyTorch
tensor (recognised by its type's module, without importing torch: this
module, which imports torch, is imported only then)::

    mm = tcdialect.define('''
    def matmul(float(M, K) A, float(K, N) B) -> (C) {
        C(m, n) +=! A(m, r_k) * B(r_k, n)
    }''')
    C = mm(A, B)             # A, B: torch.Tensor -> C: torch.Tensor
    C.sum().backward()       # A.grad, B.grad from the derived backward kernel

- CPU tensors are passed to the compiled code without copies (as NumPy views
  of their memory, `Tensor.numpy()`), and the outputs come back as tensors
  over the NumPy outputs (`torch.from_numpy`). A non-contiguous tensor is
  refused with a `TCError` naming the argument, as a non-contiguous NumPy
  array is. `out=` takes tensors too (then no input may require grad).
- CUDA tensors are the `cuda` target's own arguments (`tcdialect.arrays`):
  a plain call goes on through `Kernel.__call__` unchanged.
- When autograd must see the call (grad mode on and an input requires grad)
  or torch.compile traces it, the call goes through the definition's custom
  op (`torch_op`): ``torch.ops.tcdialect.<entry>_<hash>``, where the hash is
  that of the canonical definition (the printed ``tc.def``), the target and
  the options, so that two definitions never share a name; it is registered
  once per process per definition. For the matmul above::

      tcdialect::matmul_7140c9c016d07c60(Tensor A, Tensor B) -> Tensor

  (a 0-d integer input that is also a size, such as a stride, is a
  ``SymInt`` of the schema, passed as an int), with

  - a fake (meta) implementation: output shapes from the output extents of
    the ``tc.def`` (`SizeExpr`s over the size parameters), the sizes bound
    from the input shapes, evaluated on SymInts under dynamic shapes;
  - an autograd formula: the forward saves its inputs; the backward calls
    the backward kernel, through its own custom op, on the saved inputs and
    the output gradients (TC's convention: forward inputs in declared
    order, then one ``d_<output>`` per output; outputs ``d_<input>``). The
    backward kernel is `tcdialect.autodiff.grad(kernel, wrt)` for the
    inputs that need a gradient, or a hand-written one given with
    `use_backward`. As it is a custom op too, double backward differentiates
    the backward kernel.
  - the rematerialisation policy (`save_policy`, default ``save="auto"``):
    where autograd records the call and
    `tcdialect.autodiff.forward_backward` saves something for the inputs
    that require grad, the call goes through the op of the forward kernel
    ``@<entry>_fwd`` instead (`TorchOp.saving_op`), which returns the
    outputs then the saved tensors; the caller gets the outputs, the
    autograd formula keeps everything the op returned, and its backward
    calls the op of the ``@<entry>_grad`` that takes the saved tensors. A
    gradient reaching a saved tensor itself (a double backward) falls back
    to the derived backward of ``@<entry>_fwd``.

  A custom op is opaque to torch.compile: a `Kernel` call inside a
  ``torch.compile(fullgraph=True)`` function becomes one node of the graph
  (and its backward one node of the backward graph), without graph breaks.
  Dynamo does not trace the lookup (and first registration) of the op: it
  runs in `_traced_op_call`, a ``torch._dynamo.nonstrict_trace`` function
  that takes the `Kernel` as a constant (`pytree.register_constant`).

docs/pytorch.md has the user's view and the limitations.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
import torch.utils._pytree as pytree
from xdsl.dialects.builtin import BFloat16Type
from xdsl.printer import Printer

from tcdialect.arguments import (
    _solve_linear,  # pyright: ignore[reportPrivateUsage]
    numpy_dtype,
)
from tcdialect.diagnostics import TCError
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate.body import is_float_type

if TYPE_CHECKING:
    from tcdialect.kernel import Kernel

Array = np.ndarray[Any, Any]
Tensor = torch.Tensor

#: The namespace of the registered ops: ``torch.ops.tcdialect``.
NAMESPACE = "tcdialect"

_TORCH_DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "bool": torch.bool,
}

#: Set while an op's implementation calls its kernel on CUDA tensors, so
#: that `torch_call` lets `Kernel.__call__` launch them itself.
_inside = threading.local()


@dataclass(eq=False)
class TorchOp:
    """A definition registered as a PyTorch custom op (see the module docstring)."""

    #: The kernel the op runs (the first one registered for the definition).
    kernel: Kernel
    #: ``tcdialect::<entry>_<hash>``.
    qualname: str
    op: Any
    #: A hand-written backward kernel (`use_backward`), else None: derived.
    backward: Kernel | None = None
    #: Backward ops by the names of the inputs they differentiate.
    backward_ops: dict[tuple[str, ...], TorchOp] = field(
        default_factory=lambda: cast(dict[tuple[str, ...], TorchOp], {})
    )
    #: The rematerialisation policy of the derived backward (`save_policy`):
    #: ``save`` and ``memory_budget`` of `tcdialect.autodiff.forward_backward`.
    save: str = "auto"
    memory_budget: str | int | None = None
    #: Saving forward ops by the names of the inputs they differentiate;
    #: None where the policy saves nothing.
    saving_ops: dict[tuple[str, ...], TorchOp | None] = field(
        default_factory=lambda: cast(dict[tuple[str, ...], "TorchOp | None"], {})
    )
    #: For a saving forward op: the backward kernels that take what it saves,
    #: by the names of the inputs they differentiate. One forward kernel can
    #: serve several sets (the same tensors saved for each), so the backward
    #: is chosen by the set autograd asks for, never by the last one derived.
    saving_backwards: dict[tuple[str, ...], Kernel] = field(
        default_factory=lambda: cast("dict[tuple[str, ...], Kernel]", {})
    )

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.kernel.defop.input_names

    def backward_op(self, wrt: tuple[str, ...]) -> TorchOp:
        """The op of the backward kernel computing the gradients of `wrt`."""
        found = self.backward_ops.get(wrt)
        if found is not None:
            return found
        kernel = self.backward
        if kernel is None:
            kernel = _derive(self.kernel, wrt)
        missing = [n for n in wrt if f"d_{n}" not in kernel.out_names]
        if missing:
            raise TCError(
                f"the backward kernel @{kernel.entry} of @{self.kernel.entry} has "
                f"no output {', '.join('d_' + n for n in missing)}"
            )
        found = self.backward_ops[wrt] = torch_op(kernel)
        return found

    def saving_op(self, wrt: tuple[str, ...]) -> TorchOp | None:
        """The op of the forward kernel that returns, after the outputs, the
        tensors that the backward of `wrt` reads (`forward_backward` with this
        op's policy); None when it saves nothing, with ``save="none"`` and
        with a hand-written backward."""
        if self.backward is not None or self.save == "none" or not wrt:
            return None
        if wrt in self.saving_ops:
            return self.saving_ops[wrt]
        from tcdialect.autodiff import forward_backward

        fwd, bwd = forward_backward(
            self.kernel, list(wrt), save=self.save, memory_budget=self.memory_budget
        )
        found = None
        if getattr(bwd, "saved", ()):
            found = torch_op(fwd)
            found.saving_backwards[wrt] = bwd
        self.saving_ops[wrt] = found
        return found


#: Registered ops by qualified name: once per process per definition.
_OPS: dict[str, TorchOp] = {}
_LOCK = threading.Lock()


def _kernels_are_constants() -> None:
    """Let a `Kernel` (of any class defined by now: `tcdialect.autodiff`'s
    backward kernels too) be an argument of `_traced_op_call` under
    torch.compile."""
    import tcdialect.autodiff  # noqa: F401 - defines the backward kernels' class
    from tcdialect.kernel import Kernel

    classes: list[type[Kernel]] = [Kernel]
    while classes:
        cls = classes.pop()
        pytree.register_constant(cls)
        classes.extend(cls.__subclasses__())


_kernels_are_constants()


def _derive(kernel: Kernel, wrt: tuple[str, ...]) -> Kernel:
    from tcdialect.autodiff import grad

    return grad(kernel, wrt=list(wrt))


def op_name(kernel: Kernel) -> str:
    """``<entry>_<hash>``: the op's name in the ``tcdialect`` namespace; the
    hash covers the canonical definition, the target and the options."""
    buf = io.StringIO()
    Printer(stream=buf).print_op(kernel.defop)
    text = f"{buf.getvalue()}\n{kernel.target}\n{kernel.options!r}"
    return f"{kernel.entry}_{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _scalar_sizes(kernel: Kernel) -> tuple[str, ...]:
    """The sizes that are 0-d integer inputs (a stride ``S``), passed to the
    op as ints: the output shapes depend on their values."""
    return tuple(getattr(kernel.defop, "scalar_size_names", ()))


def _schema(kernel: Kernel) -> str:
    scalars = _scalar_sizes(kernel)
    names = [
        f"SymInt {n}" if n in scalars else f"Tensor {n}"
        for n in kernel.defop.input_names
    ]
    outs = len(kernel.out_names)
    result = "Tensor" if outs == 1 else f"({', '.join(['Tensor'] * outs)})"
    return f"({', '.join(names)}) -> {result}"


def torch_op(kernel: Kernel) -> TorchOp:
    """The custom op of `kernel`'s definition, registered on first use."""
    found: TorchOp | None = getattr(kernel, "_torch_op", None)
    if found is not None:
        return found
    qualname = f"{NAMESPACE}::{op_name(kernel)}"
    with _LOCK:
        found = _OPS.get(qualname)
        if found is None:
            found = _OPS[qualname] = _register(kernel, qualname)
    setattr(kernel, "_torch_op", found)
    return found


def use_backward(kernel: Kernel, backward: Kernel) -> None:
    """Differentiate `kernel` with the hand-written `backward` kernel instead
    of the derived one: inputs are `kernel`'s inputs, then one ``d_<output>``
    per output; outputs ``d_<input>`` for (at least) every input whose
    gradient is asked for."""
    record = torch_op(kernel)
    expected = [*kernel.defop.input_names, *(f"d_{n}" for n in kernel.out_names)]
    got = list(backward.defop.input_names)
    if got != expected:
        raise TCError(
            f"the backward kernel @{backward.entry} of @{kernel.entry} must take "
            f"({', '.join(expected)}) but takes ({', '.join(got)})"
        )
    record.backward = backward
    record.backward_ops.clear()
    record.saving_ops.clear()


def save_policy(
    kernel: Kernel, save: str = "auto", memory_budget: str | int | None = None
) -> None:
    """The rematerialisation policy of `kernel`'s derived backward under
    autograd, for every `Kernel` of the definition: ``save`` is ``"auto"``
    (the default: save the reductions and transcendentals the backward
    reads), ``"all"`` or
    ``"none"`` (recompute everything), ``memory_budget`` caps the saved
    elements (a size expression; None: no limit). See
    `tcdialect.autodiff.forward_backward`."""
    from tcdialect.transforms.tc_differentiate import Policy

    Policy.parse(save, memory_budget)  # (a TCError names a bad value)
    record = torch_op(kernel)
    record.save, record.memory_budget = save, memory_budget
    record.saving_ops.clear()


# ------------------------------------------------------------ registration


def _register(kernel: Kernel, qualname: str) -> TorchOp:
    record: TorchOp

    def impl(*args: Any) -> Any:
        return _run(record.kernel, args)

    def fake(*args: Any) -> Any:
        outs = _fake_outputs(record.kernel, args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    op = torch.library.custom_op(
        qualname, impl, mutates_args=(), schema=_schema(kernel)
    )
    op.register_fake(fake)
    record = TorchOp(kernel, qualname, op)

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        outs = cast(
            tuple[Tensor, ...], output if isinstance(output, tuple) else (output,)
        )
        ctx.out_shapes = [o.shape for o in outs]
        # a saving forward also keeps the tensors it returns for the backward
        kept = outs if record.saving_backwards else ()
        ctx.save_for_backward(*(x for x in inputs if _tensor(x)), *kept)
        ctx.set_materialize_grads(False)  # None: an output without a gradient
        ctx.scalars = [None if _tensor(x) else x for x in inputs]

    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        return _backward(record, ctx, grads)

    op.register_autograd(backward, setup_context=setup_context)
    return record


def _backward(
    record: TorchOp, ctx: Any, grads: Sequence[Tensor | None]
) -> tuple[Tensor | None, ...]:
    saved = iter(cast(tuple[Tensor, ...], ctx.saved_tensors))
    inputs = [next(saved) if x is None else x for x in ctx.scalars]
    names = record.input_names
    needed: Sequence[bool] = ctx.needs_input_grad
    wrt = tuple(n for n, need in zip(names, needed) if need)
    if not wrt:
        return (None,) * len(names)
    kept = list(saved)  # a saving forward's outputs
    bwd = record.saving_backwards.get(wrt)
    n_outs = len(grads) - len(getattr(record.kernel, "saved", ()))
    if bwd is not None and all(g is None for g in grads[n_outs:]):
        # the saved tensors reach the loss only through the outputs (else,
        # as in a double backward, the derived backward of all the outputs)
        by_name = dict(zip(record.kernel.out_names, kept))
        d_outs = _output_grads(record, ctx, grads[:n_outs], inputs)
        backward = torch_op(bwd)
        result = backward.op(
            *inputs, *(by_name[n] for n in getattr(bwd, "saved")), *d_outs
        )
        results = result if isinstance(result, tuple) else (result,)
        by_name = dict(zip(bwd.out_names, cast(tuple[Tensor, ...], results)))
        return tuple(by_name[f"d_{n}"] if n in wrt else None for n in names)
    d_outs = _output_grads(record, ctx, grads, inputs)
    backward = record.backward_op(wrt)
    result = backward.op(*inputs, *d_outs)
    results = result if isinstance(result, tuple) else (result,)
    by_name = dict(zip(backward.kernel.out_names, cast(tuple[Tensor, ...], results)))
    return tuple(by_name[f"d_{n}"] if n in wrt else None for n in names)


def _output_grads(
    record: TorchOp, ctx: Any, grads: Sequence[Tensor | None], inputs: Sequence[Any]
) -> list[Tensor]:
    """`grads` made contiguous, zeros for an output without one."""
    like = next((x for x in inputs if _tensor(x)), None)
    return [
        g.contiguous()
        if g is not None
        else torch.zeros(
            shape,
            dtype=_torch_dtype(record.kernel, i),
            device=like.device if like is not None else "cpu",
        )
        for i, (g, shape) in enumerate(zip(grads, ctx.out_shapes))
    ]


# ---------------------------------------------------------------- shapes


def _torch_dtype(kernel: Kernel, i: int) -> torch.dtype:
    if kernel.out_bfloat16[i]:
        return torch.bfloat16
    return _TORCH_DTYPES[str(kernel.out_dtypes[i])]


def _evaluate(expr: SizeExpr, sizes: dict[str, Any]) -> Any:
    """`expr` for `sizes` that may be SymInts (min/max as `torch.sym_min`
    and `torch.sym_max`, which add no guards)."""
    total: Any = expr.const
    for atom, coeff in expr.terms:
        if atom.kind == "sym":
            value = sizes[atom.name]
        elif atom.kind == "floordiv":
            value = _evaluate(atom.args[0], sizes) // atom.divisor
        elif atom.kind == "mul":
            value = 1
            for arg in atom.args:
                value = value * _evaluate(arg, sizes)
        elif atom.kind == "div":  # a positive divisor when evaluated
            value = _evaluate(atom.args[0], sizes) // _evaluate(atom.args[1], sizes)
        else:
            combine = torch.sym_min if atom.kind == "min" else torch.sym_max
            value = _evaluate(atom.args[0], sizes)
            for arg in atom.args[1:]:
                value = combine(value, _evaluate(arg, sizes))
        total = total + coeff * value
    return total


def output_shapes(
    kernel: Kernel,
    shapes: Sequence[Sequence[Any]],
    values: Mapping[str, Any] | None = None,
) -> list[list[Any]]:
    """The output shapes of `kernel` for inputs of `shapes` (ints or SymInts)
    and the `values` of its scalar sizes: the sizes bound as
    `tcdialect.arguments.prepare_inputs` binds them, the output extents
    evaluated (a negative extent is 0), without the checks of a call."""
    defop = kernel.defop
    sizes: dict[str, Any] = dict(values or {})
    pending: list[tuple[SizeExpr, Any]] = []
    for t, shape in zip(defop.input_types, shapes):
        for expr, extent in zip(t.extents, shape):
            if expr.is_constant:
                continue
            (atom, coeff), *more = expr.terms
            if not more and atom.kind == "sym" and coeff == 1 and expr.const == 0:
                sizes.setdefault(atom.name, extent)
            else:
                pending.append((expr, extent))
    for expr, extent in pending:
        if not expr.names() <= sizes.keys():
            solved = _solve_linear(expr, extent)
            if solved is not None:
                sizes.setdefault(*solved)
    missing = [s for s in defop.size_names if s not in sizes]
    if missing:
        raise TCError(
            f"size {missing[0]} of @{kernel.entry} is not determined by the inputs"
        )
    return [
        [torch.sym_max(0, _evaluate(e, sizes)) for e in t.extents]
        for t in defop.output_types
    ]


def _fake_outputs(kernel: Kernel, args: Sequence[Any]) -> list[Tensor]:
    names = kernel.defop.input_names
    shapes = [a.shape if _tensor(a) else () for a in args]
    values = {n: a for n, a in zip(names, args) if not _tensor(a)}
    tensors = [a for a in args if _tensor(a)]
    device = tensors[0].device if tensors else torch.device("cpu")
    shapes = output_shapes(kernel, shapes, values)
    return [
        torch.empty(shape, dtype=_torch_dtype(kernel, i), device=device)
        for i, shape in enumerate(shapes)
    ]


# ------------------------------------------------------------------ calls


def _tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def _array(kernel: Kernel, t: Tensor, i: int, *, output: bool = False) -> Array:
    """The NumPy view of CPU tensor `t` (argument or output `i`)."""
    if output:
        name = kernel.out_names[i] if i < len(kernel.out_names) else "?"
        where = f"output '{name}' (out[{i}])"
    else:
        name = kernel.defop.input_names[i]
        where = f"input '{name}' (argument {i})"
    if t.is_cuda:
        raise TCError(
            f"{where} of @{kernel.entry} is a CUDA tensor, but target "
            f"'{kernel.target}' runs on the host: pass {name}.cpu(), or use "
            "target='cuda'"
        )
    if t.device.type != "cpu":
        raise TCError(
            f"{where} of @{kernel.entry} is a tensor on {t.device}; tcdialect "
            "takes CPU and CUDA tensors"
        )
    if not t.is_contiguous():
        raise TCError(
            f"{where} of @{kernel.entry} is not a contiguous (C-order) tensor; "
            f"pass {name}.contiguous()"
        )
    if t.requires_grad:
        t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if t.dtype not in _TORCH_DTYPES.values():
        raise TCError(
            f"{where} of @{kernel.entry}: a tensor of dtype {t.dtype} has no TC "
            "element type"
        )
    return t.numpy()


def _from_array(kernel: Kernel, a: Array, i: int) -> Tensor:
    t = torch.from_numpy(a)
    if kernel.out_bfloat16[i]:
        return t.view(torch.int16).view(torch.bfloat16)
    return t


def _run(kernel: Kernel, args: Sequence[Any], out: Any = None) -> Any:
    """Call `kernel` on `args` (tensors, arrays, scalars) outside autograd:
    tensors as NumPy views, results as tensors (or `out` as given)."""
    if any(_tensor(a) and a.is_cuda for a in args):
        with _launching():
            return kernel(*args, out=out)
    arrays = [_array(kernel, a, i) if _tensor(a) else a for i, a in enumerate(args)]
    if out is not None:
        outs = list(out) if isinstance(out, tuple | list) else [out]
        kernel(
            *arrays,
            out=[
                _array(kernel, o, i, output=True) if _tensor(o) else o
                for i, o in enumerate(outs)
            ],
        )
        return out
    result = kernel(*arrays)
    if isinstance(result, tuple):
        return tuple(_from_array(kernel, a, i) for i, a in enumerate(result))
    return _from_array(kernel, cast(Array, result), 0)


@contextmanager
def _launching() -> Iterator[None]:
    _inside.active = True
    try:
        yield
    finally:
        _inside.active = False


def _op_arguments(kernel: Kernel, inputs: Sequence[Any]) -> list[Any]:
    """`inputs` as the op takes them: tensors (arrays and Python scalars
    converted), and ints for the scalar sizes."""
    args: list[Any] = []
    scalars = _scalar_sizes(kernel)
    for i, x in enumerate(inputs):
        if kernel.defop.input_names[i] in scalars:
            args.append(int(x))  # a size: the op takes it as an int
        elif _tensor(x):
            args.append(x)
        elif isinstance(x, np.ndarray | np.generic):
            args.append(torch.from_numpy(np.asarray(x)))
        elif isinstance(x, bool | int | float):
            elem = kernel.defop.input_types[i].element_type
            dtype = (
                torch.bfloat16
                if isinstance(elem, BFloat16Type)
                else _TORCH_DTYPES[str(numpy_dtype(elem))]
            )
            args.append(torch.tensor(x, dtype=dtype))
        else:
            name = kernel.defop.input_names[i]
            raise TCError(
                f"input '{name}' (argument {i}) of @{kernel.entry}: expected a "
                f"tensor but got {type(x).__name__}"
            )
    return args


def torch_call(
    kernel: Kernel, inputs: Sequence[Any], out: Any = None, stream: Any = None
) -> Any:
    """`kernel(*inputs, out=out, stream=stream)` where an input is a PyTorch
    tensor (the hook of `Kernel.__call__`); None where `Kernel.__call__`
    goes on itself (CUDA tensors outside autograd and torch.compile)."""
    if torch.compiler.is_compiling():
        return _op_call(kernel, inputs, out)
    if getattr(_inside, "active", False):
        return None
    differentiable = torch.is_grad_enabled() and any(
        _tensor(x) and x.requires_grad for x in inputs
    )
    if differentiable:
        return _op_call(kernel, inputs, out)
    if kernel.backend.device_arrays and any(_tensor(x) and x.is_cuda for x in inputs):
        return None
    if stream is not None:
        raise TCError(
            f"stream= is for GPU targets; target '{kernel.target}' runs on the host"
        )
    return _run(kernel, inputs, out)


def _op_call(kernel: Kernel, inputs: Sequence[Any], out: Any) -> Any:
    if out is not None:
        raise TCError(
            f"@{kernel.entry}: out= cannot be used where autograd (an input "
            "requires grad) or torch.compile records the call; call without "
            "out=, or under torch.no_grad()"
        )
    if len(inputs) != len(kernel.defop.input_names):
        names = kernel.defop.input_names
        raise TCError(
            f"@{kernel.entry} expects {len(names)} input"
            f"{'s' if len(names) != 1 else ''} ({', '.join(names)}) "
            f"but got {len(inputs)}"
        )
    args = _op_arguments(kernel, inputs)
    if torch.compiler.is_compiling():
        return _traced_op_call(kernel, *args)
    for i, a in enumerate(args):
        if _tensor(a) and not a.is_cuda:
            _array(kernel, a, i)  # the checks of a call, before autograd
    return _call_op(kernel, args)


def _call_op(kernel: Kernel, args: Sequence[Any]) -> Any:
    """The op call: through the saving forward op where autograd records it
    and the policy saves something."""
    record = torch_op(kernel)
    wrt = tuple(
        n
        for n, a, t in zip(kernel.defop.input_names, args, kernel.defop.input_types)
        if _tensor(a) and a.requires_grad and is_float_type(t.element_type)
    )
    saving = record.saving_op(wrt) if torch.is_grad_enabled() else None
    if saving is None:
        return record.op(*args)
    outs = saving.op(*args)  # the outputs, then the saved tensors
    n_outs = len(kernel.out_names)
    return outs[0] if n_outs == 1 else tuple(outs[:n_outs])


@torch._dynamo.nonstrict_trace  # pyright: ignore[reportPrivateImportUsage]
def _traced_op_call(kernel: Kernel, *args: Any) -> Any:
    """The op call, which torch.compile records without tracing into this
    function: registering the op on first use is plain Python here."""
    return _call_op(kernel, args)


__all__ = [
    "NAMESPACE",
    "TorchOp",
    "op_name",
    "output_shapes",
    "save_policy",
    "torch_call",
    "torch_op",
    "use_backward",
]
