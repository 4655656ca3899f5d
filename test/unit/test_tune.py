"""The autotuner's parts without worker processes: search spaces, strategies
on a synthetic cost, the tuning record, the output check, errors."""

import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_poly_schedule import SOFTMAX

import tcdialect
from tcdialect.backend.base import TargetInfo
from tcdialect.backend.cpu.options import CpuOptions, candidate_sizes
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.cache import CacheStore, CacheWarning
from tcdialect.diagnostics import TCError
from tcdialect.tune import tuned_options
from tcdialect.tune.executors import import_ray
from tcdialect.tune.measure import FAULTS_VARIABLE, differs, faults_from_env
from tcdialect.tune.record import store_record, tuning_key
from tcdialect.tune.space import Genes, SearchSpace, options_fields
from tcdialect.tune.strategies import (
    GeneticSearch,
    ModelSearch,
    RandomSearch,
    Strategy,
    make_strategy,
)

INFO = TargetInfo(cores=4)
SIZES = {"M": 64, "N": 48, "K": 32}
MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""


def test_candidate_sizes_are_tcs() -> None:
    assert candidate_sizes([6]) == (1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256)
    assert 48 in candidate_sizes([48]) and 24 in candidate_sizes([48])


def test_cpu_space_round_trips_the_defaults() -> None:
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    assert set(space.values) == {
        "fusion", "tile[0]", "tile[1]", "tile[2]", "register_tile",
        "register_rows", "register_vectors", "threads", "parallel_depth",
        "vector_bits", "prefetch", "prefetch_distance", "prefetch_max_bytes",
        "nontemporal",
        "nontemporal_min_bytes", "specialize",
    }  # fmt: skip
    assert space.values["threads"] == (1, 2, 3, 4)
    assert space.values["parallel_depth"] == (0, 1, 2)
    # widths up to the target's own (INFO's vector_bits)
    assert space.values["vector_bits"][-1] == INFO.vector_bits
    genes = space.encode(CpuOptions())
    assert space.decode(genes) == CpuOptions()
    tiled = space.decode({**genes, "tile[0]": 32, "tile[1]": 16})
    assert tiled == CpuOptions(tile=(32, 16))
    assert space.encode(tiled)["tile[2]"] is None
    # an element left out before one that is not: not options
    assert space.decode({**genes, "tile[1]": 16}) is None


def test_cpu_limits_come_from_the_target() -> None:
    """The cache-derived defaults follow the `TargetInfo`, not this host;
    explicit options win, and a vector width beyond the target's is clamped."""
    info = INFO.with_(cache_bytes=(32 << 10, 1 << 20, 64 << 20), vector_bits=256)
    limits = CpuOptions().limits(info)
    assert (limits.prefetch_max_bytes, limits.nontemporal_min_bytes) == (
        512 << 10,
        16 << 20,
    )
    assert CpuOptions().limits(INFO.with_(cache_bytes=())).prefetch_max_bytes == (
        256 << 10
    )
    chosen = CpuOptions(vector_bits=512, prefetch_max_bytes=4096).limits(info)
    assert (chosen.vector_bits, chosen.prefetch_max_bytes) == (256, 4096)
    with pytest.raises(TCError, match="vector_bits"):
        CpuOptions(vector_bits=100)


def test_cuda_space_declares_tcs_fields_and_rejects_big_blocks() -> None:
    space = SearchSpace.of(CudaOptions(), SIZES, INFO)
    for gene in ("block[0]", "grid[0]", "unroll", "use_shared_memory",
                 "use_private_memory", "match_library_calls", "outer_fusion",
                 "unroll_copy_shared", "shared_depth", "private_depth"):  # fmt: skip
        assert gene in space.values
    genes = space.encode(CudaOptions())
    assert space.decode(genes) == CudaOptions()
    assert (
        space.decode({**genes, "block[0]": 64, "block[1]": 32}) is None
    )  # 2048 threads
    rng = random.Random(0)
    for _ in range(20):
        found = space.random_valid(rng)
        assert found is not None and isinstance(space.decode(found), CudaOptions)


def test_an_options_class_without_a_space_cannot_be_tuned() -> None:
    with pytest.raises(TCError, match="declares no search space"):
        SearchSpace.of(INFO, SIZES, INFO)


