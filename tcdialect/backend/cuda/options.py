"""`CudaOptions`: how the `cuda` and `cuda-sim` targets map a definition.

The fields are TC's `MappingOptions` with the same meaning (anchor-tc.md §4),
spelled in Python: tile sizes of the outermost band, the grid (`grid`, TC's
`mapToBlocks`) and block (`block`, TC's `mapToThreads`) sizes, the fusion
strategies, unrolling and memory promotion. TC's presets are classmethods
(`CudaOptions.naive()`, `.pointwise()`, `.mlp()`, `.conv()`,
`.group_conv()`, `.single_thread()`); the defaults leave the tile sizes
to the mapper, which chooses them from the problem.

Frozen and hashable (a dataclass of tuples, ints, bools and strings, so its
hash and `repr` are stable across processes): part of the cache key. Every
field is validated on construction; a bad value is a `TCError` naming it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from tcdialect.backend.base import TargetInfo

#: TC's fusion strategies, as the isl scheduler spells them.
FUSIONS: tuple[str, ...] = ("max", "preserve3coincident", "min")
#: The most threads in a block on every CUDA GPU since sm_20.
MAX_THREADS_PER_BLOCK = 1024
#: Largest block size along x, y and z; largest grid size along x, y and z.
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
#: The most blocks an SM holds at once (sm_90; 16 to 32 on the others).
MAX_BLOCKS_PER_SM = 32
#: The PTX targets LLVM 22's NVPTX backend accepts that we test with ptxas.
ARCHS: tuple[str, ...] = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")


def _err(field: str, value: Any, expected: str) -> TCError:
    return TCError(f"CudaOptions.{field} must be {expected}, not {value!r}")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _sizes(field: str, value: Any, lo: int, most: int | None = None) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, tuple | list) or not all(_int(v) for v in value):
        raise _err(field, value, "a tuple of integers")
    out = tuple(int(v) for v in value)
    if most is not None and not 1 <= len(out) <= most:
        raise _err(field, value, f"1 to {most} integers")
    if any(v < lo for v in out):
        raise _err(field, value, f"integers >= {lo}")
    return out


@dataclass(frozen=True)
class CudaOptions:
    """How to map a definition onto a CUDA GPU (see the module docstring).

    outer_fusion, intra_tile_fusion: the isl scheduler's fusion strategy for
        the whole definition and inside a tile ("max", "preserve3coincident",
        "min"). `outer_fusion` None (the default) lets the mapper choose:
        "preserve3coincident", or "min" where that fusion would leave a
        loop running in order in one thread (poly/gpu_mapping.py). When
        `intra_tile_fusion` differs from the outer strategy (for None, from
        "preserve3coincident"), the point loops inside each tile are
        rescheduled with it (poly/intra_tile.py; not where a tile loop that
        runs in order in the block would then carry a value between
        threads): "min" gives each statement thread loops of its own, one
        nest after the other in the block. When both are equal, as
        they are by default, the point loops keep the outer order (TC too
        skips the rescheduling then).
    tile: tile sizes of the outermost band's members (0 = that member is not
        tiled); the tile loops go to blocks, the point loops to threads.
        None (the default) lets the mapper choose from the problem: 32 for
        each parallel member (one warp along the unit-stride one) and 0 for
        a reduction member, so each thread accumulates its elements'
        reductions in registers; a member shorter than its tile gets a tile
        of its own extent, so no thread idles.
    block: threads per block along x, y, z (x is the innermost mapped loop,
        so consecutive threads touch consecutive elements); at most 1024 in
        all. With `tile` None the mapper may reshape the block's threads
        for a matmul-like band's register tiles (16 x 16 of 8 x 8 elements
        for a large GEMM, 4 x 8 of 4 x 4 for a short axis); with `tile`
        given, the block is taken as it is.
    grid: blocks along x, y, z. Both mappings are cyclic: a loop longer than
        the grid or block is strip-mined over it; the launch is tightened to
        the iterations that exist. The default is CUDA's limits: a block
        per tile. The grid also caps the blocks that share a long reduction
        along the first axis its rows leave free (`grid=(1,)`: one block
        per reduction, combined without atomics, so run to run identical).
    unroll: copies of the body of each innermost loop of a kernel
        (`unroll-inner-loops`, at most 16; 1: none).
    use_shared_memory, use_private_memory: promote reused tiles to shared
        memory and per-thread reuse to registers (with the register tiles of
        `affine-gpu-register-tile` and accumulators carried across the tile
        loops by `gpu-carry-registers`). `use_private_memory` is on by
        default: it acts only where an element is a thread's own.
        `use_shared_memory` None (the default) promotes only the slices of a
        reduction that a block streams through a tile loop running more than
        once (matmul's `r_k` tiles): where the copies and barriers pay;
        True promotes every reused or uncoalesced tile, also those whose
        size is a run-time value (specialize=False, an untiled member), in
        dynamic shared memory at the sizes where they fit the budget.
        TC's presets keep TC's default, both off.
    unroll_copy_shared: with `unroll` > 1, unroll the copies into shared
        memory too (`unroll-inner-loops{copies}`); off, they stay rolled.
    max_shared_memory: the shared-memory budget per block in bytes (None:
        the device's limit, `TargetInfo.limits["max_shared_memory"]`).
    use_readonly_cache: load read-only tensors through the non-coherent
        cache (`ld.global.nc`). Kernel pointers are `noalias` (the buffers
        of one call never overlap), so LLVM does so for every read-only
        tensor already and this option changes nothing.
    shared_depth, private_depth: TC's promotion depths, counted in the
        kernel's loops (block, tile and thread loops): shared memory only in
        the loop bodies at `shared_depth`, registers only across loops at
        `private_depth` or deeper (None: wherever promotion applies; see
        `affine-gpu-promote`).
    fix_parameters_before_scheduling: schedule with the sizes as constants.
        With `specialize` (the default) the sizes are constants before
        scheduling anyway; without it they cannot be, so this option
        changes nothing.
    match_library_calls: map a reduction to a warp of threads along x,
        which combine their partial results with shuffles (TC's CUB
        BlockReduce); None (the default) does so where a nest has a single
        parallel loop (row reductions such as softmax's), where the other
        threads would otherwise idle. A long whole-tensor reduction, or a
        few long rows, get a block of 1024 threads each, and several
        blocks with atomic updates when one per row leaves the GPU idle
        (`+ max min`, every element type).
    specialize: compile sizes in as constants (one compile per shape); False
        makes sizes kernel arguments and computes the grid on the host.
    min_blocks_per_sm: CUDA's `__launch_bounds__` second argument: the
        blocks of a kernel that should fit on one SM at once (PTX's
        `.minnctapersm`), which caps the registers `ptxas` may give a
        thread. 0 (the default) gives only the block size (`.maxntid`), and
        `ptxas` picks the registers itself: for some kernels it then spills
        to reach a higher occupancy (conv2d 3x3: 40 registers and 28 bytes
        of spill stores); 1 lets a thread have every register it needs
        (109, no spills, fewer blocks per SM). Which is faster depends on
        the kernel and the GPU: the autotuner tries 0, 1, 2 and 4.
    async_copy: copy slices from global into shared memory with
        `cp.async` (`gpu-async-copies`) where the PTX target has it (sm_80
        and later): a thread's copies are all in flight at once and land
        together before the barrier, instead of each load waiting for the
        one before. False: loads and stores through registers.
    double_buffer: with `async_copy`, a loop that streams slices through
        shared memory copies slice `k + 1` into a second set of buffers
        while it works on slice `k` (`gpu-double-buffer`), where the doubled
        buffers fit `max_shared_memory`: the copies' latency hides behind
        the work, and the loop needs one barrier an iteration, not two.
        False: each slice is copied, waited for and used in turn.
    arch: the PTX target (`sm_90`; None: the device's, from `TargetInfo`).
    """

    outer_fusion: str | None = None
    intra_tile_fusion: str = "preserve3coincident"
    tile: tuple[int, ...] | None = None
    block: tuple[int, ...] = (32, 8)
    grid: tuple[int, ...] = (MAX_GRID[0], MAX_GRID[1])
    unroll: int = 1
    use_shared_memory: bool | None = None
    use_private_memory: bool = True
    unroll_copy_shared: bool = False
    max_shared_memory: int | None = None
    use_readonly_cache: bool = False
    shared_depth: int | None = None
    private_depth: int | None = None
    fix_parameters_before_scheduling: bool = False
    match_library_calls: bool | None = None
    specialize: bool = True
    min_blocks_per_sm: int = 0
    async_copy: bool = True
    double_buffer: bool = True
    arch: str | None = None

    def __post_init__(self) -> None:
        if self.outer_fusion is not None and self.outer_fusion not in FUSIONS:
            raise _err(
                "outer_fusion",
                self.outer_fusion,
                f"None or one of {', '.join(FUSIONS)}",
            )
        if self.intra_tile_fusion not in FUSIONS:
            raise _err(
                "intra_tile_fusion",
                self.intra_tile_fusion,
                f"one of {', '.join(FUSIONS)}",
            )
        set_ = lambda n, v: object.__setattr__(self, n, v)  # noqa: E731
        if self.tile is not None:
            set_("tile", _sizes("tile", self.tile, 0))
        block = _sizes("block", self.block, 1, 3)
        for axis, (b, most) in enumerate(zip(block, MAX_BLOCK)):
            if b > most:
                raise _err("block", self.block, f"at most {most} along {'xyz'[axis]}")
        total = 1
        for b in block:
            total *= b
        if total > MAX_THREADS_PER_BLOCK:
            raise _err(
                "block", self.block, f"at most {MAX_THREADS_PER_BLOCK} threads in all"
            )
        set_("block", block)
        grid = _sizes("grid", self.grid, 1, 3)
        for axis, (g, most) in enumerate(zip(grid, MAX_GRID)):
            if g > most:
                raise _err("grid", self.grid, f"at most {most} along {'xyz'[axis]}")
        set_("grid", grid)
        if not _int(self.unroll) or self.unroll < 1:
            raise _err("unroll", self.unroll, "an integer >= 1")
        if not (
            self.use_shared_memory is None or isinstance(self.use_shared_memory, bool)
        ):
            raise _err(
                "use_shared_memory", self.use_shared_memory, "None, True or False"
            )
        for name in (
            "use_private_memory",
            "unroll_copy_shared",
            "use_readonly_cache",
            "fix_parameters_before_scheduling",
            "specialize",
            "async_copy",
            "double_buffer",
        ):
            if not isinstance(getattr(self, name), bool):
                raise _err(name, getattr(self, name), "True or False")
        if not (
            self.match_library_calls is None
            or isinstance(self.match_library_calls, bool)
        ):
            raise _err(
                "match_library_calls", self.match_library_calls, "None, True or False"
            )
        v = self.max_shared_memory
        if v is not None and (not _int(v) or v < 0):
            raise _err("max_shared_memory", v, "None or an integer >= 0")
        for name in ("shared_depth", "private_depth"):
            v = getattr(self, name)
            if v is not None and (not _int(v) or v < 1):
                raise _err(name, v, "None or an integer >= 1")
        v = self.min_blocks_per_sm
        if not _int(v) or not 0 <= v <= MAX_BLOCKS_PER_SM:
            raise _err(
                "min_blocks_per_sm", v, f"an integer from 0 to {MAX_BLOCKS_PER_SM}"
            )
        if self.arch is not None and self.arch not in ARCHS:
            raise _err("arch", self.arch, f"None or one of {', '.join(ARCHS)}")

    @property
    def digest(self) -> str:
        """A hash of the options that every process computes alike (the
        built-in `hash` of a string is salted per process): for cache keys."""
        return hashlib.sha256(repr(self).encode()).hexdigest()

    def with_(self, **changes: Any) -> CudaOptions:
        """A copy with `changes`, validated again."""
        try:
            return dataclasses.replace(self, **changes)
        except TypeError as err:
            raise TCError(f"CudaOptions: {err}") from None

    @classmethod
    def search_space(
        cls, sizes: Mapping[str, int], info: TargetInfo
    ) -> dict[str, tuple[Any, ...]]:
        """The values the autotuner (`tcdialect.tune`) tries, by field, for a
        problem with these `sizes` on the GPU `info` (TC's tuner's space,
        anchor-tc.md section 5).

        A key `field[i]` is element `i` of a tuple field; None leaves the
        element out (elements left out come last), and a tuple with no
        element left is None. Tile, block and grid sizes are TC's: the powers
        of two up to each size and the sizes divided by them (tiles also 0,
        not tiled); a block has 1 to 3 dimensions within CUDA's limits (a
        candidate with more than 1024 threads is invalid and drawn again)::

            {"outer_fusion": (None, "max", "preserve3coincident", "min"),
             "intra_tile_fusion": ("max", "preserve3coincident", "min"),
             "tile[0]": (None, 0, 1, 2, ...), ..., "block[0]": (1, ..., 1024),
             "block[1]": (None, 1, ...), "grid[0]": (1, ...), ...,
             "unroll": (1, 2, 4, 8, 16), "unroll_copy_shared": (False, True),
             "use_shared_memory": (None, False, True),
             "use_private_memory": (False, True),
             "shared_depth": (None, 1, 2, 3, 4),
             "private_depth": (None, 3, 4, 5, 6, 7),
             "match_library_calls": (None, True, False), "specialize": (True,),
             "min_blocks_per_sm": (0, 1, 2, 4), "async_copy": (True, False),
             "double_buffer": (True, False)}
        """
        from tcdialect.backend.cpu.options import candidate_sizes

        values = candidate_sizes(sizes.values())
        space: dict[str, tuple[Any, ...]] = {
            "outer_fusion": (None, *FUSIONS),
            "intra_tile_fusion": FUSIONS,
        }
        for i in range(max(1, min(len(sizes) + 1, 4))):
            space[f"tile[{i}]"] = (None, 0, *values)
        for axis, most in enumerate(MAX_BLOCK):
            block = tuple(1 << p for p in range(11) if 1 << p <= most)
            space[f"block[{axis}]"] = (None, *block) if axis else block
        for axis, most in enumerate(MAX_GRID):
            grid = tuple(v for v in values if v <= most)
            space[f"grid[{axis}]"] = (None, *grid) if axis else grid
        space["unroll"] = (1, 2, 4, 8, 16)
        space["unroll_copy_shared"] = (False, True)
        space["use_shared_memory"] = (None, False, True)
        space["use_private_memory"] = (False, True)
        # loop depths (affine-gpu-promote): a kernel's scopes are a few loops
        # down, its reductions a few more
        space["shared_depth"] = (None, 1, 2, 3, 4)
        space["private_depth"] = (None, 3, 4, 5, 6, 7)
        space["match_library_calls"] = (None, True, False)
        space["specialize"] = (True,)
        space["min_blocks_per_sm"] = (0, 1, 2, 4)
        space["async_copy"] = (True, False)
        space["double_buffer"] = (True, False)
        return space

    # -- TC's presets ------------------------------------------------------------

    @classmethod
    def _tc(cls, **fields: Any) -> CudaOptions:
        """TC's unmapped options (no promotion) with `fields`."""
        return cls(use_shared_memory=False, use_private_memory=False, **fields)

    @classmethod
    def naive(cls) -> CudaOptions:
        """TC's `naive`: 32x32x32 tiles, 32x8 threads, 256x256 blocks."""
        return cls._tc(tile=(32, 32, 32), block=(32, 8), grid=(256, 256))

    @classmethod
    def single_thread(cls) -> CudaOptions:
        """One thread in one block (TC's `singleThread`): for debugging."""
        return cls._tc(tile=(1,), block=(1,), grid=(1,))

    @classmethod
    def pointwise(cls) -> CudaOptions:
        """TC's `pointwise`: 32x4x4 threads, 100^3 blocks, unroll 128."""
        return cls._tc(block=(32, 4, 4), grid=(100, 100, 100), unroll=128)

    @classmethod
    def mlp(cls) -> CudaOptions:
        """TC's `mlp`: tile 1, 128 threads, 128 blocks, maximal outer fusion."""
        return cls._tc(outer_fusion="max", tile=(1,), block=(128,), grid=(128,))

    @classmethod
    def conv(cls) -> CudaOptions:
        """TC's `convolution`: tile 4x8x8x8, 4x16x4 threads, 256^3 blocks."""
        return cls._tc(tile=(4, 8, 8, 8), block=(4, 16, 4), grid=(256, 256, 256))

    @classmethod
    def group_conv(cls) -> CudaOptions:
        """TC's `groupConvolution`: tile 1x1, 4x16x4 threads, 256x256 blocks."""
        return cls._tc(tile=(1, 1), block=(4, 16, 4), grid=(256, 256))

    @classmethod
    def preset(cls, name: str) -> CudaOptions:
        """The preset called `name` (`PRESETS`)."""
        if name not in PRESETS:
            raise TCError(
                f"unknown CudaOptions preset '{name}' "
                f"(expected one of {', '.join(PRESETS)})"
            )
        return getattr(cls, PRESETS[name])()


#: Preset names (as `CudaOptions.preset` takes them) and their classmethods.
PRESETS: Mapping[str, str] = {
    "naive": "naive",
    "single_thread": "single_thread",
    "pointwise": "pointwise",
    "mlp": "mlp",
    "conv": "conv",
    "group_conv": "group_conv",
}
