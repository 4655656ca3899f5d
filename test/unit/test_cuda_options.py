"""CudaOptions: TC's mapping options, validated field by field, with presets."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tcdialect import TCError
from tcdialect.backend.cuda.options import PRESETS, CudaOptions
from tcdialect.backend.registry import get_backend


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("outer_fusion", "most", "CudaOptions.outer_fusion must be None or one of"),
        ("intra_tile_fusion", 3, "CudaOptions.intra_tile_fusion must be one of"),
        ("tile", (32, -1), "CudaOptions.tile must be integers >= 0"),
        ("tile", "32", "CudaOptions.tile must be a tuple of integers"),
        ("block", (), "CudaOptions.block must be 1 to 3 integers"),
        ("block", (32, 32, 2), "CudaOptions.block must be at most 1024 threads"),
        ("block", (1, 1, 65), "CudaOptions.block must be at most 64 along z"),
        ("block", (0,), "CudaOptions.block must be integers >= 1"),
        ("grid", (1, 70000), "CudaOptions.grid must be at most 65535 along y"),
        ("grid", (1, 1, 1, 1), "CudaOptions.grid must be 1 to 3 integers"),
        ("unroll", 0, "CudaOptions.unroll must be an integer >= 1"),
        ("unroll", True, "CudaOptions.unroll must be an integer >= 1"),
        (
            "use_shared_memory",
            1,
            "CudaOptions.use_shared_memory must be None, True or False",
        ),
        ("max_shared_memory", -1, "CudaOptions.max_shared_memory must be None or"),
        ("shared_depth", 1.5, "CudaOptions.shared_depth must be None or"),
        ("arch", "sm_100a", "CudaOptions.arch must be None or one of"),
        ("async_copy", None, "CudaOptions.async_copy must be True or False"),
        ("double_buffer", 1, "CudaOptions.double_buffer must be True or False"),
        (
            "min_blocks_per_sm",
            33,
            "CudaOptions.min_blocks_per_sm must be an integer from 0 to 32",
        ),
    ],
)
def test_bad_field_is_named(field: str, value: object, message: str) -> None:
    with pytest.raises(TCError, match=message.replace(".", r"\.")):
        CudaOptions(**{field: value})  # pyright: ignore[reportArgumentType]


def test_sizes_normalised_to_tuples() -> None:
    o = CudaOptions(tile=[16, 0], block=128, grid=[4, 4])  # pyright: ignore[reportArgumentType]
    assert (o.tile, o.block, o.grid) == ((16, 0), (128,), (4, 4))
    assert o == CudaOptions(tile=(16, 0), block=(128,), grid=(4, 4))
    assert hash(o) == hash(CudaOptions(tile=(16, 0), block=(128,), grid=(4, 4)))


def test_with_validates_again_and_names_unknown_fields() -> None:
    assert CudaOptions().with_(unroll=4).unroll == 4
    with pytest.raises(TCError, match="block"):
        CudaOptions().with_(block=(2048,))
    with pytest.raises(TCError, match="nonsense"):
        CudaOptions().with_(nonsense=1)


def test_presets_are_tcs() -> None:
    assert set(PRESETS) >= {"naive", "pointwise", "mlp", "conv", "group_conv"}
    naive = CudaOptions.preset("naive")
    assert (naive.tile, naive.block, naive.grid) == ((32, 32, 32), (32, 8), (256, 256))
    mlp = CudaOptions.mlp()
    assert (mlp.outer_fusion, mlp.tile, mlp.block, mlp.grid) == (
        "max",
        (1,),
        (128,),
        (128,),
    )
    assert CudaOptions.conv().tile == (4, 8, 8, 8)
    assert CudaOptions.group_conv().block == (4, 16, 4)
    assert CudaOptions.pointwise().unroll == 128
    with pytest.raises(TCError, match="unknown CudaOptions preset 'fast'"):
        CudaOptions.preset("fast")


def test_default_leaves_tiles_to_the_mapper() -> None:
    assert CudaOptions().tile is None
    assert get_backend("cuda").default_options() == CudaOptions()


def test_digest_is_the_same_in_another_process() -> None:
    code = (
        "from tcdialect.backend.cuda.options import CudaOptions;"
        "print(CudaOptions.conv().digest)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == CudaOptions.conv().digest
    assert other != CudaOptions.naive().digest


def test_options_of_the_wrong_class_name_the_target() -> None:
    from tcdialect import CpuOptions

    with pytest.raises(TCError, match="options for target 'cuda' must be a"):
        get_backend("cuda").check_options(CpuOptions())
