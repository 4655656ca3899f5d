"""Every catalog kernel compiles for the `cuda` target to PTX that ptxas accepts.

Each kernel of test/unit/test_reference_catalog.py goes through
`define(source, target="cuda").ir(*inputs, stage="ptx")` at its first sizes
(specialised, the library's default), and every third one also as generic
code (`ir(stage="ptx")`: sizes and dynamic extents at run time). The PTX is
checked for what `backend.cuda.device` promises (a `.maxntid` per kernel,
nothing external, libdevice internalised) and assembled by `ptxas
-arch=sm_90` when it is on PATH, all files in one subprocess.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from dataclasses import dataclass
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


@dataclass
class Compiled:
    ptx: str = ""
    error: str | None = None
    ptxas_rc: int | None = None
    ptxas_log: str = ""


def _ptx(kernel: Any, mode: str) -> str:
    k = tcdialect.define(kernel.source, kernel.entry, target="cuda")
    if mode == "generic":
        return k.ir(stage="ptx")
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    return k.ir(*kernel.inputs(rng, kernel.sizes[0]), stage="ptx")


# Assembles each file given, writing its log and exit status next to it.
_PTXAS_LOOP = (
    'ptxas="$1"; shift; for f in "$@"; do '
    f'"$ptxas" -arch={ARCH} -v "$f" -o "$f.cubin" > "$f.log" 2>&1; '
    'echo $? > "$f.rc"; done'
)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Compiled]:
    out: dict[str, Compiled] = {}
    for kernel, mode in CASES:
        name = f"{kernel.name}-{mode}"
        try:
            out[name] = Compiled(ptx=_ptx(kernel, mode))
        except TCError as err:
            out[name] = Compiled(error=str(err))
    if PTXAS is None:
        return out
    tmp = tmp_path_factory.mktemp("ptx")
    files: dict[str, Path] = {}
    for name, c in out.items():
        if c.error is None:
            files[name] = tmp / f"{name}.ptx"
            files[name].write_text(c.ptx)
    subprocess.run(
        ["sh", "-c", _PTXAS_LOOP, "ptxas-loop", PTXAS, *map(str, files.values())],
        check=True,
        timeout=300,
    )
    for name, path in files.items():
        out[name].ptxas_rc = int(Path(f"{path}.rc").read_text())
        out[name].ptxas_log = Path(f"{path}.log").read_text()
    return out


@pytest.mark.parametrize(("kernel", "mode"), PARAMS)
def test_catalog_kernel_compiles_to_ptx(
    compiled: dict[str, Compiled], kernel: Any, mode: str
) -> None:
    c = compiled[f"{kernel.name}-{mode}"]
    assert c.error is None, c.error
    assert f".target {ARCH}" in c.ptx
    entries = re.findall(r"\.visible \.entry (\w+)\(", c.ptx)
    assert entries, "no kernel"
    assert c.ptx.count(".maxntid") == len(entries)
    # libdevice is linked and internalised: nothing else is visible or external
    assert ".extern" not in c.ptx
    assert ".visible .func" not in c.ptx


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not on PATH")
@pytest.mark.parametrize(("kernel", "mode"), PARAMS)
def test_catalog_kernel_is_ptxas_clean(
    compiled: dict[str, Compiled], kernel: Any, mode: str
) -> None:
    c = compiled[f"{kernel.name}-{mode}"]
    assert c.error is None, c.error
    assert c.ptxas_rc == 0, c.ptxas_log
    assert "error" not in c.ptxas_log.lower(), c.ptxas_log
    for name in re.findall(r"\.visible \.entry (\w+)\(", c.ptx):
        assert f"Compiling entry function '{name}' for '{ARCH}'" in c.ptxas_log
