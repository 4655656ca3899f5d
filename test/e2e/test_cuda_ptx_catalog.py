"""Every catalog kernel compiles for the `cuda` target to PTX that ptxas accepts.

Each kernel of test/unit/test_reference_catalog.py goes through
`define(source, target="cuda").ir(*inputs, stage="ptx")` at its first sizes
(specialised, the library's default), and every third one also as generic
code (`ir(stage="ptx")`: sizes and dynamic extents at run time). The PTX is
checked for what `backend.cuda.device` promises (a `.maxntid` per kernel,
nothing external, libdevice internalised) and assembled by `ptxas
-arch=sm_90` when it is on PATH (without it, only the PTX is checked).
Each case compiles on its own, so that test workers share the catalog.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath

import tcdialect
from tcdialect.diagnostics import TCError

PTXAS = shutil.which("ptxas")
ARCH = "sm_90"
MODES = {k.name: ("specialized",) for k in catalog.KERNELS} | {
    k.name: ("specialized", "generic") for k in catalog.KERNELS[::3]
}
CASES = [(k, mode) for k in catalog.KERNELS for mode in MODES[k.name]]
PARAMS = [pytest.param(k, mode, id=f"{k.name}-{mode}") for k, mode in CASES]


def _ptx(kernel: Any, mode: str) -> str:
    k = tcdialect.define(kernel.source, kernel.entry, target="cuda")
    if mode == "generic":
        return k.ir(stage="ptx")
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    return k.ir(*kernel.inputs(rng, kernel.sizes[0]), stage="ptx")


@pytest.mark.parametrize(("kernel", "mode"), PARAMS)
def test_catalog_kernel_compiles_to_clean_ptx(
    kernel: Any, mode: str, tmp_path: Path
) -> None:
    try:
        ptx = _ptx(kernel, mode)
    except TCError as err:
        pytest.fail(str(err))
    assert f".target {ARCH}" in ptx
    entries = re.findall(r"\.visible \.entry (\w+)\(", ptx)
    assert entries, "no kernel"
    assert ptx.count(".maxntid") == len(entries)
    # libdevice is linked and internalised: nothing else is visible or external
    assert ".extern" not in ptx
    assert ".visible .func" not in ptx
    if PTXAS is None:
        return  # the assembly is checked where ptxas is on PATH
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(
        [PTXAS, f"-arch={ARCH}", "-v", str(path), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "error" not in log.lower(), log
    for name in entries:
        assert f"Compiling entry function '{name}' for '{ARCH}'" in log
