"""The builtins without a math op (docs/builtins.md) beyond f32 catalog kernels.

float64 on the CPU: the C library's functions (`lgamma`, `j1`, ...) and the
compositions of `cbrt` and `hypot` calls (`rcbrt`, `norm3d`, `rnorm4d` ...)
agree with the reference interpreter to float64 precision (so does the GPU
simulator); the builtins with neither (`erfinv`, `normcdf`, ...) are a
`TCError` naming the builtin. In float16 the builtins compute in float32.
float64 code of every builtin compiles to PTX (libdevice's `__nv_*`
functions) that ptxas accepts.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc

F64 = """
def f(double(N) X, double(N) Y, double(N) Z, float16(N) H) -> (A, B, C) {
    A(i) = rcbrt(X(i)) + rhypot(X(i), Y(i)) + norm3d(X(i), Y(i), Z(i))
        + rnorm3d(X(i), Y(i), Z(i)) + norm4d(X(i), Y(i), Z(i), 2.0)
        + rnorm4d(X(i), Y(i), Z(i), 2.0) + fdivide(X(i), Y(i))
    B(i) = lgamma(X(i)) + tgamma(Y(i)) + j0(X(i)) + j1(Y(i)) + y0(X(i)) + y1(Y(i))
        + logb(Z(i)) + remainder(Z(i), X(i)) + 1e12 * (nextafter(X(i), Z(i)) - X(i))
    C(i) = erfinv(H(i)) + normcdf(H(i)) + lgamma(H(i) + 2.0) + norm3d(H(i), H(i), H(i))
}
"""

EVERY = """
def g(double(N) X, double(N) Y) -> (A) {
    A(i) = cospi(X(i)) + sinpi(X(i)) + lgamma(Y(i)) + tgamma(Y(i)) + erfinv(X(i))
        + erfcinv(Y(i)) + erfcx(X(i)) + normcdf(X(i)) + normcdfinv(Y(i))
        + logb(Y(i)) + j0(X(i)) + j1(X(i)) + y0(Y(i)) + y1(Y(i))
        + cyl_bessel_i0(X(i)) + cyl_bessel_i1(X(i)) + rcbrt(Y(i))
        + nextafter(X(i), Y(i)) + remainder(X(i), Y(i)) + rhypot(X(i), Y(i))
        + fdivide(X(i), Y(i)) + norm3d(X(i), Y(i), 1.0) + rnorm3d(X(i), Y(i), 1.0)
        + norm4d(X(i), Y(i), X(i), 1.0) + rnorm4d(X(i), Y(i), X(i), 1.0)
}
"""


def _inputs(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(8)
    wide = [rng.uniform(0.5, 4.0, n) for _ in range(3)]
    return [*wide, rng.uniform(-0.9, 0.9, n).astype(np.float16)]


@pytest.mark.parametrize("target", ["cpu", "cuda-sim"])
def test_float64_and_float16_match_the_reference(target: str) -> None:
    xs = _inputs(11)
    a, b, c = reference.run(parse_tc(F64), None, xs)
    got_a, got_b, got_c = tcdialect.define(F64, target=target)(*xs)
    np.testing.assert_allclose(got_a, a, rtol=1e-13)
    np.testing.assert_allclose(got_b, b, rtol=1e-13)
    assert got_c.dtype == np.float16  # computed in float32
    np.testing.assert_allclose(got_c, c, rtol=2e-3)


@pytest.mark.parametrize("builtin", ["erfinv", "normcdf", "cyl_bessel_i1", "cospi"])
def test_float64_without_a_c_function_is_an_error_on_the_cpu(builtin: str) -> None:
    k = tcdialect.define(f"def f(double(N) X) -> (Y) {{ Y(i) = {builtin}(X(i)) }}")
    with pytest.raises(TCError, match=f"builtin '{builtin}' is not available in "):
        k(np.zeros(3))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")
def test_float64_compiles_to_ptx(tmp_path: Path) -> None:
    ptx = tcdialect.define(EVERY, target="cuda").ir(*_inputs(5)[:2], stage="ptx")
    assert ".extern" not in ptx  # libdevice linked and internalised
    path = tmp_path / "every.ptx"
    path.write_text(ptx)
    out = tmp_path / "every.cubin"
    run = subprocess.run(
        ["ptxas", "-arch=sm_90", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
