"""Lockstep SIMT execution of one `gpu.func` over the lanes of a chunk.

Every SSA value of the kernel is a NumPy array with one element per lane, or a
0-d array when it is uniform over the chunk (constants, sizes, ids along an
axis of extent 1, values computed from those). Ops run once for all lanes,
with the semantics of the reference interpreter (`tcdialect.reference`:
float32 stays float32, float16 is NumPy float16, bf16 a float32 value
rounded to bfloat16 after every op and stored as its bits, integers wrap,
division by zero gives 0). Control
flow runs under an *active mask*, None when every lane is active:

- `scf.if` on a uniform condition runs one region; on a per-lane one, the
  `then` region under `mask & c`, the `else` region under `mask & ~c`
  (each only if it has a lane), and its results are merged with `where`;
- `scf.for` with uniform bounds loops in Python; with per-lane bounds (the
  cyclic thread loops ``for i = tid; i < n; i += bdx``) it runs while any
  lane is active, a lane stopping when its index passes its bound;
  loop-carried values of stopped lanes keep their last values;
- `scf.while` likewise, a lane leaving when its condition is false.

Values of inactive lanes are garbage that no active lane sees. Memory ops
touch only active lanes (`memory.Buffer`: bounds and race checks). A load
whose lanes race with a write taints those lanes of its value, and of every
value computed from them (through ops, shuffles, loop-carried values and
region results); the race is reported where a tainted lane is used: stored,
used as an index, a condition, a loop bound or a size. The `gpu` ops:

- `gpu.thread_id` / `block_id` / `block_dim` / `grid_dim` / `lane_id`: the
  lanes' coordinates (`lanes.Lanes`);
- `gpu.barrier`: every block with an active lane must have all its threads
  active (else a `TCError`: a barrier not reached by all threads of a
  block); each such block then enters a new epoch;
- a `memref.store` marked `tc.async_copy` (`gpu-async-copies`: `cp.async`
  on the device) is written when its lane reaches the next barrier, not
  before: an early read of the copy sees the old contents;
- `nvvm.bar.warp.sync -1` (CUDA's `__syncwarp`): every thread of a warp
  with an active lane must be active; each such warp's lanes then count one
  more warp barrier (`lanes.Lanes.stamp`), which orders their accesses;
- `gpu.shuffle` (MLIR's semantics): a warp is 32 consecutive threads of a
  block; lanes 0..width-1 of every warp that executes it must be active.
  Lane k reads lane k ^ offset (`xor`), k + offset (`down`), k - offset
  (`up`) or offset (`idx`); when that lane is outside [0, width), or k is,
  `valid` is false and k gets its own value;
- `memref.alloca` in memory space 3 is shared memory (one buffer per
  block, filled with NaN or 0xA5 bytes), without a memory space private;
  one in space 3 with dynamic extents (in the kernel's entry block) is a
  part of the launch's dynamic shared memory, which it must fit in with the
  ones before it (each rounded up to 16 bytes);
- `func.call` of a C math function the frontend uses for a builtin
  (`hypotf`, `erfcf`, `lgammaf`, `norm3df` ..., and their f64 names) computes
  the reference's builtin;
- `memref.atomic_rmw` applies the lanes' updates one at a time per element
  (in lane order; any number of lanes at one element) and returns each lane
  the value it replaced; its race checks (`Buffer.update_atomically`) are
  against plain accesses only.

Any other op is a `TCError` naming it, when the kernel is prepared.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tcdialect.arguments import numpy_dtype
from tcdialect.conversion.gpu_dynamic_shared import ALIGNMENT as DYNAMIC_ALIGNMENT
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.reference import (
    _BUILTINS,
    _OPS,
    _storage_dtype,
    body_to_tensor,
    body_value,
    tensor_to_body,
)
from tcdialect.runtime.cuda_sim.lanes import WARP, Dim3, Lanes
from tcdialect.runtime.cuda_sim.memory import Buffer, Race, Space, poison
from tcdialect.transforms.gpu_async_copies import ASYNC_COPY

Array = np.ndarray[Any, Any]
Mask = Array | None

#: Memory space of shared memory (NVVM's address space 3).
SHARED_SPACE = 3

#: `memref.atomic_rmw` kinds (MLIR's `AtomicRMWKind`) and the op combining
#: the old value with the operand (None: `assign`).
ATOMIC_KINDS: dict[int, str | None] = {
    0: "arith.addf",
    1: "arith.addi",
    2: "arith.andi",
    3: None,
    4: "arith.maximumf",
    5: "arith.maxnumf",
    6: "arith.maxsi",
    7: "arith.maxui",
    8: "arith.minimumf",
    9: "arith.minnumf",
    10: "arith.minsi",
    11: "arith.minui",
    12: "arith.mulf",
    13: "arith.muli",
    14: "arith.ori",
    15: "arith.xori",
}


def value_name(v: SSAValue, fallback: str) -> str:
    return v.name_hint or fallback


def unique_names(values: Sequence[SSAValue]) -> list[str]:
    """Names of `values` as the printer shows them: the name hint (else
    `arg<i>`), a repeated one with `_1`, `_2`, ... appended."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        name = value_name(v, f"arg{i}")
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        else:
            seen[name] = 0
        names.append(name)
    return names


