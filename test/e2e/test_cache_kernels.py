"""The compilation cache with real kernels on the `cpu` target.

A process that finds a kernel in the cache loads its object code and runs no
pipeline (counted by `tcdialect.cache.STATS`, never timed): in-process after
`clear_cache()`, and in a second process. Damaged entries are a miss with one
warning and a correct result. `TCDIALECT_CACHE=0` writes nothing. Eight
processes compile into one directory while some are killed with SIGKILL:
every entry left validates and every survivor computes the right results.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.jit import load_cpu
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.backend.cpu.payload import PAYLOAD_MAGIC
from tcdialect.cache import STATS, CacheWarning
from tcdialect.cache.store import CacheStore, Entry
from tcdialect.frontend import parse_tc

REPO_ROOT = Path(__file__).resolve().parents[2]

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""
SOFTMAX = """
def softmax(float(N, M) X) -> (Y) {
    mx(n) max=! X(n, m)
    e(n, m) = exp(X(n, m) - mx(n))
    s(n) +=! e(n, m)
    Y(n, m) = e(n, m) / s(n)
}"""
# named like a C library function (renamed in the JIT) and calling libm
TANH = "def tanh(double(N) A) -> (B) { B(i) = tanh(A(i)) * 2.0 }"

#: A worker: compiles and runs the kernels named on its command line (each
#: `name:size`), checks each against the reference interpreter, prints the
#: counters as JSON.
WORKER = """
import json, sys
import numpy as np
import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.cache import STATS
from tcdialect.frontend import parse_tc

if sys.argv[1] == "--die-in-rename":  # killed between write and rename
    import os, signal
    os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
    del sys.argv[1]
SOURCES = json.loads(sys.argv[1])
for spec in sys.argv[2:]:
    name, size = spec.split(":")
    n = int(size)
    source = SOURCES[name]
    rng = np.random.default_rng(n)
    if name == "tanh":
        inputs = [rng.standard_normal(n)]
    elif name == "softmax":
        inputs = [rng.standard_normal((n, 33)).astype(np.float32)]
    else:
        inputs = [rng.standard_normal((n, 17)).astype(np.float32),
                  rng.standard_normal((17, 9)).astype(np.float32)]
    options = CpuOptions(specialize=False) if name == "generic" else None
    got = tcdialect.define(source, options=options)(*inputs)
    want = reference.run(parse_tc(source), None, inputs)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
print(json.dumps({"hits": STATS.hits, "compiles": STATS.compiles,
                  "stores": STATS.stores}))
