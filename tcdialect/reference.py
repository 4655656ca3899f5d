"""A NumPy reference interpreter of the `tc` dialect: the oracle for every stage.

`run(module, entry, inputs)` evaluates one `tc.def` on NumPy arrays and returns
its outputs in declared order. It favours exact, documented semantics over
speed, but each `tc.comprehension` is still evaluated as a whole: every index
variable becomes an `arange` shaped to broadcast along its own axis, the body
ops run once on those grids, and the yielded value is reduced over the
reduction axes. Index spaces larger than `MAX_ELEMENTS` are split into blocks
(along the outermost axes) so the memory footprint stays bounded.

Semantics, in short (TC-LANGUAGE.md §4):

* ``=`` writes the value over the output index space (a whole new tensor).
* ``op=!`` reduces into the operator's identity, ``op=`` into the ``into``
  operand; ``+ * min max`` are `np.add`/`np.multiply`/`np.minimum`/`np.maximum`
  in the result's element type (float32 accumulates in float32; integers
  wrap; ``min``/``max`` propagate NaN; ``+``/``*`` on ``i1`` are xor/and, as
  `arith.addi`/`arith.muli` on ``i1``). An empty reduction gives the identity.
* Values never alias: every comprehension produces a fresh array, so reads of
  the target see its previous value.
* `tc.read` is a NumPy gather; every subscript is bounds-checked and an
  out-of-range one raises `TCError` naming the tensor. Nothing is read when
  the index space is empty.
* Body values are stored in the *signless* NumPy type of their IR type
  (``index`` → int64, ``i1`` → bool, ``iN`` → intN, floats as themselves);
  ops that treat integers as unsigned (``divui``, ``cmpi ult``, ``uitofp``,
  ``extui`` ...) reinterpret them as ``uintN``. Integer arithmetic wraps;
  division or remainder by zero gives 0 (the frontend guards it anyway) and
  never traps.
* Tensors are stored in the NumPy type of their element type (``ui8`` →
  uint8 ...); reads convert to the signless form and writes convert back.
* 16-bit floats: ``f16`` values are NumPy float16 (NumPy rounds every
  float16 operation's exact result to float16, as the device's `half`
  arithmetic does). NumPy has no bfloat16, so a ``bf16`` tensor holds bit
  patterns (uint16, `tcdialect.bfloat16`) and a ``bf16`` body value is a
  float32 array whose values are rounded to bfloat16 after every op
  (`body_value`); reads and writes convert between the two forms. A
  reduction into a 16-bit tensor accumulates in float32 (identity or
  ``into`` value extended, yielded values extended, one rounding at the
  end), as `tc.comprehension` specifies.

Inputs are checked by `bind_sizes` / `prepare_inputs`: count, rank, exact
dtype, consistent size parameters and literal extents. Non-contiguous arrays
are copied (`np.ascontiguousarray`); Python scalars are accepted for 0-d inputs
and converted to the declared type.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, Operation, SSAValue

from tcdialect import special_functions
from tcdialect.arguments import (
    Array,
    InputValue,
    bind_sizes,
    numpy_dtype,
    prepare_inputs,
)
from tcdialect.bfloat16 import (
    from_bfloat16,
    ml_bfloat16_dtype,
    ml_dtypes_result,
    round_to_bfloat16,
    to_bfloat16,
)
from tcdialect.diagnostics import OutOfBoundsAccess, TCError
from tcdialect.dialects.tc import (
    ComprehensionOp,
    DefOp,
    InsertStepOp,
    NextOp,
    RecurrenceOp,
    ReturnOp,
    TensorType,
)

__all__ = [
    "MAX_ELEMENTS",
    "bind_sizes",
    "body_to_tensor",
    "body_value",
    "find_def",
    "numpy_dtype",
    "prepare_inputs",
    "run",
    "tensor_to_body",
]

#: Largest index space (number of points) evaluated in one piece.
MAX_ELEMENTS = 1 << 26


# --------------------------------------------------------------------- types


def _storage_dtype(t: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of a body value of IR type `t` (signless form;
    float32 for bf16)."""
    if isinstance(t, BFloat16Type):
        return np.dtype(np.float32)
    dt = numpy_dtype(t)
    if dt.kind == "u":
        return np.dtype(f"int{dt.itemsize * 8}")
    return dt


def body_value(x: Any, t: Attribute) -> Array:
    """An op's result `x` as a body value of IR type `t`: in its storage
    dtype, and rounded to bfloat16 for ``bf16``."""
    v = _coerce(x, _storage_dtype(t))
    return round_to_bfloat16(v) if isinstance(t, BFloat16Type) else v


def tensor_to_body(x: Array, t: Attribute) -> Array:
    """Tensor elements of element type `t` in their body form (uintN as
    intN, bf16 bit patterns as float32 values)."""
    if isinstance(t, BFloat16Type):
        return from_bfloat16(x)
    return _to_storage(x)


