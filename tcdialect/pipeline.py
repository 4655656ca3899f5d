"""The compilation pipeline: named stages, the passes between them, a runner.

Every target shares the first three stages; the target's `Backend` adds the
rest (docs/pipeline.md)::

    tc ──tc-specialize──▶ tc ──convert-tc-to-affine──▶ affine
       ──collapse-dims, affine-isl-schedule──▶ scheduled
       ──(the target's passes)──▶ its stages: for `cpu`, loops, llvm, then
                                  the text stages llvm-ir and asm

A `Lowering` is what the stages after `affine` depend on: the target's
backend, its options and a `TargetInfo`, all explicit. The library makes one
from the machine (`Backend.info()`); `tc-opt`'s named pipelines make one from
their own options, whose defaults describe a fixed machine, so the same
command prints the same IR everywhere.

`tc-opt` and the library run the same steps: the named pipelines
`tc-to-affine`, `tc-to-scheduled`, `tc-to-loops` and `tc-to-llvm` are passes
wrapping `run_passes`, and `Kernel.ir(stage=...)` / `Kernel.compile` call
`lower(module, stage, sizes, lowering=...)`.

`run_passes` verifies the module after every pass. A pass that raises
`TCError` propagates it unchanged; any other failure, and IR that fails to
verify after a pass, becomes a `TCError` that names the pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.backend.base import Backend, TargetInfo
from tcdialect.backend.registry import get_backend
from tcdialect.diagnostics import TCError
from tcdialect.verifier import verify

if TYPE_CHECKING:
    from tcdialect.poly.schedule import ScheduleOptions

#: The stages every target shares, in pipeline order.
COMMON_STAGES: tuple[str, ...] = ("tc", "affine", "scheduled")


def format_sizes(sizes: Mapping[str, int]) -> str:
    """`{"M": 64, "N": 32}` as the `tc-specialize` option text ``M=64,N=32``."""
    return ",".join(f"{k}={v}" for k, v in sizes.items())


@dataclass(frozen=True)
class Lowering:
    """What the stages after `affine` depend on, explicitly.

    backend: the target; options: its options (`backend.options_class`);
    info: the machine the code is for. `Lowering.of("cpu")` describes the
    target's fixed generic machine (`Backend.generic_info`), not this one.
    """

    backend: Backend
    options: Any
    info: TargetInfo

    @staticmethod
    def of(
        target: str = "cpu", options: Any = None, info: TargetInfo | None = None
    ) -> Lowering:
        backend = get_backend(target)
        return Lowering(
            backend,
            backend.check_options(options),
            backend.generic_info() if info is None else info,
        )

    @property
    def ir_stages(self) -> tuple[str, ...]:
        """Every IR stage of this target, in order."""
        return (*COMMON_STAGES, *self.backend.ir_stages)

    @property
    def stages(self) -> tuple[str, ...]:
        """Every stage of this target: IR stages, then text ones."""
        return (*self.ir_stages, *self.backend.text_stages)

    @property
    def schedule(self) -> ScheduleOptions | bool:
        return self.backend.schedule_options(self.options, self.info)

    def stage_passes(self, stage: str, sizes: str = "") -> list[ModulePass]:
        """The passes that take a module from the stage before `stage` to it."""
        if stage in COMMON_STAGES:
            return common_stage_passes(stage, sizes, self.schedule)
        if stage in self.backend.ir_stages:
            return self.backend.stage_passes(stage, self.options, self.info)
        raise TCError(
            f"unknown IR stage '{stage}'; the stages are {', '.join(self.ir_stages)}"
        )

    def passes_to(self, stage: str, sizes: str = "") -> list[ModulePass]:
        """Every pass from the frontend's `tc` module up to and including `stage`."""
        stages = self.ir_stages
        if stage not in stages:
            raise TCError(
                f"unknown IR stage '{stage}'; the stages are {', '.join(stages)}"
            )
        passes: list[ModulePass] = []
        for s in stages[: stages.index(stage) + 1]:
            passes += self.stage_passes(s, sizes)
        return passes


def common_stage_passes(
    stage: str, sizes: str = "", schedule: ScheduleOptions | bool | None = None
) -> list[ModulePass]:
    """The passes of the stages every target shares.

    For ``tc`` that is `tc-specialize` when `sizes` is given, else nothing.
    For ``scheduled`` it is `collapse-dims` (unless `schedule` gives tile
    sizes, which name the members of the definition's own bands) and
    `affine-isl-schedule` with `schedule`'s options (the defaults when None
    or True; `False` skips both: the loops keep the order
    `convert-tc-to-affine` gave them).
    """
    if stage == "tc":
        if not sizes:
            return []
        from tcdialect.transforms.tc_specialize import TcSpecializePass

        return [TcSpecializePass(sizes=sizes)]
    if stage == "affine":
        from tcdialect.conversion.convert_tc_to_affine import ConvertTcToAffinePass

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
    raise TCError(
        f"unknown common stage '{stage}'; they are {', '.join(COMMON_STAGES)}"
    )