"""
SOURCES = {"matmul": MATMUL, "softmax": SOFTMAX, "tanh": TANH, "generic": MATMUL}


def worker(
    cache: Path, *specs: str, flags: tuple[str, ...] = ()
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, *flags, json.dumps(SOURCES), *specs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "TCDIALECT_CACHE_DIR": str(cache), "TCDIALECT_CACHE": "1"},
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, int]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Warning" not in err, err
    return json.loads(out)


def rand(*shape: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def valid_entries(cache: Path) -> list[Entry]:
    """The compiled kernels' entries (every entry must validate; the
    quick-start records, `tcdialect.cache.quick`, are left out)."""
    entries = CacheStore(cache).entries()
    bad = [e for e in entries if not isinstance(e, Entry)]
    assert not bad, bad
    return [e for e in entries if isinstance(e, Entry) and "kind" not in e.key]


def test_a_second_process_loads_without_compiling(cache_dir: Path) -> None:
    specs = ("matmul:40", "softmax:21", "tanh:1000", "generic:5")
    first = finish(worker(cache_dir, *specs))
    assert first == {"hits": 0, "compiles": 4, "stores": 4}
    assert len(valid_entries(cache_dir)) == 4
    second = finish(worker(cache_dir, *specs, "generic:12"))
    # generic code serves the new shape too: nothing compiled
    assert second == {"hits": 4, "compiles": 0, "stores": 0}


def test_a_hit_in_process_after_clear_cache(cache_dir: Path) -> None:
    A, B = rand(6, 5), rand(5, 7, seed=1)
    first = tcdialect.define(MATMUL, options=CpuOptions(threads=2)).compile(A, B)
    assert (STATS.compiles, STATS.hits, STATS.stores) == (1, 0, 1)
    tcdialect.clear_cache()  # the in-memory cache only
    mm = tcdialect.define(MATMUL, options=CpuOptions(threads=2))
    again = mm.compile(A, B)
    assert again is not first
    assert (STATS.compiles, STATS.hits) == (1, 1)
    assert again.signature == first.signature
    assert again.launcher.owner.num_threads == 2  # type: ignore[attr-defined]
    for _ in range(3):  # the plan, then the call stub
        np.testing.assert_allclose(mm(A, B), A @ B, rtol=1e-5, atol=1e-5)
    assert mm._last is not None and mm._last.stub is not None


def test_checked_reads_still_report_out_of_bounds(cache_dir: Path) -> None:
    gather = "def gather(float(N, D) E, int32(K) I) -> (G) { G(k, d) = E(I(k), d) }"
    E = rand(5, 3)
    for _ in range(2):
        tcdialect.clear_cache()
        k = tcdialect.define(gather)
        np.testing.assert_array_equal(k(E, np.array([4, 0], np.int32)), E[[4, 0]])
        with pytest.raises(tcdialect.TCError, match="tensor 'E'"):
            k(E, np.array([5, 0], np.int32))
    assert (STATS.compiles, STATS.hits) == (1, 1)


def damage_all(cache: Path, how: str) -> None:
    for entry in valid_entries(cache):
        path = entry.path
        data = bytearray(path.read_bytes())
        if how == "flip":
            data[len(data) // 2] ^= 0xFF
        elif how == "cut":
            del data[len(data) * 2 // 3 :]
        else:  # an entry of another key under this name
            data = bytearray((cache / "other.bin").read_bytes())
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["flip", "cut", "foreign"])
def test_a_damaged_entry_recompiles_with_one_warning(cache_dir: Path, how: str) -> None:
    X = rand(9, 31)
    want = reference.run(parse_tc(SOFTMAX), None, [X])[0]
    tcdialect.define(SOFTMAX)(X)
    if how == "foreign":
        tcdialect.define(SOFTMAX)(rand(4, 4))  # another key's entry
        (other,) = [e for e in valid_entries(cache_dir) if e.key["sizes"]["N"] == 4]
        (cache_dir / "other.bin").write_bytes(other.path.read_bytes())
        other.path.unlink()
    damage_all(cache_dir, how)
    tcdialect.clear_cache()
    with pytest.warns(CacheWarning) as record:
        got = tcdialect.define(SOFTMAX)(X)
    assert len(record) == 1, [str(w.message) for w in record]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert STATS.hits == 0
    tcdialect.clear_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tcdialect.define(SOFTMAX)(X), want, rtol=1e-5)
    assert STATS.hits == 1  # the entry written after the recompile
    valid_entries(cache_dir)


def test_a_payload_needing_a_missing_symbol_is_not_loaded(cache_dir: Path) -> None:
    compiled = tcdialect.define(TANH).compile(np.ones(8))
    payload = compiled.launcher.owner.payload()  # type: ignore[attr-defined]
    assert payload is not None and payload.startswith(PAYLOAD_MAGIC)
    assert load_cpu(payload) is not None
    assert load_cpu(payload.replace(b'"tanh"]', b'"tanh_nowhere"]')) is None
    assert load_cpu(payload[:20]) is None
    assert load_cpu(b"") is None


def test_cache_off_writes_nothing(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TCDIALECT_CACHE", "0")
    A, B = rand(3, 2), rand(2, 4)
    for _ in range(2):
        tcdialect.clear_cache()
        np.testing.assert_allclose(
            tcdialect.define(MATMUL)(A, B), A @ B, rtol=1e-5, atol=1e-6
        )
    assert (STATS.compiles, STATS.hits, STATS.misses, STATS.stores) == (2, 0, 0, 0)
    assert not cache_dir.exists()


def test_uncached_targets_still_compile(cache_dir: Path) -> None:
    src = "def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 }"
    A = rand(64)
    np.testing.assert_allclose(tcdialect.define(src, target="cuda-sim")(A), 2 * A)
    assert STATS.compiles == 1 and STATS.stores == 0
    assert not list(cache_dir.glob("*.tce"))


def test_eight_processes_some_killed(cache_dir: Path) -> None:
    """Eight workers, three of the same kernels and five of their own, into
    one directory; three are killed with SIGKILL at random moments."""
    rng = random.Random(36)
    jobs = [
        ("matmul:24", "softmax:24", "tanh:300"),
        ("matmul:24", "softmax:24", "tanh:300"),
        ("matmul:24", "softmax:24", "tanh:300"),
        *((f"matmul:{n}", f"softmax:{n}") for n in (8, 9, 10, 11, 12)),
    ]
    procs = [worker(cache_dir, *job) for job in jobs]
    victims = rng.sample(range(len(procs)), 3)
    start = time.monotonic()
    for i, at in sorted(zip(victims, (0.8, 1.6, 2.4)), key=lambda v: v[1]):
        time.sleep(max(0.0, start + at - time.monotonic()))
        procs[i].send_signal(signal.SIGKILL)
    for i, proc in enumerate(procs):
        if i in victims:
            proc.communicate(timeout=120)
            print(f"worker {i} {jobs[i]}: exit status {proc.returncode}")
            continue
        finish(proc)
    entries = valid_entries(cache_dir)
    assert {e.key["entry"] for e in entries} <= {"matmul", "softmax", "tanh"}
    # what a survivor stored is served to a new process without compiling
    again = finish(worker(cache_dir, *jobs[0]))
    if any(i not in victims for i in range(3)):
        assert again["compiles"] == 0


def test_killed_between_write_and_rename(cache_dir: Path) -> None:
    proc = worker(cache_dir, "matmul:7", flags=("--die-in-rename",))
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert not list(cache_dir.glob("*.tce")) and list(cache_dir.glob(".*.tmp"))
    assert finish(worker(cache_dir, "matmul:7")) == {
        "hits": 0,
        "compiles": 1,
        "stores": 1,
    }
    assert len(valid_entries(cache_dir)) == 1
    report = CacheStore(cache_dir).prune()
    assert report.invalid == [] and report.temporaries == 0  # not stale yet
