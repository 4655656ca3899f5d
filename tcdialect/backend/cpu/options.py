"""`CpuOptions`: how the `cpu` target compiles a definition, and the values
the autotuner searches (`CpuOptions.search_space`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcdialect.diagnostics import TCError
from tcdialect.poly.options import FUSIONS, check_fusion, tile_sizes

if TYPE_CHECKING:
    from tcdialect.backend.base import TargetInfo


@dataclass(frozen=True)
class CpuOptions:
    """How to compile for the CPU. Frozen and hashable: part of the cache key.

    threads: worker threads for parallel loops (None: every core available
        to this process, from the target's `TargetInfo.cores`).
    parallel_depth: which loop of each nest's outermost band runs in
        parallel (0: the outermost; k: the k-th, inside k loops that run in
        order, when it has no dependence; see `tcdialect.poly.schedule`).
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
        (the `register-tile` pass).
    register_rows, register_vectors: the register tile's shape, rows by
        vectors of accumulators (0: the pass's choice from the vector width
        and the extents, e.g. 8 x 3 with 16 lanes).
    fma16: in a register tile, a product of 16-bit floats that accumulates
        in float32 is one float32 FMA of the extended factors: the exact
        product (16-bit products are exact in float32), rounded once with
        the sum, as "arithmetic in 32 bits" has it, and as fast as float32
        (`register-tile{fma16}`). False rounds each product to 16 bits
        first, as the reference interpreter and the GPU targets do (the
        language notes, "16-bit floats"); that costs 5-10x in matmul.
    vector_bits: the vector width that register tiles and non-temporal
        stores use, a power of two from 128 to the target's widest (None:
        the target's widest, `TargetInfo.vector_bits`).
    prefetch: False leaves out `prefetch-next-slice` (software prefetches
        of the next iteration's slice of a streamed array).
    prefetch_distance: how many iterations ahead those prefetches fetch
        (1: the next; more for iterations too short to hide the memory's
        latency).
    prefetch_max_bytes: the largest slice prefetched (None: half the
        target's L2, which the prefetched slice must not flush; 256 KiB when
        the target does not say).
    nontemporal: False leaves out `nontemporal-stores`.
    nontemporal_min_bytes: the smallest output written with non-temporal
        stores (None: a quarter of the target's last-level cache, a size that
        does not survive there until it is read again; 8 MiB when the target
        does not say).

    The defaults of the last four come from the target's described limits
    (`TargetInfo`), not from the machine a measurement was made on; the
    autotuner searches them (`search_space`).
    """

    threads: int | None = None
    parallel_depth: int = 0
    specialize: bool = True
    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    schedule: bool = True
    register_tile: bool = True
    register_rows: int = 0
    register_vectors: int = 0
    fma16: bool = True
    vector_bits: int | None = None
    prefetch: bool = True
    prefetch_distance: int = 1
    prefetch_max_bytes: int | None = None
    nontemporal: bool = True
    nontemporal_min_bytes: int | None = None

    def __post_init__(self) -> None:
        check_fusion(self.fusion)
        object.__setattr__(self, "tile", tile_sizes(self.tile))
        if self.threads is not None and (
            not isinstance(self.threads, int) or self.threads < 1
        ):
            raise TCError(
                f"CpuOptions.threads must be a positive int, not {self.threads!r}"
            )
        if (
            not isinstance(self.parallel_depth, int)
            or isinstance(self.parallel_depth, bool)
            or not 0 <= self.parallel_depth <= 3
        ):
            raise TCError(
                "CpuOptions.parallel_depth must be an int from 0 to 3, "
                f"not {self.parallel_depth!r}"
            )
        distance = self.prefetch_distance
        if (
            not isinstance(distance, int)
            or isinstance(distance, bool)
            or not 1 <= distance <= 16
        ):
            raise TCError(
                "CpuOptions.prefetch_distance must be an int from 1 to 16, "
                f"not {distance!r}"
            )
        for name in ("register_rows", "register_vectors"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= 16:
                raise TCError(
                    f"CpuOptions.{name} must be an int from 0 (automatic) to 16, "
                    f"not {value!r}"
                )
        bits = self.vector_bits
        if bits is not None and (
            not isinstance(bits, int) or bits < 128 or bits & (bits - 1)
        ):
            raise TCError(
                "CpuOptions.vector_bits must be None or a power of two >= 128, "
                f"not {bits!r}"
            )
        for name in ("prefetch_max_bytes", "nontemporal_min_bytes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise TCError(
                    f"CpuOptions.{name} must be None or an int >= 0, not {value!r}"
                )

    def limits(self, info: TargetInfo) -> CpuLimits:
        """The sizes the `loops` passes use for these options on `info`."""
        caches = info.cache_bytes
        l2 = caches[1] if len(caches) > 1 and caches[1] else 0
        last = caches[-1] if caches and caches[-1] else 0
        bits = min(self.vector_bits or info.vector_bits, info.vector_bits)
        return CpuLimits(
            vector_bits=bits,
            prefetch_max_bytes=(
                self.prefetch_max_bytes
                if self.prefetch_max_bytes is not None
                else (l2 // 2 if l2 else 256 << 10)
            ),
            nontemporal_min_bytes=(
                self.nontemporal_min_bytes
                if self.nontemporal_min_bytes is not None
                else (last // 4 if last else 8 << 20)
            ),
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
             "register_tile": (True, False), "register_rows": (0, 1, 2, 4, 6, 8),
             "register_vectors": (0, 1, 2, 3, 4), "threads": (1, ..., cores),
             "parallel_depth": (0, 1, 2),
             "vector_bits": (None, 128, 256, ...),   # up to the target's
             "prefetch": (True, False), "prefetch_distance": (1, 2, 4),
             "prefetch_max_bytes": (None, 16384, 65536, 262144, 1048576),
             "nontemporal": (True, False),
             "nontemporal_min_bytes": (None, 1 MiB, 4 MiB, 16 MiB, 64 MiB),
             "specialize": (True,)}
        """
        members = max(1, min(len(sizes), 4))
        tiles = (None, 0, *candidate_sizes(sizes.values()))
        space: dict[str, tuple[Any, ...]] = {"fusion": FUSIONS}
        for i in range(members):
            space[f"tile[{i}]"] = tiles
        space["register_tile"] = (True, False)
        space["register_rows"] = (0, 1, 2, 4, 6, 8)
        space["register_vectors"] = (0, 1, 2, 3, 4)
        space["threads"] = tuple(range(1, info.cores + 1))
        space["parallel_depth"] = tuple(range(max(1, min(len(sizes), 3))))
        bits = 128
        widths: list[int | None] = [None]
        while bits <= info.vector_bits:
            widths.append(bits)
            bits *= 2
        space["vector_bits"] = tuple(widths)
        space["prefetch"] = (True, False)
        space["prefetch_distance"] = (1, 2, 4)
        space["prefetch_max_bytes"] = (None, *(1 << k for k in (14, 16, 18, 20)))
        space["nontemporal"] = (True, False)
        space["nontemporal_min_bytes"] = (None, *(1 << k for k in (20, 22, 24, 26)))
        space["specialize"] = (True,)
        return space


@dataclass(frozen=True)
class CpuLimits:
    """`CpuOptions.limits`: the options' sizes resolved against a target."""

    vector_bits: int
    prefetch_max_bytes: int
    nontemporal_min_bytes: int


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
