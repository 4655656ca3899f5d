"""The one compilation pipeline: named stages, the passes between them, a runner.

The CPU pipeline is a list of steps; each step is a sequence of passes that
ends at a named stage (docs/pipeline.md)::

    tc ──tc-specialize──▶ tc ──convert-tc-to-affine──▶ affine
       ──collapse-dims, affine-isl-schedule──▶ scheduled
       ──contract-temporaries, register-tile, fuse-sibling-loops,
       convert-affine-to-scf, prefetch-next-slice, outline-parallel-loops,
       nontemporal-stores, expand-math-polynomials, dce──▶ loops
       ──convert-scf-to-cf, convert-to-llvm──▶ llvm

`tc-opt` and the library run the same steps: the named pipelines
`tc-to-affine`, `tc-to-scheduled`, `tc-to-loops` and `tc-to-llvm` are passes
wrapping
`run_passes`, and `Kernel.ir(stage=...)` / `Kernel.compile` call
`lower(module, stage, sizes)`. The textual stages after `llvm` (`llvm-ir`,
`asm`) come from the backend.

`run_passes` verifies the module after every pass. A pass that raises
`TCError` propagates it unchanged; any other failure, and IR that fails to
verify after a pass, becomes a `TCError` that names the pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.verifier import verify

if TYPE_CHECKING:
    from tcdialect.poly.schedule import ScheduleOptions

#: Every stage, in pipeline order. The first five are IR (printable, parsable
#: by `tc-opt`); `llvm-ir` and `asm` are text produced by the backend.
STAGES: tuple[str, ...] = (
    "tc",
    "affine",
    "scheduled",
    "loops",
    "llvm",
    "llvm-ir",
    "asm",
)
IR_STAGES: tuple[str, ...] = STAGES[:5]


def format_sizes(sizes: Mapping[str, int]) -> str:
    """`{"M": 64, "N": 32}` as the `tc-specialize` option text ``M=64,N=32``."""
    return ",".join(f"{k}={v}" for k, v in sizes.items())


def stage_passes(
    stage: str,
    sizes: str = "",
    schedule: ScheduleOptions | bool | None = None,
    register_tile: bool = True,
) -> list[ModulePass]:
    """The passes that take a module from the stage before `stage` to `stage`.

    For ``tc`` that is `tc-specialize` when `sizes` is given, else nothing.
    For ``scheduled`` it is `collapse-dims` (unless `schedule` gives tile
    sizes, which name the members of the definition's own bands) and
    `affine-isl-schedule` with `schedule`'s options (the defaults when None or True;
    `False` skips both: the loops keep the order `convert-tc-to-affine` gave
    them). ``loops`` starts with
    `contract-temporaries`, `register-tile` (vector width from the host;
    left out when `register_tile` is False) and `fuse-sibling-loops`;
    `prefetch-next-slice` runs before `outline-parallel-loops`, while the
    parallel loops are still `scf.parallel`; after
    `outline-parallel-loops`, `nontemporal-stores` streams large outputs out
    (vector width from the host), and `expand-math-polynomials`
    scales by 2^n with `llvm.ldexp` where the host has it as an instruction.
    """
    if stage == "tc":
        if not sizes:
            return []
        from tcdialect.transforms.tc_specialize import TcSpecializePass

        return [TcSpecializePass(sizes=sizes)]
    if stage == "affine":
        from tcdialect.transforms.convert_tc_to_affine import ConvertTcToAffinePass

        return [ConvertTcToAffinePass()]
    if stage == "scheduled":
        from tcdialect.transforms.affine_isl_schedule import AffineIslSchedulePass
        from tcdialect.transforms.collapse_dims import CollapseDimsPass

        if schedule is False:
            return []
        if schedule is None or schedule is True:
            return [CollapseDimsPass(), AffineIslSchedulePass()]
        # explicit tile sizes name the members of the definition's own bands
        collapse: list[ModulePass] = (
            [CollapseDimsPass()] if schedule.tile is None else []
        )
        return [*collapse, AffineIslSchedulePass.from_options(schedule)]
    if stage == "loops":
        from xdsl.transforms.dead_code_elimination import DeadCodeElimination

        from tcdialect.backend.cpu import host_native_ldexp
        from tcdialect.transforms.contract_temporaries import (
            ContractTemporariesPass,
        )
        from tcdialect.transforms.convert_affine_to_scf import ConvertAffineToScfPass
        from tcdialect.transforms.expand_math_polynomials import (
            ExpandMathPolynomialsPass,
        )
        from tcdialect.transforms.fuse_sibling_loops import FuseSiblingLoopsPass
        from tcdialect.transforms.nontemporal_stores import NontemporalStoresPass
        from tcdialect.transforms.outline_parallel_loops import (
            OutlineParallelLoopsPass,
        )
        from tcdialect.transforms.prefetch_next_slice import PrefetchNextSlicePass
        from tcdialect.transforms.register_tile import RegisterTilePass

        return [
            ContractTemporariesPass(),
            *([RegisterTilePass()] if register_tile else []),
            FuseSiblingLoopsPass(),
            ConvertAffineToScfPass(),
            PrefetchNextSlicePass(),
            OutlineParallelLoopsPass(),
            NontemporalStoresPass(),
            ExpandMathPolynomialsPass(native_ldexp=host_native_ldexp()),
            DeadCodeElimination(),
        ]
    if stage == "llvm":
        from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

        from tcdialect.transforms.convert_to_llvm import ConvertToLlvmPass

        # convert-to-llvm consumes unrealized casts itself and makes none, so
        # xDSL's reconcile-unrealized-casts would have nothing left to do.
        return [ConvertScfToCf(), ConvertToLlvmPass()]
    raise TCError(f"unknown IR stage '{stage}'; the stages are {', '.join(IR_STAGES)}")


def passes_to(
    stage: str,
    sizes: str = "",
    schedule: ScheduleOptions | bool | None = None,
    register_tile: bool = True,
) -> list[ModulePass]:
    """Every pass from the frontend's `tc` module up to and including `stage`."""
    if stage not in IR_STAGES:
        raise TCError(
            f"unknown IR stage '{stage}'; the stages are {', '.join(IR_STAGES)}"
        )
    passes: list[ModulePass] = []
    for s in IR_STAGES[: IR_STAGES.index(stage) + 1]:
        passes += stage_passes(s, sizes, schedule, register_tile)
    return passes


