"""What the generator knows while it builds a program: extents and value ranges.

`Extent` is a symbolic size expression the generator can index safely (a
size parameter, a literal, ``N - 2``, ``(N + 1) / 2``, ``N / 2`` or
``N - K + 1``), with its TC text, its Python value and a lower bound. `Val`
is a generated expression with its type and an interval holding its values
(plus whether compiled code and the reference compute it bit-identically,
whether it may be NaN, and the reduction length its tolerance needs);
`TInfo` the same for a tensor written so far, `Index` one index variable of
the statement being built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tcdialect.testing.tcgen.model import Node


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

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
FLOAT_LIMIT = 64.0
INT_LIMIT = 1 << 20


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


class Unsupported(Exception):
    """The statement being built cannot be completed; the generator retries."""