def stage_passes(
    stage: str, sizes: str = "", lowering: Lowering | None = None
) -> list[ModulePass]:
    """`lowering.stage_passes(stage, sizes)`; the `cpu` target's generic
    machine and default options when `lowering` is None."""
    return (lowering or Lowering.of()).stage_passes(stage, sizes)


def passes_to(
    stage: str, sizes: str = "", lowering: Lowering | None = None
) -> list[ModulePass]:
    """`lowering.passes_to(stage, sizes)` (see `stage_passes` for None)."""
    return (lowering or Lowering.of()).passes_to(stage, sizes)


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
    lowering: Lowering | None = None,
) -> ModuleOp:
    """A copy of the `tc` module `module` lowered to the IR stage `stage`.

    `sizes` binds size parameters (specialisation); without it the code is
    generic in every size. `lowering` gives the target, its options and the
    machine (see `stage_passes` for None).
    """
    out = module.clone()
    passes = passes_to(stage, format_sizes(sizes or {}), lowering)
    run_passes(ctx or make_context(), out, passes)
    return out


@dataclass(frozen=True)
class _NamedPipeline(ModulePass):
    """Runs the pipeline of `target` from the `tc` stage to `stage`.

    The options that describe the machine default to a fixed one, never to
    the machine `tc-opt` runs on: `vector-bits` (256), `native-ldexp`
    (false), `threads` (1). The target's options that share a name with
    `fusion`, `tile`, `threads` and `register-tile` take their values.
    """

    stage: ClassVar[str]
    sizes: str = ""
    target: str = "cpu"
    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    register_tile: bool = True
    threads: int = 1
    vector_bits: int = 256
    native_ldexp: bool = False

    def lowering(self) -> Lowering:
        backend = get_backend(self.target)
        tile = None if self.tile is None else tuple(self.tile)
        given = {
            "fusion": self.fusion,
            "tile": tile,
            "threads": self.threads,
            "register_tile": self.register_tile,
        }
        names = {f.name for f in dataclasses.fields(backend.options_class)}
        options = backend.options_class(
            **{k: v for k, v in given.items() if k in names}
        )
        info = backend.generic_info().with_(
            vector_bits=self.vector_bits,
            native_ldexp=self.native_ldexp,
            cores=self.threads,
        )
        return Lowering(backend, options, info)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = self.lowering()
        if self.stage not in lowering.ir_stages:
            raise TCError(
                f"pipeline '{self.name}': target '{self.target}' has no stage "
                f"'{self.stage}'"
            )
        run_passes(ctx, op, lowering.passes_to(self.stage, self.sizes))


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
    """`tc-to-loops{sizes="M=64" vector-bits=512}`: to the `loops` stage."""

    name = "tc-to-loops"
    stage = "loops"


@dataclass(frozen=True)
class TcToGpuPipeline(_NamedPipeline):
    """`tc-to-gpu{sizes="M=64" preset=naive tile=32,32,0 block=32,8}`: to the
    `cuda` target's `gpu` stage (kernels mapped to blocks and threads).

    `preset` names a `CudaOptions` preset (default: the defaults); `fusion`,
    `tile`, `block` and `grid` override its outer fusion, tile, block and
    grid; the machine is the generic sm_90 GPU.
    """

    name = "tc-to-gpu"
    stage = "gpu"
    target: str = "cuda"
    fusion: str = ""
    preset: str = ""
    block: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None

    def lowering(self) -> Lowering:
        from tcdialect.backend.cuda.options import CudaOptions

        backend = get_backend(self.target)
        options = CudaOptions.preset(self.preset) if self.preset else CudaOptions()
        changes: dict[str, Any] = {}
        if self.fusion:
            changes["outer_fusion"] = self.fusion
        for name in ("tile", "block", "grid"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = tuple(value)
        return Lowering(backend, options.with_(**changes), backend.generic_info())


@dataclass(frozen=True)
class TcToLlvmPipeline(_NamedPipeline):
    """`tc-to-llvm{sizes="M=64"}`: a `.tc` module to the `llvm` stage."""

    name = "tc-to-llvm"
    stage = "llvm"
