"""The f32 errors of the expanded builtins, in ulps, measured on the CPU.

`Loops(calls, width)` JIT-compiles one loop function per C function of
`expand_math_polynomials.EXPANDED_CALLS` named in `calls` (``Y(i) =
lgammaf(X(i))``, f32 scalars or `vector<width x f32>`), expanded by
`expand-math-polynomials` and lowered as the CPU target lowers them;
`loops(name, *xs)` runs one on NumPy arrays; the C functions of
`LIBRARY_CALLS` (`tgammaf`, `j0f` ...) stay calls of the C library. `ulp_error(got, want)` is the
error of f32 results against float64 values in f32 ulps of the exact value
(a subnormal result's ulp is 2^-149, +-inf counts as +-2^128). `SAMPLES`
says what to measure each function on: every k-th f32 bit pattern and
random values in its interesting range (`sample`); `ACCURACY` how to
measure (`measure`). The reference is `tcdialect.special_functions`, in
float64.

``python -m tcdialect.testing.builtin_ulp [--scale N]`` prints the table of
docs/builtins.md (max and mean ulp per builtin; `--scale` multiplies the
sample sizes; lgamma's reflection x < -1/4 gets a line of its own).
"""

from __future__ import annotations

import argparse
import ctypes
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcdialect.special_functions import BUILTINS

F32 = np.float32
Array = np.ndarray[Any, Any]

#: C function -> (builtin, arity)
CALLS: dict[str, tuple[str, int]] = {
    "cospif": ("cospi", 1),
    "sinpif": ("sinpi", 1),
    "lgammaf": ("lgamma", 1),
    "erfinvf": ("erfinv", 1),
    "erfcinvf": ("erfcinv", 1),
    "normcdfinvf": ("normcdfinv", 1),
    "erfcxf": ("erfcx", 1),
    "normcdff": ("normcdf", 1),
    "cyl_bessel_i0f": ("cyl_bessel_i0", 1),
    "cyl_bessel_i1f": ("cyl_bessel_i1", 1),
    "rcbrtf": ("rcbrt", 1),
    "rhypotf": ("rhypot", 2),
    "norm3df": ("norm3d", 3),
    "norm4df": ("norm4d", 4),
    "rnorm3df": ("rnorm3d", 3),
    "rnorm4df": ("rnorm4d", 4),
}

#: C functions of the other builtins: the C library's on the CPU (glibc's,
#: measured the same way by `main`)
LIBRARY_CALLS: dict[str, tuple[str, int]] = {
    "tgammaf": ("tgamma", 1),
    "j0f": ("j0", 1),
    "j1f": ("j1", 1),
    "y0f": ("y0", 1),
    "y1f": ("y1", 1),
    "logbf": ("logb", 1),
    "nextafterf": ("nextafter", 2),
    "remainderf": ("remainder", 2),
}
_ARITY = {c: a for c, (_, a) in (CALLS | LIBRARY_CALLS).items()}


@dataclass(frozen=True)
class Sample:
    """Every `stride`-th f32 bit pattern (unary: the whole range) or, for
    n-ary functions, `random` random bit patterns per operand; plus `random`
    values uniform in [lo, hi] (n-ary: normal numbers of similar magnitude)
    and as many log-uniform in (tiny, 1) when `tiny` is set."""

    lo: float
    hi: float
    stride: int = 4099
    random: int = 1 << 20
    tiny: float | None = None
    #: only arguments from this one on (lgamma: the reflection below -1/4
    #: is measured by `lgamma_negative`)
    domain_lo: float = -math.inf


