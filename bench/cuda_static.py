"""What limits each GPU benchmark kernel, read off the code without a GPU.

    python -m bench.cuda_static [--kernels NAME ...] [--arch sm_90] [--out FILE]

For every kernel of `bench/cuda/kernels.py` at its benchmark sizes, under
the default `CudaOptions`, each `gpu.func` it compiles to gets:

* the launch (blocks and threads of its `gpu.launch_func`, constants at
  specialised sizes);
* `ptxas -v` for `--arch`: registers, static shared memory, spill bytes;
* the occupancy those allow on the GPU described by `GENERIC_GPU`'s limits
  (blocks per SM: the least of the threads', registers' and shared memory's
  limits, at most 32; registers allocated per warp in units of 256, shared
  memory in units of 128 bytes with 1 KiB reserved per block, as NVIDIA's
  occupancy calculator does for sm_90), and the waves of blocks over the SMs;
* the hottest loop of its PTX (the innermost loop with the most
  floating-point operations): its `fma`, other floating-point, shared and
  global loads, `cp.async` copies, and shared loads per `fma`. A shared load
  is one cycle of an SM's shared memory (128 bytes a cycle) at best, while
  an SM issues four warp-wide `fma` a cycle: above 0.25 shared loads per
  `fma` (starred in the table), a loop that keeps every warp busy waits
  on shared memory.

The table goes to stdout and `--out` (Markdown). It is for reading beside a
device run's `RESULTS-cuda.md` (which says how fast, where this says why),
and for checking a mapping change on a machine without a GPU; it measures
nothing. Needs `ptxas` (the CUDA toolkit: `$CUDA_HOME`, the PATH or
/usr/local/cuda, as the CUDA runtime finds it).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bench.cuda.kernels import Kernel

#: Occupancy rules of sm_90 (the CUDA occupancy calculator's).
MAX_BLOCKS_PER_SM = 32
REGISTER_UNIT = 256  # registers are allocated per warp in units of this
SHARED_UNIT = 128
SHARED_RESERVED = 1024  # bytes the driver reserves per block
SHARED_PER_SM = 228 * 1024
#: Warp-wide `fma` an SM issues a cycle (4 schedulers), and warp-wide
#: 32-bit shared loads its shared memory serves a cycle (128 bytes).
FMA_PER_CYCLE = 4
LDS_PER_CYCLE = 1

FP_OPS = ("add", "sub", "mul", "div", "max", "min", "ex2", "lg2", "rcp", "sqrt")


@dataclass
class LoopMix:
    """Instruction counts of one PTX loop body."""

    fma: int = 0
    fp: int = 0
    ld_shared: int = 0
    ld_global: int = 0
    st_shared: int = 0
    st_global: int = 0
    cp_async: int = 0

    @property
    def lds_per_fma(self) -> float | None:
        return self.ld_shared / self.fma if self.fma else None


@dataclass
class KernelStatic:
    """One `gpu.func`: launch, `ptxas -v`, occupancy and hottest loop."""

    name: str
    grid: tuple[int | None, ...]
    block: tuple[int | None, ...]
    registers: int = 0
    shared: int = 0
    spills: int = 0
    loop: LoopMix = field(default_factory=LoopMix)

    @property
    def threads(self) -> int | None:
        if any(b is None for b in self.block):
            return None
        n = 1
        for b in self.block:
            n *= b or 1
        return n

    def blocks_per_sm(self, limits: dict[str, int]) -> int | None:
        """Resident blocks per SM (see the module docstring)."""
        threads = self.threads
        if threads is None:
            return None
        warps = -(-threads // limits["warp_size"])
        by_threads = limits["max_threads_per_sm"] // (warps * limits["warp_size"])
        per_warp = -(-self.registers * limits["warp_size"] // REGISTER_UNIT)
        per_warp *= REGISTER_UNIT
        by_regs = (
            limits["registers_per_block"] // (per_warp * warps)
            if self.registers
            else MAX_BLOCKS_PER_SM
        )
        smem = -(-(self.shared + SHARED_RESERVED) // SHARED_UNIT) * SHARED_UNIT
        by_smem = SHARED_PER_SM // smem
        return min(MAX_BLOCKS_PER_SM, by_threads, by_regs, by_smem)


def _loops(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line indices of the PTX loops: a label and a later
    branch back to it."""
    labels = {
        m.group(1): i
        for i, line in enumerate(lines)
        if (m := re.match(r"^(\$L__BB\d+_\d+):", line.strip()))
    }
    loops = []
    for i, line in enumerate(lines):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            loops.append((labels[m.group(1)], i))
    return loops


