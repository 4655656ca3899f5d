"""Simulated GPU memory: bounds-checked, race-checked buffers.

A `Buffer` holds one memref value's elements, flat and row-major, in one of
three spaces:

- global: a kernel argument (an input, an output, a temporary); one copy;
- shared: a `memref.alloca` in memory space 3, one copy per block of the
  chunk (lane `l` uses the copy of its block slot);
- private: a `memref.alloca` without a memory space, one copy per lane.

Every access is bounds-checked per dimension: an index outside `[0, extent)`
is a `TCError` naming the kernel, the memory, the thread and the index.

Global and shared buffers are race-checked with a `Tracker`, which records,
per element, the last writer (its global thread id and its block's epoch,
the barriers it had passed) and the readers since the launch began (or, for
shared memory, since the chunk's blocks began). Two accesses by different
threads are ordered only when both threads are in one block and a barrier
lies between them (the later access is in a later epoch). Unordered pairs
are races:

- write after write (WW): two threads write one element: a `TCError`;
- write after read (WAR): a thread overwrites what another read: a
  `TCError` in shared memory, and in global memory when the reader is in
  another block (threads of a block may load a global value they do not
  use, such as the loads of code whose stores only thread 0 makes);
- read after write (RAW): a thread reads what another wrote: `load`
  returns the racing lanes as a `Race`, which the interpreter reports when
  a lane uses the value (stores it, branches on it, ...), so that such
  unused loads are no error either.

A write of the value the element already holds changes nothing whatever the
order, so it is no WW or WAR race (threads that all set an error flag to 1
are fine). Atomic updates (`memref.atomic_rmw`) of one element by many
threads are no race among themselves (a scatter-accumulate's adds), but race
with the plain accesses of other threads they are not ordered with, both
ways: an atomic update of what another thread wrote or read (a `TCError`),
a write of what another thread updated atomically (a `TCError`), a read of
it (a RAW race, reported where the value is used). For example, with one
block of 64 threads::

    memref.store %v, %smem[%tx]      // thread t writes smem[t]
    %w = memref.load %smem[%other]   // thread t reads smem[63 - t]: RAW race
    memref.store %w, %out[%tx]       //   (reported here), unless a
                                     //   gpu.barrier lies between
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

import numpy as np

from tcdialect.diagnostics import TCError
from tcdialect.runtime.cuda_sim.lanes import WARP, WARP_SYNCS, Lanes

Array = np.ndarray[Any, Any]
Space = Literal["global", "shared", "private"]

_SPACE_NAMES: dict[Space, str] = {
    "global": "global memory",
    "shared": "shared memory",
    "private": "private memory",
}


def poison(arr: Array) -> Array:
    """Fill `arr` with values that stand out where they are read unwritten:
    NaN for floats, 0xA5 bytes for integers, True for booleans."""
    if arr.dtype.kind == "f":
        arr.fill(np.nan)
    elif arr.dtype == np.bool_:
        arr.fill(True)
    else:
        arr.reshape(-1).view(np.uint8).fill(0xA5)
    return arr


def _differs(a: Array, b: Array) -> Array:
    """Elementwise `a != b`, with NaN equal to NaN."""
    ne = a != b
    if a.dtype.kind == "f":
        ne &= ~(np.isnan(a) & np.isnan(b))
    return ne


class Tracker:
    """Who wrote and read each element of one buffer (module docstring).

    `w_tid`: global thread id of the last writer (-1: none); `w_stamp`: its
    block's epoch then. `r_block`: the block of every reader (-1: none, -2:
    several blocks); `r_tid`: the thread that read in the latest epoch (-2:
    several); `r_stamp`: the epoch of the latest read. `a_block`, `a_tid`
    and `a_stamp` likewise for the atomic updates, if `atomics`.
    """

    def __init__(self, size: int):
        self.w_tid = np.full(size, -1, np.int64)
        self.w_stamp = np.zeros(size, np.int64)
        self.r_tid = np.full(size, -1, np.int64)
        self.r_block = np.full(size, -1, np.int64)
        self.r_stamp = np.zeros(size, np.int64)
        self.a_tid = np.full(size, -1, np.int64)
        self.a_block = np.full(size, -1, np.int64)
        self.a_stamp = np.zeros(size, np.int64)
        self.atomics = False


class Buffer:
    """The storage of one memref value (module docstring).

    `data` is flat: `copies` copies of `shape`, one after the other.
    """

    def __init__(
        self,
        name: str,
        type_text: str,
        space: Space,
        data: Array,
        shape: tuple[int, ...],
        copies: int = 1,
    ):
        self.name = name
        self.type_text = type_text
        self.space: Space = space
        self.data = data
        self.shape = shape
        self.size = math.prod(shape)
        self.copies = copies
        strides: list[int] = []
        step = 1
        for extent in reversed(shape):
            strides.append(step)
            step *= extent
        self.strides = tuple(reversed(strides))
        self._tracker: Tracker | None = None

    @property
    def tracker(self) -> Tracker:
        if self._tracker is None:
            self._tracker = Tracker(self.data.size)
        return self._tracker

    def describe(self) -> str:
        return f"{_SPACE_NAMES[self.space]} '{self.name}' ({self.type_text})"

    # ------------------------------------------------------------ addresses

    def address(
        self,
        lanes: Lanes,
        sel: Array | None,
        indices: Sequence[Array],
        access: str,
    ) -> Array:
        """The positions in `data` of the element at `indices` for the lanes
        `sel` (None: all), one per lane; a `TCError` if any is out of bounds."""
        n = lanes.count if sel is None else len(sel)
        if all(i.ndim == 0 for i in indices):  # one element for every lane
            flat = 0
            for i, extent, stride in zip(indices, self.shape, self.strides):
                if not 0 <= i < extent:
                    self._out_of_bounds(lanes, sel, indices, np.asarray(True), access)
                flat += int(i) * stride
            flat = np.full(n, flat, np.int64)
        else:
            picked = [i[sel] if i.ndim and sel is not None else i for i in indices]
            flat = np.zeros(n, np.int64)
            for i, extent, stride in zip(picked, self.shape, self.strides):
                bad = (i < 0) | (i >= extent)
                if bad.any():
                    self._out_of_bounds(lanes, sel, picked, bad, access)
                flat += i * stride
        if self.space == "shared":  # the copy of the lane's block
            flat += (
                lanes.lane_block if sel is None else lanes.lane_block[sel]
            ) * self.size
        elif self.space == "private":  # the lane's own copy
            flat += (np.arange(n) if sel is None else sel) * self.size
        return flat

    def _out_of_bounds(
        self,
        lanes: Lanes,
        sel: Array | None,
        picked: Sequence[Array],
        bad: Array,
        access: str,
    ) -> NoReturn:
        p = int(
            np.flatnonzero(
                np.broadcast_to(bad, (lanes.count if sel is None else len(sel),))
            )[0]
        )
        gtid = lanes.gtid[p] if sel is None else lanes.gtid[sel[p]]
        at = [int(i[p]) if i.ndim else int(i) for i in picked]
        raise TCError(
            f"cuda-sim: out-of-bounds {access} in kernel @{lanes.kernel}: "
            f"{lanes.describe(gtid)} accesses {self.name}{at} of "
            f"{self.describe()}, whose extents are {list(self.shape)}"
        )

    # ------------------------------------------------------------ accesses

    def load(
        self, lanes: Lanes, sel: Array | None, flat: Array
    ) -> tuple[Array, Race | None]:
        """The elements at `flat` (one per lane of `sel`), and the lanes among
        them whose read races with a write (module docstring), if any."""
        race = None if self.space == "private" else self._track_read(lanes, sel, flat)
        return self.data[flat], race

    def store(
        self, lanes: Lanes, sel: Array | None, flat: Array, values: Array
    ) -> None:
        """Write `values` (one per lane of `sel`) at `flat`; a `TCError` if
        the write races with another thread's write or read."""
        values = np.broadcast_to(np.asarray(values).astype(self.data.dtype), flat.shape)
        if self.space == "private":
            self.data[flat] = values
            return
        tid = lanes.gtid if sel is None else lanes.gtid[sel]
        stamp = lanes.stamp(sel)
        t = self.tracker
        same = ~_differs(self.data[flat], values)
        wt = t.w_tid[flat]
        bad = ~(same | _ordered(tid, stamp, wt, t.w_stamp[flat], lanes.threads))
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            raise TCError(
                self._race(lanes, flat[p], tid[p], "writes", int(wt[p]), "wrote")
            )
        rb, rt = t.r_block[flat], t.r_tid[flat]
        blk = tid // lanes.threads
        same_block = rb == blk
        if self.space == "shared":
            same_block &= (
                (rt == tid)
                | _ordered(tid, stamp, rt, t.r_stamp[flat], lanes.threads) & (rt >= 0)
                | (t.r_stamp[flat] // WARP_SYNCS < stamp // WARP_SYNCS)
            )
        read_ordered = (rb == -1) | same_block
        bad = ~(same | read_ordered)
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            reader = int(rt[p]) if rb[p] >= 0 and rt[p] >= 0 else None
            raise TCError(self._race(lanes, flat[p], tid[p], "writes", reader, "read"))
        if t.atomics:
            self._check_atomics(lanes, flat, tid, stamp, "writes")
        self.data[flat] = values
        clash = _differs(self.data[flat], values)
        if clash.any():  # lanes of this store writing different values to one element
            p = int(np.flatnonzero(clash)[0])
            q = int(np.flatnonzero((flat == flat[p]) & _differs(values, values[p]))[0])
            raise TCError(
                self._race(lanes, flat[p], tid[p], "writes", int(tid[q]), None)
            )
        t.w_tid[flat] = tid
        t.w_stamp[flat] = stamp

    def update_atomically(self, lanes: Lanes, sel: Array | None, flat: Array) -> None:
        """Record the atomic updates of the lanes `sel` at `flat`; a
        `TCError` if one races with another thread's plain write or read
        (module docstring). The caller applies them."""
        if self.space == "private":
            return
        tid = lanes.gtid if sel is None else lanes.gtid[sel]
        stamp = lanes.stamp(sel)
        t = self.tracker
        wt = t.w_tid[flat]
        bad = ~_ordered(tid, stamp, wt, t.w_stamp[flat], lanes.threads)
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            raise TCError(
                self._race(
                    lanes, flat[p], tid[p], "updates atomically", int(wt[p]), "wrote"
                )
            )
        rb, rt = t.r_block[flat], t.r_tid[flat]
        blk = tid // lanes.threads
        same_block = rb == blk  # (as for a store)
        if self.space == "shared":
            same_block &= (
                (rt == tid)
                | _ordered(tid, stamp, rt, t.r_stamp[flat], lanes.threads) & (rt >= 0)
                | (t.r_stamp[flat] // WARP_SYNCS < stamp // WARP_SYNCS)
            )
        bad = ~((rb == -1) | same_block)
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            reader = int(rt[p]) if rb[p] >= 0 and rt[p] >= 0 else None
            raise TCError(
                self._race(lanes, flat[p], tid[p], "updates atomically", reader, "read")
            )
        _add_accessors(t.a_block, t.a_tid, t.a_stamp, flat, tid, blk, stamp)
        t.atomics = True

    def _check_atomics(
        self, lanes: Lanes, flat: Array, tid: Array, stamp: Array, verb: str
    ) -> Array:
        """The lanes whose plain access at `flat` is not ordered after every
        atomic update of the element by another thread; a `TCError` for a
        write (`verb` "writes")."""
        t = self.tracker
        ab, at = t.a_block[flat], t.a_tid[flat]
        later = t.a_stamp[flat] // WARP_SYNCS < stamp // WARP_SYNCS
        blk = tid // lanes.threads
        bad = ~((ab == -1) | (at == tid) | ((ab == blk) & later))
        if verb == "writes" and bad.any():
            p = int(np.flatnonzero(bad)[0])
            updater = int(at[p]) if ab[p] >= 0 and at[p] >= 0 else None
            raise TCError(
                self._race(lanes, flat[p], tid[p], verb, updater, "updated atomically")
            )
        return bad

    def _track_read(self, lanes: Lanes, sel: Array | None, flat: Array) -> Race | None:
        tid = lanes.gtid if sel is None else lanes.gtid[sel]
        stamp = lanes.stamp(sel)
        t = self.tracker
        wt = t.w_tid[flat]
        bad = ~_ordered(tid, stamp, wt, t.w_stamp[flat], lanes.threads)
        race = None
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            message = self._race(lanes, flat[p], tid[p], "reads", int(wt[p]), "wrote")
            race = Race(bad, message)
        if t.atomics and (t.a_block[flat] != -1).any():
            unordered = self._check_atomics(lanes, flat, tid, stamp, "reads")
            if unordered.any() and race is None:
                p = int(np.flatnonzero(unordered)[0])
                at = int(t.a_tid[flat[p]])
                message = self._race(
                    lanes,
                    flat[p],
                    tid[p],
                    "reads",
                    at if at >= 0 else None,
                    "updated atomically",
                )
                race = Race(unordered, message)
            elif race is not None:
                race = Race(race.lanes | unordered, race.message)
        # readers: their block (-2: several), the latest epoch's thread (-2: several)
        blk = tid // lanes.threads
        rb = t.r_block[flat]
        new_block = np.where((rb == -1) | (rb == blk), blk, -2)
        t.r_block[flat] = new_block
        clash = t.r_block[flat] != new_block  # lanes of several blocks read one element
        t.r_block[flat[clash]] = -2
        rt = t.r_tid[flat]
        later = t.r_stamp[flat] // WARP_SYNCS < stamp // WARP_SYNCS
        new_tid = np.where((rt == -1) | (rt == tid) | later, tid, -2)
        t.r_tid[flat] = new_tid
        t.r_stamp[flat] = stamp
        clash = t.r_tid[flat] != new_tid
        t.r_tid[flat[clash]] = -2
        return race

    def _race(
        self,
        lanes: Lanes,
        flat: int,
        tid: int,
        verb: str,
        other: int | None,
        other_verb: str | None,
    ) -> str:
        """The message of a race: thread `tid` `verb` the element at `flat`,
        which thread `other` (None: other threads) `other_verb` with no
        barrier in between (`other_verb` None: writes at the same time)."""
        at = np.unravel_index(int(flat) % max(self.size, 1), self.shape)
        element = f"{self.name}{[int(i) for i in at]}"
        who = lanes.describe(other) if other is not None else "other threads"
        if other_verb is None:
            what = f"{element} while {who} writes a different value to it"
        else:
            what = (
                f"{element}, which {who} {other_verb}, with no gpu.barrier between them"
            )
        if other is not None and other // lanes.threads != tid // lanes.threads:
            why = "threads of different blocks cannot synchronise within a launch"
        else:
            why = "a gpu.barrier is missing or an index is wrong"
        return (
            f"cuda-sim: race in kernel @{lanes.kernel} on {self.describe()}: "
            f"{lanes.describe(tid)} {verb} {what} ({why})"
        )


def _add_accessors(
    blocks: Array,
    tids: Array,
    stamps: Array,
    flat: Array,
    tid: Array,
    blk: Array,
    stamp: Array,
) -> None:
    """Record accesses of the lanes `tid` (blocks `blk`, epochs `stamp`) at
    `flat` in per-element `blocks` (-2: several), `tids` (the latest
    epoch's thread, -2: several) and `stamps` (the latest epoch)."""
    b = blocks[flat]
    new_block = np.where((b == -1) | (b == blk), blk, -2)
    blocks[flat] = new_block
    blocks[flat[blocks[flat] != new_block]] = -2  # several blocks at one element
    t = tids[flat]
    later = stamps[flat] // WARP_SYNCS < stamp // WARP_SYNCS
    new_tid = np.where((t == -1) | (t == tid) | later, tid, -2)
    tids[flat] = new_tid
    stamps[flat] = stamp
    tids[flat[tids[flat] != new_tid]] = -2


@dataclass(frozen=True)
class Race:
    """Reads that raced with a write: which (of the reading lanes) and the
    message that reports the first."""

    lanes: Array
    message: str


def _ordered(
    tid: Array, stamp: Array, other: Array, other_stamp: Array, threads: int
) -> Array:
    """Whether each access of thread `tid` with stamp `stamp` is ordered after
    an earlier access of thread `other` (-1: none) with stamp `other_stamp`:
    the same thread, the same block and a barrier between them, or the same
    warp and a warp barrier between them (`Lanes.stamp`)."""
    same_block = other // threads == tid // threads
    same_warp = same_block & ((other % threads) // WARP == (tid % threads) // WARP)
    block_later = other_stamp // WARP_SYNCS < stamp // WARP_SYNCS
    return (
        (other < 0)
        | (other == tid)
        | (same_block & block_later)
        | (same_warp & (other_stamp < stamp))
    )