def body_to_tensor(x: Array, t: Attribute) -> Array:
    """Body values of type `t` as tensor elements of element type `t`
    (wrapping integers; bf16 values as their bit patterns)."""
    if isinstance(t, BFloat16Type):
        return to_bfloat16(x)
    return _to_tensor_dtype(x, numpy_dtype(t))


def _accumulator_dtype(t: Attribute) -> np.dtype[Any]:
    """The dtype a reduction into element type `t` accumulates in."""
    if isinstance(t, Float16Type | BFloat16Type):
        return np.dtype(np.float32)
    return numpy_dtype(t)


# ------------------------------------------------------------ input binding


def find_def(module: ModuleOp | DefOp, entry: str | None = None) -> DefOp:
    """The `tc.def` named `entry` (with or without '@') in `module`, or its only one."""
    if entry is not None:
        entry = entry.removeprefix("@")
    if isinstance(module, DefOp):
        if entry is not None and entry != module.sym_name.data:
            raise TCError(
                f"no definition named @{entry}; available: @{module.sym_name.data}"
            )
        return module
    defs = [op for op in module.walk() if isinstance(op, DefOp)]
    names = ", ".join(f"@{d.sym_name.data}" for d in defs)
    if not defs:
        raise TCError("the module contains no tc.def")
    if entry is None:
        if len(defs) > 1:
            raise TCError(
                f"the module defines several definitions ({names}); "
                "choose one with entry="
            )
        return defs[0]
    for d in defs:
        if d.sym_name.data == entry:
            return d
    raise TCError(f"no definition named @{entry}; available: {names}")


# ---------------------------------------------------------------- run a def


def run(
    module: ModuleOp | DefOp,
    entry: str | None,
    inputs: Sequence[InputValue],
) -> tuple[Array, ...]:
    """Evaluate the `tc.def` `entry` of `module` on `inputs`.

    Returns the outputs in declared order as fresh arrays (0-d outputs as 0-d
    arrays) of the declared element types; ``bf16`` ones as
    `ml_dtypes.bfloat16` arrays when an input is one.
    """
    defop = find_def(module, entry)
    arrays, sizes = prepare_inputs(defop, inputs)
    env: dict[SSAValue, Array] = {}
    names: dict[SSAValue, str] = {}
    for arg, name, arr in zip(defop.body.block.args, defop.input_names, arrays):
        env[arg] = arr
        names[arg] = name
    with np.errstate(all="ignore"):
        for op in defop.body.block.ops:
            if isinstance(op, ComprehensionOp):
                env[op.result] = _Comprehension(op, env, names, sizes).evaluate()
                names[op.result] = op.target.data
            elif isinstance(op, RecurrenceOp):
                _recurrence(op, env, names, sizes)
            elif isinstance(op, ReturnOp):
                # Fresh arrays only: never an input, never one array twice.
                seen = {id(a) for a in arrays}
                outputs: list[Array] = []
                for v in op.values:
                    value = env[v]
                    outputs.append(value.copy() if id(value) in seen else value)
                    seen.add(id(value))
                bf16 = [
                    isinstance(t.element_type, BFloat16Type) for t in defop.output_types
                ]
                return tuple(ml_dtypes_result(outputs, bf16, ml_bfloat16_dtype(inputs)))
            else:
                raise TCError(f"reference interpreter: unsupported op '{op.name}'")
    raise TCError(f"@{defop.sym_name.data} has no tc.return")  # pragma: no cover


def _recurrence(
    op: RecurrenceOp,
    env: dict[SSAValue, Array],
    names: dict[SSAValue, str],
    sizes: Mapping[str, int],
) -> None:
    """Run a `tc.recurrence` step by step; fresh tensors start as zeros (the
    frontend never reads their unwritten steps)."""
    lo, hi = (e.evaluate(sizes) for e in op.range)
    block = op.body.block
    carried: list[Array] = []
    for i, r in enumerate(op.res):
        if i < len(op.inits):
            carried.append(env[op.inits[i]])
            continue
        t = r.type
        assert isinstance(t, TensorType)
        shape = tuple(max(0, e.evaluate(sizes)) for e in t.extents)
        carried.append(np.zeros(shape, dtype=numpy_dtype(t.element_type)))
    for step in range(lo, hi):
        env[block.args[0]] = np.asarray(step, dtype=np.int64)
        for name, a, v in zip(op.tensor_names, block.args[1:], carried):
            env[a] = v
            names[a] = name
        for inner in block.ops:
            if isinstance(inner, ComprehensionOp):
                env[inner.result] = _Comprehension(inner, env, names, sizes).evaluate()
                names[inner.result] = inner.target.data
            elif isinstance(inner, InsertStepOp):
                full = env[inner.tensor].copy()
                at: list[Any] = [slice(None)] * full.ndim
                at[inner.step_dim] = step
                full[tuple(at)] = env[inner.slice]
                env[inner.result] = full
                names[inner.result] = names[inner.tensor]
            elif isinstance(inner, NextOp):
                carried = [env[v] for v in inner.values]
            else:
                raise TCError(f"reference interpreter: unsupported op '{inner.name}'")
    for name, r, v in zip(op.tensor_names, op.res, carried):
        env[r] = v
        names[r] = name