SAMPLES: dict[str, Sample] = {
    "cospif": Sample(-4.0, 4.0),
    "sinpif": Sample(-4.0, 4.0),
    "lgammaf": Sample(-0.25, 30.0, domain_lo=-0.25),
    "erfinvf": Sample(-1.0, 1.0),
    "erfcinvf": Sample(0.0, 2.0, tiny=1e-45),
    "normcdfinvf": Sample(0.0, 1.0, tiny=1e-45),
    "erfcxf": Sample(-9.3, 30.0),
    "normcdff": Sample(-15.0, 8.0),
    "cyl_bessel_i0f": Sample(-95.0, 95.0),
    "cyl_bessel_i1f": Sample(-95.0, 95.0),
    "rcbrtf": Sample(-10.0, 10.0),
    "rhypotf": Sample(-1.0, 1.0),
    "norm3df": Sample(-1.0, 1.0),
    "norm4df": Sample(-1.0, 1.0),
    "rnorm3df": Sample(-1.0, 1.0),
    "rnorm4df": Sample(-1.0, 1.0),
    "tgammaf": Sample(-10.0, 35.0),
    "j0f": Sample(-50.0, 50.0),
    "j1f": Sample(-50.0, 50.0),
    "y0f": Sample(0.0, 50.0),
    "y1f": Sample(0.0, 50.0),
    "logbf": Sample(-10.0, 10.0),
    "nextafterf": Sample(-1.0, 1.0),
    "remainderf": Sample(-1.0, 1.0),
}


def _name(call: str) -> str:
    return "t_" + call


def _loop(call: str, arity: int, width: int) -> str:
    t = f"vector<{width}xf32>" if width else "f32"
    load, store = (
        ("vector.load", "vector.store") if width else ("memref.load", "memref.store")
    )
    vt = f", {t}" if width else ""
    args = [f"%X{k}: memref<?xf32>" for k in range(arity)]
    loads = "\n      ".join(
        f"%x{k} = {load} %X{k}[%i] : memref<?xf32>{vt}" for k in range(arity)
    )
    operands = ", ".join(f"%x{k}" for k in range(arity))
    types = ", ".join([t] * arity)
    return f"""
  func.func private @{call}({types}) -> {t}
  func.func @{_name(call)}({", ".join(args)}, %Y: memref<?xf32>) {{
    %c0 = arith.constant 0 : index
    %step = arith.constant {max(width, 1)} : index
    %n = memref.dim %X0, %c0 : memref<?xf32>
    scf.for %i = %c0 to %n step %step {{
      {loads}
      %y = func.call @{call}({operands}) : ({types}) -> {t}
      {store} %y, %Y[%i] : memref<?xf32>{vt}
    }}
    func.return
  }}"""


def module_text(calls: Sequence[str], width: int = 0) -> str:
    """A module with one loop function per call (`width` 0: scalars)."""
    loops = "".join(_loop(c, _ARITY[c], width) for c in calls)
    return "builtin.module {" + loops + "\n}"


class Loops:
    """The loop functions of `calls`, expanded, lowered and JIT-compiled."""

    def __init__(
        self, calls: Sequence[str], width: int = 0, mask_selects: bool = False
    ):
        from xdsl.parser import Parser
        from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

        from tcdialect.backend.cpu.jit import compile_cpu
        from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass
        from tcdialect.pipeline import make_context
        from tcdialect.transforms.expand_math_polynomials import (
            ExpandMathPolynomialsPass,
        )

        ctx = make_context()
        self.module = Parser(ctx, module_text(calls, width)).parse_module()
        ExpandMathPolynomialsPass(mask_selects=mask_selects).apply(ctx, self.module)
        lowered = self.module.clone()
        for p in (ConvertScfToCf(), ConvertToLlvmPass()):
            p.apply(ctx, lowered)
        self.compiled = compile_cpu(lowered)
        self.width = width

    def __call__(self, call: str, *xs: Any) -> Array:
        arrays = [np.ascontiguousarray(np.asarray(x, F32).ravel()) for x in xs]
        n = arrays[0].size
        assert n % max(self.width, 1) == 0
        out = np.empty(n, F32)
        args: list[Any] = []
        for a in [*arrays, out]:
            args += [a.ctypes.data, n]
        argtypes = [ctypes.c_void_p, ctypes.c_int64] * (len(arrays) + 1)
        fn = ctypes.CFUNCTYPE(None, *argtypes)(self.compiled.address(_name(call)))
        fn(*args)
        return out


