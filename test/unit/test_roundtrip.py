"""`tc-opt` on every catalog and language-example program: IR that round-trips.

For each TC program, `tc-opt prog.tc` must print IR that `tc-opt` reads back to
identical text, and the generic form (`--print-op-generic`) must also read
back to identical generic text and to the same custom text.
"""

import contextlib
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tcdialect.tc_opt_main import TcOptMain

HERE = Path(__file__).resolve().parent


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_rt_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _programs() -> dict[str, str]:
    catalog = _load("test_reference_catalog")
    parser_tests = _load("test_parser")
    programs = {f"catalog-{k.name}": k.source for k in catalog.KERNELS}
    # matmul_typo is a parser example that sema rejects on purpose.
    examples = parser_tests.EXAMPLES.items()
    programs |= {f"example-{n}": s for n, s in examples if n != "matmul_typo"}
    return programs


PROGRAMS = _programs()


def tc_opt(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        TcOptMain(args=list(args)).run()
    return out.getvalue()


def test_enough_programs() -> None:
    assert len(PROGRAMS) >= 60


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tc_opt_round_trips(name: str, tmp_path: Path) -> None:
    src = tmp_path / f"{name}.tc"
    src.write_text(PROGRAMS[name])
    custom = tc_opt(str(src))
    assert "tc.def @" in custom

    (tmp_path / "custom.mlir").write_text(custom)
    assert tc_opt(str(tmp_path / "custom.mlir")) == custom

    generic = tc_opt(str(src), "--print-op-generic")
    assert '"tc.def"()' in generic
    (tmp_path / "generic.mlir").write_text(generic)
    assert tc_opt(str(tmp_path / "generic.mlir"), "--print-op-generic") == generic
    assert tc_opt(str(tmp_path / "generic.mlir")) == custom