def loop_mix(ptx_body: str) -> LoopMix:
    """The instruction mix of the innermost loop with the most
    floating-point work in one PTX function body."""
    lines = ptx_body.splitlines()
    loops = _loops(lines)
    innermost = [
        (a, b)
        for a, b in loops
        if not any((c, d) != (a, b) and a <= c and d <= b for c, d in loops)
    ]
    best = LoopMix()
    for a, b in innermost:
        mix = LoopMix()
        for line in lines[a : b + 1]:
            words = line.split()
            if words and words[0].startswith("@"):  # a predicate
                words = words[1:]
            op = words[0] if words else ""
            if op.startswith("fma.") and (".f32" in op or ".f64" in op):
                mix.fma += 1
            elif op.split(".")[0] in FP_OPS and (".f32" in op or ".f64" in op):
                mix.fp += 1
            elif op.startswith("ld.shared"):
                mix.ld_shared += 1
            elif op.startswith("ld.global"):
                mix.ld_global += 1
            elif op.startswith("st.shared"):
                mix.st_shared += 1
            elif op.startswith("st.global"):
                mix.st_global += 1
            elif op.startswith("cp.async.ca") or op.startswith("cp.async.cg"):
                mix.cp_async += 1
        if (mix.fma + mix.fp, mix.ld_shared) > (best.fma + best.fp, best.ld_shared):
            best = mix
    return best


