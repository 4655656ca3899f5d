"""`SearchSpace`: a target's options as genes the search strategies vary.

The options class declares its space (`search_space(sizes, info)`, e.g.
`CpuOptions.search_space`): candidate values by field, where `field[i]` is
element `i` of a tuple field. A candidate is a dict of genes, one value per
key, and becomes options by `decode`::

    space = SearchSpace.of(CpuOptions, {"M": 64, "N": 64}, info)
    genes = space.encode(CpuOptions())    # {"fusion": "max", "tile[0]": None, ...}
    space.decode({**genes, "tile[0]": 32, "tile[1]": 16})
    # CpuOptions(..., tile=(32, 16), ...); None when the options reject it

Fields the space does not name keep the value of the `base` options (the
kernel's defaults). The search knows nothing of either target: a gene is a
value from a tuple, and the options class validates what it is given.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tcdialect.backend.base import TargetInfo
from tcdialect.diagnostics import TCError

Genes = dict[str, Any]

_ELEMENT = re.compile(r"^(\w+)\[(\d+)\]$")


@dataclass(frozen=True)
class SearchSpace:
    """Candidate values by gene, and the options they complete."""

    options_class: type[Any]
    #: Candidate values of each gene (`field` or `field[i]`), in order.
    values: Mapping[str, tuple[Any, ...]]
    #: The options whose other fields every candidate keeps.
    base: Any

    @staticmethod
    def of(base: Any, sizes: Mapping[str, int], info: TargetInfo) -> SearchSpace:
        """The space that `base`'s class declares for `sizes` on `info`."""
        cls = type(base)
        declare = getattr(cls, "search_space", None)
        if declare is None:
            raise TCError(
                f"{cls.__name__} declares no search space (a classmethod "
                "search_space(sizes, info)): this target cannot be tuned"
            )
        values: dict[str, tuple[Any, ...]] = {
            k: tuple(v) for k, v in declare(sizes, info).items()
        }
        names = {f.name for f in dataclasses.fields(cls)}
        for gene, choices in values.items():
            m = _ELEMENT.match(gene)
            if (m.group(1) if m else gene) not in names or not choices:
                raise TCError(f"{cls.__name__}.search_space: bad gene '{gene}'")
        return SearchSpace(cls, values, base)

    @property
    def genes(self) -> list[str]:
        return list(self.values)

    def encode(self, options: Any) -> Genes:
        """The genes of `options` (a value outside the candidates stays as is)."""
        genes: Genes = {}
        for gene in self.values:
            m = _ELEMENT.match(gene)
            if m is None:
                genes[gene] = getattr(options, gene)
                continue
            value = getattr(options, m.group(1))
            i = int(m.group(2))
            genes[gene] = value[i] if value is not None and i < len(value) else None
        return genes

    def decode(self, genes: Mapping[str, Any]) -> Any | None:
        """The options of `genes`; None when they are not valid options (an
        element left out before one that is not, or the class refuses them)."""
        changes: dict[str, Any] = {}
        tuples: dict[str, dict[int, Any]] = {}
        for gene, value in genes.items():
            m = _ELEMENT.match(gene)
            if m is None:
                changes[gene] = value
            else:
                tuples.setdefault(m.group(1), {})[int(m.group(2))] = value
        for name, elements in tuples.items():
            ordered = [elements[i] for i in sorted(elements)]
            kept = [v for v in ordered if v is not None]
            if ordered[: len(kept)] != kept:
                return None
            changes[name] = tuple(kept) if kept else None
        try:
            return dataclasses.replace(self.base, **changes)
        except (TCError, TypeError, ValueError):
            return None

    def random(self, rng: random.Random) -> Genes:
        return {gene: rng.choice(choices) for gene, choices in self.values.items()}

    def random_valid(self, rng: random.Random, tries: int = 1000) -> Genes | None:
        """Random genes that decode to options; None if `tries` draws fail."""
        for _ in range(tries):
            genes = self.random(rng)
            if self.decode(genes) is not None:
                return genes
        return None

    def mutate(
        self, genes: Mapping[str, Any], rate: float, rng: random.Random
    ) -> Genes:
        """`genes` with each one drawn again with probability `rate`."""
        return {
            gene: rng.choice(self.values[gene]) if rng.random() < rate else value
            for gene, value in genes.items()
        }

    def features(self, genes: Mapping[str, Any]) -> list[float]:
        """Numbers describing `genes` for a cost model: per gene, one
        indicator per candidate value, and for a numeric gene its log2."""
        row: list[float] = []
        for gene, choices in self.values.items():
            value = genes[gene]
            row.extend(float(value == c and type(value) is type(c)) for c in choices)
            if any(_number(c) for c in choices):
                row.append(math.log2(value + 1) if _number(value) else -1.0)
        return row


def _number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def options_fields(options: Any) -> dict[str, Any]:
    """`options`' fields as JSON values (tuples as lists)."""
    return {
        f.name: _json(getattr(options, f.name)) for f in dataclasses.fields(options)
    }


def _json(value: Any) -> Any:
    return [_json(v) for v in value] if isinstance(value, tuple) else value


def options_from_fields(cls: type[Any], fields: Mapping[str, Any]) -> Any:
    """The options of class `cls` with `options_fields`' `fields` (lists as
    tuples); `TCError` when they are not valid options."""
    try:
        return cls(**{k: _tuple(v) for k, v in fields.items()})
    except (TypeError, ValueError) as err:
        raise TCError(f"not {cls.__name__} fields: {err}") from None


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def changed_fields(options: Any, base: Any) -> str:
    """The fields in which `options` differ from `base`, as `name=value`s."""
    parts = [
        f"{f.name}={getattr(options, f.name)!r}"
        for f in dataclasses.fields(options)
        if getattr(options, f.name) != getattr(base, f.name)
    ]
    return ", ".join(parts) if parts else "(default)"