def memory_space(t: MemRefType[Attribute], kernel: str) -> Space:
    """'shared' or 'private' for a `memref.alloca` of type `t`."""
    space = t.memory_space
    if isinstance(space, NoneAttr):
        return "private"
    if isinstance(space, IntegerAttr) and space.value.data == SHARED_SPACE:
        return "shared"
    raise TCError(
        f"cuda-sim: kernel @{kernel} allocates {t}, in a memory space the "
        "simulator does not know (3 is shared memory; none is private)"
    )


class PreparedKernel:
    """A kernel compiled once into closures (`Step`s), one per op of each
    block; an op the simulator does not know is a `TCError` here."""

    def __init__(self, kernel: gpu.FuncOp, max_shared_memory: int):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.params = len(kernel.function_type.inputs.data)
        #: The names of the kernel's arguments, for messages.
        self.arg_names = unique_names(kernel.body.block.args)
        #: Static shared memory per block, in bytes.
        self.shared_bytes = 0
        self.steps: dict[Block, list[Step]] = {}
        for arg in kernel.body.block.args[self.params :]:
            assert isinstance(arg.type, MemRefType)
            self.shared_bytes += static_bytes(arg.type)
        self.compile(kernel.body.block)
        if self.shared_bytes > max_shared_memory:
            raise TCError(
                f"cuda-sim: kernel @{self.name} uses {self.shared_bytes} bytes of "
                f"shared memory per block; a block may have {max_shared_memory}"
            )

    def compile(self, block: Block) -> None:
        steps: list[Step] = []
        for op in block.ops:
            compiler = _COMPILERS.get(op.name)
            if compiler is None:
                if op.name not in _OPS:
                    raise TCError(
                        f"cuda-sim: kernel @{self.name} holds '{op.name}', which "
                        "the GPU simulator does not support"
                    )
                compiler = _pure
            steps.append(compiler(self, op))
        self.steps[block] = steps


def static_bytes(t: MemRefType[Attribute]) -> int:
    """Bytes of a memref of type `t` (0 when its shape is dynamic)."""
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return 0
    return math.prod(shape) * numpy_dtype(t.element_type).itemsize


