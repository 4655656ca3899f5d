"""Time GPU benchmark kernels under several `CudaOptions`, side by side.

    python -m bench.cuda_sweep --kernels matmul_4096 --options gemm --out DIR

For each kernel of `bench/cuda/kernels.py` named, each option set is
compiled, checked against the float64 reference (the normwise relative
error) and timed as `bench.cuda` times: CUDA events around one call after
an L2 flush, the median of `--samples` calls. PyTorch eager runs beside it.
The table goes to stdout and `DIR/sweep-<set>.md` (`sweep.md` for a JSON
list), the samples to the same name with `.json`.
It is a measuring tool for choosing defaults and checking the mapping
(the autotuner searches the same options automatically).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

#: Named lists of option sets (keyword arguments of `CudaOptions`).
SETS: dict[str, list[dict[str, Any]]] = {
    "gemm": [
        {},
        {"use_shared_memory": True, "use_private_memory": True},
        *(
            {
                "tile": list(tile),
                "block": list(block),
                "use_shared_memory": True,
                "use_private_memory": True,
                **({"unroll": unroll} if unroll > 1 else {}),
            }
            for tile, block, unroll in [
                ((64, 64, 16), (16, 16), 1),
                ((64, 64, 32), (16, 16), 1),
                ((128, 64, 16), (16, 16), 1),
                ((128, 128, 8), (16, 16), 1),
                ((128, 128, 16), (16, 16), 1),
                ((128, 128, 16), (16, 16), 4),
                ((128, 128, 8), (32, 8), 1),
                ((64, 128, 16), (32, 8), 1),
                ((128, 64, 32), (16, 16), 2),
            ]
        ),
    ],
    # a long reduction: one block (no atomics) against blocks that add their
    # totals atomically, as many as the mapper picks or a fixed number
    "split": [{}, {"grid": [1]}, {"grid": [32]}, {"grid": [1024]}],
    # code generation: copies into shared memory by cp.async (the default)
    # or through registers, and CUDA's __launch_bounds__ second argument:
    # ptxas's own register choice (it spills in some GEMM-like kernels)
    # against 1 and 2 blocks per SM; streamed slices double-buffered (the
    # default) or copied, waited for and used in turn
    "codegen": [
        {},
        {"async_copy": False},
        {"double_buffer": False},
        {"min_blocks_per_sm": 1},
        {"min_blocks_per_sm": 2},
    ],
    # memory-bound rows: each thread's loop over a row rolled (the default)
    # or unrolled, so that several loads are in flight per thread (the
    # kernels reached 59-70 % of the copy bandwidth in Nsight Compute)
    "streaming": [{}, {"unroll": 2}, {"unroll": 4}, {"unroll": 8}],
    # a short reduction (TC's batched 26 x 72 x 26 products): staged 32 at a
    # time (the default) against all of it at once, from shared memory or
    # from global memory through L1, and the batch's threads 26 x 8 or 26 x 26
    "reduction_tile": [
        {},
        {"tile": [1, 26, 26, 72]},
        {"tile": [1, 26, 26, 72], "use_shared_memory": True},
        {"tile": [1, 26, 26, 72], "block": [26, 26]},
        {"tile": [1, 26, 26, 72], "block": [26, 26], "use_shared_memory": True},
    ],
    # every reused tile promoted to shared memory, where the default promotes
    # only the slices a tile loop streams: whether the caches serve the reuse
    # of the short reductions (convolutions, small products) as well
    "promote_all": [{}, {"use_shared_memory": True}],
}


def _label(opts: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in opts.items()) or "default"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernels", required=True, help="comma-separated names")
    p.add_argument("--options", default="gemm", help="a set name or a JSON list")
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--budget-s", type=float, default=200.0)
    p.add_argument("--out", type=Path, default=Path("device-out"))
    args = p.parse_args(argv)

    import torch

    import tcdialect
    from bench.cuda.device import Device
    from bench.cuda.kernels import by_name

    sets = SETS.get(args.options)
    if sets is None:
        sets = json.loads(args.options)
    dev = Device("cuda")
    args.out.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.budget_s
    rows: list[dict[str, Any]] = []
    lines = [
        "| kernel | options | compile s | rel err | ms | x eager |",
        "|---|---|---|---|---|---|",
    ]
    for kernel in by_name(args.kernels.split(",")):
        sizes = kernel.sizes
        inputs = dev.make_inputs(kernel.args(sizes), 0)
        want = dev.reference(kernel, inputs)
        peer = kernel.peer(torch)
        peer_s = statistics.median(
            dev.time_once(lambda: peer(*inputs)) for _ in range(args.samples)
        )
        lines.append(
            f"| {kernel.name} | PyTorch eager | | | {peer_s * 1e3:.3f} | 1.00 |"
        )
        for opts in sets:
            if time.time() > deadline:
                lines.append(f"| {kernel.name} | {_label(opts)} | budget spent | | | |")
                continue
            row: dict[str, Any] = {"kernel": kernel.name, "options": opts}
            try:
                t0 = time.time()
                o = tcdialect.CudaOptions(
                    **{
                        k: tuple(v) if isinstance(v, list) else v
                        for k, v in opts.items()
                    }
                )
                k = tcdialect.define(
                    kernel.source, kernel.entry, target="cuda", options=o
                )
                got = k(*inputs)
                dev.sync()
                row["compile_s"] = time.time() - t0
                got = got if isinstance(got, tuple) else (got,)
                row["rel_error"] = dev.rel_error(got, want)
                outs = tuple(torch.empty_like(g) for g in got)
                out = outs[0] if len(outs) == 1 else outs
                row["samples"] = [
                    dev.time_once(lambda: k(*inputs, out=out))
                    for _ in range(args.samples)
                ]
                ms = statistics.median(row["samples"]) * 1e3
                row["ms"] = ms
                lines.append(
                    f"| {kernel.name} | {_label(opts)} | {row['compile_s']:.1f} | "
                    f"{row['rel_error']:.1e} | {ms:.3f} | {ms / (peer_s * 1e3):.2f} |"
                )
            except Exception as exc:  # a failing option set is a row, not a stop
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                lines.append(
                    f"| {kernel.name} | {_label(opts)} | {row['error'][:80]} | | | |"
                )
            rows.append(row)
            print(lines[-1], flush=True)
            tcdialect.clear_cache()
            dev.free()
    text = "\n".join(lines)
    print(text)
    stem = f"sweep-{args.options}" if args.options in SETS else "sweep"
    (args.out / f"{stem}.md").write_text(text + "\n")
    (args.out / f"{stem}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
