"""Compile two example kernels for this CPU, check them, time them against NumPy.

`examples/chain.tc` (an elementwise chain) and `examples/softmax.tc` (a
row softmax with temporaries) are compiled with `tcdialect.define`, run on
random float32 inputs, checked against NumPy, and timed next to the same
computation written in NumPy (medians of repeated calls, outputs
preallocated for both).

    make demo        # or: .venv/bin/python examples/demo.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tcdialect

HERE = Path(__file__).resolve().parent


def median_ms(fn: Callable[[], Any], repeats: int = 15) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def numpy_chain(a, b, c, d, out):  # type: ignore[no-untyped-def]
    np.multiply(a, b, out=out)
    np.add(out, c, out=out)
    np.maximum(out, 0.0, out=out)
    np.multiply(out, d, out=out)


def numpy_softmax(x, out):  # type: ignore[no-untyped-def]
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def demo(name: str, inputs: list[Any], reference: Callable[..., None]) -> float:
    path = HERE / f"{name}.tc"
    kernel = tcdialect.define(path.read_text(), filename=path.name)
    start = time.perf_counter()
    kernel.compile(*inputs)
    compile_s = time.perf_counter() - start
    ours = np.empty_like(inputs[0])
    theirs = np.empty_like(inputs[0])
    kernel(*inputs, out=ours)
    reference(*inputs, out=theirs)
    error = float(np.max(np.abs(ours - theirs)))
    t_ours = median_ms(lambda: kernel(*inputs, out=ours))
    t_numpy = median_ms(lambda: reference(*inputs, out=theirs))
    shape = "x".join(map(str, inputs[0].shape))
    print(
        f"{name:8} {shape:>10}  compile {compile_s:5.2f} s   tcdialect {t_ours:7.2f} ms"
        f"   numpy {t_numpy:7.2f} ms   ({t_numpy / t_ours:4.1f}x)   max error {error:.1e}"
    )
    return error


def main() -> int:
    rng = np.random.default_rng(0)
    n = 1 << 22
    chain = [rng.standard_normal(n, dtype=np.float32) for _ in range(4)]
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    cores = tcdialect.get_backend("cpu").info().cores
    print(f"{cores} threads; float32; medians of 15 calls")
    try:
        errors = [
            demo("chain", chain, numpy_chain),
            demo("softmax", [x], numpy_softmax),
        ]
    except tcdialect.TCError as err:
        print(err, file=sys.stderr)
        return 1
    print("\nthe loops stage of chain.tc, as tc-opt -p tc-to-loops prints it:\n")
    kernel = tcdialect.define((HERE / "chain.tc").read_text())
    print(kernel.ir(stage="loops"))
    return 0 if max(errors) < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