def _cost(space: SearchSpace, genes: Genes) -> float | None:
    """A synthetic time: best at tile (16, 32), threads 4, fusion "min"."""
    options = space.decode(genes)
    if options is None:
        return None
    tile = options.tile or (0, 0)
    far = sum(abs(math.log2(t + 1) - math.log2(w + 1)) for t, w in zip(tile, (16, 32)))
    return 1.0 + far + (options.fusion != "min") + 4 / options_threads(options)


def options_threads(options: CpuOptions) -> int:
    return options.threads or 1


def _search(strategy: Strategy, evaluations: int) -> float:
    best = math.inf
    seen = 0
    while seen < evaluations and (batch := strategy.propose()):
        results = [(g, _cost(strategy.space, g)) for g in batch]
        seen += len(batch)
        best = min([best, *(t for _, t in results if t is not None)])
        strategy.observe(results)
    return best


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("genetic", {"population": 10, "generations": 8}),
        ("model", {"batch": 4}),
        ("random", {"batch": 8}),
    ],
)
def test_strategies_improve_on_the_start(name: str, settings: dict[str, Any]) -> None:
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    start = space.encode(CpuOptions())
    strategy = make_strategy(name, space, start, random.Random(1), settings)
    first = strategy.propose()
    assert first[0] == start and all(space.decode(g) is not None for g in first)
    strategy.observe([(g, _cost(space, g)) for g in first])
    assert _search(strategy, 60) < (_cost(space, start) or 0)


def test_the_model_needs_fewer_measurements_than_random_search() -> None:
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    start = space.encode(CpuOptions())
    model = [_search(ModelSearch(space, start, random.Random(s)), 40) for s in range(5)]
    rand = [_search(RandomSearch(space, start, random.Random(s)), 40) for s in range(5)]
    assert sum(model) < sum(rand)


def test_generation_zero_holds_the_starts_one_gene_neighbours() -> None:
    """Half of generation 0 changes one gene of the start, the genes with
    the fewest values first: the switches and the fusion strategy."""
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    start = space.encode(CpuOptions())
    batch = GeneticSearch(space, start, random.Random(0), population=20).propose()
    assert batch[0] == start and len(batch) == 20
    near = [g for g in batch[1:] if sum(g[k] != start[k] for k in start) == 1]
    assert len(near) == 9  # half of the 19 after the start
    changed = {next(k for k in start if g[k] != start[k]) for g in near}
    assert {"fusion", "register_tile", "prefetch", "nontemporal"} <= changed
    assert all(space.decode(g) is not None for g in batch)
    with pytest.raises(TCError, match="near_start"):
        GeneticSearch(space, start, random.Random(0), near_start=2.0)


def test_genetic_search_stops_after_its_generations() -> None:
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    ga = GeneticSearch(
        space, space.encode(CpuOptions()), random.Random(0), population=6, generations=2
    )
    for _ in range(2):
        batch = ga.propose()
        assert len(batch) == 6
        ga.observe([(g, _cost(space, g)) for g in batch])
    assert ga.propose() == []


def test_unknown_strategy_and_settings_are_errors() -> None:
    space = SearchSpace.of(CpuOptions(), SIZES, INFO)
    start = space.encode(CpuOptions())
    with pytest.raises(TCError, match="unknown tuning strategy 'annealing'"):
        make_strategy("annealing", space, start, random.Random(0), {})
    with pytest.raises(TCError, match="strategy 'genetic'"):
        make_strategy("genetic", space, start, random.Random(0), {"pop": 3})


def test_tuned_options_come_from_the_record(cache_dir: Path) -> None:
    kernel = tcdialect.define(MATMUL)
    assert tuned_options(kernel, SIZES) is None
    store = CacheStore.from_env()
    assert store is not None
    best = CpuOptions(threads=1, tile=(16, 8))
    point = {"options": repr(best), "fields": options_fields(best), "median_s": 1e-4}
    store_record(store, tuning_key(kernel, SIZES), {"best": point})
    assert tuned_options(kernel, SIZES) == best
    assert tuned_options(kernel, {**SIZES, "M": 65}) is None  # other sizes
    # options that no longer validate: ignored, with a warning
    bad = {**point, "fields": {**point["fields"], "fusion": "most"}}
    store_record(store, tuning_key(kernel, SIZES), {"best": bad})
    with pytest.warns(CacheWarning, match="holds no valid CpuOptions"):
        assert tuned_options(kernel, SIZES) is None


