"""Range inference: TC's round algorithm over affine constraints (TC-LANGUAGE.md §4.6).

Each tensor access ``T(e_1, ..., e_n)`` whose subscript ``e_d`` is affine in
the index variables gives two constraints ``e_d >= 0`` and
``extent_d - 1 - e_d >= 0``. A `Constraint` is ``sum(c_v * v) + rest >= 0``
with coefficients ``c_v`` that are integers or size expressions of known
sign (a stride ``S`` in ``I(i * S + r)``; a non-constant coefficient is
assumed positive when it is not provably non-positive, and becomes a
divisor: ``i < (N - K) floordiv S + 1``), and ``rest`` a `SizeExpr` of the
sizes.

`infer` solves them in rounds: ranges from ``where`` are taken as solved and
eliminated first ("for all" values of the solved index); then each round
solves every unsolved index that is the only free variable of some
constraints, giving it the largest interval that satisfies them, and
rewrites the remaining constraints for all values of the indices solved in
that round. Indices solved in one round do not see each other, so the result
does not depend on the order of the indices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tcdialect.symbolic import SizeExpr, provably_nonneg, smax, smin

Coefficient = int | SizeExpr


def _expr(c: Coefficient) -> SizeExpr:
    return c if isinstance(c, SizeExpr) else SizeExpr.lit(c)


def _positive(c: Coefficient) -> bool:
    """Whether `c` counts as positive: a constant > 0, or not provably <= 0."""
    e = _expr(c)
    if e.is_constant:
        return e.const > 0
    return not provably_nonneg(-e)


@dataclass(frozen=True)
class Constraint:
    """``sum(coeffs[v] * v) + rest >= 0``; `origin` says where it came from."""

    coeffs: Mapping[str, Coefficient]
    rest: SizeExpr
    origin: object = None

    @property
    def free(self) -> set[str]:
        return {v for v, c in self.coeffs.items() if _expr(c) != SizeExpr.lit(0)}

    def for_all(self, ranges: Mapping[str, tuple[SizeExpr, SizeExpr]]) -> Constraint:
        """The constraint required for every value of the solved indices.

        Each solved index ``v`` in ``[lo, hi)`` is replaced by the value that
        makes the left-hand side smallest: ``lo`` for a positive coefficient,
        ``hi - 1`` for a negative one.
        """
        coeffs = dict(self.coeffs)
        rest = self.rest
        for v in list(coeffs):
            if v not in ranges:
                continue
            c = _expr(coeffs.pop(v))
            lo, hi = ranges[v]
            rest = rest + (lo * c if _positive(c) else (hi - 1) * c)
        return Constraint(coeffs, rest, self.origin)

    def __str__(self) -> str:
        parts = [f"{c} * {v}" if c != 1 else v for v, c in sorted(self.coeffs.items())]
        parts.append(str(self.rest))
        return " + ".join(parts) + " >= 0"


@dataclass
class Result:
    ranges: dict[str, tuple[SizeExpr, SizeExpr]] = field(default_factory=dict)
    unsolved: list[str] = field(default_factory=list)
    #: Constraints left with no free index once everything was solved.
    preconditions: list[Constraint] = field(default_factory=list)
    #: Constraints still mentioning unsolved indices when no progress was made.
    stuck: list[Constraint] = field(default_factory=list)


def _bound(c: Constraint, v: str) -> tuple[str, SizeExpr]:
    """The bound on `v` from a constraint whose only free variable is `v`."""
    k = _expr(c.coeffs[v])
    if _positive(k):  # k*v + rest >= 0  ->  v >= ceil(-rest / k)
        return "lo", (-c.rest).ceildiv_by(k)
    # k*v + rest >= 0 with k < 0  ->  v <= floor(rest / -k)
    return "hi", c.rest.floordiv_by(-k) + 1


def infer(
    indices: Sequence[str],
    constraints: Sequence[Constraint],
    presolved: Mapping[str, tuple[SizeExpr, SizeExpr]],
) -> Result:
    """Solve the ranges of `indices` (half-open ``[lo, hi)``)."""
    result = Result(ranges=dict(presolved))
    pending = [c.for_all(result.ranges) for c in constraints]
    unsolved = [v for v in indices if v not in result.ranges]
    while unsolved:
        solved_now: dict[str, tuple[SizeExpr, SizeExpr]] = {}
        used: set[int] = set()
        for v in unsolved:
            lows: list[SizeExpr] = []
            highs: list[SizeExpr] = []
            mine: list[int] = []
            for n, c in enumerate(pending):
                if c.free == {v}:
                    kind, b = _bound(c, v)
                    (lows if kind == "lo" else highs).append(b)
                    mine.append(n)
            if lows and highs:
                solved_now[v] = (smax(lows), smin(highs))
                used.update(mine)
        if not solved_now:
            result.unsolved = unsolved
            result.stuck = [c for c in pending if c.free & set(unsolved)]
            return result
        result.ranges.update(solved_now)
        pending = [
            c.for_all(solved_now) for n, c in enumerate(pending) if n not in used
        ]
        unsolved = [v for v in unsolved if v not in solved_now]
    result.preconditions = [c for c in pending if not c.free]
    return result
