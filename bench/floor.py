"""Stream floor: the time plain streaming code needs to move a kernel's bytes.

The roofline bound divides a kernel's compulsory bytes by the bandwidth of
STREAM-style probes on 128 MiB arrays. A kernel that moves 20–60 MB right
after the cache flush does not see that bandwidth on a shared VM (ramp-up of
the hardware prefetchers, write-back of the flush's dirty lines, drift of the
neighbours' load), so for memory-bound kernels the bound alone cannot say how
much of a kernel's ×bound is its code and how much is the machine.

The floor answers that for exactly a kernel's arrays: read every input once,
write every output once, compute nothing. It is timed interleaved with the
implementations (same flush, same rounds), so the machine's drift during the
run cancels in `ours / floor`. Two floors are timed and the faster counts:

* ours: per input, a row sum over a 2-D view (`s(r) +=! A(r, r_k)`); per
  output, a fill (`O(r, k) = z(r) + w(k)`, with the non-temporal stores our
  compiler gives any large output);
* torch: `torch.sum(view, dim=1, out=)` per input, `zero_()` per output.

The pieces run one after another, so the floor has no overlap between arrays
and includes one dispatch per array; a fused kernel that overlaps its streams
beats it (the elementwise chain runs at 0.8–0.9× its floor).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: Rows of the 2-D views: enough to split the work over the threads evenly.
ROWS = 64

READ_TC = "def floor_read(float(R, K) A) -> (s) { s(r) +=! A(r, r_k) }"
WRITE_TC = "def floor_write(float(R) z, float(K) w) -> (O) { O(r, k) = z(r) + w(k) }"


def view2(a: np.ndarray) -> np.ndarray:
    """`a` as a C-contiguous (rows, n / rows) view, rows a power of two ≤ ROWS."""
    rows = ROWS
    while a.size % rows:
        rows //= 2
    return a.reshape(rows, a.size // rows)


def ours_floor(
    inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray], threads: int
) -> Callable[[], Any]:
    """Read `inputs` and write `outputs` with our own kernels (raises on error)."""
    from bench.ours import define

    read = define(READ_TC, None, threads)
    write = define(WRITE_TC, None, threads)
    calls: list[Callable[[], Any]] = []
    for a in inputs:
        v = view2(a)
        s = np.empty(v.shape[0], dtype=np.float32)
        calls.append(lambda v=v, s=s: read(v, out=s))
    for o in outputs:
        v = view2(o)
        z = np.zeros(v.shape[0], dtype=np.float32)
        w = np.zeros(v.shape[1], dtype=np.float32)
        calls.append(lambda v=v, z=z, w=w: write(z, w, out=v))

    def run() -> None:
        for call in calls:
            call()

    run()
    if any(np.any(o) for o in outputs):
        raise RuntimeError("floor_write left a non-zero element")
    return run


def torch_floor(
    inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]
) -> Callable[[], Any]:
    """Read `inputs` and write `outputs` with torch (threads set by the caller)."""
    import torch

    calls: list[Callable[[], Any]] = []
    for a in inputs:
        v = torch.from_numpy(view2(a))
        s = torch.empty(v.shape[0], dtype=torch.float32)
        calls.append(lambda v=v, s=s: torch.sum(v, dim=1, out=s))
    for o in outputs:
        t = torch.from_numpy(o)
        calls.append(t.zero_)

    def run() -> None:
        for call in calls:
            call()

    run()
    return run
