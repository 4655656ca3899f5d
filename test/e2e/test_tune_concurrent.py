"""Eight processes compile and tune one kernel in one cache directory while
some are killed with SIGKILL: no corrupt entry, no crash, and every
surviving process (and a later one) computes correct results. Half of them
tune (and then call); the other half only call, compiling or loading the
default or the tuned options, whichever the cache holds by then."""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tcdialect
from tcdialect import reference
from tcdialect.cache.store import CacheStore, Entry
from tcdialect.frontend import parse_tc
from tcdialect.tune import tuned_options
from tcdialect.tune.record import LOG_SUFFIX

REPO_ROOT = Path(__file__).resolve().parents[2]

SOURCE = "def scale(float(N, M) X) -> (Y) { Y(n, m) = X(n, m) * 2.0 + 1.0 }"
SIZES = {"N": 16, "M": 32}

#: A process: with an even seed (argv[1]), tunes; then calls a fresh kernel
#: and checks it against the reference.
WORKER = f"""
import json, sys, numpy as np, tcdialect
from tcdialect import reference
from tcdialect.frontend import parse_tc
from tcdialect.tune import autotune
seed = int(sys.argv[1])
X = np.random.default_rng(seed).random((16, 32), dtype=np.float32)
if seed % 2 == 0:
    autotune(tcdialect.define({SOURCE!r}), X, strategy="random", trials=2,
             settings={{"batch": 2}}, seed=seed, jobs=1, repeat=1,
             flush_bytes=1 << 12, verbose=False)
Y = tcdialect.define({SOURCE!r})(X)
want = reference.run(parse_tc({SOURCE!r}), None, [X])[0]
print(json.dumps({{"ok": bool(np.allclose(Y, want))}}))
"""


def test_eight_processes_tune_into_one_cache_while_some_are_killed(
    cache_dir: Path,
) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )
        for seed in range(8)
    ]
    rng = random.Random(0)
    killed = set(rng.sample(range(8), 3))
    start = time.monotonic()
    for i in sorted(killed, key=lambda _: rng.random()):
        time.sleep(max(0.0, start + rng.uniform(1.0, 6.0) - time.monotonic()))
        processes[i].send_signal(signal.SIGKILL)
    for i, process in enumerate(processes):
        out, err = process.communicate(timeout=240)
        if i in killed and process.returncode == -signal.SIGKILL:
            continue
        assert process.returncode == 0, err
        assert json.loads(out.splitlines()[-1]) == {"ok": True}

    store = CacheStore(cache_dir)
    entries = store.entries()
    assert entries and all(isinstance(e, Entry) for e in entries)
    for log in cache_dir.glob("*" + LOG_SUFFIX):  # whole lines, maybe one cut short
        lines = log.read_text().splitlines()
        assert all(json.loads(line)["options"] for line in lines[:-1])
    kernel = tcdialect.define(SOURCE)
    assert tuned_options(kernel, SIZES) is not None
    X = np.random.default_rng(9).random((16, 32), dtype=np.float32)
    np.testing.assert_allclose(
        kernel(X), reference.run(parse_tc(SOURCE), None, [X])[0], rtol=1e-6
    )
