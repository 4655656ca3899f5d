"""`generate(seed)`: a random TC definition, deterministic in the seed.

The generator is a `Generator` (one per seed, a `random.Random(seed)`): it
picks 1-3 size parameters and their values, the inputs, then 2-5
statements, each built by a `StatementBuilder` (`tcgen.statement`), and
finally which tensors are outputs. It tracks every tensor's extents and the
interval of its values (`tcgen.extents`) so that later statements index in
range and keep values finite. The result is a `Program` (`tcgen.model`).

Accepts: an integer seed. Produces: a `Program` the frontend is meant to
accept (a rejection is a generator or frontend bug, which `check` reports).
The sequence of random draws is part of the contract: a seed names the same
program in every version (reproducers and CI failures quote seeds).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

from tcdialect.testing.tcgen.extents import (
    FLOATS,
    INTS,
    Extent,
    TInfo,
    Unsupported,
    Val,
    ext_conv,
    ext_hc,
    ext_hf,
    ext_lit,
    ext_shift,
    ext_sym,
)
from tcdialect.testing.tcgen.model import (
    Acc,
    InputSpec,
    Let,
    Lit,
    Program,
    Stmt,
    replace_node,
    value_nodes,
)
from tcdialect.testing.tcgen.statement import StatementBuilder

_SIZE_NAMES = ["N", "M", "K", "L"]


class Generator:
    """The state of one generated program: sizes, inputs, tensors, statements."""

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
        if dtype in FLOATS:
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
                st = StatementBuilder(
                    self, target, out_exts, op, want, helpers, new=new, reduce=reduce
                )
                stmt, info = st.build()
            except Unsupported:
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
                annot = "float32" if v.t in INTS and self.chance(0.5) else v.t
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
        if t.dtype in FLOATS:
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


def _add_lets(g: Generator, stmt: Stmt) -> Stmt:
    """Hoist a sub-expression of the right-hand side into a ``where`` let."""
    cands = [n for n in value_nodes(stmt.rhs) if n is not stmt.rhs and n.kids()]
    if not cands:
        return stmt
    sub = g.rng.choice(cands)
    name = g.fresh("v")
    rhs = replace_node(stmt.rhs, sub, Lit(name))
    return dataclasses.replace(stmt, rhs=rhs, where=(*stmt.where, Let(name, sub)))


def generate(seed: int) -> Program:
    """A random TC program (deterministic in `seed`)."""
    g = Generator(seed)
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