class KernelRun:
    """One chunk of one launch: `run()` executes the kernel on `lanes`;
    `dynamic_shared` is the launch's bytes of dynamic shared memory."""

    def __init__(
        self,
        prepared: PreparedKernel,
        lanes: Lanes,
        args: list[Any],
        dynamic_shared: int = 0,
    ):
        self.prepared = prepared
        #: Bytes of dynamic shared memory not yet taken by a buffer.
        self.dynamic_left = dynamic_shared
        self.steps = prepared.steps
        self.lanes = lanes
        self.env: dict[SSAValue, Any] = {}
        block = prepared.kernel.body.block
        for arg, value in zip(block.args, args):
            self.env[arg] = value
        for arg, name in list(zip(block.args, prepared.arg_names))[prepared.params :]:
            t = arg.type
            assert isinstance(t, MemRefType)
            self.env[arg] = self.alloc(t, "shared", name, [])
        #: Copies marked `tc.async_copy` not yet landed: (buffer, lanes,
        #: addresses, values); see `land_copies`.
        self.in_flight: list[tuple[Buffer, Array, Array, Array]] = []
        #: Values some lanes of which come from a racing read (see `racy`).
        self.racy: dict[SSAValue, Race] = {}
        self._sel_of: Mask = None
        self._sel: Array | None = None

    def run(self) -> None:
        self.exec_block(self.prepared.kernel.body.block, None)

    def exec_block(self, block: Block, mask: Mask) -> list[Any]:
        """Run `block` under `mask`; the values its terminator passes on."""
        for step in self.steps[block]:
            passed = step(self, mask)
            if passed is not None:
                return passed
        return []

    def land_copies(self, mask: Mask) -> None:
        """Write the in-flight copies of the lanes of `mask` (all: None),
        which reach a barrier: `cp.async` data are there only after the
        wait before it, so a read of the destination before the barrier
        sees the old contents (the simulator's check that a copy marked
        `tc.async_copy` is not read early)."""
        kept: list[tuple[Buffer, Array, Array, Array]] = []
        for buf, lanes, flat, values in self.in_flight:
            now = np.ones(len(lanes), bool) if mask is None else mask[lanes]
            if now.any():
                buf.store(self.lanes, lanes[now], flat[now], values[now])
            if not now.all():
                later = ~now
                kept.append((buf, lanes[later], flat[later], values[later]))
        self.in_flight = kept

    def select(self, mask: Mask) -> Array | None:
        """The active lanes of `mask` (None: all of them)."""
        if mask is None:
            return None
        if mask is not self._sel_of:
            self._sel_of, self._sel = mask, np.flatnonzero(mask)
        return self._sel

    def alloc(
        self, t: MemRefType[Attribute], space: Space, name: str, sizes: list[int]
    ) -> Buffer:
        it = iter(sizes)
        shape = tuple(next(it) if d < 0 else d for d in t.get_shape())
        copies = len(self.lanes.blocks) if space == "shared" else self.lanes.count
        data = np.empty(copies * math.prod(shape), numpy_dtype(t.element_type))
        return Buffer(name, str(t), space, poison(data), shape, copies)

    def error(self, op: Operation, message: str) -> TCError:
        return TCError(f"cuda-sim: kernel @{self.lanes.kernel}: {op.name}: {message}")

    # A read that races with a write (`memory.Race`) taints the lanes of the
    # value it reads, and every value computed from those lanes; the race is
    # reported when a tainted lane uses the value: stores it, stores or
    # loads at it, or branches or loops on it. A value no lane uses is no
    # error: threads of a block may load what they do not need.

    def race_of(self, values: Sequence[SSAValue]) -> Race | None:
        """The tainted lanes of `values` together (None: none)."""
        racy = self.racy
        found = [racy[v] for v in values if v in racy]
        if not found:
            return None
        lanes = found[0].lanes
        for race in found[1:]:
            lanes = lanes | race.lanes
        return Race(lanes, found[0].message)

    def mark(self, value: SSAValue, race: Race | None) -> None:
        """Record which lanes of `value` are tainted."""
        if race is not None:
            self.racy[value] = race
        elif self.racy:
            self.racy.pop(value, None)

    def check_use(self, op: Operation, values: Sequence[SSAValue], mask: Mask) -> None:
        """Report the race behind `values`, if an active lane of `op` uses a
        tainted lane."""
        if not self.racy or (race := self.race_of(values)) is None:
            return
        if (race.lanes if mask is None else race.lanes & mask).any():
            raise TCError(f"{race.message}; {op.name} uses the value read")


# ------------------------------------------------------------------ op compilers
#
# Each takes the kernel and an op and returns the op's `Step`: a closure that
# takes the run and the active mask, binds the op's results and returns
# None, or, for a terminator, the values it passes on.

