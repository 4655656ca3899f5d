"""Hardware counters of GPU benchmark kernels, read by Nsight Compute.

Run on the GPU machine under `ncu`, which profiles only the launches inside
the profiler range this script opens around one call of each kernel::

    . .gpu/env.sh && ncu --profile-from-start off --clock-control none \\
        --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --csv --page details \\
        python3 -m bench.cuda_profile --kernels matmul_4096,softmax_16384x4096 \\
        > ncu.csv

Each kernel of `bench/cuda/kernels.py` named is compiled under the default
`CudaOptions`, called once outside the range (compile, load, first run),
then once inside it, on inputs generated on the device. Then
`python -m bench.cuda_profile --summarize ncu.csv` prints one Markdown row
per launch: duration; SM, memory, DRAM, L1 and L2 throughput as shares of
peak; achieved and theoretical occupancy; registers, shared memory, block
and grid; cycles per issued instruction. It is a
measuring tool for the closing notes of the GPU work (what limits a kernel
that misses its target), not part of the library.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

#: (section metric name in ncu's details page, column title)
COLUMNS: list[tuple[str, str]] = [
    ("Duration", "µs"),
    ("Compute (SM) Throughput", "SM %"),
    ("Memory Throughput", "mem %"),
    ("DRAM Throughput", "DRAM %"),
    ("L1/TEX Cache Throughput", "L1 %"),
    ("L2 Cache Throughput", "L2 %"),
    ("Achieved Occupancy", "occ %"),
    ("Theoretical Occupancy", "theo occ %"),
    ("Registers Per Thread", "regs"),
    ("Static Shared Memory Per Block", "smem B"),
    ("Block Size", "block"),
    ("Grid Size", "grid"),
    ("Warp Cycles Per Issued Instruction", "cyc/issue"),
]


#: ncu's time units in microseconds.
_TO_US = {
    **{"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6},
    **{"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6},
}


def profile(names: list[str]) -> int:
    """Call each kernel once outside the profiler range, then once inside."""
    import torch

    import tcdialect
    from bench.cuda.device import Device
    from bench.cuda.kernels import by_name

    dev = Device("cuda")
    cudart = torch.cuda.cudart()
    for kernel in by_name(names):
        inputs = dev.make_inputs(kernel.args(kernel.sizes), 0)
        k = tcdialect.define(kernel.source, kernel.entry, target="cuda")
        got = k(*inputs)
        dev.sync()
        print(f"# {kernel.name}", file=sys.stderr, flush=True)
        cudart.cudaProfilerStart()
        k(*inputs, out=got)
        dev.sync()
        cudart.cudaProfilerStop()
        del got, inputs
        tcdialect.clear_cache()
        dev.free()
    return 0


def summarize(path: Path) -> str:
    """One Markdown row per profiled launch from ncu's `--csv --page details`."""
    rows: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    order: list[tuple[str, str]] = []
    # ncu's own messages (==PROF==) may sit among the rows
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("==")]
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return "no ncu rows found"
    for rec in csv.DictReader(lines[start:]):
        key = (rec["ID"], rec["Kernel Name"])
        if key not in rows:
            order.append(key)
        name = rec["Metric Name"]
        unit = rec.get("Metric Unit", "")
        value = rec["Metric Value"]
        if name == "Duration" and unit in _TO_US:
            value = f"{float(value.replace(',', '')) * _TO_US[unit]:.1f}"
        # the first of a name: Speed Of Light's "Memory Throughput" is a
        # share of peak, Memory Workload Analysis's a rate
        rows[key].setdefault(name, value)
    out = [
        "| id | kernel | " + " | ".join(t for _, t in COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for key in order:
        vals = [rows[key].get(m, "") for m, _ in COLUMNS]
        out.append(f"| {key[0]} | {key[1][:40]} | " + " | ".join(vals) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernels", help="comma-separated bench.cuda kernel names")
    p.add_argument("--summarize", type=Path, help="ncu CSV to summarize")
    args = p.parse_args(argv)
    if args.summarize is not None:
        print(summarize(args.summarize))
        return 0
    if not args.kernels:
        p.error("--kernels or --summarize is needed")
    return profile(args.kernels.split(","))


if __name__ == "__main__":
    raise SystemExit(main())
