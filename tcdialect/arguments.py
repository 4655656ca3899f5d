"""Checking a call's arguments against a definition: shared by every target
and by the reference interpreter.

- `prepare_inputs(defop, inputs)`: count, rank, exact dtype, literal extents
  and consistent size parameters of the inputs; returns them as dense arrays
  and the bound sizes. Every error is a `TCError` naming the argument.
- `check_outputs`: a caller's `out=` arrays (shape, dtype, contiguity,
  writeability, overlap with another argument).
- `check_temporaries`: refuses sizes whose temporaries and outputs cannot fit
  in memory, before any code allocates them.
- `Signature` / `signature_of`: the calling convention of a definition's
  `affine`-stage entry function (inputs, outputs, error flag, unbound sizes),
  which every target's launcher follows.

`bf16` tensors are NumPy uint16 arrays of bfloat16 bit patterns
(`tcdialect.bfloat16`): `numpy_dtype` maps `bf16` to uint16, and errors
call the dtype `bfloat16`. Arrays of `ml_dtypes.bfloat16` are taken for
`bf16` inputs and outputs too, as their uint16 views: `prepare_inputs`
returns those views, and `ml_dtypes_as_bits` makes them for a kernel call's
inputs and `out=` before any other check.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from tcdialect.arrays import DeviceArray, device_array
from tcdialect.bfloat16 import is_ml_bfloat16, to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tc import ComprehensionOp, DefOp
from tcdialect.signature import ArgKind, ArgSpec, Signature
from tcdialect.symbolic import SizeExpr, SymbolicError

Array = np.ndarray[Any, Any]
InputValue = np.ndarray[Any, Any] | int | float | bool

# --------------------------------------------------------------------- types


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """The NumPy dtype storing tensor elements of type `t`.

    ``f16/f32/f64`` → float16/32/64, ``bf16`` → uint16 (the bit patterns,
    see `tcdialect.bfloat16`), ``i1`` → bool, ``iN``/``siN`` → intN,
    ``uiN`` → uintN, ``index`` → int64.
    """
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, BFloat16Type):
        return np.dtype(np.uint16)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width not in (8, 16, 32, 64):
            raise TCError(f"reference interpreter: unsupported integer type {t}")
        if t.signedness.data == Signedness.UNSIGNED:
            return np.dtype(f"uint{width}")
        return np.dtype(f"int{width}")
    raise TCError(f"reference interpreter: unsupported type {t}")


def type_name(dt: np.dtype[Any]) -> str:
    return "bool" if dt == np.bool_ else str(dt)


def element_type_name(t: Attribute) -> str:
    """How errors name the dtype expected for element type `t`."""
    if isinstance(t, BFloat16Type):
        return (
            "bfloat16 (an ml_dtypes.bfloat16 array, or a uint16 array of bit "
            "patterns, see tcdialect.bfloat16)"
        )
    return type_name(numpy_dtype(t))


# ------------------------------------------------------------ input binding


def _convert_scalar(value: int | float | bool, dt: np.dtype[Any], where: str) -> Array:
    """A Python scalar as a 0-d array of dtype `dt`, or a TCError."""
    kind = dt.kind
    if isinstance(value, bool):
        return np.asarray(value, dtype=dt)
    if isinstance(value, int):
        if kind == "b":
            raise TCError(f"{where}: expected bool but got a Python int")
        if kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= value <= info.max:
                raise TCError(f"{where}: {value} does not fit in {type_name(dt)}")
        return np.asarray(value, dtype=dt)
    if kind != "f":
        raise TCError(f"{where}: expected {type_name(dt)} but got a Python float")
    return np.asarray(value, dtype=dt)


def _solve_linear(expr: SizeExpr, extent: int) -> tuple[str, int] | None:
    """Solve ``c * N + k == extent`` for a single size ``N``, if exact."""
    if len(expr.terms) != 1:
        return None
    atom, coeff = expr.terms[0]
    if atom.kind != "sym" or (extent - expr.const) % coeff:
        return None
    return atom.name, (extent - expr.const) // coeff


def prepare_inputs(
    defop: DefOp, inputs: Sequence[InputValue], *, device: bool = False
) -> tuple[list[Any], dict[str, int]]:
    """Check `inputs` against the signature of `defop`.

    Returns the inputs as dense arrays of the declared dtypes (Python scalars
    converted, non-contiguous arrays copied) and the bound size parameters.
    With `device` (a target that runs on a GPU), arrays in CUDA memory are
    taken too, as `tcdialect.arrays.DeviceArray`s (they must be contiguous:
    they are not copied); without it they are refused with the reason.
    Raises `TCError` naming the argument and the declared parameter.
    """
    fname = f"@{defop.sym_name.data}"
    names = defop.input_names
    types = defop.input_types
    if len(inputs) != len(names):
        missing = names[len(inputs) :]
        raise TCError(
            f"{fname} expects {len(names)} input{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}) but got {len(inputs)}"
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    arrays: list[Any] = []
    for i, (name, t, value) in enumerate(zip(names, types, inputs)):
        where = f"input '{name}' (argument {i}) of {fname}"
        elem = t.element_type
        dt = numpy_dtype(elem)
        if isinstance(value, bool | int | float) and not isinstance(value, np.generic):
            if t.rank != 0:
                raise TCError(
                    f"{where}: expected {t.rank} dimensions but got a Python scalar"
                )
            if isinstance(elem, BFloat16Type):
                number = _convert_scalar(value, np.dtype(np.float32), where)
                arrays.append(to_bfloat16(number))
            else:
                arrays.append(_convert_scalar(value, dt, where))
            continue
        if isinstance(value, np.generic):
            value = np.asarray(value)
        on_device = device_array(value)
        if on_device is not None:
            arrays.append(_check_device_input(on_device, t, where, device))
            continue
        if not isinstance(value, np.ndarray):
            raise TCError(
                f"{where}: expected a NumPy array but got {type(value).__name__}"
            )
        if isinstance(value, np.ma.MaskedArray):
            raise TCError(
                f"{where}: masked arrays are not supported (the mask would be "
                f"ignored); pass a plain array, e.g. a.filled(0)"
            )
        if type(value) is not np.ndarray:
            value = value.view(np.ndarray)  # np.matrix, memmap, ...: the data
        if value.ndim != t.rank:
            raise TCError(f"{where}: expected {t.rank} dimensions but got {value.ndim}")
        if isinstance(elem, BFloat16Type) and is_ml_bfloat16(value.dtype):
            value = value.view(np.uint16)
        if value.dtype != dt:
            raise TCError(
                f"{where}: expected {element_type_name(elem)} but got "
                f"{type_name(value.dtype)}"
            )
        # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
        arrays.append(value if value.flags.c_contiguous else value.copy(order="C"))

    sizes: dict[str, int] = {}
    origin: dict[str, str] = {}
    pending: list[tuple[str, SizeExpr, int]] = []
    # scalars that drive sizes first: extents may be expressions of them
    for size in defop.scalar_size_names:
        value = arrays[names.index(size)]
        where = f"input '{size}' (argument {names.index(size)}) of {fname}"
        if isinstance(value, DeviceArray):
            raise TCError(
                f"{where} drives sizes, so its value is needed on the host: pass "
                "a Python int or a NumPy scalar"
            )
        v = int(value)
        if v < 0:
            raise TCError(f"{where} drives sizes and must not be negative, but is {v}")
        sizes[size], origin[size] = v, f"input '{size}' is {v}"
    for i, (name, t, arr) in enumerate(zip(names, types, arrays)):
        for d, (expr, extent) in enumerate(zip(t.extents, arr.shape)):
            here = f"input '{name}' dimension {d} is {extent}"
            if expr.is_constant:
                if expr.const != extent:
                    raise TCError(
                        f"input '{name}' (argument {i}) of {fname}: dimension {d} "
                        f"must be {expr.const} but is {extent}"
                    )
                continue
            if expr.terms and len(expr.terms) == 1 and expr.const == 0:
                atom, coeff = expr.terms[0]
                if atom.kind == "sym" and coeff == 1:
                    size = atom.name
                    if size not in sizes:
                        sizes[size], origin[size] = extent, here
                    elif sizes[size] != extent:
                        raise TCError(f"size {size}: {origin[size]} but {here}")
                    continue
            pending.append((f"input '{name}' (argument {i})", expr, extent))

    # Expression extents: solve the simple ones for unbound sizes, check all.
    progress = True
    while progress:
        progress = False
        for _, expr, extent in pending:
            if expr.names() <= sizes.keys():
                continue
            solved = _solve_linear(expr, extent)
            if solved is not None and solved[0] not in sizes:
                sizes[solved[0]] = solved[1]
                progress = True
    for where, expr, extent in pending:
        try:
            value = expr.evaluate(sizes)
        except SymbolicError:
            value = None
        # (an empty tensor stands for a declared extent that is negative)
        if value != extent and not (extent == 0 and value is not None and value < 0):
            if value is None:
                with contextlib.suppress(SymbolicError):
                    check_divisors(defop, sizes)  # the clearer message, if it is that
            raise TCError(
                f"{where} of {fname}: a dimension declared as '{expr}' is {extent}"
                + (f" but '{expr}' is {value}" if value is not None else "")
            )
    for size in defop.size_names:
        if size not in sizes:
            raise TCError(f"size {size} of {fname} is not determined by the inputs")
    check_divisors(defop, sizes)
    return arrays, sizes


def check_divisors(defop: DefOp, sizes: Mapping[str, int]) -> None:
    """Refuse sizes for which a size expression of `defop` divides by <= 0.

    A quotient by a size (``(N - K) floordiv S``) is computed with a plain
    division in compiled code: the divisor must be positive."""
    exprs: list[SizeExpr] = []
    for t in defop.input_types:
        exprs.extend(t.extents)
    for op in defop.body.block.ops:
        if isinstance(op, ComprehensionOp):
            for lo, hi in op.ranges:
                exprs += [lo, hi]
            exprs.extend(op.result_type.extents)
    seen: set[SizeExpr] = set()
    for e in exprs:
        for d in e.divisors():
            if d in seen:
                continue
            seen.add(d)
            value = d.evaluate(sizes)
            if value <= 0:
                bound = ", ".join(f"{n}={sizes[n]}" for n in sorted(d.names()))
                raise TCError(
                    f"@{defop.sym_name.data}: '{e}' divides by '{d}', which is "
                    f"{value} for {bound}; it must be positive"
                )


def inputs_by_name(
    defop: DefOp, positional: Sequence[Any], named: Mapping[str, Any]
) -> list[Any]:
    """The inputs of a call in declared order, from `positional` ones and
    `named` ones (by their declared names: ``k(I, W, S=2)``).

    A name that is not an input, an input given twice, a missing input and
    surplus positional inputs are `TCError`s naming them."""
    fname = f"@{defop.sym_name.data}"
    names = defop.input_names
    if len(positional) > len(names):
        raise TCError(
            f"{fname} expects {len(names)} input{'s' if len(names) != 1 else ''} "
            f"({', '.join(names)}) but got {len(positional)} positional ones"
        )
    slots: list[Any] = [*positional, *([_MISSING] * (len(names) - len(positional)))]
    for name, value in named.items():
        if name not in names:
            raise TCError(
                f"{fname} has no input named '{name}'; its inputs are "
                + ", ".join(names)
            )
        i = names.index(name)
        if i < len(positional):
            raise TCError(
                f"input '{name}' (argument {i}) of {fname} is given twice: "
                "by position and by keyword"
            )
        slots[i] = value
    missing = [n for n, v in zip(names, slots) if v is _MISSING]
    if missing:
        raise TCError(
            f"{fname}: missing input{'s' if len(missing) != 1 else ''} "
            + ", ".join(f"'{n}'" for n in missing)
        )
    return slots


_MISSING = object()


def _check_device_input(
    x: DeviceArray, t: Any, where: str, accepted: bool
) -> DeviceArray:
    """An input in CUDA memory, checked as `prepare_inputs` checks arrays."""
    if not accepted:
        raise TCError(
            f"{where} is in CUDA memory ({x}), but this target runs on the host: "
            "copy it to a NumPy array (for PyTorch, t.cpu().numpy()), or use "
            "target='cuda'"
        )
    if x.ndim != t.rank:
        raise TCError(f"{where}: expected {t.rank} dimensions but got {x.ndim}")
    elem = t.element_type
    if x.dtype != numpy_dtype(elem) or (
        x.bfloat16 and not isinstance(elem, BFloat16Type)
    ):
        got = "bfloat16" if x.bfloat16 else type_name(x.dtype)
        raise TCError(f"{where}: expected {element_type_name(elem)} but got {got}")
    if not x.c_contiguous:
        raise TCError(
            f"{where} is not a contiguous (C-order) array; pass a contiguous copy "
            "(for PyTorch, t.contiguous())"
        )
    return x


def ml_dtypes_as_bits(
    defop: DefOp, inputs: Sequence[Any], out: Any
) -> tuple[tuple[Any, ...], Any]:
    """`inputs` and `out` with their `ml_dtypes.bfloat16` arrays viewed as
    uint16 (no copy); a `TCError` naming the argument for such an array
    where `defop` declares another type. `out` keeps its form (None, one
    array, or a tuple or list of them); surplus arguments are viewed too,
    for the general checks to count."""
    fname = f"@{defop.sym_name.data}"

    def bits(
        values: Sequence[Any], names: Sequence[str], types: Sequence[Any], where: str
    ) -> list[Any]:
        for i, (x, name, t) in enumerate(zip(values, names, types)):
            if not isinstance(x, np.ndarray) or not is_ml_bfloat16(x.dtype):
                continue
            if not isinstance(t.element_type, BFloat16Type):
                raise TCError(
                    where.format(name=name, i=i) + f" of {fname}: expected "
                    f"{element_type_name(t.element_type)} but got bfloat16"
                )
        return [
            x.view(np.uint16)
            if isinstance(x, np.ndarray) and is_ml_bfloat16(x.dtype)
            else x
            for x in values
        ]

    arrays = bits(
        inputs, defop.input_names, defop.input_types, "input '{name}' (argument {i})"
    )
    if out is None:
        return tuple(arrays), None
    outs = list(out) if isinstance(out, tuple | list) else [out]
    views = bits(
        outs, defop.output_names, defop.output_types, "output '{name}' (out[{i}])"
    )
    return tuple(arrays), (views if isinstance(out, tuple | list) else views[0])


def bind_sizes(defop: DefOp, inputs: Sequence[InputValue]) -> dict[str, int]:
    """The size parameters of `defop` bound from the shapes of `inputs`.

    Checks input count, ranks, exact dtypes, consistency of repeated sizes
    and literal extents; every error is a `TCError` naming the argument.
    """
    return prepare_inputs(defop, inputs)[1]


# ---------------------------------------------------------- outputs, memory


def check_outputs(
    defop: DefOp,
    out: Any,
    shapes: Sequence[tuple[int, ...]],
    dtypes: Sequence[np.dtype[Any]],
    inputs: Sequence[Any],
    *,
    device: bool = False,
) -> list[Any]:
    """The arrays of a caller's `out=` (one array, or a tuple or list of them
    in declared order), checked against the output `shapes` and `dtypes`.
    With `device`, arrays in CUDA memory are taken too (as `DeviceArray`s)."""
    names = list(defop.output_names)
    fname = f"@{defop.sym_name.data}"

    def bad(i: int, problem: str) -> NoReturn:
        raise TCError(f"output '{names[i]}' (out[{i}]) of {fname}: {problem}")

    outs = list(out) if isinstance(out, tuple | list) else [out]
    n = len(names)
    if len(outs) != n:
        raise TCError(
            f"out= of {fname} must give {n} array{'s' if n != 1 else ''} "
            f"({', '.join(names)}) but gives {len(outs)}"
        )
    for i, (o, shape, dt) in enumerate(zip(outs, shapes, dtypes)):
        if type(o) is not np.ndarray:
            on_device = device_array(o)
            if on_device is None or not device:
                where = "an array in CUDA memory" if on_device else type(o).__name__
                bad(i, f"expected a NumPy array but got {where}")
            outs[i] = _check_device_output(
                on_device, shape, dt, outs[:i], inputs, bad, i
            )
            continue
        if o.shape != shape:
            bad(i, f"expected shape {shape} but got {o.shape}")
        if o.dtype != dt:
            expected = element_type_name(defop.output_types[i].element_type)
            bad(i, f"expected {expected} but got {type_name(o.dtype)}")
        flags = o.flags
        if not flags.c_contiguous or not flags.writeable:
            bad(i, "must be a writeable contiguous (C-order) array")
        for other in (*inputs, *outs[:i]):
            if (
                isinstance(other, np.ndarray)
                and o.size
                and other.size
                and np.may_share_memory(o, other)
            ):
                bad(i, "overlaps another argument of the call")
    return outs


def _check_device_output(
    o: DeviceArray,
    shape: tuple[int, ...],
    dt: np.dtype[Any],
    earlier: Sequence[Any],
    inputs: Sequence[Any],
    bad: Any,
    i: int,
) -> DeviceArray:
    """One `out=` array in CUDA memory, checked as `check_outputs` checks arrays."""
    if o.shape != shape:
        bad(i, f"expected shape {shape} but got {o.shape}")
    if o.dtype != dt:
        bad(i, f"expected {type_name(dt)} but got {type_name(o.dtype)}")
    if not o.c_contiguous:
        bad(i, "must be a contiguous (C-order) array")
    if any(o.overlaps(other) for other in (*inputs, *earlier)):
        bad(i, "overlaps another argument of the call")
    return o


def physical_memory() -> int:
    """Bytes of memory of this machine (a very large number where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 62


def check_temporaries(
    entry: str,
    tensors: Mapping[str, Any],
    sizes: Mapping[str, int],
    memory: int | None = None,
) -> None:
    """Refuse sizes whose temporaries cannot fit in `memory` bytes.

    `tensors` are the checked definition's tensors (`frontend.sema`'s:
    `kind`, `extents`, `elem`). Compiled code allocates temporaries (and
    copies of targets a statement reads at other positions, and float32
    accumulators of reductions into 16-bit floats); asking for more than the
    machine has must be a `TCError` here, not a failed allocation.
    """
    from tcdialect.frontend.ir_gen import element_type

    limit = physical_memory() if memory is None else memory
    total, biggest, accumulator = 0, ("", 0), 0
    for t in tensors.values():
        if t.kind == "input" or t.extents is None or t.elem is None:
            continue
        count = math.prod(max(0, e.evaluate(sizes)) for e in t.extents)
        nbytes = count * numpy_dtype(element_type(t.elem)).itemsize
        biggest = max(biggest, (t.name, nbytes), key=lambda x: x[1])
        if t.kind == "temp":
            total += nbytes
        if t.elem in ("float16", "bfloat16"):
            accumulator = max(accumulator, count * 4)
    total += biggest[1]  # room for one snapshot copy
    total += accumulator  # and for one float32 accumulator
    if total > limit:
        gib = 1 << 30
        raise TCError(
            f"@{entry} needs {total / gib:.1f} GiB of temporaries and "
            f"outputs for these sizes ({', '.join(f'{k}={v}' for k, v in sizes.items())})"
            f"; this machine has {limit / gib:.1f} GiB"
        )


# ------------------------------------------------------- calling convention


def _names(func: FuncOp, attr: str) -> list[str]:
    value = func.attributes.get(attr)
    if value is None:
        return []
    assert isinstance(value, ArrayAttr)
    return [s.data for s in value.data if isinstance(s, StringAttr)]


def signature_of(func: FuncOp) -> Signature:
    """Read the calling convention off an `affine`-stage `func.func`."""
    inputs, outputs = _names(func, "tc.inputs"), _names(func, "tc.outputs")
    checked, sizes = _names(func, "tc.checked"), _names(func, "tc.sizes")
    kinds: list[tuple[ArgKind, str]] = [
        *(("input", n) for n in inputs),
        *(("output", n) for n in outputs),
        *([("error", "error")] if checked else []),
        *(("size", n) for n in sizes),
    ]
    types = func.function_type.inputs.data
    if len(types) != len(kinds):
        raise TCError(
            f"internal error: @{func.sym_name.data} has {len(types)} arguments "
            f"but its tc.* attributes describe {len(kinds)}"
        )
    args: list[ArgSpec] = []
    for (kind, name), t in zip(kinds, types):
        if kind == "size":
            if not isinstance(t, IndexType):
                raise TCError(f"internal error: size argument {name} is not an index")
            args.append(ArgSpec(kind, name))
            continue
        if not isinstance(t, MemRefType):
            raise TCError(f"internal error: argument {name} is not a memref")
        dyn = tuple(i for i, d in enumerate(t.get_shape()) if d < 0)
        args.append(ArgSpec(kind, name, dyn))
    return Signature(tuple(args), tuple(checked))