Step = Callable[[KernelRun, Mask], "list[Any] | None"]
Compiler = Callable[[PreparedKernel, Any], Step]


def _uniform_int(run: KernelRun, op: Operation, v: Array, mask: Mask, what: str) -> int:
    """`v` as one int: it must be equal over the active lanes."""
    if v.ndim == 0:
        return int(v)
    sel = run.select(mask)
    vals = np.unique(v if sel is None else v[sel])
    if len(vals) != 1:
        raise run.error(op, f"{what} differs between threads ({vals[:4].tolist()})")
    return int(vals[0])


def _pure(p: PreparedKernel, op: Operation) -> Step:
    fn = _OPS[op.name]
    operands = tuple(op.operands)
    result = op.results[0]
    t = result.type

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        env[result] = body_value(fn(op, [env[v] for v in operands]), t)
        if run.racy:
            run.mark(result, run.race_of(operands))

    return step


def _constant(p: PreparedKernel, op: Operation) -> Step:
    result = op.results[0]
    value = body_value(_OPS[op.name](op, []), result.type)

    def step(run: KernelRun, mask: Mask) -> None:
        run.env[result] = value

    return step


def _call(p: PreparedKernel, op: Any) -> Step:
    """`func.call` of a C math function (`hypotf`, `erfc`, ...): the
    reference's builtin of that name."""
    callee = op.callee.root_reference.data
    fn = _BUILTINS.get(callee) or _BUILTINS.get(callee.removesuffix("f"))
    if fn is None or len(op.results) != 1:
        raise TCError(
            f"cuda-sim: kernel @{p.name} calls @{callee}, which the GPU simulator "
            "does not know"
        )
    operands = tuple(op.operands)
    result = op.results[0]
    t = result.type

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        env[result] = body_value(fn(*[env[v] for v in operands]), t)
        if run.racy:
            run.mark(result, run.race_of(operands))

    return step


def _id(axis_of: Callable[[Lanes], tuple[Array, Array, Array]]) -> Compiler:
    def compile(p: PreparedKernel, op: Any) -> Step:
        axis = "xyz".index(op.dimension.data.value)
        result = op.result

        def step(run: KernelRun, mask: Mask) -> None:
            run.env[result] = axis_of(run.lanes)[axis]

        return step

    return compile


def _dims(dims: Dim3) -> tuple[Array, Array, Array]:
    return tuple(np.asarray(d, np.int64) for d in dims)  # type: ignore[return-value]


def _lane_id(p: PreparedKernel, op: Any) -> Step:
    result = op.result

    def step(run: KernelRun, mask: Mask) -> None:
        run.env[result] = run.lanes.warp_lane

    return step


def _barrier(p: PreparedKernel, op: Any) -> Step:
    return _barrier_step


def _barrier_step(run: KernelRun, mask: Mask) -> None:
    lanes = run.lanes
    run.land_copies(mask)
    if mask is None:
        lanes.epoch += 1
        return
    counts = np.bincount(lanes.lane_block[mask], minlength=len(lanes.blocks))
    partial = np.flatnonzero((counts > 0) & (counts < lanes.threads))
    if len(partial):
        slot = int(partial[0])
        part = mask[slot * lanes.threads : (slot + 1) * lanes.threads]
        waiting = lanes.gtid[slot * lanes.threads + int(np.flatnonzero(part)[0])]
        missing = lanes.gtid[slot * lanes.threads + int(np.flatnonzero(~part)[0])]
        raise TCError(
            f"cuda-sim: kernel @{lanes.kernel}: a gpu.barrier is reached by only "
            f"{counts[slot]} of the {lanes.threads} threads of a block: "
            f"{lanes.describe(waiting)} waits at it but {lanes.describe(missing)} "
            "never arrives (a barrier in divergent control flow)"
        )
    lanes.epoch[counts > 0] += 1


