"""`python -m bench.cuda --validate`: every kernel checked on the host, tiny sizes.

For each kernel at its `quick` sizes, on float32 NumPy inputs:

* the TC source is accepted (`tcdialect.define`) and the reference
  interpreter (`tcdialect.reference.run`) agrees with the NumPy form of the
  float64 reference (normwise max relative error within `TOLERANCE`);
* the table's output shapes are the reference's, and its compulsory bytes
  are what the shapes say;
* when torch is installed (its CPU build is enough): the torch form of the
  reference agrees with the NumPy form (1e-9), and the eager peer with the
  reference (`TOLERANCE`, on the outputs the peer gives).

No GPU is needed: this is what can be checked of the device run beforehand.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.cuda.kernels import Kernel
from bench.harness import TOLERANCE, as_tuple, max_rel_error


def make_inputs(kernel: Kernel, sizes: dict[str, int], seed: int) -> list[np.ndarray]:
    """float32 uniform in [-1, 1), int32 uniform in [0, high)."""
    rng = np.random.default_rng(seed)
    out = []
    for a in kernel.args(sizes):
        if a.dtype == "int32":
            out.append(rng.integers(0, a.high, a.shape).astype(np.int32))
        else:
            out.append(
                (rng.random(a.shape, dtype=np.float32) * 2 - 1).astype(np.float32)
            )
    return out


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def validate_kernel(kernel: Kernel, seed: int) -> list[str]:
    """Problems found with `kernel` (empty when every check passes)."""
    import tcdialect
    from tcdialect import reference
    from tcdialect.frontend import parse_tc

    sizes = kernel.quick
    inputs = make_inputs(kernel, sizes, seed)
    x64 = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in inputs]
    want = kernel.reference(np, *x64)
    problems = []
    shapes = [tuple(w.shape) for w in want]
    if shapes != [tuple(s) for s in kernel.outputs(sizes)]:
        problems.append(
            f"outputs {kernel.outputs(sizes)} but the reference gives {shapes}"
        )
    nbytes = sum(x.nbytes for x in inputs) + sum(4 * w.size for w in want)
    if kernel.gathered_bytes is None and nbytes != kernel.nbytes(sizes):
        problems.append(f"nbytes {kernel.nbytes(sizes)} but the arrays hold {nbytes}")
    try:
        tcdialect.define(kernel.source, kernel.entry)
        got = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    except Exception as exc:
        problems.append(f"TC source: {type(exc).__name__}: {exc}")
    else:
        err = max_rel_error(got, want)
        if not err <= TOLERANCE:
            problems.append(f"TC source vs reference: rel err {err:.2e}")
    torch = _torch()
    if torch is None:
        return problems
    t64 = [torch.from_numpy(x) for x in x64]
    t_want = as_tuple(kernel.reference(torch, *t64))
    err = max_rel_error([w.numpy() for w in t_want], want)
    if not err <= 1e-9:
        problems.append(f"torch form of the reference: rel err {err:.2e}")
    try:
        with torch.no_grad():
            out = as_tuple(kernel.peer(torch)(*[torch.from_numpy(x) for x in inputs]))
        n = kernel.peer_outputs or len(want)
        err = max_rel_error([o.contiguous() for o in out], want[:n])
    except Exception as exc:
        problems.append(f"eager peer: {type(exc).__name__}: {exc}")
    else:
        if not err <= TOLERANCE:
            problems.append(f"eager peer: rel err {err:.2e}")
    return problems


def validate(kernels: list[Kernel]) -> bool:
    """Validate `kernels`, one line each; True when all pass."""
    print(
        "checking TC sources, references and peers at the quick sizes"
        + ("" if _torch() is not None else " (no torch: peers not checked)"),
        flush=True,
    )
    ok = True
    for i, kernel in enumerate(kernels):
        t0 = time.perf_counter()
        problems = validate_kernel(kernel, i)
        dt = time.perf_counter() - t0
        status = "ok" if not problems else "FAIL"
        print(f"{kernel.name:24s} {status:4s} ({dt:.2f} s)", flush=True)
        for p in problems:
            print(f"    {p}")
        ok = ok and not problems
    return ok
