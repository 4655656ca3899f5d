"""`StatementBuilder`: one random statement of a generated program.

Given the target tensor, its extents and the operator (``=``, ``+=!``,
``max=`` ...), it chooses the index variables (output indices, and 1-2
reduction indices for a reduction), decides for each whether range inference
or a ``where i in lo:hi`` clause gives its range, and finds subscripts that
stay in range: a read that pins an index's range ("pin"), shifted, strided,
reversed, wrapped, clamped, constant and gathered (``A(G(i))``) subscripts.
The right-hand side comes from `ExpressionBuilder` (`tcgen.expressions`);
pins the expression did not use become ``exists`` clauses. `build` returns
the statement and what the target holds afterwards (a `Val`), or raises
`Unsupported` (the generator then retries with other choices).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tcdialect.testing.tcgen.expressions import ExpressionBuilder
from tcdialect.testing.tcgen.extents import (
    FLOATS,
    INTS,
    Extent,
    Index,
    TInfo,
    Unsupported,
    Val,
)
from tcdialect.testing.tcgen.model import (
    Acc,
    Bin,
    Call,
    Clause,
    Exists,
    Lit,
    Node,
    Range,
    SizeText,
    Stmt,
    walk,
)

if TYPE_CHECKING:
    from tcdialect.testing.tcgen.generator import Generator


class StatementBuilder(ExpressionBuilder):
    """Builds one statement: indices, their ranges, the right-hand side."""

    def __init__(
        self,
        g: Generator,
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
            raise Unsupported
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

    # ------------------------------------------------------------ statement
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
        if red_op in ("+", "*") and want in INTS:
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

    def result(
        self, v: Val, red_op: str, n: int, may_empty: bool, old: TInfo | None
    ) -> Val:
        """What the target holds after the statement."""
        accumulate = self.op != "=" and not self.op.endswith("!")
        if not red_op:
            return v
        is_float = self.want_t in FLOATS or (old is not None and old.dtype in FLOATS)
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
        if self.want_t in INTS or (old is not None and old.dtype in INTS):
            if nan:  # an empty max/min reduction gives the type's extreme value
                lo, hi = -(2.0**31), 2.0**31
            nan = False
        return Val(v.e, v.t, lo, hi, exact, nan, red)
