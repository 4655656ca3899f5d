"""Real MLIR 22 accepts what we print: the oracle for the affine, scf and llvm stages.

For every catalog kernel (specialised, and every other one also generic), the
generic-form output of `convert-tc-to-affine` and of `convert-affine-to-scf`
must pass `mlir-opt`'s parser and verifier, and the `llvm` stage must
translate with `mlir-translate --mlir-to-llvmir`. Skipped when mlir-22-tools is not installed
(`apt-get install mlir-22-tools`).
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from tcdialect.frontend import parse_tc
from tcdialect.pipeline import format_sizes, make_context, run_passes, stage_passes

LLVM_BIN = Path("/usr/lib/llvm-22/bin")


def _tool(name: str) -> str | None:
    path = LLVM_BIN / name
    return str(path) if path.exists() else shutil.which(f"{name}-22")


MLIR_OPT, MLIR_TRANSLATE = _tool("mlir-opt"), _tool("mlir-translate")
pytestmark = pytest.mark.skipif(
    MLIR_OPT is None or MLIR_TRANSLATE is None, reason="mlir-22-tools not installed"
)


def generic(module: ModuleOp) -> str:
    buf = io.StringIO()
    Printer(stream=buf, print_generic_format=True).print_op(module)
    return buf.getvalue()


def accepts(tool: str | None, args: list[str], text: str) -> None:
    assert tool is not None
    proc = subprocess.run(
        [tool, *args], input=text, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{Path(tool).name} rejected the IR:\n{proc.stderr}"


def _params() -> list[Any]:
    """Each kernel specialised, and every other one also generic (generic
    code differs from kernel to kernel less than specialised code does)."""
    out = []
    for i, k in enumerate(catalog.KERNELS):
        for mode in ("specialized", "generic")[: 1 + i % 2]:
            out.append(pytest.param(k, mode, id=f"{k.name}-{mode}"))
    return out


@pytest.mark.parametrize(("kernel", "mode"), _params())
def test_mlir_accepts_each_stage(kernel: Any, mode: str) -> None:
    from tcdialect.conversion.convert_affine_to_scf import ConvertAffineToScfPass

    ctx = make_context()
    module = parse_tc(kernel.source)
    sizes = format_sizes(kernel.sizes[0]) if mode == "specialized" else ""
    run_passes(ctx, module, [*stage_passes("tc", sizes), *stage_passes("affine")])
    accepts(MLIR_OPT, ["--verify-each"], generic(module))
    run_passes(ctx, module, [ConvertAffineToScfPass()])
    accepts(MLIR_OPT, ["--verify-each"], generic(module))
    run_passes(ctx, module, stage_passes("loops")[1:])
    run_passes(ctx, module, stage_passes("llvm"))
    accepts(MLIR_TRANSLATE, ["--mlir-to-llvmir"], generic(module))
