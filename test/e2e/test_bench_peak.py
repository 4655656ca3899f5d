"""The FMA-rate probe that the benchmark's roofline peak comes from
(`bench/peak.py`): its loop computes the multiply-adds it counts."""

import math

import numpy as np
import pytest

from bench.peak import CHAINS, FmaProbe, fma_loop_ir, fma_peak_gflops
from tcdialect.backend.cpu.host import host_info
from tcdialect.backend.cpu.jit import jit_llvm_ir
from tcdialect.diagnostics import TCError


def _expected(steps: int, b: float, chains: int) -> float:
    """`chains` copies of a <- a * b + 2b from 0, summed (float64 reference)."""
    b32 = float(np.float32(b))
    a = 0.0
    for _ in range(steps):
        a = float(np.float32(a * b32 + 2 * b32))
    return chains * a


@pytest.mark.parametrize(("lanes", "chains"), [(4, 2), (8, 5), (None, CHAINS)])
@pytest.mark.parametrize("steps", [0, 1, 3, 1000])
def test_fma_loop_computes_its_multiply_adds(
    lanes: int | None, chains: int, steps: int
):
    probe = FmaProbe(lanes, chains)
    assert probe.lanes == (host_info().vector_width(32) if lanes is None else lanes)
    got = probe.fn(steps, 0.75)
    assert math.isclose(got, _expected(steps, 0.75, chains), rel_tol=1e-5)
    assert probe.flops(steps) == 2.0 * probe.lanes * chains * steps


def test_fma_loop_ir_has_one_fma_per_chain_and_step():
    text = fma_loop_ir(16, 7)
    assert text.count("call <16 x float> @llvm.fma.v16f32") == 7
    assert "define float @fma_loop(i64 %n, float %x)" in text


def test_peak_probe_runs_on_several_threads():
    rate = fma_peak_gflops(threads=2, steps=20_000, repeats=1)
    assert math.isfinite(rate) and rate > 0


@pytest.mark.parametrize("bad", [0, -1])
def test_peak_probe_rejects_bad_thread_counts(bad: int):
    with pytest.raises(ValueError, match="threads must be at least 1"):
        fma_peak_gflops(threads=bad)


def test_probe_needs_two_chains():
    with pytest.raises(ValueError, match="chains must be at least 2"):
        FmaProbe(8, 1)


def test_invalid_hand_written_ir_is_a_tc_error():
    with pytest.raises(TCError, match="invalid LLVM IR"):
        jit_llvm_ir("define i32 @f() { ret i64 0 }")
