"""`check(program, options)`: run a program through the reference and the compiler.

The differential check: the NumPy reference interpreter
(`tcdialect.reference.run`) and the kernel compiled for `target` (`cpu`
by default; `cuda-sim` runs it in the GPU simulator) with that target's
options class built from `options` run on the program's input arrays; the
first disagreement is returned as a `Failure` (None: they agree). Floats
compare within `tolerance` of the output's reduction length, ints and bools
exactly; outputs start poisoned (different from the reference everywhere)
so an element the kernel never writes cannot pass by chance, and inputs
must come back unmodified.
"""

from __future__ import annotations

import dataclasses
import math
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcdialect.testing.tcgen.model import Array, Program


@dataclass(frozen=True)
class Failure:
    """How a program failed under one option set.

    kind: "frontend" (the generated source is rejected), "shape" (an output
    shape differs from what the generator meant), "reference" (the reference
    interpreter raised), "compile" (a `TCError` from `define` or the first
    call's compilation), "run" (a `TCError` from the call itself), "crash"
    (any other exception), "mismatch" (outputs differ),
    "inputs-modified".
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def tolerance(red: float) -> float:
    """Relative and absolute float tolerance for a reduction length.

    The formula of test/e2e/test_cpu_catalog.py's `check_outputs`:
    ``1e-5 * sqrt(max(1, red)) + 2e-6``.
    """
    return 1e-5 * math.sqrt(max(1.0, red)) + 2e-6


def compare(
    got: Any, want: Sequence[Array], names: Sequence[str], red: Mapping[str, float]
) -> str | None:
    """None when `got` matches `want`; else a description of the first difference.

    Floats within `tolerance` (relative and absolute, NaN equal to NaN), ints
    and bools exactly; dtypes and shapes must be equal.
    """
    if not isinstance(got, tuple):
        got = (got,)
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for name, g, w in zip(names, got, want, strict=True):
        if not isinstance(g, np.ndarray):
            return f"output {name}: not an array ({type(g).__name__})"
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {name}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if g.dtype.kind == "f":
            tol = tolerance(red.get(name, 1.0))
            with np.errstate(all="ignore"):
                close = np.isclose(g, w, rtol=tol, atol=tol, equal_nan=True)
        else:
            close = g == w
        if not np.all(close):
            bad = np.argwhere(~close)
            where = tuple(int(x) for x in bad[0])
            lines = [
                f"output {name}: {len(bad)} of {g.size} elements differ (tolerance {tolerance(red.get(name, 1.0)) if g.dtype.kind == 'f' else 0:.3g})"
            ]
            for idx in bad[:5]:
                ix = tuple(int(x) for x in idx)
                lines.append(f"  {name}{list(ix)}: got {g[ix]!r}, reference {w[ix]!r}")
            del where
            return "\n".join(lines)
    return None


def target_options(options: Mapping[str, object], target: str = "cpu") -> Any:
    """`target`'s options class (``tcdialect.CpuOptions`` for `cpu`) built
    from `options`; an unknown key is a `TypeError`."""
    from tcdialect.backend.registry import get_backend

    cls = get_backend(target).options_class
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise TypeError(
            f"{unknown} are not tcdialect.{cls.__name__} fields (it has {sorted(fields)})"
        )
    # JSON gives lists; options are hashable (a cache key): tuples.
    kwargs: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in options.items()
    }
    return cls(**kwargs)


def cpu_options(options: Mapping[str, object]) -> Any:
    """``tcdialect.CpuOptions(**options)``; an unknown key is a `TypeError`."""
    return target_options(options, "cpu")


def _poisoned(want: Array) -> Array:
    """A C-order array of `want`'s shape and dtype that differs from `want`
    in every element by more than any tolerance `compare` allows: `want +
    max(1, |want|)` for floats (1 where `want` is not finite), `want + 1`
    (wrapping) for ints, `not want` for booleans."""
    out = np.empty(want.shape, want.dtype)
    kind = want.dtype.kind
    if kind == "b":
        return np.logical_not(want, out=out)
    if kind != "f":
        return np.add(want, 1, out=out, casting="unsafe")
    with np.errstate(all="ignore"):
        np.add(want, np.maximum(1, np.abs(want)), out=out)
    np.copyto(out, 1, where=~np.isfinite(want))
    return out


def check(
    program: Program, options: Mapping[str, object], target: str = "cpu"
) -> Failure | None:
    """Run `program` through the reference and the compiler for `target`; compare."""
    import tcdialect
    from tcdialect import reference
    from tcdialect.diagnostics import TCError
    from tcdialect.frontend import parse_tc

    opts = target_options(options, target)
    source = program.source
    try:
        module = parse_tc(source, f"{program.name}.tc")
    except TCError as e:
        return Failure("frontend", str(e))
    arrays = program.arrays()
    before = [a.copy() for a in arrays]
    try:
        want = reference.run(module, program.entry, arrays)
    except TCError as e:
        return Failure("reference", str(e))
    names = [n for n, _ in program.outputs]
    shapes = program.expected_shapes()
    if shapes is not None:
        for n, w in zip(names, want, strict=False):
            if n in shapes and tuple(w.shape) != shapes[n]:
                return Failure(
                    "shape",
                    f"output {n} has shape {tuple(w.shape)} in the reference, the generator meant {shapes[n]}",
                )
    try:
        kernel = tcdialect.define(source, program.entry, target=target, options=opts)
        kernel.compile(*arrays)
    except TCError as e:
        return Failure("compile", str(e))
    except Exception as e:  # an internal error that escaped as a non-TCError
        return Failure(
            "crash", "".join(traceback.format_exception_only(type(e), e)).strip()
        )
    # outputs start different from the reference everywhere, so an element
    # the kernel fails to write cannot pass on memory that still holds the
    # right answer (np.empty may hand back the reference's freed arrays)
    got = tuple(_poisoned(w) for w in want)
    try:
        kernel(*arrays, out=got)
    except TCError as e:
        return Failure("run", str(e))
    except Exception as e:
        return Failure(
            "crash", "".join(traceback.format_exception_only(type(e), e)).strip()
        )
    diff = compare(got, want, names, program.red)
    if diff is not None:
        return Failure("mismatch", diff)
    for spec, a, b in zip(program.inputs, arrays, before, strict=True):
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            return Failure(
                "inputs-modified", f"input {spec.name} was modified by the call"
            )
    return None
