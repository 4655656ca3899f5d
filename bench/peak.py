"""The host's peak floating-point rate, measured with a loop of vector FMAs.

Part of the benchmark (`bench.machine` takes the roofline peak from it), not
of the compiler: it JIT-compiles hand-written LLVM IR with the CPU backend's
`jit_llvm_ir`.

The roofline bound of a compute-bound kernel is flops / peak. A BLAS sgemm
is not a safe stand-in for the peak: a BLAS kernel picked for an older ISA
(OpenBLAS runs its Haswell kernel when `OPENBLAS_CORETYPE=Haswell`) reaches
half the FMA rate of a core with 512-bit FMA units, and any bound computed
from it is loose. This probe measures what the FMA units give:

* `fma_loop_ir(lanes, chains)` is a function `float fma_loop(i64 n, float
  b)` that runs `n` steps of `chains` independent `<lanes x float>`
  multiply-adds `a = a * b + c` (`c = 2b`), enough independent chains to
  cover the FMA latency of both pipes of current x86 cores, and returns
  lane 0 of the sum of the chains (so nothing is dead code);
* `fma_peak_gflops(threads)` compiles it for the host (vector width from
  `host_info().vector_width`) and runs it on `threads` Python threads at once
  (ctypes releases the GIL): 2 flops per lane, chain and step, over the
  slowest thread's time; the best of `repeats` tries.

Example, an AVX-512 host with 2 cores (Zen 5): about 535 GFLOP/s at 2
threads, where NumPy's sgemm 2048 gave 234 with OpenBLAS's Haswell kernel
and 449 with its SkylakeX kernel.
"""

from __future__ import annotations

import ctypes
import threading
import time

from tcdialect.backend.cpu.host import host_info
from tcdialect.backend.cpu.jit import jit_llvm_ir

#: Independent accumulator chains: 2 FMA pipes x 4-cycle latency needs 8;
#: 12 leaves slack and fits 16 vector registers (AVX2) with b and c.
CHAINS = 12

FmaLoop = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64, ctypes.c_float)


def fma_loop_ir(lanes: int, chains: int = CHAINS) -> str:
    """LLVM IR of `fma_loop(n, b)` (see the module docstring)."""
    vt = f"<{lanes} x float>"
    fma = f"@llvm.fma.v{lanes}f32"
    phis = "\n".join(
        f"  %a{i} = phi {vt} [zeroinitializer, %entry], [%a{i}.next, %loop]"
        for i in range(chains)
    )
    steps = "\n".join(
        f"  %a{i}.next = call {vt} {fma}({vt} %a{i}, {vt} %b, {vt} %c)"
        for i in range(chains)
    )
    sums = [f"  %s0 = fadd {vt} %a0.next, %a1.next"] + [
        f"  %s{i - 1} = fadd {vt} %s{i - 2}, %a{i}.next" for i in range(2, chains)
    ]
    body = "\n".join([phis, steps])
    total = "\n".join(sums)
    return f"""
declare {vt} {fma}({vt}, {vt}, {vt})

define float @fma_loop(i64 %n, float %x) {{
entry:
  %b0 = insertelement {vt} undef, float %x, i32 0
  %b = shufflevector {vt} %b0, {vt} undef, <{lanes} x i32> zeroinitializer
  %c = fadd {vt} %b, %b
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %none, label %loop
none:
  ret float 0.0
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
{body}
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
{total}
  %r = extractelement {vt} %s{chains - 2}, i32 0
  ret float %r
}}
"""


class FmaProbe:
    """The compiled `fma_loop` for this host (kept alive with its engine)."""

    def __init__(self, lanes: int | None = None, chains: int = CHAINS) -> None:
        if chains < 2:
            raise ValueError(f"chains must be at least 2, got {chains}")
        self.lanes = host_info().vector_width(32) if lanes is None else lanes
        self.chains = chains
        self._engine = jit_llvm_ir(fma_loop_ir(self.lanes, chains))
        self.fn = FmaLoop(self._engine.get_function_address("fma_loop"))

    def flops(self, steps: int) -> float:
        """Floating-point operations of `fn(steps, b)` (an FMA is 2)."""
        return 2.0 * self.lanes * self.chains * max(steps, 0)


def fma_peak_gflops(
    threads: int = 1, steps: int = 2_000_000, repeats: int = 3
) -> float:
    """Best GFLOP/s of `threads` concurrent `fma_loop(steps)` calls."""
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    probe = FmaProbe()
    probe.fn(1000, 0.5)  # warm up: page in the code, raise the clock
    best = 0.0
    for _ in range(repeats):
        times: list[float] = []
        start = threading.Barrier(threads)

        def run() -> None:
            start.wait()
            t0 = time.perf_counter()
            probe.fn(steps, 0.999)
            times.append(time.perf_counter() - t0)

        workers = [threading.Thread(target=run) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, threads * probe.flops(steps) / max(times) / 1e9)
    return best
