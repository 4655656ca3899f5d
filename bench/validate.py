"""Check every kernel's TC source and peers at small sizes, without the JIT.

For each kernel (at its `quick` sizes): the TC source must parse
(`tcdialect.parse_tc`); the reference interpreter (`tcdialect.reference.run`)
must agree with the float64 NumPy oracle; the NumPy and torch peers must agree
with it too. Run with `python -m bench --validate`.
"""

from __future__ import annotations

import time

import numpy as np

from bench.harness import TOLERANCE, as_tuple, max_rel_error
from bench.kernels import Kernel


def validate_kernel(kernel: Kernel, rng: np.random.Generator) -> list[str]:
    """Problems found with `kernel` (empty when all checks pass)."""
    import tcdialect
    from tcdialect import reference

    problems: list[str] = []
    inputs = kernel.make_inputs(kernel.quick, rng)
    want = kernel.reference_outputs(inputs)
    try:
        module = tcdialect.parse_tc(kernel.source, f"{kernel.name}.tc")
        got = reference.run(module, kernel.entry, inputs)
    except Exception as exc:  # report and go on with the peers
        problems.append(f"TC source: {type(exc).__name__}: {exc}")
    else:
        err = max_rel_error(got, want)
        if not err <= TOLERANCE:
            problems.append(f"TC source: reference interpreter rel err {err:.2e}")
    for label, factory in (("numpy", kernel.numpy_peer), ("torch", kernel.torch_peer)):
        try:
            out = as_tuple(factory(inputs).run())
        except Exception as exc:
            problems.append(f"{label} peer: {type(exc).__name__}: {exc}")
            continue
        err = max_rel_error(out, want)
        if not err <= TOLERANCE:
            problems.append(f"{label} peer: rel err {err:.2e}")
    return problems


def validate(kernels: list[Kernel]) -> bool:
    """Validate `kernels`, print one line each; True when all pass."""
    rng = np.random.default_rng(0)
    ok = True
    for kernel in kernels:
        t0 = time.perf_counter()
        problems = validate_kernel(kernel, rng)
        dt = time.perf_counter() - t0
        status = "ok" if not problems else "FAIL"
        print(f"{kernel.name:32s} {status:4s} ({dt:.2f} s)", flush=True)
        for p in problems:
            print(f"    {p}")
        ok = ok and not problems
    return ok