def _functions(ptx: str) -> dict[str, str]:
    """The body of every `.entry` of `ptx`, by name."""
    out: dict[str, str] = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\(", ptx):
        start = ptx.index("{", m.end())
        depth, i = 0, start
        while i < len(ptx):
            depth += {"{": 1, "}": -1}.get(ptx[i], 0)
            if depth == 0:
                break
            i += 1
        out[m.group(1)] = ptx[start : i + 1]
    return out


def _ptxas(ptx: str, arch: str, ptxas: str) -> dict[str, tuple[int, int, int]]:
    """(registers, shared bytes, spill store bytes) by function, from `ptxas -v`."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "k.ptx")
        src.write_text(ptx)
        run = subprocess.run(
            [ptxas, f"-arch={arch}", "-v", str(src), "-o", str(Path(tmp, "k.cubin"))],
            capture_output=True,
            text=True,
            check=False,
        )
    if run.returncode != 0:
        raise RuntimeError(f"ptxas failed: {run.stderr.strip()[:500]}")
    out: dict[str, tuple[int, int, int]] = {}
    current = ""
    spills = 0
    for line in run.stderr.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current, spills = m.group(1), 0
        elif m := re.search(r"(\d+) bytes spill stores", line):
            spills = int(m.group(1))
        elif (m := re.search(r"Used (\d+) registers", line)) and current:
            smem = re.search(r"(\d+) bytes smem", line)
            out[current] = (int(m.group(1)), int(smem.group(1)) if smem else 0, spills)
    return out


def _launches(gpu_text: str) -> dict[str, tuple[tuple[int | None, ...], ...]]:
    """(grid, block) of every `gpu.launch_func` of the `gpu` stage, by kernel."""
    from xdsl.parser import Parser

    from tcdialect.dialects import gpu
    from tcdialect.pipeline import make_context
    from tcdialect.transforms.ir_values import constant_index

    module = Parser(make_context(), gpu_text).parse_module()
    out: dict[str, tuple[tuple[int | None, ...], ...]] = {}
    for op in module.walk():
        if isinstance(op, gpu.LaunchFuncOp):
            name = op.kernel.nested_references.data[-1].data
            grid = tuple(
                constant_index(v) for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ)
            )
            block = tuple(
                constant_index(v) for v in (op.blockSizeX, op.blockSizeY, op.blockSizeZ)
            )
            out[name] = (grid, block)
    return out


def analyse(
    kernel: Kernel, arch: str, ptxas: str, options: dict[str, Any] | None = None
) -> list[KernelStatic]:
    """Every `gpu.func` of one benchmark kernel, under `CudaOptions(arch=arch,
    **options)`."""
    import tcdialect
    from tcdialect.backend.cuda.options import CudaOptions

    inputs = [np.empty(a.shape, a.dtype) for a in kernel.args(kernel.sizes)]
    opts = CudaOptions(arch=arch, **(options or {}))
    k = tcdialect.define(kernel.source, target="cuda", options=opts)
    texts = k.dump(*inputs, stages=["gpu", "ptx"])
    launches = _launches(texts["gpu"])
    used = _ptxas(texts["ptx"], arch, ptxas)
    bodies = _functions(texts["ptx"])
    out = []
    for name, (grid, block) in launches.items():
        regs, smem, spills = used.get(name, (0, 0, 0))
        out.append(
            KernelStatic(
                name, grid, block, regs, smem, spills, loop_mix(bodies.get(name, ""))
            )
        )
    return out


def _ratio(ratio: float | None) -> str:
    """Shared loads per `fma`, starred above what the FMA units allow."""
    if ratio is None:
        return "-"
    bound = ratio > LDS_PER_CYCLE / FMA_PER_CYCLE
    return f"{ratio:.2f}{' *' if bound else ''}"


def _dims(d: tuple[int | None, ...]) -> str:
    return "x".join("?" if v is None else str(v) for v in d)


def table(
    rows: list[tuple[str, KernelStatic]], limits: dict[str, int], sms: int
) -> str:
    """The Markdown table of `rows` (benchmark name, kernel)."""
    head = (
        "| kernel | gpu.func | grid | block | regs | smem B | spill B "
        "| blocks/SM | warps/SM | waves | hot loop: fma | other fp | ld.shared "
        "| ld.global | cp.async | ld.shared per fma |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for bench_name, s in rows:
        per_sm = s.blocks_per_sm(limits)
        threads = s.threads
        warps = (
            per_sm * -(-threads // limits["warp_size"])
            if per_sm is not None and threads
            else None
        )
        blocks = None if None in s.grid else int(np.prod([g or 1 for g in s.grid]))
        waves = (
            f"{blocks / (per_sm * sms):.2f}" if blocks is not None and per_sm else "?"
        )
        ratio = s.loop.lds_per_fma
        lines.append(
            f"| {bench_name} | {s.name} | {_dims(s.grid)} | {_dims(s.block)} "
            f"| {s.registers} | {s.shared} | {s.spills} "
            f"| {per_sm if per_sm is not None else '?'} "
            f"| {warps if warps is not None else '?'} | {waves} "
            f"| {s.loop.fma} | {s.loop.fp} | {s.loop.ld_shared} | {s.loop.ld_global} "
            f"| {s.loop.cp_async} | {_ratio(ratio)} |"
        )
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kernels", nargs="*", help="benchmark kernel names")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--out", type=Path, help="Markdown file to write")
    parser.add_argument(
        "--options",
        default="{}",
        help="CudaOptions fields as a JSON object ('{\"unroll\": 4}')",
    )
    args = parser.parse_args(argv)
    options = json.loads(args.options)
    from tcdialect.runtime.cuda.driver import ptxas_path

    ptxas = ptxas_path()
    if ptxas is None:
        print(
            "bench.cuda_static: ptxas is not on the PATH (CUDA toolkit)",
            file=sys.stderr,
        )
        return 2
    from bench.cuda.kernels import by_name
    from tcdialect.backend.cuda.target import GENERIC_GPU

    rows: list[tuple[str, KernelStatic]] = []
    for kernel in by_name(args.kernels or None):
        for s in analyse(kernel, args.arch, ptxas, options):
            rows.append((kernel.name, s))
    limits = {k: int(v) for k, v in GENERIC_GPU.limits.items()}
    text = table(rows, limits, GENERIC_GPU.cores)
    print(text)
    if args.out is not None:
        from bench.cuda.device import git_revision

        args.out.write_text(
            "# GPU kernels read off their code (`python -m bench.cuda_static`)\n\n"
            f"tcdialect commit {git_revision()}. "
            + (f"`CudaOptions` {args.options}" if options else "Default `CudaOptions`")
            + f", `{args.arch}`, occupancy on "
            f"{GENERIC_GPU.cores} SMs with sm_90's limits; see the module "
            "docstring for each column. Nothing here is measured.\n\n" + text
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
