"""`CpuOptions`: how the `cpu` target compiles a definition."""

from __future__ import annotations

from dataclasses import dataclass

from tcdialect.diagnostics import TCError


@dataclass(frozen=True)
class CpuOptions:
    """How to compile for the CPU. Frozen and hashable: part of the cache key.

    threads: worker threads for parallel loops (None: every core available
        to this process, from the target's `TargetInfo.cores`).
    specialize: compile sizes in as constants, once per shape (fastest code);
        False compiles one generic function for every shape.
    fusion: the scheduler's fusion strategy, "max" (fuse whatever isl can),
        "preserve3coincident" (fuse unless outer parallelism is lost) or
        "min" (one loop nest per statement).
    tile: tile sizes of each nest's outermost band (0 = do not tile that
        loop, so (0,) turns tiling off); None chooses them from the problem.
    schedule: False skips the isl scheduler (loops in the order the
        definition gives them).
    register_tile: False leaves reductions out of vector register tiles
        (the `register-tile` pass; vector width from the target).
    """

    threads: int | None = None
    specialize: bool = True
    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    schedule: bool = True
    register_tile: bool = True

    def __post_init__(self) -> None:
        from tcdialect.poly.schedule import ScheduleOptions

        # validates fusion and tile; the tile as a tuple of ints
        object.__setattr__(self, "tile", ScheduleOptions(self.fusion, self.tile).tile)
        if self.threads is not None and (
            not isinstance(self.threads, int) or self.threads < 1
        ):
            raise TCError(
                f"CpuOptions.threads must be a positive int, not {self.threads!r}"
            )
