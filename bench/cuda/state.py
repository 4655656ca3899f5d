"""The run's state: one JSON file, rewritten after every step.

The supervisor (`cli.supervise`) creates it, the worker (`worker.run`)
updates it at every phase of every kernel, and both render the Markdown
report from it, so a run cut off at any point leaves everything measured so
far. It is also the `--json` output. Layout::

    {"config": {...the options of the run...},
     "started": 1764000000.0,            # epoch seconds (the budget's origin)
     "kernels": ["tmm_128x4096x16384", ...],
     "machine": {"device": "NVIDIA H100 80GB HBM3", ...} | {},
     "limits_start": {"copy_gbs": 2950.1, "sgemm_tflops": 51.2, ...} | null,
     "limits_end": ... | null,
     "rows": {"tmm_128x4096x16384": {...see worker.new_row...}},
     "current": {"kernel": "...", "phase": "ours", "kernel_since": ...} | null,
     "crashes": {"kernel": [{"phase": "ours", "message": "..."}]},
     "events": ["worker exited with status -11 during ... (ours)", ...],
     "finished": false, "elapsed_s": 12.3}

Writes are atomic (a temporary file renamed over the old one), so a reader
never sees half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

State = dict[str, Any]


def new_state(config: dict[str, Any], kernels: list[str], started: float) -> State:
    """A fresh state for a run of `kernels` under `config`."""
    return {
        "config": config,
        "started": started,
        "kernels": kernels,
        "machine": {},
        "limits_start": None,
        "limits_end": None,
        "rows": {},
        "current": None,
        "crashes": {},
        "events": [],
        "finished": False,
        "elapsed_s": 0.0,
    }


def save(path: Path, state: State) -> None:
    """Write `state` to `path` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bench-cuda-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f, indent=1, default=str)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: Path) -> State:
    """The state saved at `path`."""
    return json.loads(path.read_text())
