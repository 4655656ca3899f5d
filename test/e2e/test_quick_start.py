"""Quick starts (`tcdialect.cache.quick`): a cached kernel called without the compiler.

A new process that defines a source the cache has seen and calls it with
shapes it has compiled loads the code through the quick-start records: it
compiles nothing (counted by `tcdialect.cache.STATS`) and imports neither
xDSL nor islpy (checked in `sys.modules`, never timed). A tuning record
written after a call record makes it stale; damaged records are misses with
one warning each and correct results; a source with warnings is not
recorded (its warnings show at every `define`).
"""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.cache import STATS, CacheWarning
from tcdialect.cache.quick import CALL, INTERFACE
from tcdialect.cache.store import CacheStore, Entry
from tcdialect.frontend import parse_tc
from tcdialect.tune.record import store_record, tuning_key
from tcdialect.tune.space import options_fields

REPO_ROOT = Path(__file__).resolve().parents[2]

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""

#: Defines MATMUL, calls it on the inputs saved in argv[1], saves the
#: result next to them and prints what it loaded and imported.
CALLER = """
import json, sys
import numpy as np
import tcdialect
from tcdialect.cache import STATS

data = np.load(sys.argv[1])
k = tcdialect.define(sys.argv[2])
got = k(data["A"], data["B"])
np.save(sys.argv[1] + ".out.npy", got)
print(json.dumps({
    "hits": STATS.hits, "compiles": STATS.compiles,
    "frontend": "defop" in k.__dict__,
    "imported": sorted({m.split(".")[0] for m in sys.modules} & {"xdsl", "islpy"}),
}))
"""


def rand(*shape: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def records(cache: Path, kind: str) -> list[Entry]:
    found = CacheStore(cache).entries()
    return [e for e in found if isinstance(e, Entry) and e.key.get("kind") == kind]


def call_in_new_process(cache: Path, tmp: Path, A: Any, B: Any) -> dict[str, Any]:
    inputs = tmp / "inputs.npz"
    np.savez(inputs, A=A, B=B)
    done = subprocess.run(
        [sys.executable, "-c", CALLER, str(inputs), MATMUL],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "TCDIALECT_CACHE_DIR": str(cache), "TCDIALECT_CACHE": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    seen["result"] = np.load(str(inputs) + ".out.npy")
    return seen


def test_a_new_process_calls_a_cached_kernel_without_the_compiler(
    cache_dir: Path, tmp_path: Path
) -> None:
    A, B = rand(40, 17), rand(17, 9, seed=1)
    want = reference.run(parse_tc(MATMUL), None, [A, B])[0]
    first = call_in_new_process(cache_dir, tmp_path, A, B)
    assert (first["compiles"], first["frontend"]) == (1, True)
    assert len(records(cache_dir, INTERFACE)) == len(records(cache_dir, CALL)) == 1
    second = call_in_new_process(cache_dir, tmp_path, A, B)
    assert second["hits"] == 1 and second["compiles"] == 0
    assert second["frontend"] is False and second["imported"] == []
    np.testing.assert_allclose(second["result"], want, rtol=1e-5, atol=1e-5)
    # other shapes take the full path (and compile), in the same way
    third = call_in_new_process(cache_dir, tmp_path, rand(5, 17), B)
    assert (third["compiles"], third["frontend"]) == (1, True)


def test_the_frontend_runs_on_first_use(cache_dir: Path) -> None:
    A, B = rand(6, 5), rand(5, 7, seed=1)
    tcdialect.define(MATMUL)(A, B)
    tcdialect.clear_cache()
    k = tcdialect.define(MATMUL)
    assert "defop" not in k.__dict__
    assert (k.entry, k.out_names) == ("matmul", ["C"])
    assert "C(m, n)" in k.ir(stage="tc") or "@matmul" in k.ir(stage="tc")
    assert k.defop.sym_name.data == "matmul"
    np.testing.assert_allclose(k(A, B), A @ B, rtol=1e-5, atol=1e-5)


def test_a_tuning_record_written_later_makes_the_call_record_stale(
    cache_dir: Path,
) -> None:
    A, B = rand(12, 8), rand(8, 16, seed=1)
    k = tcdialect.define(MATMUL)
    k(A, B)
    assert STATS.compiles == 1
    tuned = CpuOptions(tile=(4, 8))
    store = CacheStore(cache_dir)
    fields = options_fields(tuned)
    record = {"best": {"options": repr(tuned), "fields": fields, "median_s": 1e-6}}
    store_record(store, tuning_key(k, {"M": 12, "K": 8, "N": 16}), record)
    tcdialect.clear_cache()
    again = tcdialect.define(MATMUL)
    np.testing.assert_allclose(again(A, B), A @ B, rtol=1e-5, atol=1e-5)
    # the quick path did not take the old code: the tuned options compiled
    assert STATS.compiles == 2
    assert "defop" in again.__dict__
    tcdialect.clear_cache()
    third = tcdialect.define(MATMUL)
    np.testing.assert_allclose(third(A, B), A @ B, rtol=1e-5, atol=1e-5)
    assert STATS.compiles == 2 and "defop" not in third.__dict__


@pytest.mark.parametrize("kind", [INTERFACE, CALL])
def test_a_damaged_record_is_a_miss_with_one_warning(
    cache_dir: Path, kind: str
) -> None:
    A, B = rand(6, 5), rand(5, 7, seed=1)
    tcdialect.define(MATMUL)(A, B)
    (entry,) = records(cache_dir, kind)
    data = bytearray(entry.path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.path.write_bytes(bytes(data))
    tcdialect.clear_cache()
    STATS.reset()
    with pytest.warns(CacheWarning) as seen:
        got = tcdialect.define(MATMUL)(A, B)
    assert len(seen) == 1, [str(w.message) for w in seen]
    np.testing.assert_allclose(got, A @ B, rtol=1e-5, atol=1e-5)
    assert (STATS.hits, STATS.compiles) == (1, 0)  # the kernel's entry is intact
    tcdialect.clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = tcdialect.define(MATMUL)
        np.testing.assert_allclose(k(A, B), A @ B, rtol=1e-5, atol=1e-5)
    assert "defop" not in k.__dict__  # written again


def test_a_source_with_warnings_is_not_recorded(cache_dir: Path) -> None:
    source = """
    def f(float(N) A) -> (B) {
        unused(i) = A(i) * 2.0
        B(i) = A(i) + 1.0
    }"""
    for _ in range(2):
        k = tcdialect.define(source)
        assert "defop" in k.__dict__
        np.testing.assert_allclose(k(np.ones(4, np.float32)), np.full(4, 2.0))
    assert records(cache_dir, INTERFACE) == []
