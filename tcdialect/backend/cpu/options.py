"""`CpuOptions`: how the `cpu` target compiles a definition, and the values
the autotuner searches (`CpuOptions.search_space`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from tcdialect.backend.base import TargetInfo


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

    @classmethod
    def search_space(
        cls, sizes: Mapping[str, int], info: TargetInfo
    ) -> dict[str, tuple[Any, ...]]:
        """The values the autotuner (`tcdialect.tune`) tries, by field, for a
        problem with these `sizes` on the machine `info`.

        A key `tile[i]` is element `i` of the tuple field `tile` (one member
        of the outermost band; `len(sizes)` members, at most 4); None leaves
        the element out (elements left out come last), and a tile with no
        element left is None, the problem's own choice. Tile sizes are those
        of TC's tuner: the powers of two up to each size and the sizes
        divided by them, and 0 (do not tile that member)::

            {"fusion": ("max", "preserve3coincident", "min"),
             "tile[0]": (None, 0, 1, 2, 4, ..., 64, 32, 16, ...),
             "tile[1]": (None, 0, ...), ...,
             "register_tile": (True, False), "threads": (1, ..., cores),
             "specialize": (True,)}
        """
        from tcdialect.poly.schedule import FUSIONS

        members = max(1, min(len(sizes), 4))
        tiles = (None, 0, *candidate_sizes(sizes.values()))
        space: dict[str, tuple[Any, ...]] = {"fusion": FUSIONS}
        for i in range(members):
            space[f"tile[{i}]"] = tiles
        space["register_tile"] = (True, False)
        space["threads"] = tuple(range(1, info.cores + 1))
        space["specialize"] = (True,)
        return space


def candidate_sizes(sizes: Iterable[int], extra: int = 256) -> tuple[int, ...]:
    """TC's tuner's sizes for problem sizes `sizes`: every power of two up to
    the next one >= each size, and the size divided (rounded up) by each such
    power; the same for `extra`. Sorted, without repeats::

        candidate_sizes([6]) == (1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256)
    """
    found: set[int] = set()
    for size in (*sizes, extra):
        power = 1
        while True:
            found.add(power)
            found.add(-(-size // power))
            if power >= size:
                break
            power *= 2
    return tuple(sorted(v for v in found if v >= 1))
