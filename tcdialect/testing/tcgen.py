"""A seeded random TC program generator, a differential checker and a reducer.

`generate(seed)` builds a `Program`: one TC definition (source text, entry
name), its size parameters with concrete values, and a recipe for its input
arrays (NumPy, deterministic from the seed). `check(program, options)` runs
the NumPy reference interpreter (`tcdialect.reference.run`) and the kernel
compiled with ``tcdialect.CpuOptions(**options)`` on those inputs and returns
a `Failure` or None. `reduce(program, still_fails)` shrinks a failing program
while the failure persists. `save`/`load` write and read reproducers (a
``.tc`` file whose ``# tcgen:`` header line holds the sizes and input recipe).

Command line (prints the program, the inputs' sizes and the failure)::

    python -m tcdialect.testing.tcgen --seed N [--options '{"fusion": "min"}'] \\
        [--reduce [--time-limit S] [--isolate]] [--save FILE.tc]
    python -m tcdialect.testing.tcgen --file FILE.tc [--options ...]

``--isolate`` checks every reducer candidate in a fresh process (for
failures that kill the process, such as a segfault in compiled code).

Generated constructs (every program is meant to be accepted by the frontend;
a rejection is a generator bug or a frontend bug, and `check` reports it):

* 1-3 size parameters (values 0..13, some forced >= 1), inputs of rank 0-3
  with size-parameter and literal extents; float32 (sometimes float64) and
  int32 (sometimes int64) element types; int32 index tensors for gathers.
* 2-5 statements per definition, writing outputs and temporaries (tensors
  neither input nor output, TC-LANGUAGE.md §4.2 ext); rank-0 targets.
* reductions ``+=! *=! max=! min=!`` over 1-2 reduction indices, including
  ranges that may be empty (identities) and ``where r in 1:N`` ranges;
* in-place updates: ``op=`` without ``!`` (``+= *= max= min=``) onto a tensor
  an earlier statement wrote; ``=`` and ``op=!`` rewriting a tensor while
  reading it at the same position, reversed (``T(N - 1 - i)``), at wrapped or
  clamped shifts (``T((i + 1) % N)``, ``T(min(i + 1, N - 1))``) or over a
  reduction index (every read sees the tensor as it was before);
* subscripts: plain, shifted (``A(i + 2)`` with the output sized ``N - 2``),
  strided (``A(2 * i)``, ``A(2 * i + 1)``, ``A(2 * i + q)``), convolution-like
  (``A(i + r)`` with ``W(r)``), reversed, constant, ``i - 1`` on ranges
  starting at 1, non-affine (run-time checked: ``%``, ``/``, ``min``, ``max``)
  and data-dependent (``A(G(i))``);
* output ranges either inferred from the accesses or given by ``where i in
  0:E`` (E a size expression such as ``(N + 1) / 2`` or ``N - K + 1``);
  ``where`` lets (``x = expr``) and ``exists`` clauses;
* expressions: ``+ - * / %``, unary ``-``, the ``min``/``max`` operators,
  comparisons, ``&& || !``, ``?:``, casts (``float32(i)``, ``int32(x)``), index
  variables and sizes as values, and the builtins of TC-LANGUAGE.md §4.4
  (``exp tanh log sqrt fmax fmin fmod pow atan2 hypot copysign fdim fma``
  ...), with domains kept valid; rarely NaN (``sqrt`` of a negative) to check
  NaN propagation; mixed int/float promotion; bool and int outputs.

Values are kept finite and comparisons exact: magnitudes are tracked with
interval arithmetic (large values are scaled by powers of two, ints wrapped
with ``%``), product reductions multiply factors near 1, and discontinuous
operations (comparisons, casts to int, ``floor``, ``fmod`` ...) only see
values that the compiled code and the reference compute bit-identically
(no reordered reductions, no transcendental functions).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import re
import sys
import time
import traceback
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Node(ABC):
    """An expression node. `render` gives TC text; `kids` the sub-expressions."""

    @abstractmethod
    def render(self) -> str: ...

    def kids(self) -> tuple[Node, ...]:
        return ()

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return self


@dataclass(frozen=True)
class Lit(Node):
    """A literal, or any text that needs no parentheses (a name)."""

    text: str

    def render(self) -> str:
        return self.text


@dataclass(frozen=True)
class SizeText(Node):
    """A size expression written as TC text (parenthesised when compound)."""

    text: str

    def render(self) -> str:
        return (
            self.text
            if self.text.isidentifier() or self.text.isdigit()
            else f"({self.text})"
        )


@dataclass(frozen=True)
class Acc(Node):
    """A tensor read ``T(a, b)``; rank 0 renders as ``T``."""

    tensor: str
    args: tuple[Node, ...] = ()

    def render(self) -> str:
        if not self.args:
            return self.tensor
        return f"{self.tensor}({', '.join(_top(a) for a in self.args)})"

    def kids(self) -> tuple[Node, ...]:
        return self.args

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return Acc(self.tensor, tuple(kids))


@dataclass(frozen=True)
class Call(Node):
    """A builtin call or ``min``/``max`` or a cast ``float32(x)``.

    `guard` marks nodes that keep a value in range (the reducer never replaces
    them by their operand, only by a constant).
    """

    fn: str
    args: tuple[Node, ...]
    guard: bool = False

    def render(self) -> str:
        return f"{self.fn}({', '.join(_top(a) for a in self.args)})"

    def kids(self) -> tuple[Node, ...]:
        return self.args

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return Call(self.fn, tuple(kids), self.guard)


@dataclass(frozen=True)
class Bin(Node):
    op: str
    a: Node
    b: Node
    guard: bool = False

    def render(self) -> str:
        return f"({self.a.render()} {self.op} {self.b.render()})"

    def kids(self) -> tuple[Node, ...]:
        return (self.a, self.b)

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return Bin(self.op, kids[0], kids[1], self.guard)


@dataclass(frozen=True)
class Un(Node):
    op: str
    a: Node

    def render(self) -> str:
        return (
            f"{self.op}{self.a.render()}"
            if not isinstance(self.a, Un)
            else f"{self.op}({self.a.render()})"
        )

    def kids(self) -> tuple[Node, ...]:
        return (self.a,)

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return Un(self.op, kids[0])


@dataclass(frozen=True)
class Tern(Node):
    c: Node
    a: Node
    b: Node

    def render(self) -> str:
        return f"({self.c.render()} ? {self.a.render()} : {self.b.render()})"

    def kids(self) -> tuple[Node, ...]:
        return (self.c, self.a, self.b)

    def with_kids(self, kids: Sequence[Node]) -> Node:
        return Tern(kids[0], kids[1], kids[2])


def _top(n: Node) -> str:
    """Render without the outer parentheses of a binary node."""
    s = n.render()
    if isinstance(n, Bin | Tern) and s.startswith("(") and s.endswith(")"):
        return s[1:-1]
    return s


def walk(n: Node) -> Iterator[Node]:
    yield n
    for k in n.kids():
        yield from walk(k)


# ----------------------------------------------------------------- statements


@dataclass(frozen=True)
class Range:
    var: str
    lo: str
    hi: str

    def render(self) -> str:
        return f"{self.var} in {self.lo}:{self.hi}"


@dataclass(frozen=True)
class Let:
    name: str
    value: Node

    def render(self) -> str:
        return f"{self.name} = {_top(self.value)}"


@dataclass(frozen=True)
class Exists:
    access: Acc

    def render(self) -> str:
        return f"exists {self.access.render()}"


Clause = Range | Let | Exists


@dataclass(frozen=True)
class Stmt:
    target: str
    indices: tuple[str, ...]
    op: str
    rhs: Node
    where: tuple[Clause, ...] = ()

    def render(self) -> str:
        lhs = self.target + (f"({', '.join(self.indices)})" if self.indices else "")
        text = f"{lhs} {self.op} {_top(self.rhs)}"
        if self.where:
            text += " where " + ", ".join(c.render() for c in self.where)
        return text

    def reads(self) -> set[str]:
        names: set[str] = set()
        nodes: list[Node] = [self.rhs]
        for c in self.where:
            if isinstance(c, Let):
                nodes.append(c.value)
            elif isinstance(c, Exists):
                nodes.append(c.access)
        for n in nodes:
            for m in walk(n):
                if isinstance(m, Acc):
                    names.add(m.tensor)
                elif isinstance(m, Lit) and m.text.isidentifier():
                    names.add(m.text)
                elif isinstance(m, SizeText):
                    names |= _identifiers(m.text)
        for c in self.where:
            if isinstance(c, Range):
                names.update(_identifiers(c.lo) | _identifiers(c.hi))
        return names


def _identifiers(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


@dataclass(frozen=True)
class InputSpec:
    """One input: declared type and dims, and the range its values are drawn from.

    Float values are uniform in [lo, hi); integers in [lo, hi) where `hi` may
    name a size parameter (gather indices); bools are fair coins.
    """

    name: str
    dtype: str
    dims: tuple[str | int, ...]
    lo: float | int = 0
    hi: float | int | str = 1

    def param(self) -> str:
        if not self.dims:
            return f"{self.dtype} {self.name}"
        return f"{self.dtype}({', '.join(str(d) for d in self.dims)}) {self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "dims": list(self.dims),
            "lo": self.lo,
            "hi": self.hi,
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> InputSpec:
        return InputSpec(d["name"], d["dtype"], tuple(d["dims"]), d["lo"], d["hi"])


@dataclass(frozen=True)
class Program:
    """A generated TC definition with concrete sizes and an input recipe."""

    name: str
    sizes: dict[str, int]
    inputs: tuple[InputSpec, ...]
    outputs: tuple[tuple[str, str | None], ...]  # (name, annotated type or None)
    stmts: tuple[Stmt, ...]
    data_seed: int
    #: Smallest value the reducer may give each size (gathers need >= 1).
    size_min: dict[str, int] = field(default_factory=dict)
    #: Per output: the reduction length used for the float tolerance.
    red: dict[str, float] = field(default_factory=dict)
    #: Per output: its extents as Python expressions of the sizes (None: unknown).
    shapes: dict[str, tuple[str, ...]] | None = None
    seed: int | None = None
    #: Verbatim source (for loaded reproducers); overrides the statements.
    text: str | None = None

    @property
    def entry(self) -> str:
        return self.name

    @property
    def source(self) -> str:
        if self.text is not None:
            return self.text
        params = ", ".join(i.param() for i in self.inputs)
        outs = ", ".join(f"{t} {n}" if t else n for n, t in self.outputs)
        body = "".join(f"    {s.render()}\n" for s in self.stmts)
        return f"def {self.name}({params}) -> ({outs}) {{\n{body}}}\n"

    def arrays(self) -> list[Array]:
        """The input arrays: deterministic from `data_seed`, the sizes and the specs."""
        out: list[Array] = []
        for spec in self.inputs:
            shape = tuple(self.sizes[d] if isinstance(d, str) else d for d in spec.dims)
            rng = np.random.default_rng(
                [self.data_seed, zlib.crc32(spec.name.encode())]
            )
            dt = np.dtype(spec.dtype)
            if dt.kind == "f":
                a = rng.uniform(float(spec.lo), float(spec.hi), shape).astype(dt)
            elif dt.kind == "b":
                a = rng.random(shape) < 0.5
            else:
                hi = self.sizes[spec.hi] if isinstance(spec.hi, str) else int(spec.hi)
                lo = int(spec.lo)
                a = rng.integers(lo, max(hi, lo + 1), shape).astype(dt)
            out.append(np.require(np.asarray(a, dtype=dt), requirements="C"))
        return out

    def expected_shapes(self) -> dict[str, tuple[int, ...]] | None:
        if self.shapes is None:
            return None
        return {
            n: tuple(
                max(0, int(eval(e, {"min": min, "max": max}, dict(self.sizes))))
                for e in es
            )
            for n, es in self.shapes.items()
        }

    def spec(self) -> dict[str, Any]:
        return {
            "entry": self.name,
            "sizes": self.sizes,
            "size_min": self.size_min,
            "data_seed": self.data_seed,
            "inputs": [i.to_json() for i in self.inputs],
            "outputs": [list(o) for o in self.outputs],
            "red": self.red,
            "shapes": None
            if self.shapes is None
            else {k: list(v) for k, v in self.shapes.items()},
            "seed": self.seed,
        }

    def describe(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items()) or "none"
        return f"{self.source}# sizes: {sizes}; data_seed: {self.data_seed}"


# ------------------------------------------------------------------- extents


@dataclass(frozen=True)
class Extent:
    """A symbolic extent the generator knows how to index safely.

    Linear forms are ``atom + off`` (atom None for literals). `kind` is that of
    the atom when ``off == 0`` ("sym", "hc" = (D + 1) / 2, "hf" = D / 2,
    "conv" = D - K + 1) and "lin" otherwise; "lit" for literals.
    """

    kind: str
    text: str  # TC size expression
    py: str  # the same in Python (floor division)
    atom: str | None  # key (text) of the atom of the linear form
    atom_text: str
    atom_py: str
    off: int
    args: tuple[Extent, ...] = ()
    minval: int = 0

    @property
    def key(self) -> str:
        return self.text

    def value(self, sizes: Mapping[str, int]) -> int:
        return int(eval(self.py, {"min": min, "max": max}, dict(sizes)))


def ext_sym(name: str, minval: int) -> Extent:
    return Extent("sym", name, name, name, name, name, 0, (), minval)


def ext_lit(c: int) -> Extent:
    return Extent("lit", str(c), str(c), None, "", "", c, (), c)


def ext_shift(e: Extent, d: int) -> Extent:
    if e.atom is None:
        return ext_lit(e.off + d)
    off = e.off + d
    if off == 0:
        text, py = e.atom_text, e.atom_py
        kind = "sym" if e.atom_text.isidentifier() else _atom_kind(e)
    else:
        sign = "+" if off > 0 else "-"
        text = f"{e.atom_text} {sign} {abs(off)}"
        py = f"({e.atom_py}) {sign} {abs(off)}"
        kind = "lin"
    args = e.args if kind != "lin" else (e,)
    return Extent(
        kind,
        text,
        py,
        e.atom,
        e.atom_text,
        e.atom_py,
        off,
        args,
        max(0, e.minval + d) if d < 0 else e.minval + d,
    )


def _atom_kind(e: Extent) -> str:
    return e.kind if e.kind != "lin" else e.args[0].kind if e.args else "lin"


def _paren(e: Extent) -> str:
    return e.text if e.text.isidentifier() or e.text.isdigit() else f"({e.text})"


def ext_atom(
    kind: str, text: str, py: str, args: tuple[Extent, ...], minval: int
) -> Extent:
    return Extent(kind, text, py, text, text, py, 0, args, minval)


def ext_hc(d: Extent) -> Extent:
    if d.kind == "lit":
        return ext_lit((d.off + 1) // 2)
    return ext_atom(
        "hc", f"({d.text} + 1) / 2", f"(({d.py}) + 1) // 2", (d,), (d.minval + 1) // 2
    )


def ext_hf(d: Extent) -> Extent:
    if d.kind == "lit":
        return ext_lit(d.off // 2)
    return ext_atom("hf", f"{_paren(d)} / 2", f"({d.py}) // 2", (d,), d.minval // 2)


def ext_conv(d: Extent, k: Extent) -> Extent:
    ktext = k.text if k.kind in ("sym", "lit") else f"({k.text})"
    return ext_atom(
        "conv", f"{d.text} - {ktext} + 1", f"({d.py}) - ({k.py}) + 1", (d, k), 0
    )


# ------------------------------------------------------------- value tracking

_FLOATS = ("float32", "float64")
_INTS = ("int32", "int64")
_FLOAT_LIMIT = 64.0
_INT_LIMIT = 1 << 20


def promote(a: str, b: str) -> str:
    from tcdialect.frontend.sema import promote as p

    return p(a, b)


@dataclass(frozen=True)
class Val:
    """An expression with its type and what is known about its values."""

    e: Node
    t: str
    lo: float
    hi: float
    exact: bool = True  # computed bit-identically by the compiler and the reference
    nan: bool = False  # may be NaN or infinite
    red: float = 1.0  # tolerance reduction length of what it reads

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))


@dataclass
class TInfo:
    name: str
    dtype: str
    dims: tuple[Extent, ...]
    lo: float
    hi: float
    exact: bool = True
    nan: bool = False
    red: float = 1.0
    is_input: bool = False
    is_output: bool = False
    annot: str | None = None
    read_since_write: bool = False


@dataclass
class Index:
    name: str
    ext: Extent
    role: str  # "out" | "red"
    mode: str  # "infer" | "where"
    lo: int = 0


class _Unsupported(Exception):
    pass


# ----------------------------------------------------------------- generator

_SIZE_NAMES = ["N", "M", "K", "L"]


class _Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.sizes: dict[str, int] = {}
        self.size_min: dict[str, int] = {}
        self.size_ext: dict[str, Extent] = {}
        self.inputs: list[InputSpec] = []
        self.tensors: dict[str, TInfo] = {}
        self.stmts: list[Stmt] = []
        self.counter = 0
        self.allow_nan = self.rng.random() < 0.1
        self.wide = self.rng.random() < 0.12  # float64 / int64 inputs

    # -------------------------------------------------------------- helpers
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: Sequence[Any], weights: Sequence[float] | None = None) -> Any:
        return self.rng.choices(list(items), weights=weights, k=1)[0]

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def vmax(self, e: Extent) -> int:
        return max(0, e.value(self.sizes))

    # ---------------------------------------------------------------- header
    def make_sizes(self) -> None:
        n = self.pick([1, 2, 3], [3, 5, 2])
        for name in _SIZE_NAMES[:n]:
            mn = 1 if self.chance(0.5) else 0
            r = self.rng.random()
            if r < 0.08:
                v = mn
            elif r < 0.16:
                v = 1
            elif r < 0.85:
                v = self.rng.randint(2, 9)
            else:
                v = self.rng.randint(10, 13)
            self.sizes[name] = max(v, mn)
            self.size_min[name] = mn
            self.size_ext[name] = ext_sym(name, mn)

    def add_input(
        self,
        dtype: str,
        dims: tuple[str | int, ...],
        lo: float | int,
        hi: float | int | str,
        name: str | None = None,
    ) -> TInfo:
        name = name or self.fresh("X")
        spec = InputSpec(name, dtype, dims, lo, hi)
        self.inputs.append(spec)
        exts = tuple(
            self.size_ext[d] if isinstance(d, str) else ext_lit(d) for d in dims
        )
        if dtype in _FLOATS:
            vlo, vhi = float(lo), float(hi)
        elif dtype == "bool":
            vlo, vhi = 0.0, 1.0
        else:
            vlo = float(lo)
            vhi = float((self.sizes[hi] if isinstance(hi, str) else int(hi)) - 1)
        t = TInfo(name, dtype, exts, vlo, vhi, is_input=True)
        self.tensors[name] = t
        return t

    def make_inputs(self) -> None:
        names = list(self.sizes)
        self.rng.shuffle(names)
        count = self.rng.randint(max(1, (len(names) + 1) // 2), 4)
        pending = list(names)
        for k in range(count):
            rank = (
                self.pick([0, 1, 2, 3], [1, 4, 5, 2])
                if k
                else self.pick([1, 2, 3], [3, 5, 2])
            )
            dims: list[str | int] = []
            for _ in range(rank):
                if pending and self.chance(0.8):
                    dims.append(pending.pop())
                elif self.chance(0.15):
                    dims.append(self.rng.randint(1, 5))
                else:
                    dims.append(self.pick(names))
            if self.chance(0.22):
                dtype = "int64" if self.wide and self.chance(0.3) else "int32"
                lo, hi = (0, 6) if self.chance(0.4) else (-3, 4)
                self.add_input(dtype, tuple(dims), lo, hi)
            else:
                dtype = "float64" if self.wide and self.chance(0.4) else "float32"
                lo2, hi2 = (0.5, 1.5) if self.chance(0.3) else (-1.0, 1.0)
                self.add_input(dtype, tuple(dims), lo2, hi2)
        if pending:  # sizes not bound yet
            self.add_input("float32", tuple(pending), -1.0, 1.0)

    # ------------------------------------------------------------ statements
    def readable(self, exclude: str | None = None) -> list[TInfo]:
        return [t for t in self.tensors.values() if t.name != exclude]

    def all_dims(self) -> list[Extent]:
        seen: dict[str, Extent] = {}
        for t in self.tensors.values():
            for d in t.dims:
                seen.setdefault(d.key, d)
        return list(seen.values())

    def pick_extent(self, allow_conv: bool) -> tuple[Extent, Extent | None]:
        """An extent for a new index, and the extent of a helper index it needs."""
        dims = self.all_dims()
        if not dims:
            return ext_lit(self.rng.randint(1, 4)), None
        d = self.pick(dims)
        r = self.rng.random()
        if r < 0.55 or len(d.text) > 30:
            return d, None
        if r < 0.67:
            e = ext_shift(d, -self.rng.randint(1, 2))
            return (e, None) if e.kind != "lit" or e.off >= 1 else (d, None)
        if r < 0.77:
            return ext_hc(d), None
        if r < 0.85:
            e = ext_hf(d)
            return (e, None) if e.kind != "lit" or e.off >= 1 else (d, None)
        if r < 0.94 and allow_conv and d.kind in ("sym", "lit"):
            others = [
                k
                for k in dims
                if k.key != d.key
                and k.kind in ("sym", "lit")
                and not (k.kind == d.kind == "lit" and k.off > d.off)
            ]
            if others:
                k = self.pick(others)
                return ext_conv(d, k), k
        if self.chance(0.5):
            return ext_lit(self.rng.randint(1, 4)), None
        return self.pick(list(self.size_ext.values())), None

    def statement(self) -> None:
        written = [t for t in self.tensors.values() if not t.is_input]
        numeric = [t for t in written if t.dtype != "bool"]
        kinds = ["new", "rewrite", "accumulate", "reinit"]
        weights = [6, 2 if written else 0, 2.5 if numeric else 0, 1 if numeric else 0]
        kind = self.pick(kinds, weights)
        if kind == "new":
            self.new_statement()
        elif kind == "rewrite":
            self.update_statement(self.pick(written), "=")
        elif kind == "accumulate":
            t = self.pick(numeric)
            ops = ["+=", "*=", "max=", "min="] if t.dtype != "bool" else ["max="]
            self.update_statement(t, self.pick(ops, [4, 1, 2, 2]))
        else:
            t = self.pick(numeric)
            self.update_statement(
                t, self.pick(["+=!", "*=!", "max=!", "min=!"], [4, 1, 2, 2])
            )

    def new_statement(self) -> None:
        reduce = self.chance(0.5)
        rank = self.pick([0, 1, 2, 3], [1 if reduce else 0.3, 4, 4, 1.5])
        op = (
            self.pick(["+=!", "*=!", "max=!", "min=!"], [5, 1, 2, 2]) if reduce else "="
        )
        r = self.rng.random()
        want = "bool" if r < 0.05 and op == "=" else "int" if r < 0.2 else "float"
        name = self.fresh("T")
        out_exts: list[Extent] = []
        helpers: list[Extent] = []
        for _ in range(rank):
            e, h = self.pick_extent(reduce)
            out_exts.append(e)
            if h is not None:
                helpers.append(h)
        self.emit(name, tuple(out_exts), op, want, helpers, new=True)

    def update_statement(self, t: TInfo, op: str) -> None:
        reduce = op != "=" and (op.endswith("!") or self.chance(0.5))
        self.emit(t.name, t.dims, op, t.dtype, [], new=False, reduce=reduce)

    def emit(
        self,
        target: str,
        out_exts: tuple[Extent, ...],
        op: str,
        want: str,
        helpers: list[Extent],
        *,
        new: bool,
        reduce: bool | None = None,
    ) -> None:
        if reduce is None:
            reduce = op != "="
        for _attempt in range(6):
            try:
                st = _Stmt(
                    self, target, out_exts, op, want, helpers, new=new, reduce=reduce
                )
                stmt, info = st.build()
            except _Unsupported:
                helpers = []
                continue
            self.stmts.append(stmt)
            self.commit(target, out_exts, info, new)
            return
        # Give up on this statement: write a simple copy instead.
        if new:
            src = self.pick(
                [t for t in self.tensors.values() if t.dims]
                or list(self.tensors.values())
            )
            idx = tuple(f"i{k}" for k in range(len(src.dims)))
            rhs = Acc(src.name, tuple(Lit(i) for i in idx))
            self.stmts.append(Stmt(target, idx, "=", rhs))
            self.commit(
                target,
                src.dims,
                Val(rhs, src.dtype, src.lo, src.hi, src.exact, src.nan, src.red),
                True,
            )

    def commit(self, target: str, dims: tuple[Extent, ...], v: Val, new: bool) -> None:
        if new:
            is_output = self.chance(0.45)
            annot = None
            if is_output and self.chance(0.25):
                annot = "float32" if v.t in _INTS and self.chance(0.5) else v.t
            t = TInfo(
                target,
                annot or v.t,
                dims,
                v.lo,
                v.hi,
                v.exact,
                v.nan,
                v.red,
                is_output=is_output,
                annot=annot,
            )
            self.tensors[target] = t
        else:
            t = self.tensors[target]
            t.lo, t.hi, t.exact, t.nan, t.red = (
                v.lo,
                v.hi,
                v.exact,
                v.nan,
                max(v.red, 1.0),
            )
            t.read_since_write = False
        if t.dtype in _FLOATS:
            t.lo, t.hi = float(t.lo), float(t.hi)

    # ---------------------------------------------------------------- finish
    def finish(self) -> Program:
        written = [t for t in self.tensors.values() if not t.is_input]
        for t in written:
            if not t.read_since_write and not t.is_output and self.chance(0.8):
                t.is_output = True
        if not any(t.is_output for t in written):
            written[-1].is_output = True
        outputs = tuple((t.name, t.annot) for t in written if t.is_output)
        red = {t.name: float(t.red) for t in written if t.is_output}
        shapes = {t.name: tuple(d.py for d in t.dims) for t in written if t.is_output}
        used = set().union(*(s.reads() for s in self.stmts))
        inputs = tuple(
            i
            for i in self.inputs
            if i.name in used or any(isinstance(d, str) for d in i.dims)
        )
        return Program(
            name=f"g{self.seed}",
            sizes=dict(self.sizes),
            inputs=inputs,
            outputs=outputs,
            stmts=tuple(self.stmts),
            data_seed=self.seed,
            size_min=dict(self.size_min),
            red=red,
            shapes=shapes,
            seed=self.seed,
        )


class _Stmt:
    """Builds one statement: indices, their ranges, the right-hand side."""

    def __init__(
        self,
        g: _Gen,
        target: str,
        out_exts: tuple[Extent, ...],
        op: str,
        want: str,
        helpers: list[Extent],
        *,
        new: bool,
        reduce: bool,
    ):
        self.g = g
        self.rng = g.rng
        self.target = target
        self.op = op
        self.want = want
        self.new = new
        self.reduce = reduce
        self.indices: list[Index] = []
        names = ["i", "j", "k", "l"]
        for n, e in zip(names, out_exts, strict=False):
            self.indices.append(Index(n, e, "out", "infer"))
        if reduce:
            count = g.pick([1, 2], [3, 1]) if not helpers else 1 if g.chance(0.7) else 0
            exts = list(helpers)
            for _ in range(count):
                e, _h = g.pick_extent(False)
                exts.append(e)
            for k, e in enumerate(exts):
                self.indices.append(Index(f"r{k}", e, "red", "infer"))
            if not exts:
                self.indices.append(Index("r0", g.pick(g.all_dims()), "red", "infer"))
        if math.prod(max(1, g.vmax(v.ext)) for v in self.indices) > 3000:
            raise _Unsupported
        self.readable = g.readable(exclude=target if new else None)
        self.pins: list[Acc] = []
        self.reads: set[str] = set()

    # --------------------------------------------------------------- ranges
    def choose_modes(self) -> list[Clause]:
        g = self.g
        for v in self.indices:
            if g.chance(0.3):
                v.mode = "where"
                if v.role == "red" and g.chance(0.2):
                    v.lo = 1
        for v in sorted(self.indices, key=lambda v: v.ext.kind == "conv"):
            if v.mode != "infer":
                continue
            pin = self.find_pin(v)
            if pin is None:
                v.mode = "where"
            else:
                self.pins.extend(pin)
        clauses: list[Clause] = []
        for v in self.indices:
            if v.mode == "where":
                clauses.append(Range(v.name, str(v.lo), v.ext.text))
        return clauses

    def find_pin(self, v: Index) -> list[Acc] | None:
        cands: list[tuple[TInfo, int, Node, Node | None]] = []
        for t in self.readable:
            for d, D in enumerate(t.dims):
                for sub in self.exact_pins(v, D):
                    cands.append((t, d, sub, None))
                E = v.ext
                if (
                    E.atom is not None
                    and E.atom == D.atom
                    and D.off > E.off
                    and E.kind == "lin"
                ):
                    c = D.off - E.off
                    cands.append(
                        (t, d, Bin("+", Lit(v.name), Lit(str(c))), Lit(v.name))
                    )
        self.rng.shuffle(cands)
        for t, d, sub, extra in cands[:6]:
            acc = self.access(t, {d: sub})
            if acc is None:
                continue
            pins = [acc]
            if extra is not None:
                acc2 = self.access(t, {d: extra})
                if acc2 is None:
                    continue
                pins.append(acc2)
            return pins
        return None

    def exact_pins(self, v: Index, D: Extent) -> list[Node]:
        E = v.ext
        x = Lit(v.name)
        out: list[Node] = []
        if E.key == D.key:
            out.append(x)
            if self.g.chance(0.2):
                out.append(Bin("-", Bin("-", SizeText(D.text), Lit("1")), x))
        if E.kind == "hc" and E.args[0].key == D.key:
            out.append(Bin("*", Lit("2"), x))
        if E.kind == "hf" and E.args[0].key == D.key:
            out.append(Bin("+", Bin("*", Lit("2"), x), Lit("1")))
        if E.kind == "conv" and E.args[0].key == D.key:
            for w in self.indices:
                if w is not v and w.ext.key == E.args[1].key and w.lo == 0:
                    out.append(Bin("+", x, Lit(w.name)))
        return out

    # -------------------------------------------------------------- accesses
    def guarded(self, D: Extent) -> bool:
        """Whether any in-range subscript may index a dim of extent D: D >= 1,
        or D <= 0 empties the statement's iteration space."""
        return D.minval >= 1 or any(v.ext.key == D.key for v in self.indices)

    def options(self, D: Extent) -> list[tuple[float, Node]]:
        opts: list[tuple[float, Node]] = []
        for v in self.indices:
            E = v.ext
            x = Lit(v.name)
            infer = v.mode == "infer"
            if E.key == D.key:
                opts.append((8, x))
                opts.append((0.7, Bin("-", Bin("-", SizeText(D.text), Lit("1")), x)))
                c = Lit(str(self.rng.randint(1, 2)))
                opts.append((0.5, Bin("%", Bin("+", x, c), SizeText(D.text))))
                opts.append(
                    (
                        0.5,
                        Call(
                            "min",
                            (Bin("+", x, c), Bin("-", SizeText(D.text), Lit("1"))),
                        ),
                    )
                )
                opts.append((0.3, Bin("/", x, Lit("2"))))
                opts.append((0.3, Call("max", (Bin("-", x, c), Lit("0")))))
                if v.lo >= 1:
                    opts.append((3, Bin("-", x, Lit("1"))))
            # Constraints with a negative lower bound (``v + 2``) are harmless
            # next to a pin that range inference uses in the same round; a
            # pin through another index (``v + w``, ``2 * v + w``) comes later.
            late_pin = infer and E.kind in ("conv", "hf")
            if E.atom == D.atom and D.off > E.off and not late_pin:
                room = D.off - E.off
                opts.append((3, Bin("+", x, Lit(str(self.rng.randint(1, room))))))
                opts.append((1, x))
            if E.kind == "hc" and E.args[0].key == D.key:
                opts.append((4, Bin("*", Lit("2"), x)))
                if not infer:
                    opts.append((1, x))
            if E.kind == "hf" and E.args[0].key == D.key:
                opts.append((3, Bin("+", Bin("*", Lit("2"), x), Lit("1"))))
                for w in self.indices:
                    # (an output index w would get the range min(2, D % 2 + 2))
                    if (
                        w.ext.kind == "lit"
                        and w.ext.off == 2
                        and (w.lo == 0 or not infer)
                        and (w.role == "red" or w.mode == "where")
                    ):
                        opts.append((3, Bin("+", Bin("*", Lit("2"), x), Lit(w.name))))
                if not infer:
                    opts.append((1, Bin("*", Lit("2"), x)))
                    opts.append((1, x))
            if E.kind == "conv" and E.args[0].key == D.key:
                for w in self.indices:
                    if (
                        w is not v
                        and w.ext.key == E.args[1].key
                        and (w.lo == 0 or not infer)
                    ):
                        opts.append((4, Bin("+", x, Lit(w.name))))
        if self.guarded(D):
            opts.append((0.6, Lit("0")))
            opts.append((0.4, Bin("-", SizeText(D.text), Lit("1"))))
            for v in self.indices:
                x = Lit(v.name)
                opts.append(
                    (0.4, Call("min", (x, Bin("-", SizeText(D.text), Lit("1")))))
                )
                opts.append((0.3, Bin("%", x, SizeText(D.text))))
                if (
                    D.minval >= 1
                    and D.kind in ("sym", "lit")
                    and v.ext.kind in ("sym", "lit")
                    and v.lo == 0
                ):
                    opts.append((0.4, Lit(f"@gather:{v.name}")))
        return opts

    def access(self, t: TInfo, fixed: Mapping[int, Node]) -> Acc | None:
        args: list[Node] = []
        for d, D in enumerate(t.dims):
            if d in fixed:
                args.append(fixed[d])
                continue
            opts = self.options(D)
            if not opts:
                return None
            w, n = zip(*opts, strict=True)
            node = self.rng.choices(n, weights=w, k=1)[0]
            if isinstance(node, Lit) and node.text.startswith("@gather:"):
                node = self.gather(node.text.split(":")[1], D)
            args.append(node)
        self.reads.add(t.name)
        return Acc(t.name, tuple(args))

    def gather(self, vname: str, D: Extent) -> Node:
        g = self.g
        v = next(v for v in self.indices if v.name == vname)
        dim: str | int = v.ext.text if v.ext.kind == "sym" else v.ext.off
        hi: str | int = D.text if D.kind == "sym" else D.off
        existing = [
            s
            for s in g.inputs
            if s.dtype == "int32"
            and s.dims == (dim,)
            and s.hi == hi
            and s.lo == 0
            and s.name.startswith("G")
        ]
        spec = existing[0] if existing else None
        if spec is None:
            t = g.add_input("int32", (dim,), 0, hi, name=g.fresh("G"))
            name = t.name
        else:
            name = spec.name
        self.reads.add(name)
        return Acc(name, (Lit(vname),))

    # ----------------------------------------------------------- expressions
    def build(self) -> tuple[Stmt, Val]:
        g = self.g
        clauses = self.choose_modes()
        n = 1
        for ix in self.indices:
            if ix.role == "red":
                n *= max(0, g.vmax(ix.ext) - ix.lo)
        may_empty = any(
            ix.role == "red" and (ix.ext.minval - ix.lo) <= 0 for ix in self.indices
        )
        self.red_len = max(1, n)
        target_t = self.g.tensors.get(self.target) if not self.new else None
        want = self.want
        if want == "float":
            want = (
                "float64"
                if g.wide
                and any(t.dtype == "float64" for t in self.readable)
                and g.chance(0.5)
                else "float32"
            )
        elif want == "int":
            want = "int64" if g.wide and g.chance(0.3) else "int32"
        self.want_t = want
        red_op = self.op.rstrip("!").rstrip("=") if self.op != "=" else ""
        v = self.expr(want, self.pick([1, 2, 3], [4, 5, 1]), top=True)
        # Keep reductions finite.
        if red_op == "*":
            v = self.near_one(v)
        if red_op in ("+", "*") and want in _INTS:
            v = self.int_bound(v, 64 if red_op == "+" else 1)
        # Pins that did not make it into the right-hand side become exists
        # clauses (range inference sees them; they are never evaluated).
        present = {n for n in walk(v.e) if isinstance(n, Acc)}
        for p in dict.fromkeys(self.pins):
            if p not in present:
                clauses.append(Exists(p))
        if self.chance(0.08):
            t = self.pick_tensor(None)
            if t is not None and t.dims:
                acc = self.access(t, {})
                if acc is not None:
                    clauses.append(Exists(acc))
        self.rng.shuffle(clauses)
        rhs = v.e
        idx = tuple(v.name for v in self.indices if v.role == "out")
        stmt = Stmt(self.target, idx, self.op, rhs, tuple(clauses))
        info = self.result(v, red_op, n, may_empty, target_t)
        for name in self.reads:
            if name in g.tensors:
                g.tensors[name].read_since_write = True
        return stmt, info

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: Sequence[Any], weights: Sequence[float] | None = None) -> Any:
        return self.g.pick(items, weights)

    def result(
        self, v: Val, red_op: str, n: int, may_empty: bool, old: TInfo | None
    ) -> Val:
        """What the target holds after the statement."""
        accumulate = self.op != "=" and not self.op.endswith("!")
        if not red_op:
            return v
        is_float = self.want_t in _FLOATS or (old is not None and old.dtype in _FLOATS)
        red = v.red * max(1, n)
        if red_op == "+":
            lo, hi = min(0.0, n * v.lo), max(0.0, n * v.hi)
            exact = not is_float
        elif red_op == "*":
            m = max(1.0, v.mag) ** n
            lo, hi = (-m, m) if v.lo < 0 else (min(1.0, v.lo**n), m)
            exact = not is_float
        else:
            lo, hi, exact = v.lo, v.hi, v.exact
        nan = v.nan or (may_empty and red_op in ("max", "min") and not accumulate)
        if accumulate and old is not None:
            if red_op == "+":
                lo, hi = old.lo + lo, old.hi + hi
            elif red_op == "*":
                m = max(abs(old.lo), abs(old.hi), 1.0) * max(abs(lo), abs(hi), 1.0)
                lo, hi = -m, m
            else:
                lo, hi = min(old.lo, lo), max(old.hi, hi)
            exact = exact and old.exact
            nan = nan or old.nan
            red = max(red, old.red)
        if self.want_t in _INTS or (old is not None and old.dtype in _INTS):
            if nan:  # an empty max/min reduction gives the type's extreme value
                lo, hi = -(2.0**31), 2.0**31
            nan = False
        return Val(v.e, v.t, lo, hi, exact, nan, red)

    # Each `expr*` returns a `Val` of exactly type `t`.
    def expr(self, t: str, depth: int, top: bool = False) -> Val:
        if t == "bool":
            return self.bool_expr(depth)
        if depth <= 0 or (not top and self.chance(0.3)):
            return self.leaf(t)
        if t in _FLOATS:
            return self.float_expr(t, depth)
        return self.int_expr(t, depth)

    def pick_tensor(self, kind: str | None) -> TInfo | None:
        cands = [
            t
            for t in self.readable
            if (
                kind is None
                or (kind == "float" and t.dtype in _FLOATS)
                or (kind == "int" and t.dtype in _INTS)
                or (kind == "bool" and t.dtype == "bool")
            )
        ]
        if self.new is False:
            # prefer reading the target itself (in-place updates)
            tgt = [t for t in cands if t.name == self.target]
            if tgt and self.chance(0.5):
                return tgt[0]
        self.rng.shuffle(cands)
        return cands[0] if cands else None

    def read(self, t: TInfo, acc: Acc) -> Val:
        v = Val(acc, t.dtype, t.lo, t.hi, t.exact, t.nan, t.red)
        return self.normalize(v)

    def pin_leaf(self, t: str) -> Val | None:
        for k, p in enumerate(self.pins):
            ti = self.g.tensors[p.tensor]
            if self.compatible(ti, t):
                # Move it last: the next pin leaf uses another pin.
                self.pins.append(self.pins.pop(k))
                return self.coerce(self.read(ti, p), t)
        return None

    def compatible(self, ti: TInfo, t: str) -> bool:
        if ti.dtype == "bool":
            return False
        if t in _FLOATS:
            return True
        # int wanted: floats only through exact casts
        return ti.dtype in _INTS or (ti.exact and not ti.nan)

    def leaf(self, t: str) -> Val:
        if self.pins and self.chance(0.85):
            v = self.pin_leaf(t)
            if v is not None:
                return v
        r = self.rng.random()
        if r < 0.62:
            kind = (
                "float"
                if t in _FLOATS and self.chance(0.85)
                else "int"
                if t in _INTS and self.chance(0.7)
                else None
            )
            tens = self.pick_tensor(kind)
            if tens is not None and tens.dtype != "bool" and self.compatible(tens, t):
                acc = self.access(tens, {})
                if acc is not None:
                    return self.coerce(self.read(tens, acc), t)
        if r < 0.75 and self.indices:
            ix = self.rng.choice(self.indices)
            hi = max(0, self.g.vmax(ix.ext) - 1)
            return self.coerce(
                Val(Lit(ix.name), "int32", float(ix.lo), float(max(hi, ix.lo))), t
            )
        if r < 0.8:
            s = self.rng.choice(list(self.g.sizes))
            val = float(self.g.sizes[s])
            return self.coerce(Val(Lit(s), "int32", 0.0, val), t)
        return self.const(t)

    def const(self, t: str) -> Val:
        if t in _FLOATS:
            c = self.rng.choice([0.5, 1.0, 2.0, 0.25, 1.5, 3.0, 0.125])
            if self.chance(0.2):
                return (
                    Val(Un("-", Lit(repr(c))), "float32", -c, -c)
                    if t == "float32"
                    else self.coerce(Val(Un("-", Lit(repr(c))), "float32", -c, -c), t)
                )
            return self.coerce(Val(Lit(repr(c)), "float32", c, c), t)
        c2 = self.rng.choice([1, 2, 3, 0, 5])
        return self.coerce(Val(Lit(str(c2)), "int32", c2, c2), t)

    def coerce(self, v: Val, t: str) -> Val:
        """Convert `v` to exactly type `t` (a cast where needed)."""
        if v.t == t:
            return v
        if t in _FLOATS:
            # int/bool/other float to float: always fine
            lo, hi = (v.lo, v.hi) if v.t != "bool" else (0.0, 1.0)
            return Val(Call(t, (v.e,)), t, lo, hi, v.exact, v.nan, v.red)
        if t in _INTS:
            if v.t in _FLOATS:
                if not v.exact or v.nan or v.mag > 1e6:
                    # not castable safely: use an integer leaf instead
                    return self.const(t)
                if v.mag <= 2:  # spread small values over a few integers (exactly)
                    v = Val(
                        Bin("*", v.e, Lit("4.0")),
                        v.t,
                        v.lo * 4,
                        v.hi * 4,
                        True,
                        False,
                        v.red,
                    )
                lo, hi = math.trunc(v.lo), math.trunc(v.hi)
                return Val(Call(t, (v.e,)), t, lo, hi, True, False, v.red)
            if v.t == "bool":
                return Val(Call(t, (v.e,)), t, 0, 1, True, False, v.red)
            return Val(Call(t, (v.e,)), t, v.lo, v.hi, v.exact, v.nan, v.red)
        raise _Unsupported

    def normalize(self, v: Val) -> Val:
        """Bring a large value back into range (exactly: powers of two, or %)."""
        if v.t in _FLOATS and v.mag > _FLOAT_LIMIT:
            k = math.ceil(math.log2(v.mag / 4.0))
            s = 2.0**-k
            return Val(
                Bin("*", v.e, Lit(repr(s)), guard=True),
                v.t,
                v.lo * s,
                v.hi * s,
                v.exact,
                v.nan,
                v.red,
            )
        if v.t in _INTS and v.mag > _INT_LIMIT:
            return self.int_bound(v, 97)
        return v

    def int_bound(self, v: Val, m: int) -> Val:
        if v.mag <= m:
            return v
        e = Bin("%", v.e, Lit(str(m)), guard=True)
        return Val(e, v.t, 0, m - 1, True, False, v.red)

    def near_one(self, v: Val) -> Val:
        """A factor for a product reduction: near 1 so that products stay finite."""
        if v.t in _INTS:
            # (x % 3) - 1 in {-1, 0, 1}
            e = Bin("-", Bin("%", v.e, Lit("3"), guard=True), Lit("1"))
            return Val(e, v.t, -1, 1, True, False, v.red)
        n = self.red_len
        if v.lo >= 0.5 and v.hi <= 1.5 and 1.5**n < 1e6:
            return v
        s = 0.05 if n <= 64 else 0.01
        tanh = Call("tanh", (v.e,), guard=True)
        e = Bin("+", Lit("1.0"), Bin("*", Lit(repr(s)), tanh))
        return Val(e, v.t, 1 - s, 1 + s, False, v.nan, v.red)

    # ----------------------------------------------------------- float exprs
    def float_expr(self, t: str, depth: int) -> Val:
        r = self.rng.random()
        if r < 0.42:
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1)
            return self.arith(self.pick(["+", "-", "*"], [4, 2, 4]), a, b)
        if r < 0.5:
            a = self.expr(t, depth - 1)
            b = self.expr(self.pick([t, "int32"]), depth - 1)
            return self.divide(a, b)
        if r < 0.72:
            return self.builtin(t, depth)
        if r < 0.8:
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1)
            fn = self.pick(["min", "max", "fmin", "fmax"])
            return self.coerce(self.minmax(fn, a, b), t)
        if r < 0.88:
            c = self.bool_expr(depth - 1)
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1)
            return Val(
                Tern(c.e, a.e, b.e),
                t,
                min(a.lo, b.lo),
                max(a.hi, b.hi),
                a.exact and b.exact,
                a.nan or b.nan,
                max(a.red, b.red, c.red),
            )
        if r < 0.93:
            a = self.expr(t, depth - 1)
            return Val(Un("-", a.e), t, -a.hi, -a.lo, a.exact, a.nan, a.red)
        return self.coerce(self.expr("int32", depth - 1), t)

    def arith(self, op: str, a: Val, b: Val) -> Val:
        t = promote(a.t, b.t)
        if t in _INTS:
            lim = float(1 << 30)
            while True:
                lo, hi = _interval(op, a, b)
                if max(abs(lo), abs(hi)) <= lim:
                    break
                if a.mag >= b.mag:
                    a = self.int_bound(a, 97)
                else:
                    b = self.int_bound(b, 97)
        lo, hi = _interval(op, a, b)
        v = Val(
            Bin(op, a.e, b.e),
            t,
            lo,
            hi,
            a.exact and b.exact,
            a.nan or b.nan,
            max(a.red, b.red),
        )
        return self.normalize(v)

    def divide(self, a: Val, b: Val) -> Val:
        t = promote(a.t, b.t)
        if t in _INTS:
            return Val(
                Bin("/", a.e, b.e),
                t,
                -max(a.mag, 1),
                max(a.mag, 1),
                True,
                False,
                max(a.red, b.red),
            )
        # denominator kept away from zero
        if b.lo >= 0.5:
            den = b
        elif b.hi <= -0.5:
            den = b
        else:
            fab = Call("fabs", (b.e,))
            e = Bin("+", Lit("1.0"), fab, guard=True)
            den = Val(
                e, promote(b.t, "float32"), 1.0, 1.0 + b.mag, b.exact, b.nan, b.red
            )
        m = min(abs(den.lo), abs(den.hi))
        lo, hi = -a.mag / m, a.mag / m
        if a.lo >= 0 and den.lo > 0:
            lo = 0.0
        v = Val(
            Bin("/", a.e, den.e),
            promote(a.t, den.t),
            lo,
            hi,
            a.exact and den.exact,
            a.nan or den.nan,
            max(a.red, den.red),
        )
        return self.coerce(self.normalize(v), t)

    def minmax(self, fn: str, a: Val, b: Val) -> Val:
        t = promote(a.t, b.t)
        if fn in ("fmin", "fmax") and t not in _FLOATS:
            t = "float32"
        f = min if "min" in fn else max
        return Val(
            Call(fn, (a.e, b.e)),
            t,
            f(a.lo, b.lo),
            f(a.hi, b.hi),
            a.exact and b.exact,
            a.nan or b.nan,
            max(a.red, b.red),
        )

    def builtin(self, t: str, depth: int) -> Val:
        a = self.expr(t, depth - 1)
        fn = self.pick(
            [
                "tanh",
                "exp",
                "log",
                "sqrt",
                "fabs",
                "sin",
                "other1",
                "pow",
                "atan2",
                "hypot",
                "copysign",
                "fdim",
                "fma",
                "fmod",
                "round",
                "nan",
            ],
            [
                3,
                3,
                2,
                2,
                1.5,
                1,
                3,
                1,
                1,
                1,
                1,
                1,
                0.7,
                0.7,
                1,
                0.5 if self.g.allow_nan else 0,
            ],
        )
        mag = a.mag
        if fn == "tanh":
            return self.call("tanh", (a,), math.tanh(a.lo), math.tanh(a.hi), t)
        if fn == "exp":
            if mag > 6:
                a = self.squash(a, 4.0)
            return self.call(
                self.pick(["exp", "exp2", "expm1"]), (a,), -1.0, math.exp(a.hi) * 2, t
            )
        if fn in ("log", "sqrt"):
            if a.lo < 0.125:
                a = self.positive(a)
            f = (
                self.pick(["log", "log2", "log10", "log1p"])
                if fn == "log"
                else self.pick(["sqrt", "rsqrt", "cbrt"])
            )
            hi = (
                math.log(a.hi + 1) * 2
                if fn == "log"
                else max(math.sqrt(a.hi), 1 / math.sqrt(a.lo))
            )
            return self.call(f, (a,), -hi if fn == "log" else 0.0, hi, t)
        if fn == "fabs":
            v = self.call("fabs", (a,), 0.0, mag, t)
            return dataclasses.replace(v, exact=a.exact)
        if fn == "sin":
            return self.call(self.pick(["sin", "cos", "atan"]), (a,), -1.6, 1.6, t)
        if fn == "other1":
            f = self.pick(
                [
                    "asinh",
                    "erf",
                    "erfc",
                    "cbrt",
                    "sinh",
                    "cosh",
                    "asin",
                    "acos",
                    "atanh",
                    "acosh",
                    "tan",
                    "exp10",
                ]
            )
            if f in ("sinh", "cosh"):
                a = self.squash(a, 4.0) if mag > 4 else a
                return self.call(f, (a,), -30.0, 30.0, t)
            if f in ("asin", "acos", "atanh", "tan"):
                a = self.squash(a, 0.9) if mag > 0.9 else a
                return self.call(f, (a,), -3.2, 3.2, t)
            if f == "acosh":
                a = self.positive(a, 1.5)
                return self.call(f, (a,), 0.0, math.log(2 * a.hi + 1) + 1, t)
            if f == "exp10":
                a = self.squash(a, 1.5) if mag > 1.5 else a
                return self.call(f, (a,), 0.0, 10**1.5 + 1, t)
            return self.call(f, (a,), -max(mag, 2.0), max(mag, 2.0), t)
        if fn == "pow":
            base = self.positive(a, 1.0)
            e = self.expr(t, depth - 1)
            if e.mag > 2:
                e = self.squash(e, 2.0)
            hi = max(base.hi, 1 / base.lo) ** 2
            return self.call("pow", (base, e), 0.0, hi, t)
        if fn in ("atan2", "hypot", "fdim"):
            b = self.expr(t, depth - 1)
            if fn == "atan2":
                b = self.positive(b, 1.0)
                return self.call("atan2", (a, b), -1.6, 1.6, t)
            if fn == "hypot":
                return self.call("hypot", (a, b), 0.0, a.mag + b.mag, t)
            v = self.call("fdim", (a, b), 0.0, a.mag + b.mag, t)
            return dataclasses.replace(v, exact=a.exact and b.exact)
        if fn == "copysign":
            # The sign comes from a float input (uniform values: never zero).
            src = [s for s in self.readable if s.is_input and s.dtype in _FLOATS]
            acc = self.access(self.rng.choice(src), {}) if src else None
            if acc is None:
                return self.call("tanh", (a,), -1.0, 1.0, t)
            sv = self.read(self.g.tensors[acc.tensor], acc)
            v = self.call("copysign", (a, sv), -mag, mag, t)
            return dataclasses.replace(v, exact=a.exact)
        if fn == "fma":
            b = self.expr(t, depth - 1)
            c = self.expr(t, depth - 1)
            m = a.mag * b.mag + c.mag
            return self.normalize(self.call("fma", (a, b, c), -m, m, t))
        if fn in ("fmod", "round"):
            if not a.exact or a.nan:
                return self.call("tanh", (a,), -1.0, 1.0, t)
            if fn == "round":
                f = self.pick(["round", "floor", "ceil", "trunc"])
                v = self.call(f, (a,), math.floor(a.lo), math.ceil(a.hi), t)
                return dataclasses.replace(v, exact=True)
            den = self.rng.choice([0.75, 1.5, 2.0])
            b = self.coerce(Val(Lit(repr(den)), "float32", den, den), t)
            v = self.call("fmod", (a, b), -den, den, t)
            return dataclasses.replace(v, exact=True)
        # nan: sqrt of something that may be negative
        v = self.call("sqrt", (a,), 0.0, math.sqrt(mag) + 1, t)
        return dataclasses.replace(v, nan=a.lo < 0 or a.nan)

    def call(self, fn: str, args: Sequence[Val], lo: float, hi: float, t: str) -> Val:
        at = "float32"
        for a in args:
            at = promote(at, a.t) if a.t in _FLOATS else at
        v = Val(
            Call(fn, tuple(a.e for a in args)),
            at,
            lo,
            hi,
            False,
            any(a.nan for a in args),
            max(a.red for a in args),
        )
        return self.coerce(v, t)

    def squash(self, a: Val, m: float) -> Val:
        """`a` mapped into [-m, m] (m * tanh(a))."""
        e = Bin("*", Lit(repr(m)), Call("tanh", (a.e,)), guard=True)
        t = a.t if a.t in _FLOATS else "float32"
        return Val(e, t, -m, m, False, a.nan, a.red)

    def positive(self, a: Val, base: float = 0.5) -> Val:
        """`a` made >= `base`: ``base + fabs(a)``."""
        if a.lo >= base:
            return a
        e = Bin("+", Lit(repr(base)), Call("fabs", (a.e,)), guard=True)
        t = a.t if a.t in _FLOATS else "float32"
        return Val(e, t, base, base + a.mag, a.exact, a.nan, a.red)

    # ------------------------------------------------------------- int exprs
    def int_expr(self, t: str, depth: int) -> Val:
        r = self.rng.random()
        if r < 0.45:
            a = self.expr(t, depth - 1)
            b = self.expr(self.pick([t, "int32"]), depth - 1)
            v = self.arith(self.pick(["+", "-", "*"], [4, 2, 3]), a, b)
            return self.coerce(v, t)
        if r < 0.6:
            a = self.expr(t, depth - 1)
            b = self.expr("int32", depth - 1)
            op = self.pick(["/", "%"])
            if op == "/":
                v = Val(
                    Bin("/", a.e, b.e),
                    promote(a.t, b.t),
                    -max(a.mag, 1),
                    max(a.mag, 1),
                    True,
                    False,
                    max(a.red, b.red),
                )
            else:
                m = max(b.mag, 1)
                v = Val(
                    Bin("%", a.e, b.e),
                    promote(a.t, b.t),
                    -m,
                    m,
                    True,
                    False,
                    max(a.red, b.red),
                )
            return self.coerce(v, t)
        if r < 0.72:
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1)
            return self.coerce(self.minmax(self.pick(["min", "max"]), a, b), t)
        if r < 0.82:
            c = self.bool_expr(depth - 1)
            a = self.expr(t, depth - 1)
            b = self.expr(t, depth - 1)
            return Val(
                Tern(c.e, a.e, b.e),
                t,
                min(a.lo, b.lo),
                max(a.hi, b.hi),
                True,
                False,
                max(a.red, b.red, c.red),
            )
        if r < 0.9:
            # a cast from an exact float
            f = self.expr("float32", depth - 1)
            if f.exact and not f.nan and f.mag < 1e6:
                if self.chance(0.5):
                    f = self.normalize(
                        Val(
                            Bin("*", f.e, Lit("4.0")),
                            f.t,
                            f.lo * 4,
                            f.hi * 4,
                            f.exact,
                            False,
                            f.red,
                        )
                    )
                return self.coerce(f, t)
            return self.leaf(t)
        a = self.expr(t, depth - 1)
        return Val(Un("-", a.e), t, -a.hi, -a.lo, True, False, a.red)

    def bool_expr(self, depth: int) -> Val:
        r = self.rng.random()
        if depth > 0 and r < 0.2:
            a = self.bool_expr(depth - 1)
            b = self.bool_expr(depth - 1)
            return Val(
                Bin(self.pick(["&&", "||"]), a.e, b.e),
                "bool",
                0,
                1,
                True,
                False,
                max(a.red, b.red),
            )
        if depth > 0 and r < 0.27:
            a = self.bool_expr(depth - 1)
            return Val(Un("!", a.e), "bool", 0, 1, True, False, a.red)
        if r < 0.32:
            tens = self.pick_tensor("bool")
            if tens is not None:
                acc = self.access(tens, {})
                if acc is not None:
                    return self.read(tens, acc)
        kind = self.pick(["float32", "int32"], [3, 2])
        for _ in range(4):
            a = self.expr(kind, max(0, depth - 1))
            b = (
                self.expr(kind, max(0, depth - 1))
                if self.chance(0.6)
                else self.const(kind)
            )
            if a.exact and b.exact:
                op = self.pick(["<", "<=", ">", ">=", "==", "!="], [3, 2, 3, 2, 1, 1])
                return Val(
                    Bin(op, a.e, b.e), "bool", 0, 1, True, False, max(a.red, b.red)
                )
        i = self.rng.choice(self.indices) if self.indices else None
        if i is not None:
            return Val(
                Bin("<", Lit(i.name), Lit(str(self.rng.randint(1, 4)))), "bool", 0, 1
            )
        return Val(Bin("<", Lit("0"), Lit("1")), "bool", 0, 1)


