"""The autotuner on the `cpu` target, with real worker processes.

The test hook `TCDIALECT_TUNE_FAULTS` (tcdialect/tune/measure.py) makes
chosen candidates crash, hang, compute a wrong result or run slowly; a
slow default makes some other candidate win, so that reuse can be seen.
Reuse is counted (`tcdialect.cache.STATS`), never timed. Every run uses one
compile process (`jobs=1`) and few candidates: each test here costs a few
worker processes, and one test covers a whole life cycle (killed, resumed,
interrupted, reused by a new process) to pay for its processes once.
"""

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.cache import STATS
from tcdialect.cache.store import CacheStore
from tcdialect.frontend import parse_tc
from tcdialect.tune import tuning_record
from tcdialect.tune.cli import TcTuneMain
from tcdialect.tune.measure import FAULTS_VARIABLE
from tcdialect.tune.record import LOG_SUFFIX, read_log
from tcdialect.tune.space import Genes, SearchSpace, options_fields
from tcdialect.tune.strategies import Strategy
from tcdialect.tune.tuner import Tuner

REPO_ROOT = Path(__file__).resolve().parents[2]

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""
SIZES = {"M": 24, "K": 16, "N": 32}
#: Quick settings: few timed calls, a small cache flush.
QUICK: dict[str, Any] = {
    "repeat": 2,
    "flush_bytes": 1 << 16,
    "verbose": False,
    "jobs": 1,
}

DEFAULT = options_fields(CpuOptions())


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.random((SIZES["M"], SIZES["K"]), dtype=np.float32),
        rng.random((SIZES["K"], SIZES["N"]), dtype=np.float32),
    )


def expected() -> np.ndarray:
    return reference.run(parse_tc(MATMUL), None, list(inputs()))[0]


def faults(monkeypatch: pytest.MonkeyPatch, *found: dict[str, Any]) -> None:
    monkeypatch.setenv(FAULTS_VARIABLE, json.dumps(list(found)))


def trial_of(record: dict[str, Any], options: Any) -> dict[str, Any]:
    (trial,) = [t for t in record["trials"] if t["options"] == repr(options)]
    return trial


#: A new process: calls the kernel plainly, prints what the cache did.
PLAIN_CALL = f"""
import json, numpy as np, tcdialect
from tcdialect.cache import STATS
from tcdialect.tune import tuned_options
k = tcdialect.define({MATMUL!r})
rng = np.random.default_rng(0)
A = rng.random(({SIZES["M"]}, {SIZES["K"]}), dtype=np.float32)
B = rng.random(({SIZES["K"]}, {SIZES["N"]}), dtype=np.float32)
C = k(A, B)
import sys
quick = "xdsl" not in sys.modules  # (the quick-start records served the call)
print(json.dumps({{"compiles": STATS.compiles, "hits": STATS.hits, "quick": quick,
                  "tuned": repr(tuned_options(k, {SIZES!r})),
                  "C": C.tolist()}}))
"""


