"""Side-by-side CPU benchmark of tcdialect against NumPy and PyTorch.

`python -m bench` (or `make bench`) times every kernel of `bench.kernels` with
our JIT (`tcdialect.define`), NumPy and PyTorch CPU at a matched thread count,
next to the roofline bound measured in the same run, and writes
`bench/RESULTS.md`. The method follows the team's performance anchor: peers
interleaved in one process with the order rotated each round, a 96 MiB cache
flush before every timed call, warm-up first, medians, every result checked
against a float64 NumPy reference.

Modules:

* `harness`: cache flush, interleaved timing, error metric.
* `machine`: peak GFLOP/s and streaming GB/s of this machine, its description.
* `peak`: the FMA-loop probe of the peak GFLOP/s (JIT-compiled LLVM IR).
* `kernels`: the kernel table (TC source, NumPy and torch peers, flops, sizes).
* `ours`: the tcdialect column, which degrades to a short error message.
* `runner`: the command line and the run itself.
* `report`: the Markdown report and the stdout table.
* `validate`: checks each TC source and each peer against the reference
  interpreter at small sizes (`python -m bench --validate`).
* `backward`: the backward rows, the derived backward
  (`tcdialect.autodiff.forward_backward`) against PyTorch's autograd and a
  hand-written NumPy backward (`--backward`: only these, `--no-backward`:
  none).
"""

import os

# PyTorch reads this once at import: huge-page backed allocations make a fresh
# 64 MiB output 2-3x cheaper (anchor-perf.md). Set before anything imports torch.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
# OpenBLAS's idle workers spin for 2^28 cycles (~0.1 s) after every call,
# taking cores from whatever is timed next in the interleaved rounds: AᵀB
# 1024², ours, 2 threads, measured 15.5 ms alone and 31 ms right after a
# NumPy matmul (the flush between calls is shorter than the spin). 2^4 cycles
# puts them to sleep at once; NumPy pays a wake-up of microseconds per call.
# Read when NumPy loads OpenBLAS: set before anything imports numpy.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
# torch loads libgomp before our first kernel does, and our kernels then share
# it: libgomp reads GOMP_SPINCOUNT there, and tcdialect's default of 300
# (backend/cpu/jit.py, applied only when tcdialect loads libgomp first) does not
# apply. The report states what libgomp saw.
GOMP_SPINCOUNT_AT_START = os.environ.get("GOMP_SPINCOUNT")