def _interval(op: str, a: Val, b: Val) -> tuple[float, float]:
    if op == "+":
        return a.lo + b.lo, a.hi + b.hi
    if op == "-":
        return a.lo - b.hi, a.hi - b.lo
    ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return min(ps), max(ps)


def _add_lets(g: _Gen, stmt: Stmt) -> Stmt:
    """Hoist a sub-expression of the right-hand side into a ``where`` let."""
    cands = [n for n in _value_nodes(stmt.rhs) if n is not stmt.rhs and n.kids()]
    if not cands:
        return stmt
    sub = g.rng.choice(cands)
    name = g.fresh("v")
    rhs = _replace(stmt.rhs, sub, Lit(name))
    return dataclasses.replace(stmt, rhs=rhs, where=(*stmt.where, Let(name, sub)))


def _value_nodes(n: Node) -> Iterator[Node]:
    """The nodes of an expression outside subscripts."""
    yield n
    if isinstance(n, Acc):
        return
    for k in n.kids():
        yield from _value_nodes(k)


def _replace(n: Node, old: Node, new: Node) -> Node:
    if n is old:
        return new
    kids = n.kids()
    if not kids:
        return n
    nk = [_replace(k, old, new) for k in kids]
    if all(a is b for a, b in zip(nk, kids, strict=True)):
        return n
    return n.with_kids(nk)