def test_outputs_agree_within_the_dtypes_tolerance() -> None:
    x = np.linspace(1, 2, 10, dtype=np.float32)
    assert differs([x + 1e-6], [x]) is None
    assert "max error" in (differs([x + 0.1], [x]) or "")
    i = np.arange(4)
    assert differs([i], [i]) is None and differs([i + 1], [i]) is not None
    assert "outputs" in (differs([x, x], [x]) or "")


def test_faults_hook_must_be_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULTS_VARIABLE, json.dumps([{"match": {}, "fault": "crash"}]))
    assert faults_from_env() == ({"match": {}, "fault": "crash"},)
    monkeypatch.setenv(FAULTS_VARIABLE, "{nope")
    with pytest.raises(TCError, match="is not JSON"):
        faults_from_env()


def test_ray_missing_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(TCError, match=r"pip install tcdialect\[distributed\]"):
        import_ray()


def test_the_cpu_genes_change_the_code_not_the_result() -> None:
    """A register tile of another shape, narrower vectors and neither
    prefetches nor non-temporal stores: other code, the same product."""
    rng = np.random.default_rng(1)
    A = rng.random((12, 24), dtype=np.float32)
    B = rng.random((24, 40), dtype=np.float32)
    genes = CpuOptions(
        register_rows=2,
        register_vectors=1,
        vector_bits=128,
        prefetch=False,
        nontemporal=False,
        threads=1,
    )
    k = tcdialect.define(MATMUL, options=genes)
    default = tcdialect.define(MATMUL, options=CpuOptions(threads=1))
    assert k.ir(A, B, stage="loops") != default.ir(A, B, stage="loops")
    np.testing.assert_allclose(k(A, B), A @ B, rtol=1e-5, atol=1e-5)
    with pytest.raises(TCError, match="register_rows"):
        CpuOptions(register_rows=-1)


def test_parallel_depth_moves_the_parallel_loop_not_the_result() -> None:
    """Row tiles shared by the threads inside the batch loop: another loop
    outlined for the runtime's threads, the same products."""
    rng = np.random.default_rng(2)
    X = rng.random((2, 64, 16), dtype=np.float32)
    Y = rng.random((2, 16, 24), dtype=np.float32)
    bmm = "def bmm(float(B, M, K) X, float(B, K, N) Y) -> (Z) {\n  Z(b, m, n) +=! X(b, m, r_k) * Y(b, r_k, n)\n}"
    loops = []
    for depth in (0, 1):
        k = tcdialect.define(
            bmm, options=CpuOptions(tile=(1, 16), parallel_depth=depth)
        )
        np.testing.assert_allclose(k(X, Y), X @ Y, rtol=1e-5)
        loops.append(k.ir(X, Y, stage="scheduled"))
    # depth 0: the batch loop is parallel; depth 1: it runs in order around it
    assert loops[0].index("affine.parallel") < loops[0].index("affine.for")
    assert loops[1].index("affine.for %b") < loops[1].index("affine.parallel")
    with pytest.raises(TCError, match="parallel_depth"):
        CpuOptions(parallel_depth=-1)


def test_prefetch_distance_fetches_rows_further_ahead() -> None:
    """The option reaches `prefetch-next-slice` (whose FileCheck tests show
    the slice `d` rows ahead): other prefetches, the same result."""
    X = np.random.default_rng(3).random((16, 2048), dtype=np.float32)
    e = np.exp(X - X.max(1, keepdims=True))
    loops = []
    for d in (1, 2):
        k = tcdialect.define(
            SOFTMAX, options=CpuOptions(prefetch_distance=d, threads=1)
        )
        loops.append(k.ir(X, stage="loops"))
        assert "memref.prefetch %I" in loops[-1]  # rows of 8 KiB
        np.testing.assert_allclose(k(X), e / e.sum(1, keepdims=True), rtol=1e-5)
    assert loops[0] != loops[1]
    with pytest.raises(TCError, match="prefetch_distance"):
        CpuOptions(prefetch_distance=0)