def test_never_slower_than_the_default_on_the_command_line(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # every candidate but the default sleeps: none beats it, each is pruned
    faults(
        monkeypatch, {"match": {}, "unless": DEFAULT, "fault": "slow", "seconds": 0.05}
    )
    source = tmp_path / "matmul.tc"
    source.write_text(MATMUL)
    out, err = io.StringIO(), io.StringIO()
    sizes = ",".join(f"{k}={v}" for k, v in SIZES.items())
    status = TcTuneMain(out, err).run(
        [str(source), "--sizes", sizes, "--strategy", "genetic", "--trials", "4",
         "--set", "population=4", "--set", "generations=2", "--repeat", "2",
         "--jobs", "1"]
    )  # fmt: skip
    assert status == 0, err.getvalue()
    # the summary table, then the options chosen
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("@matmul M=24,K=16,N=32: 4 candidates (4 measured")
    assert lines[1].split() == ["rank", "median", "ms", "speedup", "status", "options"]
    assert "chosen: (default) (1.00x the default)" in lines
    assert lines[-1] == repr(CpuOptions())
    kernel = tcdialect.define(MATMUL)
    record = tuning_record(kernel, SIZES)
    assert record is not None
    assert record["best"] == record["default"] and record["speedup"] == 1.0
    others = [t for t in record["trials"] if t["options"] != repr(CpuOptions())]
    assert others and all(t["status"] == "pruned" for t in others)
    assert all("first run" in t["reason"] for t in others)
    np.testing.assert_allclose(kernel(*inputs()), expected(), rtol=1e-5)


def test_command_line_errors(tmp_path: Path) -> None:
    source = tmp_path / "matmul.tc"
    source.write_text(MATMUL)
    err = io.StringIO()
    assert TcTuneMain(io.StringIO(), err).run([str(source), "--sizes", "M=4,N=4"]) == 1
    assert err.getvalue() == "tc-tune: error: --sizes gives no value for K\n"
    err = io.StringIO()
    assert (
        TcTuneMain(io.StringIO(), err).run([str(tmp_path / "x.tc"), "--sizes", "M=4"])
        == 1
    )
    assert err.getvalue().startswith("tc-tune: error: [Errno 2]")


class Scripted(Strategy):
    """Proposes the given batches, then is done."""

    name = "scripted"

    def __init__(self, space: SearchSpace, start: Genes, batches: list[list[Genes]]):
        super().__init__(space, start, __import__("random").Random(0))
        self.batches = batches

    def propose(self) -> list[Genes]:
        return self.batches.pop(0) if self.batches else []


def test_crashing_hanging_and_wrong_candidates_are_invalid(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults(
        monkeypatch,
        {"match": {"threads": 1}, "fault": "crash"},
        {"match": {"fusion": "min"}, "fault": "hang"},
        {"match": {"register_tile": False}, "fault": "wrong"},
        {
            "match": {"fusion": "preserve3coincident"},
            "fault": "crash",
            "phase": "compile",
        },
    )
    kernel = tcdialect.define(MATMUL)
    tuner = Tuner(kernel, inputs(), run_timeout_s=1.0, prune_factor=1e6, **QUICK)
    start = tuner.space.encode(CpuOptions())
    crash, hang, wrong, broken, good = (
        {**start, "threads": 1},
        {**start, "fusion": "min"},
        {**start, "register_tile": False},
        {**start, "fusion": "preserve3coincident"},
        {**start, "tile[0]": 8, "tile[1]": 8},
    )
    tuner.strategy = Scripted(tuner.space, start, [[crash, hang, wrong, broken, good]])
    result = tuner.run()
    record = result.record
    reasons = {
        name: trial_of(record, tuner.space.decode(genes))
        for name, genes in [
            ("crash", crash),
            ("hang", hang),
            ("wrong", wrong),
            ("broken", broken),
        ]
    }
    assert all(t["status"] == "invalid" for t in reasons.values())
    assert reasons["crash"]["reason"].startswith("crash: the measuring process died")
    assert "SIGSEGV" in reasons["crash"]["reason"]
    assert reasons["hang"]["reason"].startswith("hang: no result within 1 s")
    assert reasons["wrong"]["reason"].startswith("wrong result: output 0 differs")
    assert reasons["broken"]["reason"].startswith("crash: the compile process died")
    assert trial_of(record, tuner.space.decode(good))["status"] == "ok"
    assert result.options in (CpuOptions(), tuner.space.decode(good))


#: A tuning process: random search over more candidates than a test waits
#: for (it is stopped midway), prints the record's counts. Ctrl-C raises
#: KeyboardInterrupt there even when the test runs in a process that
#: ignores SIGINT (an earlier test in the same worker may leave it so, and
#: a child inherits it): as in a terminal.
TUNE = f"""
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import json, sys, numpy as np, tcdialect
from tcdialect.tune import autotune, tuning_record
k = tcdialect.define({MATMUL!r})
rng = np.random.default_rng(0)
A = rng.random(({SIZES["M"]}, {SIZES["K"]}), dtype=np.float32)
B = rng.random(({SIZES["K"]}, {SIZES["N"]}), dtype=np.float32)
autotune(k, A, B, strategy="random", trials=50, settings={{"batch": 4}},
         repeat=2, flush_bytes=1 << 16, verbose=False, jobs=1)
r = tuning_record(k, {SIZES!r})
print(json.dumps({{"measured": r["measured"], "resumed": r["resumed"],
                  "interrupted": r["interrupted"], "best": r["best"]["options"],
                  "speedup": r["speedup"],
                  "trials": [[t["options"], t["source"]] for t in r["trials"]]}}))
"""


def _tune_process() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", TUNE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )


def _wait_for_log(directory: Path, lines: int, process: subprocess.Popen[str]) -> Path:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for log in directory.glob("*" + LOG_SUFFIX):
            if len(read_log(log)) >= lines:
                return log
        time.sleep(0.05)
    raise AssertionError("the tuning log did not grow")


def test_killed_resumed_interrupted_then_reused_by_a_new_process(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the default sleeps in every timed call: another candidate wins, and
    # its reuse shows (a run of 50 candidates is stopped long before its end)
    faults(monkeypatch, {"match": DEFAULT, "fault": "slow", "seconds": 0.1})
    # 1. killed with SIGKILL after three candidates
    first = _tune_process()
    log = _wait_for_log(cache_dir, 3, first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    logged = read_log(log)
    assert len(logged) >= 3

    # 2. the same run again resumes from the log; Ctrl-C after two more
    #    candidates stops it, keeping the best so far
    second = _tune_process()
    _wait_for_log(cache_dir, len(logged) + 2, second)
    second.send_signal(signal.SIGINT)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    seen = json.loads(out.splitlines()[-1])
    sources = dict(seen["trials"])
    # every logged candidate came from the log, none was measured again
    assert all(sources[o] == "log" for o in logged)
    assert seen["resumed"] == len(logged)
    assert seen["measured"] == len(seen["trials"]) - len(logged)
    assert seen["interrupted"] and len(logged) + 2 <= len(seen["trials"]) < 50
    assert seen["best"] != repr(CpuOptions()) and seen["speedup"] > 1.0

    # 3. a new process calls the kernel plainly: the tuned options, loaded
    #    from the cache, nothing compiled
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_CALL],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        check=True,
    )
    plain = json.loads(done.stdout.splitlines()[-1])
    assert plain["tuned"] == seen["best"]
    assert (plain["compiles"], plain["hits"]) == (0, 1)
    # the tuner left a quick-start record: that call needed no compiler
    assert plain["quick"] is True
    np.testing.assert_allclose(np.array(plain["C"]), expected(), rtol=1e-5)
    keys = [
        e.key["options"]
        for e in CacheStore(cache_dir).entries()
        if not isinstance(e, tuple) and "kind" not in e.key  # (quick-start records)
    ]
    assert sorted(keys) == sorted([seen["best"], "tuned"])


def test_ray_executor(cache_dir: Path) -> None:
    try:
        import ray
    except ImportError:
        pytest.skip("ray is not installed (pip install tcdialect[distributed])")
    ray.init(num_cpus=1, include_dashboard=False)
    try:
        kernel = tcdialect.define(MATMUL)
        best = kernel.autotune(
            *inputs(),
            executor="ray",
            strategy="model",
            trials=2,
            budget_s=600,  # (trials end it: a loaded machine starts Ray slowly)
            settings={"batch": 2},
            **QUICK,
        )
    finally:
        ray.shutdown()
    record = tuning_record(kernel, SIZES)
    assert record is not None and record["executor"] == "ray"
    assert record["measured"] == 2
    assert all(t["status"] in ("ok", "pruned") for t in record["trials"])
    assert record["best"]["options"] == repr(best)
    # the chosen code came back from the actor into the cache: loaded here
    np.testing.assert_allclose(kernel(*inputs()), expected(), rtol=1e-5)
    assert (STATS.compiles, STATS.hits) == (0, 1)


def test_the_tuner_searches_a_gpu_target_the_same_way(cache_dir: Path) -> None:
    """`cuda-sim` (the simulator; no GPU here): the same tuner, the
    `CudaOptions` space, a record of checked candidates, a correct call."""
    A = np.random.default_rng(4).random((8, 4), dtype=np.float32)
    B = np.random.default_rng(5).random((4, 8), dtype=np.float32)
    kernel = tcdialect.define(MATMUL, target="cuda-sim")
    best = kernel.autotune(A, B, strategy="random", trials=3, **QUICK)
    record = tuning_record(kernel, {"M": 8, "K": 4, "N": 8})
    assert record is not None and record["measured"] == 3
    assert all(t["options"].startswith("CudaOptions(") for t in record["trials"])
    assert all(t["status"] in ("ok", "pruned", "invalid") for t in record["trials"])
    assert record["best"]["options"] == repr(best)
    np.testing.assert_allclose(kernel(A, B), A @ B, rtol=1e-5)