def generate(seed: int) -> Program:
    """A random TC program (deterministic in `seed`)."""
    g = _Gen(seed)
    g.make_sizes()
    g.make_inputs()
    count = g.pick([2, 3, 4, 5], [3, 4, 2, 1])
    for _ in range(count):
        g.statement()
    stmts = []
    for s in g.stmts:
        if g.chance(0.2):
            s = _add_lets(g, s)
        stmts.append(s)
    g.stmts = stmts
    return g.finish()


# ------------------------------------------------------------------- checking


@dataclass(frozen=True)
class Failure:
    """How a program failed under one option set.

    kind: "frontend" (the generated source is rejected), "shape" (an output
    shape differs from what the generator meant), "reference" (the reference
    interpreter raised), "compile" (a `TCError` from `define` or the first
    call's compilation), "run" (a `TCError` from the call itself), "crash"
    (any other exception), "mismatch" (outputs differ),
    "inputs-modified".
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def tolerance(red: float) -> float:
    """Relative and absolute float tolerance for a reduction length.

    The formula of test/e2e/test_cpu_catalog.py's `check_outputs`:
    ``1e-5 * sqrt(max(1, red)) + 2e-6``.
    """
    return 1e-5 * math.sqrt(max(1.0, red)) + 2e-6


def compare(
    got: Any, want: Sequence[Array], names: Sequence[str], red: Mapping[str, float]
) -> str | None:
    """None when `got` matches `want`; else a description of the first difference.

    Floats within `tolerance` (relative and absolute, NaN equal to NaN), ints
    and bools exactly; dtypes and shapes must be equal.
    """
    if not isinstance(got, tuple):
        got = (got,)
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for name, g, w in zip(names, got, want, strict=True):
        if not isinstance(g, np.ndarray):
            return f"output {name}: not an array ({type(g).__name__})"
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {name}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if g.dtype.kind == "f":
            tol = tolerance(red.get(name, 1.0))
            with np.errstate(all="ignore"):
                close = np.isclose(g, w, rtol=tol, atol=tol, equal_nan=True)
        else:
            close = g == w
        if not np.all(close):
            bad = np.argwhere(~close)
            where = tuple(int(x) for x in bad[0])
            lines = [
                f"output {name}: {len(bad)} of {g.size} elements differ (tolerance {tolerance(red.get(name, 1.0)) if g.dtype.kind == 'f' else 0:.3g})"
            ]
            for idx in bad[:5]:
                ix = tuple(int(x) for x in idx)
                lines.append(f"  {name}{list(ix)}: got {g[ix]!r}, reference {w[ix]!r}")
            del where
            return "\n".join(lines)
    return None


def cpu_options(options: Mapping[str, object]) -> Any:
    """``tcdialect.CpuOptions(**options)``; an unknown key is a `TypeError`."""
    import tcdialect

    fields = {f.name for f in dataclasses.fields(tcdialect.CpuOptions)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise TypeError(
            f"{unknown} are not tcdialect.CpuOptions fields (it has {sorted(fields)})"
        )
    # JSON gives lists; CpuOptions is hashable (a cache key): tuples.
    kwargs: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in options.items()
    }
    return tcdialect.CpuOptions(**kwargs)


def _poisoned(want: Array) -> Array:
    """A C-order array of `want`'s shape and dtype that differs from `want`
    in every element by more than any tolerance `compare` allows: `want +
    max(1, |want|)` for floats (1 where `want` is not finite), `want + 1`
    (wrapping) for ints, `not want` for booleans."""
    out = np.empty(want.shape, want.dtype)
    kind = want.dtype.kind
    if kind == "b":
        return np.logical_not(want, out=out)
    if kind != "f":
        return np.add(want, 1, out=out, casting="unsafe")
    with np.errstate(all="ignore"):
        np.add(want, np.maximum(1, np.abs(want)), out=out)
    np.copyto(out, 1, where=~np.isfinite(want))
    return out


def check(program: Program, options: Mapping[str, object]) -> Failure | None:
    """Run `program` through the reference and the CPU compiler; compare."""
    import tcdialect
    from tcdialect import reference
    from tcdialect.diagnostics import TCError
    from tcdialect.frontend import parse_tc

    opts = cpu_options(options)
    source = program.source
    try:
        module = parse_tc(source, f"{program.name}.tc")
    except TCError as e:
        return Failure("frontend", str(e))
    arrays = program.arrays()
    before = [a.copy() for a in arrays]
    try:
        want = reference.run(module, program.entry, arrays)
    except TCError as e:
        return Failure("reference", str(e))
    names = [n for n, _ in program.outputs]
    shapes = program.expected_shapes()
    if shapes is not None:
        for n, w in zip(names, want, strict=False):
            if n in shapes and tuple(w.shape) != shapes[n]:
                return Failure(
                    "shape",
                    f"output {n} has shape {tuple(w.shape)} in the reference, the generator meant {shapes[n]}",
                )
    try:
        kernel = tcdialect.define(source, program.entry, options=opts)
        kernel.compile(*arrays)
    except TCError as e:
        return Failure("compile", str(e))
    except Exception as e:  # an internal error that escaped as a non-TCError
        return Failure(
            "crash", "".join(traceback.format_exception_only(type(e), e)).strip()
        )
    # outputs start different from the reference everywhere, so an element
    # the kernel fails to write cannot pass on memory that still holds the
    # right answer (np.empty may hand back the reference's freed arrays)
    got = tuple(_poisoned(w) for w in want)
    try:
        kernel(*arrays, out=got)
    except TCError as e:
        return Failure("run", str(e))
    except Exception as e:
        return Failure(
            "crash", "".join(traceback.format_exception_only(type(e), e)).strip()
        )
    diff = compare(got, want, names, program.red)
    if diff is not None:
        return Failure("mismatch", diff)
    for spec, a, b in zip(program.inputs, arrays, before, strict=True):
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            return Failure(
                "inputs-modified", f"input {spec.name} was modified by the call"
            )
    return None


# -------------------------------------------------------------------- reducer


def _stmt_nodes(s: Stmt) -> list[tuple[int, Node]]:
    """(slot, node) pairs: slot -1 is the rhs, k >= 0 the k-th where clause."""
    out: list[tuple[int, Node]] = [(-1, s.rhs)]
    for k, c in enumerate(s.where):
        if isinstance(c, Let):
            out.append((k, c.value))
    return out


def _with_slot(s: Stmt, slot: int, node: Node) -> Stmt:
    if slot < 0:
        return dataclasses.replace(s, rhs=node)
    where = list(s.where)
    c = where[slot]
    assert isinstance(c, Let)
    where[slot] = Let(c.name, node)
    return dataclasses.replace(s, where=tuple(where))


def _fixup(p: Program) -> Program:
    """Drop outputs nobody writes and inputs nobody needs."""
    written = {s.target for s in p.stmts}
    outputs = tuple(o for o in p.outputs if o[0] in written)
    used: set[str] = set()
    for s in p.stmts:
        used |= s.reads()
    inputs = tuple(i for i in p.inputs if i.name in used)
    bound = {d for i in inputs for d in i.dims if isinstance(d, str)}
    # keep an input that binds a size something still uses
    for i in p.inputs:
        if i not in inputs and any(
            isinstance(d, str) and d in used and d not in bound for d in i.dims
        ):
            inputs = (*inputs, i)
            bound |= {d for d in i.dims if isinstance(d, str)}
    inputs = tuple(i for i in p.inputs if i in inputs)  # declared order
    sizes = {k: v for k, v in p.sizes.items() if k in bound}
    return dataclasses.replace(
        p,
        outputs=outputs,
        inputs=inputs,
        sizes=sizes,
        red={k: v for k, v in p.red.items() if any(o[0] == k for o in outputs)},
        shapes=None
        if p.shapes is None
        else {k: v for k, v in p.shapes.items() if any(o[0] == k for o in outputs)},
    )


def _first_writes_init(stmts: Sequence[Stmt]) -> tuple[Stmt, ...]:
    """Make the first statement writing each tensor start from scratch (`op=!`)."""
    seen: set[str] = set()
    out = []
    for s in stmts:
        if s.target not in seen and s.op in ("+=", "*=", "max=", "min="):
            s = dataclasses.replace(s, op=s.op + "!")
        seen.add(s.target)
        out.append(s)
    return tuple(out)


def _candidates(p: Program) -> Iterator[Program]:
    """Smaller variants of `p`, coarse first."""
    n = len(p.stmts)
    # 1. drop chunks of statements (ddmin-style: halves, quarters, ..., single)
    chunk = max(1, n // 2)
    while chunk >= 1:
        for start in range(0, n, chunk):
            rest = p.stmts[:start] + p.stmts[start + chunk :]
            if not rest:
                continue
            q = _fixup(dataclasses.replace(p, stmts=rest))
            if q.outputs:
                yield q
            q2 = _fixup(dataclasses.replace(p, stmts=_first_writes_init(rest)))
            if q2.outputs and q2.stmts != q.stmts:
                yield q2
        if chunk == 1:
            break
        chunk //= 2
    # 2. fewer outputs (the others become temporaries)
    if len(p.outputs) > 1:
        for k in range(len(p.outputs)):
            yield _fixup(
                dataclasses.replace(p, outputs=p.outputs[:k] + p.outputs[k + 1 :])
            )
    # 3. smaller sizes
    for name, v in p.sizes.items():
        lo = p.size_min.get(name, 0)
        for nv in sorted({lo, 1, 2, v // 2, v - 1}):
            if lo <= nv < v:
                yield dataclasses.replace(p, sizes={**p.sizes, name: nv})
    # 4. fewer where clauses (ranges, lets inlined, exists)
    for si, s in enumerate(p.stmts):
        for k, c in enumerate(s.where):
            others = s.where[:k] + s.where[k + 1 :]
            if isinstance(c, Let):
                ns = dataclasses.replace(
                    s,
                    rhs=_subst(s.rhs, c.name, c.value),
                    where=tuple(_subst_clause(x, c.name, c.value) for x in others),
                )
            else:
                ns = dataclasses.replace(s, where=others)
            yield dataclasses.replace(p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :])
    # 5. simpler expressions: a node replaced by one of its operands or a constant
    for si, s in enumerate(p.stmts):
        for slot, root in _stmt_nodes(s):
            for node in list(_value_nodes(root)):
                repl: list[Node] = []
                if not getattr(node, "guard", False):
                    repl.extend(k for k in node.kids() if not isinstance(node, Acc))
                if not (
                    isinstance(node, Lit) and node.text in ("0", "1", "0.0", "1.0")
                ):
                    repl.extend([Lit("1.0"), Lit("0.0"), Lit("1"), Lit("0")])
                for r in repl:
                    ns = _with_slot(s, slot, _replace(root, node, r))
                    yield _fixup(
                        dataclasses.replace(
                            p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :]
                        )
                    )
    # 6. reductions as other reductions (+ is the simplest to read)
    for si, s in enumerate(p.stmts):
        if s.op not in ("=", "+=!", "+="):
            ns = dataclasses.replace(s, op="+=!" if s.op.endswith("!") else "+=")
            yield dataclasses.replace(p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :])


def _subst(n: Node, name: str, value: Node) -> Node:
    if isinstance(n, Lit) and n.text == name:
        return value
    kids = n.kids()
    if not kids:
        return n
    return n.with_kids([_subst(k, name, value) for k in kids])


def _subst_clause(c: Clause, name: str, value: Node) -> Clause:
    if isinstance(c, Let):
        return Let(c.name, _subst(c.value, name, value))
    return c


def _size(p: Program) -> tuple[int, int, int]:
    return (len(p.stmts), len(p.source), sum(p.sizes.values()))


def reduce(
    program: Program,
    still_fails: Callable[[Program], bool],
    time_limit: float = 30.0,
    log: Callable[[str], None] | None = None,
) -> Program:
    """Shrink `program` while `still_fails` holds (greedy, delta-debugging style).

    Tries dropping statements (chunks first), outputs, where clauses and
    lets, shrinking sizes, replacing sub-expressions by operands or
    constants, and simplifying reduction operators; keeps any variant that
    is smaller and still fails, and restarts from it. Stops at a fixpoint
    or after `time_limit` seconds (returning the smallest failing program).
    """
    if program.text is not None:
        return program
    deadline = time.monotonic() + time_limit
    best = program
    tried: set[str] = set()
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in _candidates(best):
            if time.monotonic() >= deadline:
                break
            key = cand.source + json.dumps(cand.sizes, sort_keys=True)
            if key in tried or _size(cand) >= _size(best):
                continue
            tried.add(key)
            if still_fails(cand):
                best = cand
                progress = True
                if log is not None:
                    log(f"reduced to {_size(best)}")
                break
    return best


def failure_predicate(
    failure: Failure, options: Mapping[str, object]
) -> Callable[[Program], bool]:
    """`still_fails` for `reduce`: the same kind of failure under the same options."""

    def still_fails(p: Program) -> bool:
        f = check(p, options)
        return f is not None and f.kind == failure.kind

    return still_fails


# --------------------------------------------------------------- reproducers

_HEADER = "# tcgen: "


def save(program: Program, path: str | Path, note: str = "") -> None:
    """Write `program` as a ``.tc`` file; a ``# tcgen:`` line holds the input recipe."""
    lines = [f"# {line}" for line in note.splitlines()]
    lines.append(_HEADER + json.dumps(program.spec(), sort_keys=True))
    Path(path).write_text("\n".join(lines) + "\n" + program.source)


