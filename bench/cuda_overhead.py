"""Host time of a cached call on the GPU (run on the GPU machine).

::

    . .gpu/env.sh && python3 -m bench.cuda_overhead [--out DIR]

Times, on the host clock, calls whose kernels are already compiled and
whose arguments are PyTorch CUDA tensors (the launch is asynchronous, so
this is what a call costs the caller): a tiny elementwise kernel with and
without `out=`, and, for scale, pycuda's own `prepared_call` of an empty
kernel and `torch.add` with `out=`. Prints a table and writes
`cuda_overhead.json` to `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any


def _per_call(fn: Any, n: int = 2000) -> float:
    """Median over 5 rounds of the host time of one call, in µs."""
    import torch

    rounds = []
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - start) / n * 1e6)
        torch.cuda.synchronize()
    return sorted(rounds)[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args()
    import numpy as np
    import pycuda.driver as drv
    import torch

    import tcdialect
    from tcdialect.runtime.cuda.driver import cuda_device

    src = "def axpy(float(N) X, float(N) Y) -> (Z) { Z(i) = 2.0 * X(i) + Y(i) }"
    k = tcdialect.define(src, target="cuda")
    x = torch.rand(4096, device="cuda")
    y = torch.rand(4096, device="cuda")
    z = torch.empty_like(x)
    start = time.perf_counter()
    k(x, y, out=z)
    torch.cuda.synchronize()
    cold = time.perf_counter() - start
    assert torch.allclose(z, 2 * x + y)
    results: dict[str, Any] = {"cold_call_s": cold}
    results["ours_out_us"] = _per_call(lambda: k(x, y, out=z))
    results["ours_new_output_us"] = _per_call(lambda: k(x, y))
    results["ours_three_inputs_stream_us"] = _per_call(
        lambda: k(x, y, out=z, stream=torch.cuda.current_stream())
    )
    results["torch_add_out_us"] = _per_call(lambda: torch.add(x, y, out=z))
    cuda_device(0).make_current()
    ptx = (
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry nop(.param .u64 p){ ret; }\n"
    )
    fn = drv.module_from_buffer(ptx.encode()).get_function("nop")
    fn.prepare("P")
    ptr = np.uintp(z.data_ptr())
    results["pycuda_prepared_call_us"] = _per_call(
        lambda: fn.prepared_call((1, 1, 1), (32, 1, 1), ptr)
    )
    Path(args.out, "cuda_overhead.json").write_text(json.dumps(results, indent=1))
    for key, value in results.items():
        print(f"{key:32s} {value:10.2f}")


if __name__ == "__main__":
    main()
