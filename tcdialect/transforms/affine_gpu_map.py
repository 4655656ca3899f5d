"""`affine-gpu-map`: schedule affine loop nests with isl and map them onto a
GPU's blocks and threads.

Contract: for every `func.func` with a body inside the polyhedral model
(`affine-isl-schedule` states which are), isl schedules the statements with
the fusion strategy `fusion`, each outermost band is tiled with `tile` and
its leading coincident members are mapped: tile loops to blocks, point loops
to threads, innermost first (`tcdialect.poly.gpu_mapping`). The body is
regenerated as affine IR in which each mapped loop is a one-dimensional
`affine.parallel` carrying `tc.gpu_processor` (`block_x`, ..., `thread_z`)
and `tc.gpu_size` (the grid size it may use, or the block size it needs);
`convert-parallel-loops-to-gpu` outlines the nests into kernels. The result
computes what the input computed, run in any order of the mapped loops'
iterations. Atomic updates of one kind (`memref.atomic_rmw addf`: a
scatter-accumulate's) commute: there is no dependence between them
(`dependences(commuting_atomics=True)`), so a scatter's loops map to blocks
and threads that add with atomics. Functions outside the model are left
alone (their nests then run in one GPU thread). A recurrence's step loop (`tc.recurrence`) is not
mapped: the nests in its body and those around it are mapped piece by piece
(`schedule_around_recurrences`), so the loop stays on the host around the
kernels of a step.

Options (`CudaOptions`' meaning): `fusion` (`max`, `preserve3coincident`,
`min`), `tile` (e.g. `tile=32,32,0`; without it, 32 for each leading
coincident member and 0 for the rest), `block` (threads along x, y, z:
`block=32,8`), `grid` (blocks along x, y, z: `grid=256,256`; by default a block per tile),
`reductions` (`true`, `false`: map a reduction member to a warp of threads
along x, marked `tc.gpu_reduce`; unset: where a band has a single parallel
member), `intra-tile-fusion` (`max`, `preserve3coincident`, `min`; unset:
the point loops keep the outer order): when it differs from `fusion` (from
`preserve3coincident` when `fusion` is unset), the point loops of each tile
are rescheduled with it (`tcdialect.poly.intra_tile`: not where a tile loop
that runs in order in the block would then carry a value from one thread
to another); with `min`, statements fused outside get thread nests of
their own, one after the other in the block's loop::

    "affine.parallel"(...) ({ ^bb0(%c0: index):      // "block_x"
      "affine.parallel"(...) ({ ... B[%i, %j] = ... }) // "thread_y", "thread_x"
      "affine.parallel"(...) ({ ... C[%i, %j] = ... }) // "thread_y", "thread_x"

Example: `C(m, n) +=! A(m, r_k) * B(r_k, n)` with the defaults::

    "affine.parallel"(...) ({ ^bb0(%c0: index):      // tc.gpu_processor = "block_y"
      "affine.parallel"(...) ({ ^bb0(%c1: index):    // "block_x"
        "affine.parallel"(...) ({ ^bb0(%c2: index):  // "thread_y", tc.gpu_size = 8
          "affine.parallel"(...) ({ ^bb0(%c3: index):  // "thread_x", size 32
            affine.store %cst, %C[%c2, %c3]
            affine.for %c4 = 0 to %K { ... C[%c2, %c3] += A[%c2, %c4] * B[%c4, %c3] }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.backend.base import TargetInfo
from tcdialect.backend.cuda.options import MAX_GRID, CudaOptions
from tcdialect.diagnostics import TCError
from tcdialect.poly.codegen import regenerate
from tcdialect.poly.gpu_mapping import GpuMapping, map_schedule
from tcdialect.poly.intra_tile import reschedule_tiles
from tcdialect.poly.schedule import FUSIONS, schedule_context, tile_sizes
from tcdialect.poly.scop import dependences, error_flag_arrays, extract_scop
from tcdialect.transforms.affine_isl_schedule import (
    has_recurrence,
    schedule_around_recurrences,
)


@dataclass(frozen=True)
class AffineGpuMapPass(ModulePass):
    name = "affine-gpu-map"

    #: None: the mapper chooses (poly/gpu_mapping.py).
    fusion: str | None = None
    tile: tuple[int, ...] | None = None
    block: tuple[int, ...] = (32, 8)
    grid: tuple[int, ...] = (MAX_GRID[0], MAX_GRID[1])
    #: None (where a band has one parallel member or few rows), True or False.
    reductions: bool | None = None
    #: Threads resident on the whole GPU (from the `TargetInfo`: SMs x
    #: threads per SM; the generic GPU's by default).
    fill: int = 132 * 2048
    #: The fusion strategy inside a tile; None: the outer one's order.
    intra_tile_fusion: str | None = None

    @classmethod
    def from_options(cls, options: CudaOptions, info: TargetInfo) -> AffineGpuMapPass:
        return cls(
            options.outer_fusion,
            options.tile,
            options.block,
            options.grid,
            options.match_library_calls,
            info.cores * info.limits.get("max_threads_per_sm", 2048),
            options.intra_tile_fusion,
        )

    def mapping(self) -> GpuMapping:
        for option, fusion in (
            ("fusion", self.fusion),
            ("intra-tile-fusion", self.intra_tile_fusion),
        ):
            if fusion is not None and fusion not in FUSIONS:
                raise TCError(
                    f"affine-gpu-map: unknown {option} '{fusion}' "
                    f"(expected one of {', '.join(FUSIONS)})"
                )
        # CudaOptions validates block and grid against the CUDA limits.
        opts = CudaOptions(
            tile=tile_sizes(None if self.tile is None else tuple(self.tile)),
            block=tuple(self.block),
            grid=tuple(self.grid),
        )
        return GpuMapping(
            self.fusion,
            opts.tile,
            opts.block,
            opts.grid,
            self.reductions,
            self.fill,
            self.intra_tile_fusion,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mapping = self.mapping()
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            if has_recurrence(fn):
                # the step loop stays a host loop around the steps' kernels
                schedule_around_recurrences(fn, lambda f: _map(f, mapping))
            else:
                _map(fn, mapping)


def _map(fn: func.FuncOp, mapping: GpuMapping) -> str | None:
    """Map `fn` in place; "mapped", or None when it is left alone."""
    try:
        scop = extract_scop(fn)
    except TCError:
        return None
    # Atomic updates of one kind commute on the GPU (a scatter's threads add
    # with `atom.global.add`), unlike in `affine-isl-schedule`'s model.
    deps = dependences(scop, error_flag_arrays(fn, scop), commuting_atomics=True).all
    schedule = reschedule_tiles(map_schedule(scop, deps, mapping), scop, deps, mapping)
    try:
        regenerate(fn, scop, schedule, schedule_context(scop))
    except TCError:
        return None
    return "mapped"
