"""Targets as objects: the registry, `TargetInfo`, third-party targets, and
passes that do not ask the machine they run on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tcdialect
from tcdialect import TCError
from tcdialect.backend.base import Backend, TargetInfo
from tcdialect.backend.cpu.target import GENERIC_CPU, CpuBackend
from tcdialect.backend.registry import get_backend, register_backend, target_names
from tcdialect.pipeline import Lowering

MATMUL = (
    "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, r_k) * B(r_k, n) }"
)


def test_cpu_is_registered_once() -> None:
    assert "cpu" in target_names()
    backend = get_backend("cpu")
    assert isinstance(backend, CpuBackend) and get_backend("cpu") is backend
    assert backend.stages == ("loops", "llvm", "llvm-ir", "asm")
    assert tcdialect.targets() == target_names()


def test_unknown_target_lists_the_targets() -> None:
    with pytest.raises(TCError, match=r"unknown target 'tpu'; the targets are: .*cpu"):
        tcdialect.define(MATMUL, target="tpu")


def test_options_of_another_class_name_the_target() -> None:
    with pytest.raises(
        TCError, match=r"options for target 'cpu' must be a tcdialect\.CpuOptions"
    ):
        tcdialect.define(MATMUL, options=object())


def test_target_info_is_a_validated_value() -> None:
    info = TargetInfo(vector_bits=512, cache_bytes=(32768, 1 << 20))
    assert info.vector_width(32) == 16 and info.vector_width(64) == 8
    assert info.vector_width(1024) == 1
    assert hash(info) == hash(TargetInfo(vector_bits=512, cache_bytes=(32768, 1 << 20)))
    assert info.with_(vector_bits=128).vector_width(32) == 4
    for bad in (0, 96, 7):
        with pytest.raises(TCError, match="vector_bits"):
            TargetInfo(vector_bits=bad)
    with pytest.raises(TCError, match="cores"):
        TargetInfo(cores=0)


def test_the_host_is_read_by_the_backend_only() -> None:
    info = get_backend("cpu").info()
    assert info.cores >= 1 and info.vector_bits >= 128 and info.name
    assert get_backend("cpu").generic_info() is GENERIC_CPU


def test_the_library_gives_the_passes_the_host_width() -> None:
    k = tcdialect.define(MATMUL)
    lanes = k.lowering.info.vector_width(32)
    (tile,) = [p for p in k.lowering.stage_passes("loops") if p.name == "register-tile"]
    assert getattr(tile, "vector_width") == lanes
    wide = Lowering.of("cpu", info=GENERIC_CPU.with_(vector_bits=512))
    (tile,) = [p for p in wide.stage_passes("loops") if p.name == "register-tile"]
    assert getattr(tile, "vector_width") == 16


def test_an_explicit_target_info_changes_the_code_not_the_results() -> None:
    A = np.random.default_rng(0).standard_normal((64, 48), dtype=np.float32)
    B = np.random.default_rng(1).standard_normal((48, 40), dtype=np.float32)
    want = tcdialect.define(MATMUL)(A, B)
    narrow = tcdialect.define(MATMUL)
    narrow.lowering = Lowering(
        narrow.backend, narrow.options, GENERIC_CPU.with_(vector_bits=128)
    )
    assert "vector<4xf32>" in narrow.ir(A, B, stage="loops")
    # compiled for its own TargetInfo, not found in the cache under the host's
    assert narrow.compile(A, B) is not tcdialect.define(MATMUL).compile(A, B)
    np.testing.assert_allclose(narrow(A, B), want, rtol=1e-5, atol=1e-5)


def test_a_backend_registered_at_run_time() -> None:
    class Twin(CpuBackend):
        name = "cpu-twin"

    register_backend("cpu-twin", Twin)
    assert "cpu-twin" in tcdialect.targets()
    k = tcdialect.define(MATMUL, target="cpu-twin")
    assert isinstance(k.backend, Twin)
    A = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(k(A, A.T.copy()), np.full((3, 3), 2, np.float32))
    register_backend("cpu", Twin)  # the built-in one is not replaced
    assert type(get_backend("cpu")) is CpuBackend


def test_a_backend_that_misnames_itself_is_refused() -> None:
    register_backend("cpu-misnamed", CpuBackend)
    with pytest.raises(TCError, match="calls itself 'cpu'"):
        get_backend("cpu-misnamed")


def _run(code: str, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if env_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(env_path), env.get("PYTHONPATH", "")) if p
        )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_a_third_party_target_through_an_entry_point(tmp_path: Path) -> None:
    (tmp_path / "toy_target.py").write_text(
        textwrap.dedent(
            """
            from tcdialect.backend.cpu.target import CpuBackend

            class ToyBackend(CpuBackend):
                name = "toy"
            """
        )
    )
    dist = tmp_path / "toy_target-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-target\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[tcdialect.targets]\ntoy = toy_target:ToyBackend\n"
    )
    result = _run(
        f"""
        import numpy as np, tcdialect
        assert "toy" in tcdialect.targets(), tcdialect.targets()
        k = tcdialect.define({MATMUL!r}, target="toy")
        A = np.ones((2, 3), np.float32)
        print(type(k.backend).__name__, k(A, A.T.copy()).tolist())
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ToyBackend [[3.0, 3.0], [3.0, 3.0]]"


def test_no_pass_or_pipeline_asks_the_host(tmp_path: Path) -> None:
    """tc-opt's pipelines run with the host query made to fail: none calls it."""
    source = tmp_path / "mm.tc"
    source.write_text(MATMUL)
    pipeline = 'tc-to-llvm{sizes="M=64,K=48,N=40"}'
    result = _run(
        f"""
        import tcdialect.backend.cpu.host as host
        import tcdialect.backend.cpu.jit as jit
        def refuse(*args, **kwargs):
            raise AssertionError("a pass asked the host")
        host.host_info = jit.host = jit._host = refuse
        from tcdialect.tc_opt_main import TcOptMain
        TcOptMain(args=[{str(source)!r}, "-p", {pipeline!r}]).run()
        """
    )
    assert result.returncode == 0, result.stderr
    assert "llvm.func @mm" in result.stdout


def test_every_backend_method_is_abstract_or_defaulted() -> None:
    assert Backend.__abstractmethods__ == frozenset(
        {"info", "generic_info", "schedule_options", "stage_passes", "compile"}
    )
