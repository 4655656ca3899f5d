"""The threads of one chunk of a launch, as NumPy lanes.

A launch of `grid` blocks of `block` threads runs in chunks of whole blocks.
Within a chunk every thread is a *lane*: lanes are block-major (the lanes of
the chunk's first block, then its second's, ...), and within a block in the
order of CUDA's linear thread index `x + y * bdx + z * bdx * bdy`, so that
32 consecutive lanes of a block are one warp. For the chunk of blocks 5 and 2
of a 4x1x1 grid with 2x2x1 threads::

    lane        0  1  2  3  4  5  6  7
    block slot  0  0  0  0  1  1  1  1
    block id x  1  1  1  1  2  2  2  2      (block 5 is (1, 1, 0) on a 4x2 grid)
    thread x    0  1  0  1  0  1  0  1
    thread y    0  0  1  1  0  0  1  1
    gtid       20 21 22 23  8  9 10 11      (global thread id: block * 4 + thread)

Each block counts the barriers it has passed (its *epoch*): accesses of one
block in different epochs are ordered, those in the same epoch are not.
Each lane also counts the warp barriers (`nvvm.bar.warp.sync`) its warp has
passed since; a *stamp* is both, `epoch * WARP_SYNCS + warp syncs`, so that
of two accesses of one warp the one with the larger stamp is after the
other, and of two accesses of one block in different warps, the one whose
stamp is larger by `WARP_SYNCS` or more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]
Dim3 = tuple[int, int, int]

#: Threads per warp.
WARP = 32
#: Warp barriers a warp may pass between two block barriers (the stamp's base).
WARP_SYNCS = 1 << 24


def _ids(linear: Array, dims: Dim3) -> tuple[Array, Array, Array]:
    """x, y, z of linear ids over `dims`; an axis of extent 1 is a 0-d zero."""
    x = linear % dims[0]
    y = linear // dims[0] % dims[1]
    z = linear // (dims[0] * dims[1])
    return tuple(  # type: ignore[return-value]
        v if d > 1 else np.asarray(0, np.int64) for v, d in zip((x, y, z), dims)
    )


@dataclass
class Lanes:
    """The lanes of one chunk (see the module docstring)."""

    #: The kernel's name, for messages.
    kernel: str
    grid: Dim3
    block: Dim3
    #: Threads per block.
    threads: int
    #: Lanes in the chunk (blocks in it times `threads`).
    count: int
    #: The global linear ids of the chunk's blocks, by slot.
    blocks: Array
    #: Slot of each lane's block.
    lane_block: Array
    #: Global thread id of each lane: block id * threads + thread index.
    gtid: Array
    thread_id: tuple[Array, Array, Array]
    block_id: tuple[Array, Array, Array]
    #: Each lane's position in its warp (`gpu.lane_id`).
    warp_lane: Array
    #: Barriers each block (by slot) has passed.
    epoch: Array
    #: Warp barriers each lane's warp has passed since its block's last barrier.
    warp_syncs: Array

    @staticmethod
    def of(kernel: str, grid: Dim3, block: Dim3, blocks: Array) -> Lanes:
        threads = block[0] * block[1] * block[2]
        count = len(blocks) * threads
        lane = np.arange(count, dtype=np.int64)
        lane_block = lane // threads
        thread = lane % threads
        block_linear = blocks[lane_block]
        if len(blocks) == 1:
            block_id = _ids(np.asarray(blocks[0], np.int64), grid)
            block_id = tuple(np.asarray(v, np.int64) for v in block_id)
        else:
            block_id = _ids(block_linear, grid)
        return Lanes(
            kernel=kernel,
            grid=grid,
            block=block,
            threads=threads,
            count=count,
            blocks=blocks,
            lane_block=lane_block,
            gtid=block_linear * threads + thread,
            thread_id=_ids(thread, block),
            block_id=block_id,  # type: ignore[arg-type]
            warp_lane=thread % WARP,
            epoch=np.zeros(len(blocks), np.int64),
            warp_syncs=np.zeros(count, np.int64),
        )

    def stamp(self, sel: Array | None) -> Array:
        """The stamp of each lane in `sel` (None: every lane): its block's
        epoch and its warp's barriers since (see the module docstring)."""
        if sel is None:
            return self.epoch[self.lane_block] * WARP_SYNCS + self.warp_syncs
        return self.epoch[self.lane_block[sel]] * WARP_SYNCS + self.warp_syncs[sel]

    def describe(self, gtid: Any) -> str:
        """'thread (x, y, z) of block (x, y, z)' for a global thread id."""
        b, t = divmod(int(gtid), self.threads)
        return f"thread {_xyz(t, self.block)} of block {_xyz(b, self.grid)}"


def _xyz(linear: int, dims: Dim3) -> str:
    x, rest = linear % dims[0], linear // dims[0]
    return f"({x}, {rest % dims[1]}, {rest // dims[1]})"
