"""16-bit accuracy and speed: float16 and bfloat16 kernels against float32.

For matmul, softmax, layernorm and conv2d (the sources of `bench.kernels`),
each definition is compiled for the `cpu` target three times, with its
inputs declared ``float``, ``float16`` and ``bfloat16``. Inputs are uniform
in [-1, 1), rounded to the 16-bit type; the float32 NumPy result on those
same rounded values is the reference. Reported per kernel and type: the max
absolute error, the max relative error (the max absolute error over the
output's max magnitude), and the median time of the 16-bit kernel over that
of the float32 kernel of the same definition (both with ``out=``).

Run as ``python -m bench.half_precision [--write]``; ``--write`` also writes
the table to docs/perf/half-precision.md.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tcdialect as tc
from bench.kernels import CONV2D, LAYERNORM, MATMUL, SOFTMAX, _conv2d_ref
from tcdialect.bfloat16 import from_bfloat16, to_bfloat16

Array = np.ndarray[Any, Any]


def _softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x: Array) -> Array:
    cen = x - x.mean(axis=2, keepdims=True)
    var = (cen * cen).sum(axis=2, keepdims=True)
    return cen / np.sqrt((var + np.float32(1e-5)) / np.float32(x.shape[2]))


#: name, source, input shapes, float32 NumPy reference
CASES: list[tuple[str, str, list[tuple[int, ...]], Callable[..., Array]]] = [
    ("matmul 256³", MATMUL, [(256, 256), (256, 256)], lambda a, b: a @ b),
    ("softmax 512×1024", SOFTMAX, [(512, 1024)], _softmax),
    ("layernorm 32×32×512", LAYERNORM, [(32, 32, 512)], _layernorm),
    (
        "conv2d 4×16×34² * 32×16×3²",
        CONV2D,
        [(4, 16, 34, 34), (32, 16, 3, 3)],
        lambda i, w: _conv2d_ref(i, w)[0],
    ),
]


def _declared(source: str, elem: str) -> str:
    """`source` with its parameters declared `elem`, and its casts to float
    (layernorm's ``float(C)``) made casts to `elem`."""
    return re.sub(r"\bfloat\(", f"{elem}(", source)


def _best_times(
    fns: list[Callable[[], object]], rounds: int = 5, seconds: float = 0.1
) -> list[float]:
    """The best time of one call of each of `fns`, timed interleaved in
    `rounds` rounds (so the drift of a shared machine hits all alike)."""
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            end = time.perf_counter() + seconds
            while True:
                t0 = time.perf_counter()
                fn()
                t = time.perf_counter() - t0
                best[i] = min(best[i], t)
                if t0 + t > end:
                    break
    return best


def _as_float32(x: Array, elem: str) -> Array:
    return from_bfloat16(x) if elem == "bfloat16" else x.astype(np.float32)


Row = tuple[str, str, float, float, float, float]


def measure() -> list[Row]:
    """(kernel, type, max abs error, max relative error, time of the 16-bit
    kernel, time of the float32 kernel) per kernel and 16-bit type."""
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    for name, source, shapes, reference in CASES:
        data = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        k32 = tc.define(source)
        out32 = k32(*data)
        for elem in ("float16", "bfloat16"):
            ins = [
                to_bfloat16(d) if elem == "bfloat16" else d.astype(np.float16)
                for d in data
            ]
            ref = reference(*(_as_float32(x, elem) for x in ins))
            k = tc.define(_declared(source, elem))
            out = k(*ins)
            assert isinstance(out, np.ndarray)
            got = _as_float32(out, elem)
            err = float(np.abs(got - ref).max())
            scale = float(np.abs(ref).max())
            t, t32 = _best_times(
                [lambda: k(*ins, out=out), lambda: k32(*data, out=out32)]
            )
            rows.append((name, elem, err, err / scale, t, t32))
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| kernel | type | max abs error | max rel error | 16-bit | float32 | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, elem, err, rel, t, t32 in rows:
        lines.append(
            f"| {name} | {elem} | {err:.2e} | {rel:.2e} | {t * 1e3:.2f} ms "
            f"| {t32 * 1e3:.2f} ms | {t / t32:.2f}× |"
        )
    return "\n".join(lines)


METHOD = """# 16-bit floats: accuracy and speed on the `cpu` target

Measured by `python -m bench.half_precision --write`. Each definition of
`bench/kernels.py` is compiled three times, with its inputs declared
`float`, `float16` and `bfloat16`; compiled code computes in float32,
loads and stores 16 bits, and accumulates reductions in float32, rounding
once. Inputs are uniform in [-1, 1), rounded to the 16-bit type; the
reference is float32 NumPy on the same rounded values, so the errors are
those of the kernel's 16-bit intermediates and output, not of the input
rounding. "max rel error" is the max absolute error over the output's max
magnitude (half an ulp at 1.0 is 4.9e-4 for float16 and 3.9e-3 for
bfloat16). Temporaries computed from 16-bit inputs are 16-bit tensors
(softmax's `e` and `s`, layernorm's `mean`, `cen` and `var`): each adds
its rounding, which is why those two reach one to two ulps. Times are the
best of a call with `out=`, the 16-bit kernel and the float32 kernel of the
same definition timed interleaved (5 rounds of 0.1 s each) on the same
machine (2 cores shared with other work: the ratios are indicative), with
the default options of the `cpu` target.

The contractions (matmul, conv2d, layernorm's variance) run in the
register tiles of the float32 kernels (`register-tile{fma16=true}`, which
the `cpu` target passes): a 16-bit product accumulating in float32 is one
float32 FMA of the extended factors, so its rounding to 16 bits is skipped
(the error is that of the exact sum rounded once); the factors that the
tile reuses are extended once, into float32 copies (matmul's rows of `A`,
conv2d's weights, once before the loop over images and rows), so the inner
loop is the float32 one, with 16-bit loads of the other operand. Before,
16-bit products were multiplied and rounded lane by lane (bfloat16 in
integer ops), 5.2x (float16) and 10.4x (bfloat16) the float32 time for
matmul, 5.6x and 10.6x for conv2d, on this machine. The elementwise loops
(softmax, layernorm) are vectorised by LLVM: the bfloat16 conversions are
integer vector ops (extension: a zero-extending load and a shift;
rounding to nearest even: about ten vector ops, NaNs kept quiet), which
each 16-bit result pays, as the language requires.
"""


def main(argv: list[str]) -> None:
    text = table(measure())
    print(text)
    if "--write" in argv:
        path = Path(__file__).resolve().parent.parent / "docs/perf/half-precision.md"
        path.write_text(METHOD + "\n" + text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
