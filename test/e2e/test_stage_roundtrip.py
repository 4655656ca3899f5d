"""Every IR stage of every catalog kernel reads back to the text it printed.

`Kernel.ir(stage=...)` is what users and `tc-opt` pipelines exchange between
stages; reading it again must give the same module, in custom and in generic
form, and the next stage's passes run on the text read back must give the
next stage as the pipeline run in one go prints it (nothing the passes rely
on is lost in printing; by induction, resuming from any stage gives the same
`llvm` stage). Each catalog kernel runs at its first test sizes, and
the max reductions also at sizes wide enough for vector accumulators; those
of softmax and log_softmax start from the -inf splat `dense<0xff800000>`,
which xDSL 0.74's own parser reads back as 4.29e9 (so the text is read with
`tcdialect.dialects.dense_hex.DenseHexParser`, as `tc-opt` reads it).
"""

from __future__ import annotations

import functools
import io
import itertools
import zlib

import numpy as np
import pytest
from test_reference_catalog import KERNELS, Kernel, Sizes
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

import tcdialect
from tcdialect.dialects.dense_hex import DenseHexParser
from tcdialect.pipeline import Lowering, make_context, run_passes

IR_STAGES = Lowering.of("cpu").ir_stages

BY_NAME = {k.name: k for k in KERNELS}

#: (kernel, sizes) wide enough for vector accumulators in the max reductions.
WIDE: list[tuple[str, Sizes]] = [
    ("softmax", {"N": 4, "D": 64}),
    ("log_softmax", {"N": 4, "D": 64}),
    ("maxpool", {"B": 1, "C": 2, "H": 4, "W": 64}),
]

CASES = [(k.name, k.sizes[0]) for k in KERNELS if k.sweeps] + WIDE


def _read(text: str) -> ModuleOp:
    module = DenseHexParser(make_context(), text).parse_module()
    module.verify()
    return module


def _print(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def _kernel(kernel: Kernel, sizes: Sizes) -> tuple[tcdialect.Kernel, list[np.ndarray]]:
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    return tcdialect.define(kernel.source, entry=kernel.entry), kernel.inputs(
        rng, sizes
    )


@functools.cache
def _stages_of(name: str, sizes: tuple[tuple[str, int], ...]) -> dict[str, str]:
    k, inputs = _kernel(BY_NAME[name], dict(sizes))
    return k.dump(*inputs, stages=IR_STAGES)


def _stages(kernel: Kernel, sizes: Sizes) -> dict[str, str]:
    """The text of every IR stage (computed once per kernel and sizes)."""
    return _stages_of(kernel.name, tuple(sizes.items()))


@pytest.mark.parametrize(
    ("name", "sizes"),
    CASES,
    ids=[f"{n}-{'-'.join(map(str, s.values()))}" for n, s in CASES],
)
def test_every_stage_round_trips(name: str, sizes: Sizes) -> None:
    for stage, text in _stages(BY_NAME[name], sizes).items():
        module = _read(text)
        assert _print(module, generic=False).strip() == text.strip(), stage
        generic = _print(module, generic=True)
        module = _read(generic)
        assert _print(module, generic=True) == generic, stage
        assert _print(module, generic=False).strip() == text.strip(), stage


def test_the_wide_cases_hold_special_float_splats() -> None:
    # Keeps the regression exercised if vectorisation changes.
    name, sizes = WIDE[0]
    assert "dense<0xff800000>" in _stages(BY_NAME[name], sizes)["loops"]


@pytest.mark.parametrize(
    ("name", "sizes"),
    CASES,
    ids=[f"{n}-{'-'.join(map(str, s.values()))}" for n, s in CASES],
)
def test_resuming_from_any_stage_gives_the_next(name: str, sizes: Sizes) -> None:
    k, _ = _kernel(BY_NAME[name], sizes)
    texts = _stages(BY_NAME[name], sizes)
    for stage, later in itertools.pairwise(IR_STAGES):
        ctx = make_context()
        module = DenseHexParser(ctx, texts[stage]).parse_module()
        run_passes(ctx, module, k.lowering.stage_passes(later))
        assert str(module).strip() == texts[later].strip(), stage