def ulp_error(got: Array, want: Array) -> Array:
    """|got - want| in f32 ulps of `want` (float64); inf where exactly one is
    NaN, 0 where both are NaN or equal after rounding `want` to f32."""
    with np.errstate(over="ignore", invalid="ignore"):
        g = got.astype(np.float64)
        w = np.asarray(want, np.float64)
        w32 = w.astype(F32).astype(np.float64)
        gi = np.where(np.isinf(g), np.copysign(2.0**128, g), g)
        wi = np.where(np.isinf(w), np.copysign(2.0**128, w), w)
        expo = np.floor(np.log2(np.maximum(np.abs(wi), 2.0**-126)))
        err = np.abs(gi - wi) / 2.0 ** (expo - 23)
    err[(g == w) | (g == w32)] = 0.0
    err[np.isnan(g) & np.isnan(w)] = 0.0
    err[np.isnan(g) != np.isnan(w)] = np.inf
    return err


def sample(call: str, scale: float = 1.0) -> list[Array]:
    """The operands `call` is measured on (`SAMPLES`), f32."""
    s, arity = SAMPLES[call], _ARITY[call]
    rng = np.random.default_rng(zlib.crc32(call.encode()))
    n = max(1, int(s.random * scale))
    if arity == 1:
        stride = max(1, int(s.stride / scale))
        whole = np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32)
        parts = [whole.view(F32), rng.uniform(s.lo, s.hi, n).astype(F32)]
        if s.tiny is not None:
            parts.append(np.exp(rng.uniform(math.log(s.tiny), 0.0, n)).astype(F32))
        x = np.concatenate(parts)
        return [x[~(x < s.domain_lo)]]
    bits = rng.integers(0, 1 << 32, (arity, n), dtype=np.uint64).astype(np.uint32)
    near = rng.standard_normal((arity, n)).astype(F32)
    both = np.concatenate([bits.view(F32), near], axis=1)
    return list(both)


def reference(call: str, xs: Sequence[Array]) -> Array:
    """The float64 values of `call`'s builtin at `xs` (nextafter's, a step
    in f32, exact)."""
    if call == "nextafterf":
        return BUILTINS["nextafter"](*xs).astype(np.float64)
    with np.errstate(invalid="ignore"):  # signalling NaNs among the bit patterns
        wide = [x.astype(np.float64) for x in xs]
    return BUILTINS[(CALLS | LIBRARY_CALLS)[call][0]](*wide)


def measure(loops: Loops, call: str, scale: float = 1.0) -> tuple[float, float, Array]:
    """(max, mean ulp error, the arguments of the max) of `call` on its sample;
    NaN/inf results where the reference is finite count as inf."""
    xs = sample(call, scale)
    err = ulp_error(loops(call, *xs), reference(call, xs))
    finite = err[np.isfinite(err)]
    i = int(np.argmax(err))
    return float(err[i]), float(finite.mean()), np.array([x[i] for x in xs])


def lgamma_negative(loops: Loops, n: int = 1 << 20) -> tuple[float, float]:
    """lgamma for -40 <= x < -1/4 (the reflection, whose zeros cancel): the
    largest absolute error where |lgamma| < 1, and in ulps elsewhere."""
    x = np.random.default_rng(5).uniform(-40.0, -0.25, n).astype(F32)
    got, want = loops("lgammaf", x), reference("lgammaf", [x])
    small = np.abs(want) < 1
    absolute = np.abs(got.astype(np.float64) - want)[small]
    return float(absolute.max()), float(ulp_error(got, want)[~small].max())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="The f32 errors of the expanded builtins, in ulps."
    )
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("calls", nargs="*", default=[*CALLS, *LIBRARY_CALLS])
    args = parser.parse_args(argv)
    loops = Loops(args.calls)
    print(f"{'builtin':<14} {'max ulp':>8} {'mean ulp':>9}  worst argument")
    for call in args.calls:
        mx, mean, at = measure(loops, call, args.scale)
        where = ", ".join(f"{float(a):.9g}" for a in at)
        name = (CALLS | LIBRARY_CALLS)[call][0]
        print(f"{name:<14} {mx:8.2f} {mean:9.3f}  ({where})", flush=True)
    if "lgammaf" in args.calls:
        absolute, ulps = lgamma_negative(loops, int((1 << 20) * args.scale))
        print(
            f"lgamma for -40 <= x < -1/4: {absolute:.3g} absolute where "
            f"|lgamma| < 1, {ulps:.2f} ulp elsewhere"
        )


if __name__ == "__main__":
    main()
