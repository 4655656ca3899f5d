"""bench.cuda_static: the PTX loop mix, the occupancy arithmetic, and one
benchmark kernel read off end to end (with `ptxas`)."""

from __future__ import annotations

import pytest

from bench.cuda_static import KernelStatic, LoopMix, analyse, loop_mix, table
from tcdialect.backend.cuda.target import GENERIC_GPU
from tcdialect.runtime.cuda.driver import ptxas_path

LIMITS = {k: int(v) for k, v in GENERIC_GPU.limits.items()}

PTX = """{
	mov.u32 	%r1, 0;
$L__BB0_1:
	ld.global.f32 	%f1, [%rd1];
$L__BB0_2:
	ld.shared.f32 	%f2, [%rd2];
	ld.shared.f32 	%f3, [%rd3];
	fma.rn.f32 	%f4, %f2, %f3, %f4;
	fma.rn.f32 	%f5, %f2, %f3, %f5;
	add.rn.f32 	%f6, %f4, %f5;
	@%p1 bra 	$L__BB0_2;
	cp.async.ca.shared.global [%rd4], [%rd5], 4;
	st.global.f32 	[%rd1], %f6;
	@%p2 bra 	$L__BB0_1;
	ret;
}"""


def test_loop_mix_counts_the_innermost_hot_loop() -> None:
    mix = loop_mix(PTX)
    assert (mix.fma, mix.fp, mix.ld_shared, mix.ld_global, mix.cp_async) == (
        2,
        1,
        2,
        0,
        0,
    )
    assert mix.lds_per_fma == 1.0
    assert loop_mix("{ ret; }") == LoopMix()


@pytest.mark.parametrize(
    ("block", "regs", "smem", "blocks"),
    [
        ((32, 8, 1), 64, 41472, 4),  # registers: 16 K a block of 65536
        ((32, 8, 1), 32, 41472, 5),  # shared memory: 42.5 KiB a block of 228
        ((1024, 1, 1), 16, 0, 2),  # threads: 2048 an SM
        ((32, 1, 1), 16, 0, 32),  # at most 32 blocks
    ],
)
def test_blocks_per_sm(
    block: tuple[int, int, int], regs: int, smem: int, blocks: int
) -> None:
    s = KernelStatic("k", (1, 1, 1), block, regs, smem)
    assert s.blocks_per_sm(LIMITS) == blocks


@pytest.mark.skipif(ptxas_path() is None, reason="needs ptxas (CUDA toolkit)")
def test_matmul_read_off_its_code() -> None:
    from bench.cuda.kernels import by_name

    kernel = by_name(["matmul_4096"])[0]
    rows = analyse(kernel, "sm_90", ptxas_path() or "")
    assert [s.name for s in rows] == ["matmul_k0"]
    s = rows[0]
    # 16 x 16 threads of 8 x 8 elements: 8 + 8 shared loads for 64 fma
    assert s.block == (16, 16, 1) and s.grid == (32, 32, 1)
    assert s.registers > 0 and s.shared > 0 and s.loop.fma == 64
    assert s.loop.lds_per_fma == 0.25
    text = table([("matmul_4096", s)], LIMITS, GENERIC_GPU.cores)
    assert "| matmul_4096 | matmul_k0 | 32x32x1 | 16x16x1 |" in text
