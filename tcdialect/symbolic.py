"""Symbolic size expressions: quasi-affine integer expressions of size parameters.

Tensor extents and index ranges in tcdialect are expressions of the size
parameters of a definition, e.g. ``M``, ``H - KH + 1``, ``(I + 1) floordiv 2``
or ``min(N, M)``. `SizeExpr` is a small normalising algebra for them:

* a linear combination of *atoms* with integer coefficients plus a constant;
* atoms are size names, ``floordiv`` by a positive constant, ``min``/``max``,
  products of two or more atoms (``M * P``) and ``floordiv`` by a non-constant
  expression (``(N - K) floordiv S``): the last two are not quasi-affine, so
  later stages treat each as a parameter of its own (a *derived parameter*,
  computed from the sizes);
* products distribute over sums (``(M + 1) * P`` is ``M * P + P``), so a
  polynomial in the sizes has one form;
* ``ceildiv`` and ``mod`` are rewritten into ``floordiv``;
* ``floordiv`` pulls out multiples of the divisor (the constant left inside is
  in ``[0, divisor)``), divides out a common factor of the coefficients and
  the divisor, and merges nested ``floordiv``s (``(I floordiv 2) floordiv 3``
  is ``I floordiv 6``);
* ``min``/``max`` flatten nested ones and drop arguments that are provably
  not the result (size names stand for non-negative integers: they are
  tensor extents).

Normalisation makes the usual ways of writing an expression print the same,
and the printed text is canonical: ``parse(str(e)) == e`` and
``str(parse(s))`` is a fixed point. (Deciding equality of all quasi-affine
expressions is not attempted.) The textual syntax (also used by the tc
dialect) is::

    expr := term (('+' | '-') term)*
    term := factor (('*' | 'floordiv' | 'ceildiv' | 'mod') factor)*
    factor := INT | NAME | '-' factor | '(' expr ')' | ('min' | 'max') '(' expr (',' expr)+ ')'

A constant divisor must be positive. A non-constant divisor must be positive
when the expression is evaluated: `divisors` lists them so that callers can
check the sizes first; `evaluate` gives 0 for a zero divisor, like TC's
integer ``/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


class SymbolicError(ValueError):
    """Raised for malformed size expressions and non-positive constant divisors."""


@dataclass(frozen=True, order=True)
class _Atom:
    kind: str  # "sym" | "floordiv" | "min" | "max" | "mul" | "div"
    name: str = ""
    args: tuple[SizeExpr, ...] = ()
    divisor: int = 1

    def __str__(self) -> str:
        if self.kind == "sym":
            return self.name
        if self.kind == "floordiv":
            return f"{self.args[0]._str_paren()} floordiv {self.divisor}"
        if self.kind == "mul":
            return " * ".join(_factor_str(a) for a in self.args)
        if self.kind == "div":
            num, den = self.args
            return f"{num._str_paren()} floordiv {_factor_str(den)}"
        return f"{self.kind}({', '.join(str(a) for a in self.args)})"

    def evaluate(self, env: Mapping[str, int]) -> int:
        if self.kind == "sym":
            try:
                return env[self.name]
            except KeyError:
                raise SymbolicError(f"no value for size '{self.name}'") from None
        values = [a.evaluate(env) for a in self.args]
        if self.kind == "floordiv":
            return values[0] // self.divisor
        if self.kind == "mul":
            out = 1
            for v in values:
                out *= v
            return out
        if self.kind == "div":
            return values[0] // values[1] if values[1] else 0
        return min(values) if self.kind == "min" else max(values)

    def names(self) -> set[str]:
        if self.kind == "sym":
            return {self.name}
        out: set[str] = set()
        for a in self.args:
            out |= a.names()
        return out


@dataclass(frozen=True)
class SizeExpr:
    """``sum(coeff * atom) + const`` in normal form (no zero coefficients)."""

    terms: tuple[tuple[_Atom, int], ...] = ()
    const: int = 0

    # ---------------------------------------------------------- construction
    @staticmethod
    def lit(value: int) -> SizeExpr:
        return SizeExpr((), int(value))

    @staticmethod
    def sym(name: str) -> SizeExpr:
        return SizeExpr(((_Atom("sym", name), 1),), 0)

    @staticmethod
    def _make(terms: Mapping[_Atom, int], const: int) -> SizeExpr:
        items = tuple(sorted(((a, c) for a, c in terms.items() if c != 0), key=_key))
        return SizeExpr(items, const)

    def _dict(self) -> dict[_Atom, int]:
        return dict(self.terms)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other: SizeExpr | int) -> SizeExpr:
        other = _as_expr(other)
        terms = self._dict()
        for a, c in other.terms:
            terms[a] = terms.get(a, 0) + c
        return SizeExpr._make(terms, self.const + other.const)

    def __radd__(self, other: int) -> SizeExpr:
        return self + other

    def __neg__(self) -> SizeExpr:
        return self * -1

    def __sub__(self, other: SizeExpr | int) -> SizeExpr:
        return self + (-_as_expr(other))

    def __rsub__(self, other: int) -> SizeExpr:
        return _as_expr(other) - self

    def __mul__(self, other: SizeExpr | int) -> SizeExpr:
        other = _as_expr(other)
        if other.is_constant:
            k = other.const
            return SizeExpr._make({a: c * k for a, c in self.terms}, self.const * k)
        if self.is_constant:
            return other * self
        # Distribute: (sum a_i x_i + c) * (sum b_j y_j + d).
        terms: dict[_Atom, int] = {}
        for a, c in self.terms:
            for b, d in other.terms:
                atom = _product(a, b)
                terms[atom] = terms.get(atom, 0) + c * d
        out = SizeExpr._make(terms, self.const * other.const)
        nonconst_self = SizeExpr(self.terms, 0)
        nonconst_other = SizeExpr(other.terms, 0)
        return out + nonconst_self * other.const + nonconst_other * self.const

    def __rmul__(self, other: int) -> SizeExpr:
        return self * other

    def floordiv(self, divisor: int) -> SizeExpr:
        if divisor <= 0:
            raise SymbolicError(f"floordiv by non-positive constant {divisor}")
        if divisor == 1:
            return self
        outside: dict[_Atom, int] = {}
        inside: dict[_Atom, int] = {}
        for a, c in self.terms:
            if c % divisor == 0:
                outside[a] = c // divisor
            else:
                inside[a] = c
        q, r = divmod(self.const, divisor)
        if not inside:
            return SizeExpr._make(outside, q)
        # Divide out a common factor g of the remaining coefficients and the
        # divisor: floor((g*x + r) / (g*d)) == floor((x + floor(r/g)) / d).
        g = divisor
        for c in inside.values():
            g = _gcd(g, c)
        inner = SizeExpr._make({a: c // g for a, c in inside.items()}, r // g)
        d = divisor // g
        if d == 1:  # pragma: no cover - some coefficient is not a multiple
            return SizeExpr._make(outside, q) + inner
        (a, c), *more = inner.terms
        if not more and c == 1 and a.kind == "floordiv":
            # floor((floor(x/a) + k) / d) == floor((x + k*a) / (a*d))
            nested = (a.args[0] + inner.const * a.divisor).floordiv(a.divisor * d)
            return SizeExpr._make(outside, q) + nested
        atom = _Atom("floordiv", args=(inner,), divisor=d)
        outside[atom] = outside.get(atom, 0) + 1
        return SizeExpr._make(outside, q)

    def ceildiv(self, divisor: int) -> SizeExpr:
        return (self + (divisor - 1)).floordiv(divisor)

    def mod(self, divisor: int) -> SizeExpr:
        return self - self.floordiv(divisor) * divisor

    def floordiv_by(self, divisor: SizeExpr | int) -> SizeExpr:
        """``floor(self / divisor)`` for any divisor (positive when evaluated).

        A constant divisor is `floordiv`; a quotient known to be 0 (``(S - 1)
        floordiv S``) or exact (``(M * P) floordiv P`` is ``M``) is
        simplified; anything else is a ``div`` atom."""
        divisor = _as_expr(divisor)
        if divisor.is_constant:
            return self.floordiv(divisor.const)
        if self.is_constant and self.const == 0:
            return self
        if self == divisor - 1 or (
            provably_nonneg(self) and provably_nonneg(divisor - self - 1)
        ):
            return SizeExpr.lit(0)  # 0 <= self < divisor (a divisor is >= 1)
        exact = _exact_quotient(self, divisor)
        if exact is not None:
            return exact
        return SizeExpr(((_Atom("div", args=(self, divisor)), 1),), 0)

    def ceildiv_by(self, divisor: SizeExpr | int) -> SizeExpr:
        divisor = _as_expr(divisor)
        if divisor.is_constant:
            return self.ceildiv(divisor.const)
        return (self + divisor - 1).floordiv_by(divisor)

    def mod_by(self, divisor: SizeExpr | int) -> SizeExpr:
        divisor = _as_expr(divisor)
        if divisor.is_constant:
            return self.mod(divisor.const)
        return self - self.floordiv_by(divisor) * divisor

    # --------------------------------------------------------------- queries
    @property
    def is_constant(self) -> bool:
        return not self.terms

    def constant_value(self) -> int | None:
        return self.const if self.is_constant else None

    def names(self) -> set[str]:
        out: set[str] = set()
        for a, _ in self.terms:
            out |= a.names()
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        return self.const + sum(c * a.evaluate(env) for a, c in self.terms)

    def divisors(self) -> list[SizeExpr]:
        """The non-constant divisors in `self` (innermost first)."""
        out: list[SizeExpr] = []
        for a, _ in self.terms:
            for x in a.args:
                out.extend(d for d in x.divisors() if d not in out)
            if a.kind == "div" and a.args[1] not in out:
                out.append(a.args[1])
        return out

    @property
    def is_affine(self) -> bool:
        """Quasi-affine: no product of sizes and no non-constant divisor."""
        return all(
            a.kind not in ("mul", "div") and all(x.is_affine for x in a.args)
            for a, _ in self.terms
        )

    def substitute(self, env: Mapping[str, SizeExpr]) -> SizeExpr:
        """Replace size names by expressions."""
        out = SizeExpr.lit(self.const)
        for a, c in self.terms:
            out = out + _subst_atom(a, env) * c
        return out

    # -------------------------------------------------------------- printing
    def __str__(self) -> str:
        parts: list[str] = []
        for a, c in self.terms:
            text = str(a)
            if a.kind in ("floordiv", "div") and (c != 1 or parts):
                text = f"({text})"
            mag = abs(c)
            body = text if mag == 1 else f"{mag} * {text}"
            if not parts:
                parts.append(body if c > 0 else f"-{body}")
            else:
                parts.append(f"{'+' if c > 0 else '-'} {body}")
        if self.const or not parts:
            if not parts:
                parts.append(str(self.const))
            else:
                parts.append(f"{'+' if self.const > 0 else '-'} {abs(self.const)}")
        return " ".join(parts)

    def _str_paren(self) -> str:
        text = str(self)
        if len(self.terms) + (1 if self.const else 0) > 1 or text.startswith("-"):
            return f"({text})"
        if self.terms and self.terms[0][1] != 1:
            return f"({text})"
        return text

    def __repr__(self) -> str:
        return f"SizeExpr({str(self)!r})"


def _key(item: tuple[_Atom, int]) -> tuple[bool, int, str]:
    order = {"sym": 0, "mul": 1, "floordiv": 2, "div": 3, "min": 4, "max": 5}
    return (item[1] < 0, order[item[0].kind], str(item[0]))


def _factors(a: _Atom) -> tuple[SizeExpr, ...]:
    """The factors of a product atom; any other atom is its only factor."""
    return a.args if a.kind == "mul" else (SizeExpr(((a, 1),), 0),)


def _product(a: _Atom, b: _Atom) -> _Atom:
    return _Atom("mul", args=tuple(sorted((*_factors(a), *_factors(b)), key=str)))


def _factor_str(e: SizeExpr) -> str:
    """A factor of a product or a divisor: parenthesised unless a name or call."""
    text = str(e)
    atom = e.terms[0][0] if len(e.terms) == 1 and not e.const else None
    if atom is not None and e.terms[0][1] == 1 and atom.kind in ("sym", "min", "max"):
        return text
    return f"({text})"


def _exact_quotient(num: SizeExpr, den: SizeExpr) -> SizeExpr | None:
    """``num / den`` when `den` is one monomial dividing every term of `num`."""
    if len(den.terms) != 1 or den.const or num.const:
        return None
    ((datom, dc),) = den.terms
    dfs = list(_factors(datom))
    out = SizeExpr.lit(0)
    for a, c in num.terms:
        if c % dc:
            return None
        rest = list(_factors(a))
        for f in dfs:
            if f not in rest:
                return None
            rest.remove(f)
        q = SizeExpr.lit(c // dc)
        for f in rest:
            q = q * f
        out = out + q
    return out


def _gcd(a: int, b: int) -> int:
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def _as_expr(v: SizeExpr | int) -> SizeExpr:
    return v if isinstance(v, SizeExpr) else SizeExpr.lit(v)


def _subst_atom(a: _Atom, env: Mapping[str, SizeExpr]) -> SizeExpr:
    if a.kind == "sym":
        return env.get(a.name, SizeExpr.sym(a.name))
    args = [x.substitute(env) for x in a.args]
    if a.kind == "floordiv":
        return args[0].floordiv(a.divisor)
    if a.kind == "mul":
        out = SizeExpr.lit(1)
        for x in args:
            out = out * x
        return out
    if a.kind == "div":
        return args[0].floordiv_by(args[1])
    return smin(args) if a.kind == "min" else smax(args)


# ------------------------------------------------------------------ min / max


def diff_range(a: SizeExpr, b: SizeExpr) -> tuple[int, int] | None:
    """Bounds ``(lo, hi)`` of ``a - b`` valid for all sizes, or None if unknown.

    Exact when the difference is constant; also knows that
    ``floordiv(X + p, d) - floordiv(X + q, d)`` is ``floor(k / d)`` or
    ``ceil(k / d)`` for ``k = p - q``.
    """
    diff = a - b
    if diff.is_constant:
        return diff.const, diff.const
    terms = dict(diff.terms)
    if len(terms) == 2:
        (x, cx), (y, cy) = terms.items()
        if x.kind == y.kind == "floordiv" and cx == -cy and x.divisor == y.divisor:
            inner = x.args[0] - y.args[0]
            if inner.is_constant:
                k, d = inner.const, x.divisor
                values = [cx * (k // d) + diff.const, cx * (-(-k // d)) + diff.const]
                return min(values), max(values)
    return None


def provably_nonneg(e: SizeExpr) -> bool:
    """True when ``e >= 0`` for every value of the sizes.

    Sizes are never negative, so a non-negative combination of sizes, of
    ``floordiv`` of such expressions and of ``min``/``max`` of them is too.
    """
    return e.const >= 0 and all(c > 0 and _atom_nonneg(a) for a, c in e.terms)


def _atom_nonneg(a: _Atom) -> bool:
    if a.kind == "sym":
        return True
    if a.kind == "max":
        return any(provably_nonneg(x) for x in a.args)
    return all(provably_nonneg(x) for x in a.args)


def provably_le(a: SizeExpr, b: SizeExpr) -> bool:
    """True when ``a <= b`` for every (non-negative) value of the sizes."""
    r = diff_range(a, b)
    if r is not None:
        return r[1] <= 0
    return provably_nonneg(b - a)


def provably_equal(a: SizeExpr, b: SizeExpr) -> bool:
    return a == b


def _minmax(kind: str, args: Iterable[SizeExpr]) -> SizeExpr:
    flat: list[SizeExpr] = []
    for a in args:
        if len(a.terms) == 1 and a.const == 0 and a.terms[0][1] == 1:
            atom = a.terms[0][0]
            if atom.kind == kind:
                flat.extend(atom.args)
                continue
        flat.append(a)

    def better(x: SizeExpr, y: SizeExpr) -> bool:  # x makes y redundant
        return provably_le(x, y) if kind == "min" else provably_le(y, x)

    keep: list[SizeExpr] = []
    for a in flat:
        if any(better(b, a) for b in keep):
            continue
        keep = [b for b in keep if not better(a, b)]
        keep.append(a)
    if not keep:
        raise SymbolicError(f"{kind} of nothing")
    if len(keep) == 1:
        return keep[0]
    keep.sort(key=str)
    return SizeExpr(((_Atom(kind, args=tuple(keep)), 1),), 0)


def smin(args: Iterable[SizeExpr]) -> SizeExpr:
    """Symbolic minimum, simplified where the order is known."""
    return _minmax("min", args)


def smax(args: Iterable[SizeExpr]) -> SizeExpr:
    """Symbolic maximum, simplified where the order is known."""
    return _minmax("max", args)


# -------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:([0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|(.))", re.DOTALL)


def parse(text: str) -> SizeExpr:
    """Parse the textual form (see module docstring)."""
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the regex always matches a char
            break
        tokens.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    p = _Parser(tokens)
    e = p.expr()
    if p.i != len(tokens):
        raise SymbolicError(f"unexpected '{tokens[p.i]}' in size expression '{text}'")
    return e


def _is_int(tok: str) -> bool:
    return tok.isascii() and tok.isdigit()


class _Parser:
    def __init__(self, tokens: list[str]):
        self.t = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"'{expected}'" if expected else "a token"
            raise SymbolicError(f"expected {want} in size expression")
        self.i += 1
        return tok

    def expr(self) -> SizeExpr:
        e = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            e = e + rhs if op == "+" else e - rhs
        return e

    def term(self) -> SizeExpr:
        e = self.factor()
        while (tok := self.peek()) in ("*", "floordiv", "ceildiv", "mod"):
            self.take()
            rhs = self.factor()
            if tok == "*":
                e = e * rhs
                continue
            d = rhs.constant_value()
            if d is not None and d <= 0:
                raise SymbolicError(f"{tok} by non-positive constant {d}")
            if tok == "floordiv":
                e = e.floordiv_by(rhs)
            elif tok == "ceildiv":
                e = e.ceildiv_by(rhs)
            else:
                e = e.mod_by(rhs)
        return e

    def factor(self) -> SizeExpr:
        tok = self.take()
        if _is_int(tok):
            return SizeExpr.lit(int(tok))
        if tok == "-":
            return -self.factor()
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok in ("min", "max") and self.peek() == "(":
            self.take("(")
            args = [self.expr()]
            while self.peek() == ",":
                self.take()
                args.append(self.expr())
            self.take(")")
            return smin(args) if tok == "min" else smax(args)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok):
            # Where a factor is expected, even 'mod' or 'floordiv' is a name.
            return SizeExpr.sym(tok)
        raise SymbolicError(f"unexpected '{tok}' in size expression")