def _warp_sync(p: PreparedKernel, op: Any) -> Step:
    def step(run: KernelRun, mask: Mask) -> None:
        lanes = run.lanes
        mask_value = _uniform_int(run, op, run.env[op.mask], mask, "the mask")
        if mask_value & 0xFFFFFFFF != 0xFFFFFFFF:
            raise run.error(op, "only a full mask (-1) is supported")
        local = np.arange(lanes.count) % lanes.threads
        warp = lanes.lane_block * -(-lanes.threads // WARP) + local // WARP
        if mask is None:
            lanes.warp_syncs += 1
            return
        count = np.bincount(warp[mask], minlength=int(warp.max()) + 1)
        size = np.bincount(warp, minlength=int(warp.max()) + 1)
        partial = np.flatnonzero((count > 0) & (count < size))
        if len(partial):
            lane = int(np.flatnonzero((warp == partial[0]) & ~mask)[0])
            raise run.error(
                op,
                f"a warp barrier is not reached by {lanes.describe(lanes.gtid[lane])}"
                " of its warp (a warp barrier in divergent control flow)",
            )
        lanes.warp_syncs[(count > 0)[warp]] += 1

    return step


def _shuffle(p: PreparedKernel, op: gpu.ShuffleOp) -> Step:
    mode = op.mode.data.value

    def step(run: KernelRun, mask: Mask) -> None:
        lanes = run.lanes
        env = run.env
        run.check_use(op, (op.offset, op.width), mask)
        width = _uniform_int(run, op, env[op.width], mask, "the width")
        if not 1 <= width <= WARP:
            raise run.error(op, f"the width is {width}, not between 1 and {WARP}")
        lane = np.arange(lanes.count)
        k = lanes.warp_lane
        active = np.ones(lanes.count, np.bool_) if mask is None else mask
        per_block = -(-lanes.threads // WARP)
        warp = lanes.lane_block * per_block + (lane % lanes.threads) // WARP
        ready = np.bincount(
            warp[active & (k < width)], minlength=len(lanes.blocks) * per_block
        )
        executing = np.bincount(warp[active], minlength=len(ready)) > 0
        short = np.flatnonzero(executing & (ready < width))
        if len(short):
            first = lanes.gtid[lane[warp == short[0]][0]]
            raise run.error(
                op,
                f"lanes 0 to {width - 1} of the warp of {lanes.describe(first)} "
                f"must all execute a shuffle of width {width}, but only "
                f"{ready[short[0]]} do",
            )
        offset = env[op.offset].astype(np.int64)
        if mode == "xor":
            j = k ^ offset
        elif mode == "down":
            j = k + offset
        elif mode == "up":
            j = k - offset
        else:
            j = np.broadcast_to(offset, k.shape)
        valid = active & (k < width) & (j >= 0) & (j < width)
        v = env[op.value]
        source = np.where(valid, lane - k + j, lane)
        env[op.shuffleResult] = v[source] if v.ndim else v
        env[op.valid] = valid
        if run.racy:
            race = run.race_of((op.value,))
            run.mark(op.shuffleResult, race and Race(race.lanes[source], race.message))

    return step


def _load(p: PreparedKernel, op: Any) -> Step:
    memref, indices, result = op.memref, tuple(op.indices), op.res
    dt = _storage_dtype(result.type)
    elem = memref.type.element_type

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        buf: Buffer = env[memref]
        idx = [env[v] for v in indices]
        sel = run.select(mask)
        flat = buf.address(run.lanes, sel, idx, "load")
        vals, race = buf.load(run.lanes, sel, flat)
        vals = tensor_to_body(vals, elem).astype(dt, copy=False)
        if buf.copies == 1 and all(i.ndim == 0 for i in idx):
            env[result] = vals[0]  # the same element for every lane
        elif sel is None:
            env[result] = vals
        else:
            out = np.zeros(run.lanes.count, dt)
            out[sel] = vals
            env[result] = out
        if race is not None and sel is not None:
            lanes = np.zeros(run.lanes.count, np.bool_)
            lanes[sel] = race.lanes
            race = Race(lanes, race.message)
        if run.racy and (at := run.race_of(indices)) is not None:
            race = at if race is None else Race(race.lanes | at.lanes, race.message)
        run.mark(result, race)

    return step


def _store(p: PreparedKernel, op: Any) -> Step:
    memref, indices, value = op.memref, tuple(op.indices), op.value
    elem = memref.type.element_type
    deferred = ASYNC_COPY in op.attributes

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        buf: Buffer = env[memref]
        run.check_use(op, (value, *indices), mask)
        sel = run.select(mask)
        flat = buf.address(run.lanes, sel, [env[v] for v in indices], "store")
        v = env[value]
        v = v[sel] if v.ndim and sel is not None else v
        if deferred:  # a cp.async copy: it lands at the lane's next barrier
            lanes = np.arange(run.lanes.count) if sel is None else sel.copy()
            values = np.broadcast_to(body_to_tensor(v, elem), flat.shape)
            run.in_flight.append((buf, lanes, flat, values))
            return
        buf.store(run.lanes, sel, flat, body_to_tensor(v, elem))

    return step


def _atomic_rmw(p: PreparedKernel, op: Any) -> Step:
    kind = int(op.kind.value.data)
    if kind not in ATOMIC_KINDS:
        raise TCError(f"cuda-sim: kernel @{p.name}: unknown atomic kind {kind}")
    combine = ATOMIC_KINDS[kind]
    memref, indices, value, result = op.memref, tuple(op.indices), op.value, op.result
    dt = _storage_dtype(result.type)
    elem = memref.type.element_type

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        buf: Buffer = env[memref]
        run.check_use(op, (value, *indices), mask)
        sel = run.select(mask)
        idx = [env[i] for i in indices]
        flat = buf.address(run.lanes, sel, idx, "atomic update")
        buf.update_atomically(run.lanes, sel, flat)
        v = env[value]
        v = np.broadcast_to(v[sel] if v.ndim and sel is not None else v, flat.shape)
        # the rank of each lane among those updating its element, in lane order
        n = len(flat)
        order = np.argsort(flat, kind="stable")
        ordered = flat[order]
        starts = np.ones(n, np.bool_)
        starts[1:] = ordered[1:] != ordered[:-1]
        first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n) - first
        old_all = np.zeros(n, dt)
        for r in range(int(rank.max()) + 1 if n else 0):
            now = rank == r
            at = flat[now]
            old = tensor_to_body(buf.data[at], elem).astype(dt)
            new = v[now] if combine is None else _OPS[combine](op, [old, v[now]])
            buf.data[at] = body_to_tensor(body_value(new, elem), elem)
            old_all[now] = old
        if sel is None:
            env[result] = old_all
        else:
            out = np.zeros(run.lanes.count, dt)
            out[sel] = old_all
            env[result] = out

    return step


def _dim(p: PreparedKernel, op: Any) -> Step:
    def step(run: KernelRun, mask: Mask) -> None:
        buf: Buffer = run.env[op.source]
        run.check_use(op, (op.index,), mask)
        d = _uniform_int(run, op, run.env[op.index], mask, "the dimension")
        if not 0 <= d < len(buf.shape):
            raise run.error(op, f"dimension {d} of {buf.describe()} does not exist")
        run.env[op.result] = np.asarray(buf.shape[d], np.int64)

    return step


def _alloca(p: PreparedKernel, op: Any) -> Step:
    t = op.memref.type
    space = memory_space(t, p.name)
    if space == "shared":
        p.shared_bytes += static_bytes(t)
    name = value_name(op.memref, f"{space} buffer")
    dynamic = space == "shared" and bool(op.dynamic_sizes)
    if dynamic and op.parent_block() is not p.kernel.body.block:
        raise TCError(
            f"cuda-sim: kernel @{p.name} allocates dynamic shared memory ({t}) "
            "outside its entry block"
        )
    itemsize = numpy_dtype(t.element_type).itemsize

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        run.check_use(op, op.dynamic_sizes, mask)
        sizes = [
            _uniform_int(run, op, env[v], mask, "the size") for v in op.dynamic_sizes
        ]
        buf = run.alloc(t, space, name, sizes)
        if dynamic:  # a part of the launch's dynamic shared memory
            nbytes = math.prod(buf.shape) * itemsize
            if nbytes > run.dynamic_left:
                raise run.error(
                    op,
                    f"{buf.describe()}, {nbytes} bytes, does not fit in the "
                    f"{run.dynamic_left} bytes of dynamic shared memory the "
                    "launch has left",
                )
            run.dynamic_left -= -(-nbytes // DYNAMIC_ALIGNMENT) * DYNAMIC_ALIGNMENT
        env[op.memref] = buf

    return step


def _cast(p: PreparedKernel, op: Any) -> Step:
    def step(run: KernelRun, mask: Mask) -> None:
        run.env[op.dest] = run.env[op.source]

    return step


def _yielded(block: Block) -> tuple[SSAValue, ...]:
    """What the terminator of `block` passes on (`scf.condition`: after the
    condition)."""
    term = block.last_op
    assert term is not None
    operands = tuple(term.operands)
    return operands[1:] if term.name == "scf.condition" else operands


def _merge(pick: Array, a: Race | None, b: Race | None) -> Race | None:
    """The taint of `where(pick, x, y)` for x tainted by `a`, y by `b`."""
    if a is None and b is None:
        return None
    message = a.message if a is not None else b.message  # type: ignore[union-attr]
    lanes = np.where(
        pick, False if a is None else a.lanes, False if b is None else b.lanes
    )
    return Race(lanes, message) if lanes.any() else None


def _races(run: KernelRun, values: Sequence[SSAValue]) -> list[Race | None]:
    if not run.racy:
        return [None] * len(values)
    return [run.race_of((v,)) for v in values]


def _mark_all(
    run: KernelRun, values: Sequence[SSAValue], races: list[Race | None]
) -> None:
    if run.racy or any(r is not None for r in races):
        for v, r in zip(values, races):
            run.mark(v, r)


def _for(p: PreparedKernel, op: Any) -> Step:
    body = op.body.block
    p.compile(body)
    iv, carried = body.args[0], body.args[1:]
    dt = _storage_dtype(iv.type)
    inits, results, yielded = tuple(op.iter_args), tuple(op.results), _yielded(body)

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        run.check_use(op, (op.lb, op.ub, op.step), mask)
        lb, ub, stride = env[op.lb], env[op.ub], env[op.step]
        values = [env[v] for v in inits]
        races = _races(run, inits)
        if lb.ndim == 0 and ub.ndim == 0 and stride.ndim == 0:
            i, end, s = int(lb), int(ub), int(stride)
            if s <= 0 and i < end:
                raise run.error(op, f"the step is {s}: the loop never ends")
            while i < end:
                env[iv] = np.asarray(i, dt)
                env.update(zip(carried, values))
                _mark_all(run, carried, races)
                values = run.exec_block(body, mask)
                races = _races(run, yielded)
                i += s
        else:
            i = np.broadcast_to(lb, (run.lanes.count,)).astype(dt)
            active = i < ub if mask is None else mask & (i < ub)
            if np.any(active & (stride <= 0)):
                raise run.error(op, "the step is not positive: the loop never ends")
            while active.any():
                env[iv] = i
                env.update(zip(carried, values))
                _mark_all(run, carried, races)
                new = run.exec_block(body, active)
                values = [np.where(active, n, o) for n, o in zip(new, values)]
                if run.racy:
                    races = [
                        _merge(active, n, o)
                        for n, o in zip(_races(run, yielded), races)
                    ]
                i = (i + stride).astype(dt)
                active = active & (i < ub)
        env.update(zip(results, values))
        _mark_all(run, results, races)

    return step


def _if(p: PreparedKernel, op: Any) -> Step:
    then_block = op.true_region.block
    else_block = op.false_region.blocks[0] if op.false_region.blocks else None
    p.compile(then_block)
    then_yielded = _yielded(then_block)
    else_yielded: tuple[SSAValue, ...] = ()
    if else_block is not None:
        p.compile(else_block)
        else_yielded = _yielded(else_block)
    results = tuple(op.results)

    def run_else(run: KernelRun, mask: Mask) -> list[Any]:
        return run.exec_block(else_block, mask) if else_block is not None else []

    def step(run: KernelRun, mask: Mask) -> None:
        run.check_use(op, (op.cond,), mask)
        c = run.env[op.cond]
        if c.ndim == 0:
            if c:
                values = run.exec_block(then_block, mask)
                races = _races(run, then_yielded)
            else:
                values = run_else(run, mask)
                races = _races(run, else_yielded)
        else:
            taken = c if mask is None else mask & c
            skipped = ~c if mask is None else mask & ~c
            if not skipped.any():
                values = run.exec_block(then_block, mask)
                races = _races(run, then_yielded)
            elif not taken.any():
                values = run_else(run, mask)
                races = _races(run, else_yielded)
            else:
                then_values = run.exec_block(then_block, taken)
                then_races = _races(run, then_yielded)
                else_values = run_else(run, skipped)
                values = [np.where(c, t, e) for t, e in zip(then_values, else_values)]
                races = [
                    _merge(c, t, e)
                    for t, e in zip(then_races, _races(run, else_yielded))
                ]
        run.env.update(zip(results, values))
        _mark_all(run, results, races)

    return step


def _while(p: PreparedKernel, op: Any) -> Step:
    before, after = op.before_region.block, op.after_region.block
    p.compile(before)
    p.compile(after)
    inits, results = tuple(op.arguments), tuple(op.results)
    condition = before.last_op
    assert condition is not None
    passed_values, after_yielded = _yielded(before), _yielded(after)

    def step(run: KernelRun, mask: Mask) -> None:
        env = run.env
        values = [env[v] for v in inits]
        races = _races(run, inits)
        final: list[Any] | None = None
        final_races: list[Race | None] = []
        active = mask
        while True:
            env.update(zip(before.args, values))
            _mark_all(run, before.args, races)
            cond, *passed = run.exec_block(before, active)
            run.check_use(condition, condition.operands[:1], active)
            passed_races = _races(run, passed_values)
            if cond.ndim == 0 and not cond:  # every active lane leaves
                if final is None or active is None:
                    final, final_races = passed, passed_races
                else:
                    final = [np.where(active, a, b) for a, b in zip(passed, final)]
                    final_races = [
                        _merge(active, a, b) for a, b in zip(passed_races, final_races)
                    ]
                break
            if cond.ndim:
                leaving = ~cond if active is None else active & ~cond
                if final is None:
                    # lanes that stay overwrite theirs when they leave
                    final, final_races = passed, passed_races
                else:
                    final = [np.where(leaving, a, b) for a, b in zip(passed, final)]
                    final_races = [
                        _merge(leaving, a, b) for a, b in zip(passed_races, final_races)
                    ]
                active = cond if active is None else active & cond
                if not active.any():
                    break
            env.update(zip(after.args, passed))
            _mark_all(run, after.args, passed_races)
            values = run.exec_block(after, active)
            races = _races(run, after_yielded)
        env.update(zip(results, final))
        _mark_all(run, results, final_races)

    return step


def _yield(p: PreparedKernel, op: Operation) -> Step:
    operands = tuple(op.operands)

    def step(run: KernelRun, mask: Mask) -> list[Any]:
        return [run.env[v] for v in operands]

    return step


_COMPILERS: dict[str, Compiler] = {
    "arith.constant": _constant,
    "func.call": _call,
    "gpu.thread_id": _id(lambda lanes: lanes.thread_id),
    "gpu.block_id": _id(lambda lanes: lanes.block_id),
    "gpu.block_dim": _id(lambda lanes: _dims(lanes.block)),
    "gpu.grid_dim": _id(lambda lanes: _dims(lanes.grid)),
    "gpu.lane_id": _lane_id,
    "gpu.barrier": _barrier,
    "gpu.shuffle": _shuffle,
    "nvvm.bar.warp.sync": _warp_sync,
    "gpu.return": _yield,
    "memref.load": _load,
    "memref.store": _store,
    "memref.atomic_rmw": _atomic_rmw,
    "memref.dim": _dim,
    "memref.alloca": _alloca,
    "memref.cast": _cast,
    "scf.for": _for,
    "scf.if": _if,
    "scf.while": _while,
    "scf.yield": _yield,
    "scf.condition": _yield,
}
