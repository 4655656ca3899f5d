"""The programs `tcgen` generates: expression trees, statements and `Program`.

A `Program` is one TC definition (statements, or verbatim source for a
loaded reproducer), its size parameters with concrete values and a recipe for
its input arrays (`InputSpec`: NumPy values, deterministic from the data
seed). Every node renders itself as TC text; nothing here is random.

`save`/`load` write and read reproducers: a ``.tc`` file whose
``# tcgen: {...}`` header line is `Program.spec()` as JSON, e.g.::

    # tcgen: {"data_seed": 2, "entry": "g2", "inputs": [...], "sizes": {"N": 1}, ...}
    def g2(float(N, N) X1) -> (T5) {
        T5 +=! X1(r0, r0)
    }
"""

from __future__ import annotations

import json
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
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


def value_nodes(n: Node) -> Iterator[Node]:
    """The nodes of an expression outside subscripts."""
    yield n
    if isinstance(n, Acc):
        return
    for k in n.kids():
        yield from value_nodes(k)


def replace_node(n: Node, old: Node, new: Node) -> Node:
    """`n` with the node `old` (by identity) replaced by `new`."""
    if n is old:
        return new
    kids = n.kids()
    if not kids:
        return n
    nk = [replace_node(k, old, new) for k in kids]
    if all(a is b for a, b in zip(nk, kids, strict=True)):
        return n
    return n.with_kids(nk)


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
