"""Device check of the GPU code generation: the catalog's PTX on a real GPU.

Run on the GPU machine (docs/gpu.md; the kit in .gpu/ brings pycuda)::

    . .gpu/env.sh && python3 -m bench.gpu_check [--out DIR]

It compiles every catalog kernel (test/unit/test_reference_catalog.py) for the
`cuda` target under the default options and TC's presets, loads the PTX with
pycuda into the primary context, runs the `gpu` stage's host function with
`tcdialect.runtime.gpu_host.HostProgram` against the device (this script's
`PycudaDevice`: the CUDA runtime proper is the next issue), and compares the
outputs with the reference interpreter and with the simulator. Then it times
matmul, softmax and group convolution at benchmark sizes against PyTorch on
the same GPU. It prints a summary and writes `gpu_check.json` to `--out`.

This is a measurement tool, not part of the library: only it imports pycuda
here. Nothing in it runs in `make test`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "unit"))
sys.path.insert(0, str(ROOT / "test" / "e2e"))

OPTIONS = ["default", "naive", "mlp", "conv", "group_conv", "pointwise", "shared"]


def _options(name: str) -> Any:
    from tcdialect import CudaOptions

    if name == "default":
        return CudaOptions()
    if name == "shared":
        return CudaOptions(
            tile=(32, 32, 32), use_shared_memory=True, use_private_memory=True
        )
    return CudaOptions.preset(name)


def compile_kernel(
    job: tuple[str, str | None, dict[str, int], str],
) -> tuple[str, str, float]:
    """(gpu-stage text, PTX, seconds) of one catalog kernel under one option set."""
    import tcdialect
    from tcdialect.pipeline import Lowering, lower, make_context

    source, entry, sizes, opts = job
    start = time.perf_counter()
    k = tcdialect.define(source, entry, target="cuda", options=_options(opts))
    lowering = Lowering(k.backend, k.options, k.backend.info())
    gpu_mod = lower(k._tc_module(), "gpu", sizes, make_context(), lowering)
    llvm_mod = lower(k._tc_module(), "llvm", sizes, make_context(), lowering)
    ptx = k.backend.emit("ptx", llvm_mod, k.options)
    return str(gpu_mod), ptx, time.perf_counter() - start


class DevBuf:
    """A device buffer: its allocation, shape and dtype."""

    def __init__(self, drv: Any, shape: tuple[int, ...], dtype: np.dtype[Any]):
        self.shape, self.dtype = shape, dtype
        self.nbytes = int(math.prod(shape)) * dtype.itemsize
        self.alloc = drv.mem_alloc(max(self.nbytes, 16))

    @property
    def ptr(self) -> int:
        return int(self.alloc)


class PycudaDevice:
    """`gpu_host.Device` on a real GPU through pycuda."""

    def __init__(self, drv: Any, ptx: str):
        self.drv = drv
        self.module = drv.module_from_buffer(ptx.encode() + b"\0")
        self.functions: dict[str, Any] = {}
        self.launches = 0

    def alloc(self, type: Any, shape: tuple[int, ...]) -> DevBuf:
        from tcdialect.arguments import numpy_dtype

        return DevBuf(self.drv, tuple(shape), np.dtype(numpy_dtype(type.element_type)))

    def free(self, buffer: DevBuf) -> None:
        buffer.alloc.free()

    def launch(self, kernel: Any, grid: Any, block: Any, args: list[Any]) -> None:
        from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType

        name = kernel.sym_name.data
        fn = self.functions.get(name)
        if fn is None:
            fn = self.functions[name] = self.module.get_function(name)
        params: list[Any] = []
        for t, a in zip(kernel.function_type.inputs.data, args, strict=True):
            if isinstance(t, MemRefType):
                params.append(np.uintp(a.ptr))
                params += [
                    np.int64(a.shape[d])
                    for d, s in enumerate(t.get_shape())
                    if s == DYNAMIC_INDEX
                ]
            elif isinstance(t, IndexType):
                params.append(np.int64(a))
            else:
                raise RuntimeError(f"kernel @{name}: a parameter of type {t}")
        fn(
            *params,
            grid=tuple(int(g) for g in grid),
            block=tuple(int(b) for b in block),
        )
        self.launches += 1


def run_on_device(
    drv: Any, gpu_text: str, ptx: str, inputs: list[Any], want: tuple[Any, ...]
) -> tuple[list[Any], PycudaDevice, Any, list[Any]]:
    """Run the host function of `gpu_text` on the device; the outputs."""
    from xdsl.dialects.func import FuncOp
    from xdsl.parser import Parser

    from tcdialect.arguments import numpy_dtype, signature_of
    from tcdialect.pipeline import make_context
    from tcdialect.runtime.gpu_host import HostProgram

    module = Parser(make_context(), gpu_text).parse_module()
    host = next(op for op in module.ops if isinstance(op, FuncOp))
    sig = signature_of(host)
    program = HostProgram(module, host.sym_name.data)
    device = PycudaDevice(drv, ptx)
    args: list[Any] = []
    outs: list[DevBuf] = []
    error: DevBuf | None = None
    it_in, it_out = iter(inputs), iter(want)
    for a, param in zip(sig.args, host.body.block.args, strict=True):
        if a.kind == "input":
            dtype = numpy_dtype(param.type.element_type)  # type: ignore[attr-defined]
            x = np.ascontiguousarray(np.asarray(next(it_in), dtype))
            buf = DevBuf(drv, x.shape, x.dtype)
            if x.nbytes:
                drv.memcpy_htod(buf.alloc, x)
            args.append(buf)
        elif a.kind == "output":
            w = next(it_out)
            buf = DevBuf(drv, w.shape, w.dtype)
            args.append(buf)
            outs.append(buf)
        elif a.kind == "error":
            error = DevBuf(drv, (1,), np.dtype(np.int32))
            drv.memcpy_htod(error.alloc, np.zeros(1, np.int32))
            args.append(error)
        else:
            raise RuntimeError("specialised kernels take no sizes")
    program.run(args, device)
    drv.Context.synchronize()
    got = []
    for buf in outs:
        host_out = np.empty(buf.shape, buf.dtype)
        if buf.nbytes:
            drv.memcpy_dtoh(host_out, buf.alloc)
        got.append(host_out)
    if error is not None:
        flag = np.zeros(1, np.int32)
        drv.memcpy_dtoh(flag, error.alloc)
        if flag[0]:
            raise RuntimeError("the error flag is set")
    return got, device, program, args


def catalog(drv: Any, report: dict[str, Any]) -> None:
    import test_reference_catalog as cat
    from test_cpu_catalog import check_outputs

    import tcdialect
    from tcdialect import reference
    from tcdialect.frontend import parse_tc

    jobs = []
    for k in cat.KERNELS:
        sizes = max(k.sizes, key=lambda s: sum(s.values()))
        for opts in OPTIONS:
            jobs.append((k, sizes, opts))
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        compiled = list(
            pool.map(
                compile_kernel,
                [(k.source, k.entry, s, o) for k, s, o in jobs],
                chunksize=2,
            )
        )
    report["compile_wall_s"] = time.perf_counter() - start
    times = sorted(c[2] for c in compiled)
    report["compile_s_median"] = times[len(times) // 2]
    report["compile_s_max"] = times[-1]
    results = []
    for (k, sizes, opts), (gpu_text, ptx, secs) in zip(jobs, compiled, strict=True):
        rng = np.random.default_rng(zlib.crc32(k.name.encode()) + sum(sizes.values()))
        inputs = k.inputs(rng, sizes)
        want = reference.run(parse_tc(k.source), k.entry, inputs)
        entry = {"kernel": k.name, "sizes": sizes, "options": opts, "compile_s": secs}
        try:
            got, device, _, _ = run_on_device(drv, gpu_text, ptx, inputs, want)
            check_outputs(tuple(got), want, k.red(sizes))
            entry["ok"] = True
            entry["launches"] = device.launches
            if opts == "default":  # the simulator agrees with the device
                small = min(
                    (s for s in k.sizes if 0 not in s.values()),
                    key=lambda s: sum(s.values()),
                    default=k.sizes[0],
                )
                ins = k.inputs(np.random.default_rng(7), small)
                sim = tcdialect.define(k.source, k.entry, target="cuda-sim")(*ins)
                sim = sim if isinstance(sim, tuple) else (sim,)
                w2 = reference.run(parse_tc(k.source), k.entry, ins)
                g2t, p2, _ = compile_kernel((k.source, k.entry, small, "default"))
                dev2, _, _, _ = run_on_device(drv, g2t, p2, ins, w2)
                for a, b in zip(sim, dev2, strict=True):
                    if a.dtype.kind == "f":
                        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
                    else:
                        np.testing.assert_array_equal(a, b)
                entry["sim_agrees"] = True
        except Exception as e:
            entry["ok"] = entry.get("ok", False)
            entry["error"] = f"{type(e).__name__}: {str(e)[:400]}"
        results.append(entry)
    report["catalog"] = results


def timing(drv: Any, report: dict[str, Any]) -> None:
    import torch

    cases = {
        "matmul": (
            "def matmul(float(M, K) A, float(K, N) B) -> (C) {\n"
            "  C(m, n) +=! A(m, r_k) * B(r_k, n)\n}",
            {"M": 2048, "K": 2048, "N": 2048},
            lambda A, B: A @ B,
            lambda s: [(s["M"], s["K"]), (s["K"], s["N"])],
        ),
        "softmax": (
            "def softmax(float(N, D) I) -> (O) {\n"
            "  maxVal(n) max=! I(n, d)\n"
            "  shifted(n, d) = exp(I(n, d) - maxVal(n))\n"
            "  expsum(n) +=! shifted(n, r_d)\n"
            "  O(n, d) = shifted(n, d) / expsum(n)\n}",
            {"N": 4096, "D": 1024},
            lambda I: torch.softmax(I, 1),
            lambda s: [(s["N"], s["D"])],
        ),
        "group_conv": (
            "def group_conv(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1) -> (O) {\n"
            "  O(n, g, f, h, w) +=! I(n, g, r_c, h + r_kh, w + r_kw)"
            " * W1(g, f, r_c, r_kh, r_kw)\n}",
            {"N": 32, "G": 32, "C": 16, "F": 16, "H": 58, "W": 58, "KH": 3, "KW": 3},
            lambda I, W: torch.nn.functional.conv2d(
                I.reshape(32, 32 * 16, 58, 58), W.reshape(32 * 16, 16, 3, 3), groups=32
            ),
            lambda s: [
                (s["N"], s["G"], s["C"], s["H"], s["W"]),
                (s["G"], s["F"], s["C"], s["KH"], s["KW"]),
            ],
        ),
    }
    out: dict[str, Any] = {}
    for name, (src, sizes, torch_fn, shapes) in cases.items():
        rng = np.random.default_rng(0)
        inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes(sizes)]
        tin = [torch.from_numpy(x).cuda() for x in inputs]
        torch_fn(*tin)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            torch_fn(*tin)
        torch.cuda.synchronize()
        t_torch = (time.perf_counter() - t0) / 20
        want_t = torch_fn(*tin).cpu().numpy()
        rows: dict[str, Any] = {"torch_ms": t_torch * 1e3}
        # only the output's shape and dtype (the reference would take minutes)
        want = (
            np.empty(want_t.reshape(-1).shape, np.float32).reshape(
                want_t.shape if name != "group_conv" else (32, 32, 16, 56, 56)
            ),
        )
        for opts in ("default", "naive", "shared", "mlp"):
            try:
                gpu_text, ptx, secs = compile_kernel((src, None, sizes, opts))
                got, device, program, args = run_on_device(
                    drv, gpu_text, ptx, inputs, want
                )
                err = float(np.max(np.abs(got[0].reshape(-1) - want_t.reshape(-1))))
                start, end = drv.Event(), drv.Event()
                start.record()
                for _ in range(10):
                    program.run(args, device)
                end.record()
                end.synchronize()
                ms = start.time_till(end) / 10
                rows[opts] = {
                    "ms": ms,
                    "vs_torch": ms / (t_torch * 1e3),
                    "max_err": err,
                    "compile_s": secs,
                }
            except Exception as e:
                rows[opts] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        out[name] = rows
    report["timing"] = out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--skip-catalog", action="store_true")
    args = parser.parse_args()
    import pycuda.driver as drv

    drv.init()
    dev = drv.Device(0)
    ctx = dev.retain_primary_context()
    ctx.push()
    report: dict[str, Any] = {"device": dev.name(), "cc": dev.compute_capability()}
    try:
        if not args.skip_catalog:
            catalog(drv, report)
        timing(drv, report)
    except Exception:
        report["fatal"] = traceback.format_exc()
    finally:
        Path(args.out, "gpu_check.json").write_text(
            json.dumps(report, indent=1, default=str)
        )
        ctx.pop()
    rows = report.get("catalog", [])
    ok = sum(1 for r in rows if r.get("ok"))
    print(f"device {report['device']} cc {report['cc']}: catalog {ok}/{len(rows)} ok")
    for r in rows:
        if not r.get("ok") or "error" in r:
            print("FAIL", r["kernel"], r["options"], r.get("error"))
    print("sim agrees:", sum(1 for r in rows if r.get("sim_agrees")))
    print(json.dumps(report.get("timing"), indent=1, default=str))
    if "fatal" in report:
        print(report["fatal"])


if __name__ == "__main__":
    main()
