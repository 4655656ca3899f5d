"""`ExpressionBuilder`: random typed right-hand sides with tracked value ranges.

Every ``expr*`` method returns a `Val` of exactly the requested type (a cast
where needed) whose interval holds all its values. Magnitudes are kept small
(large floats scaled by powers of two, large ints wrapped with ``%``),
denominators away from zero, the arguments of ``log``, ``sqrt``, ``asin`` ...
inside their domains, factors of product reductions near 1, and operations
that are discontinuous (comparisons, casts to int, ``floor``, ``fmod``) only
see `exact` values: ones compiled code and the reference compute
bit-identically. NaN is produced on purpose only when the generator allows it
(``sqrt`` of a possibly negative value).

`StatementBuilder` (`tcgen.statement`) derives from it and supplies the
subscripts (`access`) and the state declared below.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tcdialect.testing.tcgen.extents import (
    FLOAT_LIMIT,
    FLOATS,
    INT_LIMIT,
    INTS,
    Index,
    TInfo,
    Unsupported,
    Val,
    promote,
)
from tcdialect.testing.tcgen.model import Acc, Bin, Call, Lit, Node, Tern, Un

if TYPE_CHECKING:
    from tcdialect.testing.tcgen.generator import Generator


class ExpressionBuilder:
    """The expression half of a statement builder (see the module docstring)."""

    g: Generator
    rng: random.Random
    target: str
    new: bool
    indices: list[Index]
    readable: list[TInfo]
    pins: list[Acc]
    #: the statement's reduction length (product factors stay near 1 over it)
    red_len: int

    def access(self, t: TInfo, fixed: Mapping[int, Node]) -> Acc | None:
        """A read of `t` with in-range subscripts (`StatementBuilder.access`)."""
        raise NotImplementedError

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: Sequence[Any], weights: Sequence[float] | None = None) -> Any:
        return self.g.pick(items, weights)

    # Each `expr*` returns a `Val` of exactly type `t`.
    def expr(self, t: str, depth: int, top: bool = False) -> Val:
        if t == "bool":
            return self.bool_expr(depth)
        if depth <= 0 or (not top and self.chance(0.3)):
            return self.leaf(t)
        if t in FLOATS:
            return self.float_expr(t, depth)
        return self.int_expr(t, depth)

    def pick_tensor(self, kind: str | None) -> TInfo | None:
        cands = [
            t
            for t in self.readable
            if (
                kind is None
                or (kind == "float" and t.dtype in FLOATS)
                or (kind == "int" and t.dtype in INTS)
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
        if t in FLOATS:
            return True
        # int wanted: floats only through exact casts
        return ti.dtype in INTS or (ti.exact and not ti.nan)

    def leaf(self, t: str) -> Val:
        if self.pins and self.chance(0.85):
            v = self.pin_leaf(t)
            if v is not None:
                return v
        r = self.rng.random()
        if r < 0.62:
            kind = (
                "float"
                if t in FLOATS and self.chance(0.85)
                else "int"
                if t in INTS and self.chance(0.7)
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
        if t in FLOATS:
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
        if t in FLOATS:
            # int/bool/other float to float: always fine
            lo, hi = (v.lo, v.hi) if v.t != "bool" else (0.0, 1.0)
            return Val(Call(t, (v.e,)), t, lo, hi, v.exact, v.nan, v.red)
        if t in INTS:
            if v.t in FLOATS:
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
        raise Unsupported

    def normalize(self, v: Val) -> Val:
        """Bring a large value back into range (exactly: powers of two, or %)."""
        if v.t in FLOATS and v.mag > FLOAT_LIMIT:
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
        if v.t in INTS and v.mag > INT_LIMIT:
            return self.int_bound(v, 97)
        return v

    def int_bound(self, v: Val, m: int) -> Val:
        if v.mag <= m:
            return v
        e = Bin("%", v.e, Lit(str(m)), guard=True)
        return Val(e, v.t, 0, m - 1, True, False, v.red)

    def near_one(self, v: Val) -> Val:
        """A factor for a product reduction: near 1 so that products stay finite."""
        if v.t in INTS:
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
        if t in INTS:
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
        if t in INTS:
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
        if fn in ("fmin", "fmax") and t not in FLOATS:
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
            src = [s for s in self.readable if s.is_input and s.dtype in FLOATS]
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
            at = promote(at, a.t) if a.t in FLOATS else at
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
        t = a.t if a.t in FLOATS else "float32"
        return Val(e, t, -m, m, False, a.nan, a.red)

    def positive(self, a: Val, base: float = 0.5) -> Val:
        """`a` made >= `base`: ``base + fabs(a)``."""
        if a.lo >= base:
            return a
        e = Bin("+", Lit(repr(base)), Call("fabs", (a.e,)), guard=True)
        t = a.t if a.t in FLOATS else "float32"
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