def load(path: str | Path) -> Program:
    """Read a reproducer written by `save` (the source is kept verbatim)."""
    text = Path(path).read_text()
    spec: dict[str, Any] | None = None
    for line in text.splitlines():
        if line.startswith(_HEADER):
            spec = json.loads(line[len(_HEADER) :])
    if spec is None:
        raise ValueError(f"{path}: no '{_HEADER.strip()}' line")
    outputs = tuple((str(n), t) for n, t in spec["outputs"])
    shapes = spec.get("shapes")
    return Program(
        name=spec["entry"],
        sizes=dict(spec["sizes"]),
        inputs=tuple(InputSpec.from_json(i) for i in spec["inputs"]),
        outputs=outputs,
        stmts=(),
        data_seed=int(spec["data_seed"]),
        size_min=dict(spec.get("size_min", {})),
        red={k: float(v) for k, v in spec.get("red", {}).items()},
        shapes=None if shapes is None else {k: tuple(v) for k, v in shapes.items()},
        seed=spec.get("seed"),
        text=text,
    )


# ----------------------------------------------------------------------- CLI


def _isolated_predicate(
    failure: Failure, options: Mapping[str, object]
) -> Callable[[Program], bool]:
    """Like `failure_predicate`, but each check runs in a fresh Python process
    (for failures that kill the process, e.g. a segfault in compiled code)."""
    import subprocess
    import tempfile

    def still_fails(p: Program) -> bool:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "candidate.tc"
            save(p, path)
            cmd = [
                sys.executable,
                "-m",
                "tcdialect.testing.tcgen",
                "--file",
                str(path),
                "--options",
                json.dumps(dict(options)),
            ]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                return failure.kind == "timeout"
        if r.returncode < 0:
            return failure.kind == "signal"
        return f"# FAILED {failure.kind}:" in r.stdout

    return still_fails


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tcdialect.testing.tcgen",
        description=(__doc__ or "").split("\n\n")[0],
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--seed", type=int, help="generate the program of this seed")
    src.add_argument(
        "--file", metavar="FILE.tc", help="check a reproducer written by --save"
    )
    ap.add_argument(
        "--options",
        default="{}",
        help="CpuOptions fields as JSON, e.g. '{\"threads\": 2}'",
    )
    ap.add_argument(
        "--reduce", action="store_true", help="shrink a failing program (needs --seed)"
    )
    ap.add_argument(
        "--isolate",
        action="store_true",
        help="--reduce checking each candidate in a new process (for crashes)",
    )
    ap.add_argument(
        "--time-limit",
        type=float,
        default=120.0,
        help="seconds for --reduce (default 120)",
    )
    ap.add_argument(
        "--save", metavar="FILE.tc", help="write the (reduced) failing program here"
    )
    args = ap.parse_args(argv)
    options = json.loads(args.options)
    program = generate(args.seed) if args.file is None else load(args.file)
    print(f"# seed={program.seed} options={json.dumps(options)}")
    print(program.describe())
    if args.isolate:
        signal = Failure("signal", "the check killed the process")
        killed = _isolated_predicate(signal, options)(program)
        failure = signal if killed else check(program, options)
    else:
        failure = check(program, options)
    if failure is None:
        print("# ok: the compiled kernel agrees with the reference")
        return 0
    print(f"# FAILED {failure}")
    if args.reduce:
        pred = (
            _isolated_predicate(failure, options)
            if args.isolate
            else failure_predicate(failure, options)
        )
        reduced = reduce(
            program, pred, args.time_limit, log=lambda m: print("#", m, file=sys.stderr)
        )
        print("\n# reduced:")
        print(reduced.describe())
        print(f"# {check(reduced, options) if not args.isolate else failure}")
        program = reduced
    if args.save:
        save(
            program,
            args.save,
            f"seed={program.seed} options={json.dumps(options)}\n"
            f"{failure.kind}: {failure.message.splitlines()[0] if failure.message else ''}",
        )
        print(f"# saved to {args.save}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