def make_context() -> Context:
    """A context with every dialect the pipeline can produce, loaded lazily."""
    from xdsl.dialects import get_all_dialects as xdsl_dialects

    from tcdialect.dialects import get_all_dialects

    ctx = Context()
    ours = get_all_dialects()  # ours replace xDSL's of the same name (affine)
    for name, factory in {**xdsl_dialects(), **ours}.items():
        ctx.register_dialect(name, factory)
    return ctx


def run_passes(ctx: Context, module: ModuleOp, passes: Iterable[ModulePass]) -> None:
    """Apply `passes` in order, verifying after each; failures name the pass."""
    for p in passes:
        try:
            p.apply(ctx, module)
        except TCError:
            raise
        except Exception as err:
            raise TCError(
                f"internal error in pass '{p.name}': {type(err).__name__}: {err}"
            ) from err
        try:
            verify(module)
        except Exception as err:
            raise TCError(
                f"internal error: the IR after pass '{p.name}' does not verify: {err}"
            ) from err


def lower(
    module: ModuleOp,
    stage: str,
    sizes: Mapping[str, int] | None = None,
    ctx: Context | None = None,
    schedule: ScheduleOptions | bool | None = None,
    register_tile: bool = True,
) -> ModuleOp:
    """A copy of the `tc` module `module` lowered to the IR stage `stage`.

    `sizes` binds size parameters (specialisation); without it the code is
    generic in every size. `schedule` sets the scheduler's options;
    `register_tile` False leaves out `register-tile`.
    """
    out = module.clone()
    passes = passes_to(stage, format_sizes(sizes or {}), schedule, register_tile)
    run_passes(ctx or make_context(), out, passes)
    return out


@dataclass(frozen=True)
class _NamedPipeline(ModulePass):
    """Runs the CPU pipeline from the `tc` stage to `stage`."""

    stage: ClassVar[str]
    sizes: str = ""
    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    register_tile: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tcdialect.poly.schedule import ScheduleOptions

        tile = None if self.tile is None else tuple(self.tile)
        schedule = ScheduleOptions(self.fusion, tile)
        passes = passes_to(self.stage, self.sizes, schedule, self.register_tile)
        run_passes(ctx, op, passes)


@dataclass(frozen=True)
class TcToAffinePipeline(_NamedPipeline):
    """`tc-to-affine{sizes="M=64"}`: a `.tc` module to the `affine` stage."""

    name = "tc-to-affine"
    stage = "affine"


@dataclass(frozen=True)
class TcToScheduledPipeline(_NamedPipeline):
    """`tc-to-scheduled{sizes="M=64" fusion=min tile=32,32}`: to `scheduled`."""

    name = "tc-to-scheduled"
    stage = "scheduled"


@dataclass(frozen=True)
class TcToLoopsPipeline(_NamedPipeline):
    """`tc-to-loops{sizes="M=64"}`: a `.tc` module to the `loops` stage."""

    name = "tc-to-loops"
    stage = "loops"


@dataclass(frozen=True)
class TcToLlvmPipeline(_NamedPipeline):
    """`tc-to-llvm{sizes="M=64"}`: a `.tc` module to the `llvm` stage."""

    name = "tc-to-llvm"
    stage = "llvm"