# ------------------------------------------------------ one comprehension


_REDUCERS: dict[str, np.ufunc] = {
    "+": np.add,
    "*": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def _reducer(kind: str, dt: np.dtype[Any]) -> np.ufunc:
    if dt == np.bool_ and kind == "+":
        return np.logical_xor  # arith.addi on i1
    if dt == np.bool_ and kind == "*":
        return np.logical_and  # arith.muli on i1
    return _REDUCERS[kind]


def _identity(kind: str, dt: np.dtype[Any]) -> Any:
    if kind == "+":
        return dt.type(0)
    if kind == "*":
        return dt.type(1)
    if dt == np.bool_:
        return np.bool_(kind == "min")
    if dt.kind == "f":
        return dt.type(np.inf if kind == "min" else -np.inf)
    info = np.iinfo(dt)
    return dt.type(info.max if kind == "min" else info.min)


class _Comprehension:
    """Evaluation of one `tc.comprehension` over (blocks of) its index space."""

    def __init__(
        self,
        op: ComprehensionOp,
        env: Mapping[SSAValue, Array],
        names: Mapping[SSAValue, str],
        sizes: Mapping[str, int],
    ):
        self.op = op
        self.env = env
        self.names = names
        self.sizes = sizes
        self.rank = op.num_output_indices
        self.elem = op.result_type.element_type
        self.dtype = numpy_dtype(self.elem)
        #: The dtype reductions accumulate in (float32 for 16-bit floats).
        self.acc = _accumulator_dtype(self.elem)
        self.kind = op.reduction
        self.lower: list[int] = []
        self.lengths: list[int] = []
        for lo, hi in op.ranges:
            lo_v, hi_v = lo.evaluate(sizes), hi.evaluate(sizes)
            self.lower.append(lo_v)
            self.lengths.append(max(0, hi_v - lo_v))

    def evaluate(self) -> Array:
        if self.op.is_scatter:
            return self._scatter()
        out_shape = tuple(self.lengths[: self.rank])
        kind = self.kind
        space = math.prod(self.lengths)
        if kind is None:
            if space == 0:
                return np.zeros(out_shape, dtype=self.dtype)
            return self._block([(0, n) for n in self.lengths])
        acc = self.acc
        ufunc = _reducer(kind, acc)
        if space == 0:
            reduced = np.full(out_shape, _identity(kind, acc), dtype=acc)
        else:
            reduced = self._block([(0, n) for n in self.lengths])
        if self.op.into is not None:
            start = self.env[self.op.into]
            if acc != self.dtype:
                start = tensor_to_body(start, self.elem).astype(acc)
        else:
            start = np.full(out_shape, _identity(kind, acc), dtype=acc)
        if start.shape != out_shape:  # pragma: no cover - guaranteed by the verifier
            raise TCError(
                f"reference interpreter: 'into' value of {self.op.target.data} has "
                f"shape {start.shape}, expected {out_shape}"
            )
        result = np.asarray(ufunc(start, reduced, dtype=acc))
        return result if acc == self.dtype else body_to_tensor(result, self.elem)

    def _scatter(self) -> Array:
        """A scatter-accumulate: ``np.add.at`` of each block's values at its
        subscripts (bounds-checked like reads), in the accumulator dtype
        (``logical_xor.at`` for i1, as `arith.addi`)."""
        t = self.op.result_type
        shape = tuple(max(0, e.evaluate(self.sizes)) for e in t.extents)
        if self.op.into is not None:
            acc = tensor_to_body(self.env[self.op.into], self.elem).astype(self.acc)
        else:
            acc = np.zeros(shape, dtype=self.acc)
        rows = max(1, MAX_ELEMENTS // max(1, math.prod(self.lengths[1:])))
        first = self.lengths[0] if self.lengths else 1
        for a in range(0, first if math.prod(self.lengths) else 0, rows):
            bounds = [(0, n) for n in self.lengths]
            if bounds:
                bounds[0] = (a, min(a + rows, first))
            self._evaluate_block(bounds, acc)
        return acc if acc.dtype == self.dtype else body_to_tensor(acc, self.elem)

    def _block(self, bounds: list[tuple[int, int]]) -> Array:
        """The (reduced) value over the block `bounds` of the index space.

        Blocks larger than `MAX_ELEMENTS` are split along their first axis
        that can be split; parts along an output axis are concatenated, parts
        along a reduction axis are combined with the reduction.
        """
        lengths = [b - a for a, b in bounds]
        total = math.prod(lengths)
        if total > MAX_ELEMENTS:
            for axis, n in enumerate(lengths):
                if n <= 1:
                    continue
                rest = total // n
                step = max(1, MAX_ELEMENTS // rest)
                a0, b0 = bounds[axis]
                parts = []
                for a in range(a0, b0, step):
                    sub = list(bounds)
                    sub[axis] = (a, min(a + step, b0))
                    parts.append(self._block(sub))
                if axis < self.rank:
                    return np.concatenate(parts, axis=axis)
                assert self.kind is not None
                ufunc = _reducer(self.kind, self.acc)
                acc = parts[0]
                for p in parts[1:]:
                    acc = np.asarray(ufunc(acc, p, dtype=self.acc))
                return acc
        return self._evaluate_block(bounds)

    def _evaluate_block(
        self, bounds: list[tuple[int, int]], scatter: Array | None = None
    ) -> Array:
        """The block's values (tensor dtype), or for a reduction its partial
        result (accumulator dtype); a scatter adds them into `scatter`."""
        args = self.op.body.block.args
        n = len(args)
        shape = tuple(b - a for a, b in bounds)
        values: dict[SSAValue, Array] = {}
        self._values = values  # for `read`'s account of a bad subscript
        for axis, (arg, (a, b)) in enumerate(zip(args, bounds)):
            grid_shape = [1] * n
            grid_shape[axis] = b - a
            lo = self.lower[axis]
            values[arg] = np.arange(lo + a, lo + b, dtype=np.int64).reshape(grid_shape)
        yielded: Array | None = None
        for op in self.op.body.block.ops:
            if op.name == "tc.yield":
                yielded = values[op.operands[0]]
                if scatter is not None:
                    subs = [np.broadcast_to(values[i], shape) for i in op.operands[1:]]
                    self.read(op, [scatter, *subs], "scatter into")
                    at = tuple(s.astype(np.intp) for s in subs)
                    full = np.broadcast_to(yielded.astype(self.acc), shape)
                    _reducer("+", self.acc).at(scatter, at, full)
                    return scatter
                break
            operands = [self._value(values, v) for v in op.operands]
            result = _evaluate_op(self, op, operands)
            values[op.results[0]] = body_value(result, op.results[0].type)
        assert yielded is not None, "tc.comprehension body without tc.yield"
        if self.kind is None:
            full = body_to_tensor(np.broadcast_to(yielded, shape), self.elem)
            return np.array(full, dtype=self.dtype)
        if self.acc == self.dtype:
            full = _to_tensor_dtype(np.broadcast_to(yielded, shape), self.dtype)
        else:
            full = np.broadcast_to(yielded.astype(self.acc), shape)
        axes = tuple(range(self.rank, n))
        ufunc = _reducer(self.kind, self.acc)
        return np.asarray(ufunc.reduce(full, axis=axes, dtype=self.acc))

    def _value(self, values: Mapping[SSAValue, Array], v: SSAValue) -> Array:
        if (x := values.get(v)) is not None:
            return x
        if isinstance(v.type, TensorType) or v in self.env:
            return self.env[v]  # (or the step index of a recurrence)
        raise TCError(  # pragma: no cover - only for malformed IR
            f"reference interpreter: value {v} is defined outside the comprehension"
        )

    # ------------------------------------------------------- tc ops
    def read(
        self, op: Operation, operands: list[Array], what: str = "read of"
    ) -> Array:
        tensor, subs = operands[0], operands[1:]
        name = self.names.get(op.operands[0], "?")
        if what != "read of":  # a scatter: `op` is its tc.yield
            name = self.op.target.data
        for d, (s, extent) in enumerate(zip(subs, tensor.shape)):
            if s.size == 0:
                continue
            lo, hi = int(s.min()), int(s.max())
            if lo < 0 or hi >= extent:
                mask = (s < 0) | (s >= extent)
                at = np.unravel_index(int(np.argmax(mask)), mask.shape)
                bad = int(s[at])
                origin = self._origin(op.operands[1 + d], at, mask.shape)
                raise OutOfBoundsAccess(
                    f"{what} tensor '{name}' out of bounds: subscript {d} is {bad} "
                    f"but the extent is {extent} ("
                    + (f"{origin}; " if origin else "")
                    + f"valid: 0 to {extent - 1}) in the statement of "
                    f"'{self.op.target.data}'",
                    name,
                    d,
                    self.op.target.data,
                    self._ordinal(),
                )
        if what != "read of":
            return tensor
        value = np.asarray(tensor[tuple(subs)])
        t = op.operands[0].type
        assert isinstance(t, TensorType)
        return tensor_to_body(value, t.element_type)

    def _ordinal(self) -> int:
        """How many comprehensions of the definition writing this one's
        target come before it (which statement of the source it is)."""
        top: Operation = self.op
        while (parent := top.parent_op()) is not None and not isinstance(parent, DefOp):
            top = parent
        if parent is None:
            return 0
        target = self.op.target.data
        count = 0
        for op in parent.walk():
            if op is self.op:
                break
            if isinstance(op, ComprehensionOp) and op.target.data == target:
                count += 1
        return count

    def _origin(self, v: SSAValue, at: tuple[Any, ...], shape: tuple[int, ...]) -> str:
        """Where the subscript `v` read its value at the position `at` of an
        index space of `shape`, when it is an element of an index tensor
        (through casts, or arithmetic with constants: then "from ..."):
        ``Idx[1] = 9``; else the empty string."""
        owner = v.owner
        derived = False
        while isinstance(owner, Operation) and owner.name.startswith("arith."):
            varying = [o for o in owner.operands if not _is_constant(o)]
            if len(varying) != 1:
                return ""
            derived |= len(owner.operands) > 1
            owner = varying[0].owner
        if not isinstance(owner, Operation) or owner.name != "tc.read":
            return ""
        values = getattr(self, "_values", {})
        try:
            where = [
                int(np.broadcast_to(self._value(values, i), shape)[at])
                for i in owner.operands[1:]
            ]
            tensor = self._value(values, owner.operands[0])
            got = tensor[tuple(where)]
        except (ValueError, IndexError, KeyError, TCError):
            return ""
        name = self.names.get(owner.operands[0], "?")
        element = f"{name}[{', '.join(map(str, where))}] = {got}"
        return f"from {element}" if derived else element

    def size(self, op: Operation) -> Array:
        name = op.properties["size"].data  # pyright: ignore
        return np.asarray(self.sizes[name], dtype=np.int64)


def _is_constant(v: SSAValue) -> bool:
    owner = v.owner
    return isinstance(owner, Operation) and owner.name == "arith.constant"


def _coerce(x: Any, dt: np.dtype[Any]) -> Array:
    x = np.asarray(x)
    return x if x.dtype == dt else x.astype(dt)


def _to_storage(x: Array) -> Array:
    """Tensor elements to their signless body form (uintN → intN)."""
    if x.dtype.kind == "u":
        return x.astype(f"int{x.dtype.itemsize * 8}")
    return x


def _to_tensor_dtype(x: Array, dt: np.dtype[Any]) -> Array:
    """A signless body value to the tensor element dtype `dt` (wrapping)."""
    return x if x.dtype == dt else x.astype(dt)


# ------------------------------------------------------------ op semantics
#
# Each function takes the op and its operand values (NumPy arrays in their
# signless storage type) and returns the result; the caller casts it to the
# storage type of the op's result type.


def _bits(dt: np.dtype[Any]) -> int:
    return 1 if dt == np.bool_ else dt.itemsize * 8


def _width(x: Array) -> int:
    return _bits(x.dtype)


def _signed(x: Array) -> Array:
    """Two's complement signed view (i1: true is -1)."""
    if x.dtype == np.bool_:
        return -(x.astype(np.int8))
    return x


def _unsigned(x: Array) -> Array:
    """Unsigned view of the same bits."""
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    if x.dtype.kind == "u":
        return x
    return x.astype(f"uint{x.dtype.itemsize * 8}")


def _wrap(x: Array, dt: np.dtype[Any]) -> Array:
    """An integer array wrapped into the signless storage type `dt`."""
    if dt == np.bool_:
        return (np.asarray(x) & 1).astype(np.bool_)
    return np.asarray(x).astype(dt)


def _result_dtype(op: Operation) -> np.dtype[Any]:
    return _storage_dtype(op.results[0].type)


def _constant(op: Operation, _: list[Array]) -> Array:
    attr = op.properties["value"]
    t = op.results[0].type
    dt = _storage_dtype(t)
    if isinstance(attr, IntegerAttr):
        v = int(attr.value.data)
        width = 1 if dt == np.bool_ else dt.itemsize * 8
        v %= 1 << width
        if dt == np.bool_:
            return np.asarray(bool(v))
        if v >= 1 << (width - 1):
            v -= 1 << width
        return np.asarray(v, dtype=dt)
    if isinstance(attr, FloatAttr):
        return np.asarray(attr.value.data, dtype=dt)
    raise TCError(f"reference interpreter: unsupported constant {attr}")


# Wrapping integer arithmetic, computed on the unsigned view.
def _int_binary(fn: Callable[[Array, Array], Array]) -> Callable[..., Array]:
    def f(op: Operation, xs: list[Array]) -> Array:
        return _wrap(fn(_unsigned(xs[0]), _unsigned(xs[1])), _result_dtype(op))

    return f


def _safe(b: Array) -> tuple[Array, Array]:
    nonzero = b != 0
    return nonzero, np.where(nonzero, b, np.ones_like(b))


def _divsi(op: Operation, xs: list[Array]) -> Array:
    a, b = _signed(xs[0]), _signed(xs[1])
    nz, sb = _safe(b)
    q = a // sb
    r = a - q * sb
    q = q + ((r != 0) & ((a < 0) != (sb < 0)))
    return _wrap(np.where(nz, q, 0), _result_dtype(op))


def _floordivsi(op: Operation, xs: list[Array]) -> Array:
    a, b = _signed(xs[0]), _signed(xs[1])
    nz, sb = _safe(b)
    return _wrap(np.where(nz, a // sb, 0), _result_dtype(op))


def _ceildivsi(op: Operation, xs: list[Array]) -> Array:
    a, b = _signed(xs[0]), _signed(xs[1])
    nz, sb = _safe(b)
    q = a // sb
    q = q + (a - q * sb != 0)
    return _wrap(np.where(nz, q, 0), _result_dtype(op))


def _remsi(op: Operation, xs: list[Array]) -> Array:
    a, b = _signed(xs[0]), _signed(xs[1])
    nz, sb = _safe(b)
    return _wrap(np.where(nz, np.fmod(a, sb), 0), _result_dtype(op))


def _divui(op: Operation, xs: list[Array]) -> Array:
    a, b = _unsigned(xs[0]), _unsigned(xs[1])
    nz, sb = _safe(b)
    return _wrap(np.where(nz, a // sb, 0), _result_dtype(op))


def _ceildivui(op: Operation, xs: list[Array]) -> Array:
    a, b = _unsigned(xs[0]), _unsigned(xs[1])
    nz, sb = _safe(b)
    q = a // sb
    q = q + (a % sb != 0)
    return _wrap(np.where(nz, q, 0), _result_dtype(op))


def _remui(op: Operation, xs: list[Array]) -> Array:
    a, b = _unsigned(xs[0]), _unsigned(xs[1])
    nz, sb = _safe(b)
    return _wrap(np.where(nz, a % sb, 0), _result_dtype(op))


def _minmax(fn: np.ufunc, signed: bool) -> Callable[..., Array]:
    view = _signed if signed else _unsigned

    def f(op: Operation, xs: list[Array]) -> Array:
        return _wrap(fn(view(xs[0]), view(xs[1])), _result_dtype(op))

    return f


def _bitwise(fn: np.ufunc) -> Callable[..., Array]:
    def f(op: Operation, xs: list[Array]) -> Array:
        return fn(xs[0], xs[1])

    return f


def _shift(kind: str) -> Callable[..., Array]:
    def f(op: Operation, xs: list[Array]) -> Array:
        width = _width(xs[0])
        amount = _unsigned(xs[1])
        ok = amount < width
        safe = np.where(ok, amount, 0).astype(np.uint64)
        if kind == "shrsi":
            a = _signed(xs[0]).astype(np.int64)
            shifted = a >> np.where(ok, safe, width - 1).astype(np.int64)
            return _wrap(shifted, _result_dtype(op))
        a = _unsigned(xs[0]).astype(np.uint64)
        shifted = a << safe if kind == "shli" else a >> safe
        return _wrap(np.where(ok, shifted, 0), _result_dtype(op))

    return f


_CMPI: dict[str, Callable[[Array, Array], Array]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: _signed(a) < _signed(b),
    "sle": lambda a, b: _signed(a) <= _signed(b),
    "sgt": lambda a, b: _signed(a) > _signed(b),
    "sge": lambda a, b: _signed(a) >= _signed(b),
    "ult": lambda a, b: _unsigned(a) < _unsigned(b),
    "ule": lambda a, b: _unsigned(a) <= _unsigned(b),
    "ugt": lambda a, b: _unsigned(a) > _unsigned(b),
    "uge": lambda a, b: _unsigned(a) >= _unsigned(b),
}
_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def _predicate(op: Operation) -> int:
    return int(op.properties["predicate"].value.data)  # pyright: ignore


def _cmpi(op: Operation, xs: list[Array]) -> Array:
    return _CMPI[_CMPI_NAMES[_predicate(op)]](xs[0], xs[1])


_CMPF_NAMES = [
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
]


def _cmpf(op: Operation, xs: list[Array]) -> Array:
    a, b = xs
    pred = _CMPF_NAMES[_predicate(op)]
    shape = np.broadcast_shapes(a.shape, b.shape)
    if pred in ("false", "true"):
        return np.full(shape, pred == "true", dtype=np.bool_)
    unordered = np.isnan(a) | np.isnan(b)
    if pred == "ord":
        return ~unordered
    if pred == "uno":
        return unordered
    cmp = {
        "eq": np.equal,
        "gt": np.greater,
        "ge": np.greater_equal,
        "lt": np.less,
        "le": np.less_equal,
        "ne": np.not_equal,
    }[pred[1:]](a, b)
    if pred[0] == "o":
        return cmp & ~unordered
    return cmp | unordered


def _select(op: Operation, xs: list[Array]) -> Array:
    return np.where(xs[0], xs[1], xs[2])


def _float_ufunc(fn: Callable[..., Any]) -> Callable[..., Array]:
    def f(op: Operation, xs: list[Array]) -> Array:
        return fn(*xs)

    return f


def _index_cast(op: Operation, xs: list[Array]) -> Array:
    # Sign-extends from iN to index, truncates from index to iN.
    return _wrap(_signed(xs[0]).astype(np.int64), _result_dtype(op))


def _extsi(op: Operation, xs: list[Array]) -> Array:
    return _wrap(_signed(xs[0]).astype(np.int64), _result_dtype(op))


def _extui(op: Operation, xs: list[Array]) -> Array:
    return _wrap(_unsigned(xs[0]).astype(np.uint64), _result_dtype(op))


def _trunci(op: Operation, xs: list[Array]) -> Array:
    return _wrap(xs[0], _result_dtype(op))


def _sitofp(op: Operation, xs: list[Array]) -> Array:
    return _signed(xs[0]).astype(_result_dtype(op))


def _uitofp(op: Operation, xs: list[Array]) -> Array:
    return _unsigned(xs[0]).astype(_result_dtype(op))


def _saturating(x: Array, bits: int, signed: bool) -> Array:
    """Float to integer as compiled code does it (LLVM's `fpto[su]i.sat`):
    toward zero, clamped to the `bits`-bit range, NaN to 0. (MLIR leaves
    out-of-range values poison; this defines them, and NumPy's `astype`
    would give platform-dependent values.)"""
    lo, end = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
    acc = np.dtype(np.int64 if signed else np.uint64)
    t = np.trunc(np.asarray(x))
    with np.errstate(invalid="ignore"):
        # `end` and `lo` are powers of two (or 0): exact as floats
        above, below = t >= float(end), t < float(lo)
        inside = ~above & ~below & ~np.isnan(t)
        vals = np.where(inside, t, 0).astype(acc)
    return np.where(
        above, np.array(end - 1, acc), np.where(below, np.array(lo, acc), vals)
    )


def _fptosi(op: Operation, xs: list[Array]) -> Array:
    dt = _result_dtype(op)
    return _wrap(_saturating(xs[0], _bits(dt), True), dt)


def _fptoui(op: Operation, xs: list[Array]) -> Array:
    dt = _result_dtype(op)
    return _wrap(_saturating(xs[0], _bits(dt), False), dt)


def _float_cast(op: Operation, xs: list[Array]) -> Array:
    return xs[0].astype(_result_dtype(op))


def _bitcast(op: Operation, xs: list[Array]) -> Array:
    dt = _result_dtype(op)
    x = xs[0]
    if isinstance(op.results[0].type, BFloat16Type):  # from i16
        return from_bfloat16(np.ascontiguousarray(x).view(np.uint16))
    if isinstance(op.operands[0].type, BFloat16Type):  # to i16
        return to_bfloat16(x).view(np.int16)
    if x.dtype == dt:
        return x
    if dt == np.bool_ or x.dtype == np.bool_:
        return x.astype(dt)
    return np.ascontiguousarray(x).view(dt)


# math ops --------------------------------------------------------------------


def _vectorized(fn: Callable[[float], float]) -> Callable[[Array], Array]:
    vec = np.vectorize(fn, otypes=[np.float64])

    def f(x: Array) -> Array:
        return np.asarray(vec(x)).astype(x.dtype)

    return f


def _erf_safe(fn: Callable[[float], float]) -> Callable[[float], float]:
    def f(x: float) -> float:
        return x if math.isnan(x) else fn(x)

    return f


_erf = _vectorized(_erf_safe(math.erf))
_erfc = _vectorized(_erf_safe(math.erfc))


def _round_half_away(x: Array) -> Array:
    t = np.trunc(x)
    frac = x - t  # exact
    away = np.abs(frac) >= x.dtype.type(0.5)
    return np.where(away, t + np.copysign(x.dtype.type(1), x), t)


def _rsqrt(x: Array) -> Array:
    return x.dtype.type(1) / np.sqrt(x)


def _fma(x: Array, y: Array, z: Array) -> Array:
    if x.dtype.itemsize < 8:
        # The product of two float16/float32 values is exact in float64.
        wide = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
        return wide.astype(x.dtype)
    return x * y + z


def _ipowi(op: Operation, xs: list[Array]) -> Array:
    base, exp = _signed(xs[0]).astype(np.int64), _signed(xs[1]).astype(np.int64)
    base, exp = np.broadcast_arrays(base, exp)
    result = np.ones_like(base, dtype=np.uint64)
    b = base.astype(np.uint64)
    e = np.where(exp < 0, 0, exp)
    while np.any(e > 0):
        odd = (e & 1) == 1
        result = np.where(odd, result * b, result)
        b = b * b
        e = e >> 1
    # Negative exponents: 1 / base**|exp| in integers.
    neg = np.where(base == 1, 1, np.where(base == -1, np.where(exp % 2 == 0, 1, -1), 0))
    return _wrap(np.where(exp < 0, neg, result.astype(np.int64)), _result_dtype(op))


def _fpowi(op: Operation, xs: list[Array]) -> Array:
    x = xs[0]
    return np.power(x, _signed(xs[1]).astype(x.dtype))


def _absi(op: Operation, xs: list[Array]) -> Array:
    return _wrap(np.abs(_signed(xs[0])), _result_dtype(op))


# tc.builtin -----------------------------------------------------------------


def _fdim(x: Array, y: Array) -> Array:
    zero = x.dtype.type(0)
    r = np.where(x > y, x - y, zero)
    return np.where(np.isnan(x) | np.isnan(y), x + y, r)


_BUILTINS: dict[str, Callable[..., Array]] = {
    "erfc": _erfc,
    "exp10": lambda x: np.power(x.dtype.type(10), x),
    "hypot": np.hypot,
    "fdim": _fdim,
    "fmod": np.fmod,
    **special_functions.BUILTINS,
}


def _builtin(op: Operation, xs: list[Array]) -> Array:
    callee = op.properties["callee"].data  # pyright: ignore
    if (fn := _BUILTINS.get(callee)) is None:
        raise TCError(f"reference interpreter: unsupported builtin '{callee}'")
    return fn(*xs)


# dispatch ---------------------------------------------------------------------

_OpFn = Callable[[Operation, list[Array]], Array]

_MATH_UNARY: dict[str, Callable[..., Any]] = {
    "absf": np.abs,
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cbrt": np.cbrt,
    "ceil": np.ceil,
    "cos": np.cos,
    "cosh": np.cosh,
    "erf": _erf,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "floor": np.floor,
    "log": np.log,
    "log10": np.log10,
    "log1p": np.log1p,
    "log2": np.log2,
    "round": _round_half_away,
    "roundeven": np.rint,
    "rsqrt": _rsqrt,
    "sin": np.sin,
    "sinh": np.sinh,
    "sqrt": np.sqrt,
    "tan": np.tan,
    "tanh": np.tanh,
    "trunc": np.trunc,
    # binary / ternary
    "atan2": np.arctan2,
    "copysign": np.copysign,
    "powf": np.power,
    "fma": _fma,
}

_OPS: dict[str, _OpFn] = {
    "arith.constant": _constant,
    "arith.addi": _int_binary(np.add),
    "arith.subi": _int_binary(np.subtract),
    "arith.muli": _int_binary(np.multiply),
    "arith.divsi": _divsi,
    "arith.divui": _divui,
    "arith.floordivsi": _floordivsi,
    "arith.ceildivsi": _ceildivsi,
    "arith.ceildivui": _ceildivui,
    "arith.remsi": _remsi,
    "arith.remui": _remui,
    "arith.minsi": _minmax(np.minimum, signed=True),
    "arith.maxsi": _minmax(np.maximum, signed=True),
    "arith.minui": _minmax(np.minimum, signed=False),
    "arith.maxui": _minmax(np.maximum, signed=False),
    "arith.andi": _bitwise(np.bitwise_and),
    "arith.ori": _bitwise(np.bitwise_or),
    "arith.xori": _bitwise(np.bitwise_xor),
    "arith.shli": _shift("shli"),
    "arith.shrsi": _shift("shrsi"),
    "arith.shrui": _shift("shrui"),
    "arith.cmpi": _cmpi,
    "arith.cmpf": _cmpf,
    "arith.select": _select,
    "arith.addf": _float_ufunc(np.add),
    "arith.subf": _float_ufunc(np.subtract),
    "arith.mulf": _float_ufunc(np.multiply),
    "arith.divf": _float_ufunc(np.divide),
    "arith.remf": _float_ufunc(np.fmod),
    "arith.negf": _float_ufunc(np.negative),
    "arith.maximumf": _float_ufunc(np.maximum),
    "arith.minimumf": _float_ufunc(np.minimum),
    "arith.maxnumf": _float_ufunc(np.fmax),
    "arith.minnumf": _float_ufunc(np.fmin),
    "arith.index_cast": _index_cast,
    "arith.sitofp": _sitofp,
    "arith.uitofp": _uitofp,
    "arith.fptosi": _fptosi,
    "arith.fptoui": _fptoui,
    "arith.extf": _float_cast,
    "arith.truncf": _float_cast,
    "arith.extsi": _extsi,
    "arith.extui": _extui,
    "arith.trunci": _trunci,
    "arith.bitcast": _bitcast,
    "math.absi": _absi,
    "math.ipowi": _ipowi,
    "math.fpowi": _fpowi,
    "tc.builtin": _builtin,
    **{f"math.{name}": _float_ufunc(fn) for name, fn in _MATH_UNARY.items()},
}


def _evaluate_op(c: _Comprehension, op: Operation, xs: list[Array]) -> Array:
    if op.name == "tc.read":
        return c.read(op, xs)
    if op.name == "tc.size":
        return c.size(op)
    if (fn := _OPS.get(op.name)) is None:
        raise TCError(f"reference interpreter: unsupported op '{op.name}'")
    return np.asarray(fn(op, xs))
