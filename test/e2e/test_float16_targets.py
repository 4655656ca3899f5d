"""16-bit floats on the compiled targets: `cpu`, `cuda-sim` and `cuda` (PTX).

The semantics of docs/language-notes.md ("16-bit floats") hold on every
target exactly as in the reference interpreter: each elementwise op rounds,
reductions accumulate in float32 (4096 float16 ones sum to 4096, which a
float16 accumulator cannot reach), conversions round to nearest even with
overflow to infinity. Inputs are chosen so that float32 sums are exact in any
order, so outputs are compared bit for bit (NaNs as NaNs). The CPU code never
leaves a bfloat16 rounding to LLVM (which would call a library function the
process lacks), and the PTX for sm_90 computes in `.f16`/`.bf16`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.bfloat16 import from_bfloat16, to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc

Arr = np.ndarray[Any, Any]

SEMANTICS = """
def semantics(float16(N) H, bfloat16(N) B, float(N) F, float16(R) Ones, bfloat16(R) BOnes)
    -> (HR, BR, HS, BS, BM, HC, BC, HA) {
    HR(i) = (H(i) + 1024.0) - 1024.0
    BR(i) = max((B(i) + 256.0) - 256.0, -1.0) / 3.0
    HS +=! Ones(r)
    BS +=! BOnes(r) * 0.5
    BM max=! BOnes(r) * -2.0
    HC(i) = float16(F(i) * 2.0)
    BC(i) = bfloat16(F(i))
    HA(i) = H(i)
    HA(i) += H(i) * Ones(r)
}
"""

#: A reduction along contiguous data that `register-tile` vectorises on the
#: CPU (bfloat16 vectors through float32), and an elementwise loop LLVM
#: vectorises.
VECTORISED = """
def vectorised(bfloat16(M, K) A, bfloat16(K) x, float16(M, K) H) -> (y, z, E) {
    y(m) +=! A(m, r_k) * x(r_k)
    z(m) +=! H(m, r_k) * H(m, r_k)
    E(m, k) = A(m, k) * 0.5 - bfloat16(H(m, k))
}
"""

TARGETS = ["cpu-specialized", "cpu-generic", "cuda-sim"]


def _define(source: str, target: str) -> Any:
    if target == "cuda-sim":
        return tcdialect.define(source, target="cuda-sim")
    options = tcdialect.CpuOptions(specialize=target == "cpu-specialized")
    return tcdialect.define(source, options=options)


def _semantics_inputs() -> list[Arr]:
    n, r = 37, 4096
    rng = np.random.default_rng(16)
    f = rng.uniform(-3.0, 3.0, n).astype(np.float32)
    f[:8] = [np.nan, np.inf, -np.inf, 3.4e38, 70000.0, 1.0 + 2.0**-8, 1e-40, -0.0]
    return [
        rng.uniform(-4.0, 4.0, n).astype(np.float16),
        to_bfloat16(rng.uniform(-4.0, 4.0, n)),
        f,
        np.ones(r, np.float16),
        to_bfloat16(np.ones(r, np.float32)),
    ]


def _quarters(rng: np.random.Generator, *shape: int) -> Arr:
    """Multiples of 1/4 in [-1, 1]: exact sums of products in any order."""
    return rng.integers(-4, 5, shape) / 4


def _vectorised_inputs() -> list[Arr]:
    rng = np.random.default_rng(17)
    m, k = 9, 77
    return [
        to_bfloat16(_quarters(rng, m, k)),
        to_bfloat16(_quarters(rng, k)),
        _quarters(rng, m, k).astype(np.float16),
    ]


def _same(got: Arr, want: Arr, bfloat16: bool) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if bfloat16:
        got, want = from_bfloat16(got), from_bfloat16(want)
    np.testing.assert_array_equal(got, want)  # NaN equals NaN here


@pytest.mark.parametrize("target", TARGETS)
def test_16_bit_semantics_match_the_reference(target: str) -> None:
    inputs = _semantics_inputs()
    want = reference.run(parse_tc(SEMANTICS), None, inputs)
    got = _define(SEMANTICS, target)(*inputs)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _same(g, w, bfloat16=w.dtype == np.uint16)
    hs, bs, bm = want[2], from_bfloat16(want[3]), from_bfloat16(want[4])
    assert hs == 4096 and bs == 2048 and bm == -2.0  # float32 accumulation


@pytest.mark.parametrize("target", TARGETS)
def test_vectorised_16_bit_code_matches_the_reference(target: str) -> None:
    inputs = _vectorised_inputs()
    want = reference.run(parse_tc(VECTORISED), None, inputs)
    got = _define(VECTORISED, target)(*inputs)
    for g, w in zip(got, want, strict=True):
        _same(g, w, bfloat16=w.dtype == np.uint16)


def test_cpu_code_rounds_to_bfloat16_without_a_library_call() -> None:
    k = tcdialect.define(VECTORISED)
    inputs = _vectorised_inputs()
    llvm_ir = k.ir(*inputs, stage="llvm-ir")
    assert "bfloat" in llvm_ir
    assert not re.search(r"(fptrunc|fpext) .* to (<\d+ x )?bfloat", llvm_ir)
    assert not re.search(r"= (fadd|fsub|fmul|fdiv|fneg|call)[^=]* bfloat ", llvm_ir)
    assert "__truncsfbf2" not in k.ir(*inputs, stage="asm")


@pytest.mark.parametrize("target", ["cpu-generic", "cuda-sim"])
def test_wrong_dtypes_name_the_argument(target: str) -> None:
    k = _define(
        "def f(bfloat16(N) X, float16(N) Y) -> (Z) { Z(i) = X(i) + Y(i) }", target
    )
    x = to_bfloat16(np.ones(3, np.float32))
    y = np.ones(3, np.float16)
    assert k(x, y).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TCError, match=r"input 'X' \(argument 0\) of @f: expected bf"):
        k(np.ones(3, np.float32), y)
    with pytest.raises(TCError, match=r"input 'Y' \(argument 1\) of @f: expected fl"):
        k(x, np.ones(3, np.float32))


def test_bfloat16_out_arrays_are_checked() -> None:
    k = tcdialect.define("def f(bfloat16(N) X) -> (Z) { Z(i) = X(i) * 2.0 }")
    x = to_bfloat16(np.array([1.0, 1.5], np.float32))
    out = np.empty(2, np.uint16)
    k(x, out=out)
    assert from_bfloat16(out).tolist() == [2.0, 3.0]
    with pytest.raises(TCError, match=r"output 'Z' \(out\[0\]\) of @f: expected bf"):
        k(x, out=np.empty(2, np.float32))


PTXAS = shutil.which("ptxas")


def test_ptx_computes_in_16_bit_floats(tmp_path: Path) -> None:
    k = tcdialect.define(SEMANTICS, target="cuda")
    ptx = k.ir(*_semantics_inputs(), stage="ptx")
    for op in ("add.rn.f16", "add.rn.bf16", "cvt.rn.f16.f32", "cvt.rn.bf16.f32"):
        assert op in ptx, op
    # the reductions accumulate in float32, across the warp too
    assert "add.rn.f32" in ptx or "add.f32" in ptx
    if PTXAS is None:
        pytest.skip("ptxas not on PATH: the PTX was not assembled")
    path = tmp_path / "semantics.ptx"
    path.write_text(ptx)
    proc = subprocess.run(
        [PTXAS, "-arch=sm_90", str(path), "-o", str(tmp_path / "semantics.cubin")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
