"""Memory promotion (`affine-gpu-promote`) keeps kernels' results, in the GPU simulator.

Catalog kernels (test/unit/test_reference_catalog.py) are compiled for
`cuda-sim` with `use_shared_memory` and `use_private_memory` under options
that make promotion happen (each case checks that its kernels hold a shared
buffer), run, and compared with
`tcdialect.reference.run` as in test_cpu_catalog.py. The simulator raises
on what promotion could get wrong: a race on a shared buffer (a missing
barrier), an out-of-bounds copy, a buffer over the shared-memory limit.

Until the cuda backend's `gpu` stage runs the pass itself, `_define` puts
it right after `affine-gpu-map`; once it does, `_define` changes nothing.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from test_cpu_catalog import check_outputs
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.passes import ModulePass

import tcdialect
from tcdialect import reference
from tcdialect.backend.base import TargetInfo
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.backend.cuda.target import CudaSimBackend
from tcdialect.frontend import parse_tc
from tcdialect.kernel import Kernel
from tcdialect.runtime.cuda_sim import SimLauncher
from tcdialect.transforms.affine_gpu_map import AffineGpuMapPass
from tcdialect.transforms.affine_gpu_promote import AffineGpuPromotePass


class _Promoting(CudaSimBackend):
    """`cuda-sim` with `affine-gpu-promote` after `affine-gpu-map`."""

    def stage_passes(
        self, stage: str, options: CudaOptions, info: TargetInfo
    ) -> list[ModulePass]:
        passes = super().stage_passes(stage, options, info)
        if stage != "gpu" or any(isinstance(p, AffineGpuPromotePass) for p in passes):
            return passes
        at = next(i for i, p in enumerate(passes) if isinstance(p, AffineGpuMapPass))
        passes.insert(at + 1, AffineGpuPromotePass.from_options(options, info))
        return passes


def _define(source: str, entry: str, options: CudaOptions) -> Kernel:
    k = tcdialect.define(source, entry, target="cuda-sim", options=options)
    k.backend = _Promoting()
    return k


OPTIONS: dict[str, CudaOptions] = {
    "default": CudaOptions(),
    "naive": CudaOptions.naive(),
    # fused softmax (the mapper alone would not fuse it): rows read twice
    "naive_fused": CudaOptions.naive().with_(outer_fusion="preserve3coincident"),
    "generic": CudaOptions(tile=(32, 32, 32), specialize=False),
    "conv": CudaOptions.conv(),
    "mlp": CudaOptions.mlp(),
}

#: (kernel, options, index of the size in the catalog entry)
CASES = [
    ("matmul", "naive", 1),
    ("matmul", "generic", 1),
    ("matmul_backward", "conv", 0),
    ("tmm", "generic", 0),
    ("batch_matmul", "default", 1),
    ("tensordot", "conv", 0),
    ("mv", "generic", 0),
    ("conv_valid", "naive", 0),
    ("conv_strided", "naive", 0),
    ("group_conv", "default", 1),
    ("masked_conv", "default", 0),
    ("maxpool", "default", 1),
    ("avgpool", "naive", 1),
    ("pool3", "mlp", 0),
    ("group_norm_apply", "conv", 0),
    ("group_norm_fused", "mlp", 0),
    ("batchnorm", "generic", 0),
    ("kronecker3", "conv", 1),
    ("softmax", "naive_fused", 1),
    ("layernorm", "mlp", 0),
    ("moments", "conv", 1),
    ("mlp2", "conv", 1),
    ("fcrelu", "conv", 0),
    ("take_rows_clamped", "conv", 0),
]


#: Sizes the 32x32x32 tiles divide: A's and B's tiles are 32x32.
MATMUL = {"M": 64, "K": 64, "N": 64}


def _kernel(name: str) -> Any:
    return next(k for k in catalog.KERNELS if k.name == name)


def _promoted(k: Kernel, inputs: list[Any]) -> tuple[int, int]:
    """Shared buffers and loops carrying values, over the compiled kernels."""
    launcher = k.compile(*inputs).launcher
    assert isinstance(launcher, SimLauncher)
    shared = loops = 0
    for kernel in launcher.program.kernels.values():
        for op in kernel.walk():
            if isinstance(op, memref.AllocaOp):
                space = op.memref.type.memory_space
                shared += isinstance(space, IntegerAttr) and space.value.data == 3
            loops += isinstance(op, scf.ForOp) and bool(op.iter_args)
    return shared, loops


def _run(name: str, options: CudaOptions, sizes: dict[str, int]) -> tuple[int, int]:
    kernel = _kernel(name)
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    want = reference.run(parse_tc(kernel.source), kernel.entry, inputs)
    k = _define(kernel.source, kernel.entry, options)
    promoted = _promoted(k, inputs)
    check_outputs(k(*inputs), want, kernel.red(sizes))
    return promoted


@pytest.mark.parametrize(
    ("name", "preset", "size"), CASES, ids=[f"{n}-{p}" for n, p, _ in CASES]
)
def test_promoted_kernel_agrees_with_reference(
    name: str, preset: str, size: int
) -> None:
    options = OPTIONS[preset].with_(use_shared_memory=True, use_private_memory=True)
    shared, _ = _run(name, options, _kernel(name).sizes[size])
    assert shared > 0


def test_matmul_tiles_in_shared_memory_and_accumulator_in_a_register() -> None:
    options = CudaOptions.naive().with_(use_shared_memory=True, use_private_memory=True)
    # two loops carry C: the r_k loop inside a tile (register promotion) and
    # the tile loop over r_k around it (gpu-carry-registers)
    assert _run("matmul", options, MATMUL) == (2, 2)


@pytest.mark.parametrize(("budget", "buffers"), [(4224, 1), (4223, 0)])
def test_shared_memory_budget(budget: int, buffers: int) -> None:
    # one 32x33 float tile is 4224 bytes: the budget takes A's, then none
    options = CudaOptions.naive().with_(
        use_shared_memory=True, max_shared_memory=budget
    )
    assert _run("matmul", options, MATMUL) == (buffers, 0)


def test_memref_types_of_promoted_buffers() -> None:
    # (as promoted: test_cuda_double_buffer.py has them doubled)
    options = CudaOptions.naive().with_(use_shared_memory=True, double_buffer=False)
    kernel = _kernel("matmul")
    inputs = kernel.inputs(np.random.default_rng(0), MATMUL)
    k = _define(kernel.source, kernel.entry, options)
    launcher = k.compile(*inputs).launcher
    assert isinstance(launcher, SimLauncher)
    types = [
        op.memref.type
        for kernel_op in launcher.program.kernels.values()
        for op in kernel_op.walk()
        if isinstance(op, memref.AllocaOp)
    ]
    assert all(isinstance(t, MemRefType) for t in types)
    assert [tuple(t.get_shape()) for t in types] == [(32, 33), (32, 33)]
