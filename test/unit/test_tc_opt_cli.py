"""Command-line behaviour of `tc-opt` that needs neither the frontend nor tc ops.

The process-level checks run `python -m tcdialect.tools.tc_opt` in a
subprocess, as a user would; the ones that need a custom pass or a stand-in
frontend run `TcOptMain` in-process.
"""

import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.diagnostics import Diagnostic, TCError
from tcdialect.dialects import get_all_dialects
from tcdialect.tc_opt_main import TcOptMain
from tcdialect.transforms import get_all_passes

REPO_ROOT = Path(__file__).resolve().parents[2]

ADD_MLIR = """\
func.func @add(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}
"""


def tc_opt(*args: str, stdin: str = "", env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "tcdialect.tools.tc_opt", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )


def test_help_exits_zero():
    result = tc_opt("--help")
    assert result.returncode == 0
    assert "usage: tc-opt" in result.stdout
    assert "{mlir,tc}" in result.stdout


def test_mlir_from_stdin_round_trips():
    result = tc_opt(stdin=ADD_MLIR)
    assert result.returncode == 0, result.stderr
    assert "func.func @add(%a: i32, %b: i32) -> i32 {" in result.stdout
    reparsed = tc_opt("--print-op-generic", stdin=result.stdout)
    assert reparsed.returncode == 0, reparsed.stderr
    assert '"func.func"()' in reparsed.stdout


def test_split_input_file_keeps_chunks_apart():
    result = tc_opt("--split-input-file", stdin=ADD_MLIR + "// -----\n" + ADD_MLIR)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("builtin.module") == 2
    assert "// -----" in result.stdout


def test_malformed_mlir_exits_one_without_traceback():
    result = tc_opt(stdin="func.func @f( {\n")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "stdin:1:15" in result.stderr
    assert "Expected argument or type" in result.stderr


def test_parse_error_line_counts_across_split_chunks():
    result = tc_opt(
        "--split-input-file", stdin=ADD_MLIR + "// -----\nfunc.func @f( {\n"
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "stdin:6:15" in result.stderr


INVALID_MLIR = """\
func.func @f() -> i32 {
  func.return
}
"""


def test_verifier_error_exits_one_without_traceback():
    result = tc_opt(stdin=INVALID_MLIR)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "Expected arguments to have the same types" in result.stderr


def test_verify_diagnostics_prints_and_exits_zero():
    result = tc_opt("--verify-diagnostics", stdin=INVALID_MLIR)
    assert result.returncode == 0
    assert "Expected arguments to have the same types" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "no-such-pass"], "tc-opt: error: Unrecognized passes"),
        (["-p", "canonicalize{"], "tc-opt: error: Error parsing pass pipeline"),
        (["does-not-exist.mlir"], "tc-opt: error: [Errno 2]"),
        (["pyproject.toml"], "tc-opt: error: Unrecognized file extension 'toml'"),
    ],
)
def test_command_line_errors_exit_one_without_traceback(args: list[str], message: str):
    result = tc_opt(*args, stdin=ADD_MLIR)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert message in result.stderr


def test_registries_are_lazy_name_maps():
    dialects = get_all_dialects()
    assert "tc" in dialects
    assert all(callable(factory) for factory in dialects.values())
    assert all(callable(factory) for factory in get_all_passes().values())


# In-process checks: a pass that fails, and a stand-in for the TC frontend.


class FailingPass(ModulePass):
    name = "test-fail"
    error: Exception = RuntimeError("boom")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise self.error


class RaisingTcOptMain(TcOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass(FailingPass.name, lambda: FailingPass)


@pytest.fixture
def add_file(tmp_path: Path) -> Path:
    path = tmp_path / "add.mlir"
    path.write_text(ADD_MLIR)
    return path


def run_in_process(main: TcOptMain) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main.run()
    return exit_info.value.code  # type: ignore[return-value]


def test_unexpected_exception_is_an_internal_error(
    add_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("TCDIALECT_DEBUG", raising=False)
    monkeypatch.setattr(FailingPass, "error", RuntimeError("boom"))
    main = RaisingTcOptMain(args=[str(add_file), "-p", "test-fail"])
    assert run_in_process(main) == 1
    err = capsys.readouterr().err
    assert err == "tc-opt: internal error: RuntimeError: boom\n"


def test_debug_env_var_shows_the_traceback(
    add_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TCDIALECT_DEBUG", "1")
    monkeypatch.setattr(FailingPass, "error", RuntimeError("boom"))
    main = RaisingTcOptMain(args=[str(add_file), "-p", "test-fail"])
    assert run_in_process(main) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.endswith("tc-opt: internal error: RuntimeError: boom\n")


def test_tc_error_from_a_pass_prints_its_text(
    add_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("TCDIALECT_DEBUG", raising=False)
    monkeypatch.setattr(FailingPass, "error", TCError("pass went wrong"))
    main = RaisingTcOptMain(args=[str(add_file), "-p", "test-fail"])
    assert run_in_process(main) == 1
    assert capsys.readouterr().err == "error: pass went wrong\n"


def test_tc_error_from_a_pass_under_verify_diagnostics(
    add_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(FailingPass, "error", TCError("pass went wrong"))
    args = [str(add_file), "-p", "test-fail", "--verify-diagnostics"]
    RaisingTcOptMain(args=args).run()
    assert "error: pass went wrong" in capsys.readouterr().out


@pytest.fixture
def fake_frontend(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Replace `tcdialect.frontend` by a stand-in that records its calls."""
    calls: list[tuple[str, str]] = []

    def parse_tc(
        source: str,
        filename: str = "<string>",
        on_warning: Callable[[Diagnostic], None] | None = None,
    ) -> ModuleOp:
        calls.append((source, filename))
        if "bad" in source:
            raise TCError(f"bad input in {filename}")
        if "unused" in source and on_warning is not None:
            on_warning(Diagnostic("warning", f"unused temporary in {filename}"))
        return ModuleOp([])

    module = types.ModuleType("tcdialect.frontend")
    module.parse_tc = parse_tc  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tcdialect.frontend", module)
    return calls


def test_tc_files_reach_the_frontend_with_their_name(
    tmp_path: Path,
    fake_frontend: list[tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
):
    path = tmp_path / "k.tc"
    path.write_text("def f() -> () {}\n// -----\ndef g() -> () {}\n")
    TcOptMain(args=[str(path), "--split-input-file"]).run()
    assert fake_frontend == [
        ("def f() -> () {}\n", str(path)),
        ("\n\ndef g() -> () {}\n", str(path)),
    ]
    assert capsys.readouterr().out.count("builtin.module") == 2


def test_tc_errors_exit_one_or_print_under_verify_diagnostics(
    tmp_path: Path,
    fake_frontend: list[tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("TCDIALECT_DEBUG", raising=False)
    path = tmp_path / "k.tc"
    path.write_text("bad\n")
    assert run_in_process(TcOptMain(args=[str(path)])) == 1
    assert capsys.readouterr().err == f"error: bad input in {path}\n"

    TcOptMain(args=[str(path), "--verify-diagnostics"]).run()
    assert f"error: bad input in {path}" in capsys.readouterr().out


def test_tc_warnings_go_to_stderr(
    tmp_path: Path,
    fake_frontend: list[tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
):
    path = tmp_path / "k.tc"
    path.write_text("unused\n")
    TcOptMain(args=[str(path)]).run()
    out, err = capsys.readouterr()
    assert err == f"warning: unused temporary in {path}\n"
    assert "builtin.module" in out
