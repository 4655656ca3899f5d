"""Search strategies: which candidates to measure next.

A strategy proposes batches of genes (`SearchSpace`) and is told their
times; the tuner measures, deduplicates and stops on its budget::

    strategy = GeneticSearch(space, start=space.encode(defaults), rng=rng)
    while batch := strategy.propose():       # [] : the strategy is done
        strategy.observe([(genes, seconds_or_None) for genes in batch])

None is a candidate without a time (invalid, or pruned as hopeless).

- `GeneticSearch`: TC's tuner (anchor-tc.md section 5) with its parameters:
  generation 0 is the start options, its one-gene neighbours (a fraction
  `near_start` of the generation, genes with the fewest values first: the
  fusion strategy, the switches) and random valid candidates; each next
  one keeps the `elites` best and breeds the rest by roulette selection on
  1/time, a child taking each gene from one of three parents with
  probability `crossover`, then every child's genes drawn again with
  probability `mutation`; under 3 valid candidates it starts again from the
  best and random ones. (TC copied every survivor into the next generation
  so that only invalid slots got children; here all but the elites are new.
  TC's generation 0 was all random, `near_start=0`: a default one switch
  away from much faster code, the fusion strategy of an LSTM's step, was
  rarely found within a small budget.)
- `ModelSearch`: fewer measurements. After a first batch (the start, a
  neighbour and random candidates), each round fits a cost model on every measured point
  (ridge regression of log time on the genes' features, averaged with the
  k nearest measured neighbours), ranks `samples` fresh candidates (random
  ones, and mutations of the best so far), and proposes the `batch - explore`
  best predicted and `explore` random ones.
- `RandomSearch`: `batch` random valid candidates per round.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from tcdialect.diagnostics import TCError
from tcdialect.tune.space import Genes, SearchSpace

Observation = tuple[Genes, float | None]


def _key(genes: Mapping[str, Any]) -> str:
    return repr(sorted(genes.items()))


class Strategy(ABC):
    """A search strategy (see the module docstring)."""

    name: ClassVar[str]
    #: A label for the progress bar: "gen 3/25", "round 4".
    stage: str = ""

    def __init__(self, space: SearchSpace, start: Genes, rng: random.Random):
        self.space = space
        self.start = start
        self.rng = rng
        #: Every candidate observed, by gene key.
        self.seen: dict[str, Observation] = {}

    @abstractmethod
    def propose(self) -> list[Genes]:
        """The next batch of candidates; [] when the strategy is done."""

    def observe(self, results: Sequence[Observation]) -> None:
        """The times of the last batch (None: no time)."""
        for genes, seconds in results:
            self.seen[_key(genes)] = (genes, seconds)

    def _fresh(self, count: int, tries: int = 50) -> list[Genes]:
        """Up to `count` random valid candidates not seen before."""
        found: dict[str, Genes] = {}
        for _ in range(count * tries):
            if len(found) >= count:
                break
            genes = self.space.random_valid(self.rng)
            if genes is None:
                break
            if _key(genes) not in self.seen:
                found.setdefault(_key(genes), genes)
        return list(found.values())

    def _neighbours(self, count: int) -> list[Genes]:
        """Up to `count` valid candidates not seen before that differ from
        the start in one gene, genes with fewer values first (a switch or a
        strategy before a tile size), values of a gene in random order."""
        genes = sorted(self.space.values, key=lambda g: len(self.space.values[g]))
        found: dict[str, Genes] = {}
        for gene in genes:
            values = list(self.space.values[gene])
            self.rng.shuffle(values)
            for value in values:
                if len(found) >= count:
                    return list(found.values())
                if value == self.start[gene] and type(value) is type(self.start[gene]):
                    continue
                child = {**self.start, gene: value}
                key = _key(child)
                if key not in self.seen and self.space.decode(child) is not None:
                    found.setdefault(key, child)
        return list(found.values())

    def _valid(self) -> list[tuple[Genes, float]]:
        """The observed candidates with a time, fastest first."""
        return sorted(
            ((g, t) for g, t in self.seen.values() if t is not None),
            key=lambda gt: gt[1],
        )


class GeneticSearch(Strategy):
    """TC's genetic search (see the module docstring); the defaults are TC's."""

    name = "genetic"

    def __init__(
        self,
        space: SearchSpace,
        start: Genes,
        rng: random.Random,
        *,
        population: int = 100,
        generations: int = 25,
        crossover: float = 0.8,
        mutation: float = 0.07,
        elites: int = 10,
        near_start: float = 0.5,
    ):
        super().__init__(space, start, rng)
        if population < 2 or generations < 1:
            raise TCError("genetic search: population >= 2 and generations >= 1")
        if not 0.0 <= near_start <= 1.0:
            raise TCError("genetic search: 0 <= near_start <= 1")
        self.near_start = near_start
        self.population = population
        self.generations = generations
        self.crossover = crossover
        self.mutation = mutation
        self.elites = min(elites, population // 2)
        self.generation = 0
        self._current: list[Genes] = []

    def propose(self) -> list[Genes]:
        if self.generation >= self.generations:
            return []
        if self.generation == 0:
            near = self._neighbours(int(self.near_start * (self.population - 1)))
            batch = [self.start, *near]
            batch += self._fresh(self.population - len(batch))
        else:
            batch = self._breed()
        self.generation += 1
        self.stage = f"gen {self.generation}/{self.generations}"
        self._current = batch
        return batch

    def _breed(self) -> list[Genes]:
        scored = [
            (g, t)
            for g in self._current
            if (t := self.seen.get(_key(g), (g, None))[1]) is not None
        ]
        scored.sort(key=lambda gt: gt[1])
        if len(scored) < 3:
            best = self._valid()[:1] or [(self.start, 0.0)]
            return [best[0][0], *self._fresh(self.population - 1)]
        elites = [g for g, _ in scored[: self.elites]]
        weights = [1.0 / max(t, 1e-12) for _, t in scored]
        parents = [g for g, _ in scored]
        children: list[Genes] = []
        while len(elites) + len(children) < self.population:
            child = self._child(parents, weights)
            children.append(self._mutated(child))
        return elites + children

    def _child(self, parents: list[Genes], weights: list[float]) -> Genes:
        if self.rng.random() >= self.crossover:
            return dict(self.rng.choices(parents, weights)[0])
        trio = self.rng.choices(parents, weights, k=3)
        for _ in range(1000):
            child = {gene: self.rng.choice(trio)[gene] for gene in self.space.values}
            if self.space.decode(child) is not None:
                return child
        return dict(trio[0])

    def _mutated(self, genes: Genes) -> Genes:
        for _ in range(100):
            child = self.space.mutate(genes, self.mutation, self.rng)
            if self.space.decode(child) is not None:
                return child
        return genes


class ModelSearch(Strategy):
    """Cost-model-guided search (see the module docstring)."""

    name = "model"

    def __init__(
        self,
        space: SearchSpace,
        start: Genes,
        rng: random.Random,
        *,
        batch: int = 4,
        samples: int = 256,
        explore: int = 1,
        ridge: float = 1.0,
        neighbours: int = 3,
    ):
        super().__init__(space, start, rng)
        if batch < 1 or samples < batch:
            raise TCError("model search: batch >= 1 and samples >= batch")
        self.batch = batch
        self.samples = samples
        self.explore = min(explore, batch - 1)
        self.ridge = ridge
        self.neighbours = neighbours
        self.round = 0

    def propose(self) -> list[Genes]:
        self.round += 1
        self.stage = f"round {self.round}"
        if self.round == 1:
            batch = [self.start, *self._neighbours(min(1, self.batch - 1))]
            return batch + self._fresh(self.batch - len(batch))
        pool = self._pool()
        if not pool:
            return []
        chosen = self._ranked(pool)[: self.batch - self.explore]
        rest = [g for g in pool if all(g is not c for c in chosen)]
        self.rng.shuffle(rest)
        return chosen + rest[: self.explore]

    def _pool(self) -> list[Genes]:
        """Fresh candidates: random ones and mutations of the best five."""
        pool = {_key(g): g for g in self._fresh(self.samples // 2)}
        best = [g for g, _ in self._valid()[:5]]
        for i in range(self.samples * 4):
            if len(pool) >= self.samples or not best:
                break
            child = self.space.mutate(best[i % len(best)], 0.25, self.rng)
            key = _key(child)
            if key not in self.seen and self.space.decode(child) is not None:
                pool.setdefault(key, child)
        return list(pool.values())

    def _ranked(self, pool: list[Genes]) -> list[Genes]:
        """`pool` by predicted time, fastest first."""
        valid = [t for _, t in self.seen.values() if t is not None]
        if not valid:
            return pool
        worst = math.log(max(valid)) + math.log(3.0)
        rows = [
            (g, math.log(t) if t is not None else worst) for g, t in self.seen.values()
        ]
        x = np.array([self.space.features(g) for g, _ in rows])
        y = np.array([v for _, v in rows])
        q = np.array([self.space.features(g) for g in pool])
        predicted = 0.5 * self._ridge_fit(x, y, q) + 0.5 * self._nearest(x, y, q)
        order = np.argsort(predicted, kind="stable")
        return [pool[int(i)] for i in order]

    def _ridge_fit(self, x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
        xs, qs = (x - mean) / std, (q - mean) / std
        a = xs.T @ xs + self.ridge * np.eye(xs.shape[1])
        w = np.linalg.solve(a, xs.T @ (y - y.mean()))
        return qs @ w + y.mean()

    def _nearest(self, x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        distance = ((q[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
        k = min(self.neighbours, len(y))
        nearest = np.argsort(distance, axis=1)[:, :k]
        return y[nearest].mean(axis=1)


class RandomSearch(Strategy):
    """`batch` random valid candidates per round (the start first)."""

    name = "random"

    def __init__(
        self, space: SearchSpace, start: Genes, rng: random.Random, *, batch: int = 8
    ):
        super().__init__(space, start, rng)
        self.batch = batch
        self.round = 0

    def propose(self) -> list[Genes]:
        self.round += 1
        self.stage = f"round {self.round}"
        if self.round == 1:
            return [self.start, *self._fresh(self.batch - 1)]
        return self._fresh(self.batch)


STRATEGIES: dict[str, type[Strategy]] = {
    s.name: s for s in (GeneticSearch, ModelSearch, RandomSearch)
}


def make_strategy(
    name: str,
    space: SearchSpace,
    start: Genes,
    rng: random.Random,
    settings: Mapping[str, Any],
) -> Strategy:
    """The strategy called `name` with its `settings` (keyword arguments)."""
    cls = STRATEGIES.get(name)
    if cls is None:
        raise TCError(
            f"unknown tuning strategy '{name}' (expected one of {', '.join(STRATEGIES)})"
        )
    try:
        return cls(space, start, rng, **settings)
    except TypeError as err:
        raise TCError(f"strategy '{name}': {err}") from None
