"""`convert-parallel-loops-to-gpu`: outline loop nests into GPU kernels.

Contract: in every `func.func` with a body, each *device segment* of the
top-level ops becomes a `gpu.func` kernel in the `gpu.module`
`@<function>_kernels` (inserted after the function), and the segment is
replaced by a `gpu.launch_func` of it. A device segment is a top-level op
with regions (a loop nest, an `scf.if`), or a maximal run of top-level ops
that touch memory and the ops that use their values (a 0-dimensional
statement's loads, arithmetic, bounds checks and store). What stays on the host: side-effect-free ops (sizes, constants),
`memref.alloc`/`dealloc` and the terminator. The builtin module gets
`gpu.container_module`. A recurrence's step loop (a top-level `scf.for`
marked `tc.recurrence`) stays on the host too, and the device segments of
its body become kernels launched in it, once per step, the step index a
kernel argument: the end of a kernel is the barrier between steps::

    scf.for %t = %c1 to %T1 step %c1 {
      gpu.launch_func @rnn_kernels::@rnn_k1 ... args(%Wh : ..., %h : ..., %p : ..., %t : index)
      gpu.launch_func @rnn_kernels::@rnn_k2 ... args(..., %t : index, %p : ...)
    } {tc.recurrence}

Inside a kernel:

- Values from the host are kernel arguments (memrefs and sizes, in the
  function's argument order, then allocations); side-effect-free host ops
  they come from are cloned into the kernel instead when their operands are
  arguments or constants (MLIR's launch-sink-index-computations).
- A one-dimensional `scf.parallel` with `tc.gpu_processor` (`block_x`, ...,
  `thread_z`; from `affine-gpu-map`) becomes a cyclic `scf.for`: from
  `lb + id * step` by `count * step`, with `id`/`count` the block index and
  grid size (`gpu.block_id`/`gpu.grid_dim`) or the thread index and block
  size (`gpu.thread_id`/`gpu.block_dim`) along its axis. Any grid and block
  therefore compute the same result. A mapped loop inside one of the same
  processor, and an unmapped `scf.parallel`, become plain `scf.for`s.
  Where a thread loop's lower bound changes with a loop around it in the
  kernel (a tile loop run in order in each thread) and is not a multiple
  of the block along its axis, the loop starts at `lb + (id - lb) mod count`
  instead, so that a value always belongs to the same thread (`v mod
  count`): otherwise an element one thread wrote under one bound would be
  read by another under the next, with no barrier between them.
- A store runs in one thread per element: along each axis of the block
  with no enclosing thread loop of that axis (serial code between thread
  loops, like an initialisation above a tiled reduction, or a nest mapped
  to fewer axes than another in the same kernel), only the thread at index
  0 stores (`scf.if` on those thread indices being 0), and the loads and
  arithmetic just before it that serve only the store move into that
  `scf.if` with it.
- Within a region that holds thread-mapped loops, a `gpu.barrier` goes
  before each op that touches an array that an op since the last barrier
  wrote, or writes one that such an op read: whatever a thread wrote is
  visible to the block's other threads before they read or overwrite it,
  and nothing is overwritten before they have read it. Distinct arrays
  never alias (kernel arguments and allocations; views count as the array
  they view), so ops on different arrays need none between them:
  matmul's copies of its A and B tiles into shared memory share one
  barrier, before the products read them. A loop body with more than one
  op that touches memory also ends with one when what its last ops did
  conflicts so with what its first ops do in the next iteration. (One
  thread-loop nest alone needs none: its coincident members give each
  element to the same thread in every iteration.) Those regions run uniformly across a block
  (their control flow depends on sizes and block indices only), so every
  thread reaches every barrier.
- A `thread_x` loop marked `tc.gpu_reduce` whose body is one reduction
  (`S[i] = S[i] op x`, of any element type) is shared by the block's
  threads along x (`_share_reduction`): per-thread partial results, a
  butterfly of shuffles per warp, the warps' totals through shared memory,
  and `S[i] = S[i] op total` in thread 0. With `tc.gpu_split = "block_y"`
  (and `tc.gpu_split_size`), the blocks along y share it too, and each
  adds its total with `memref.atomic_rmw` (`_split`: only when the combine
  has an atomic, not a product, and the reduction is all the kernel
  writes; else one block as before). The grid along that axis is the
  loop's iterations over 8 per thread (`MIN_PER_THREAD`), at most the size.
  A marked loop whose body is not one reduction runs in one thread along x.

The launch: the block size along each axis is the largest `tc.gpu_size` of
the thread loops of that axis (1 without any: `known_block_size` records it);
the grid size along an axis is the block loop's iteration count, computed on
the host from its bounds when they depend on host values only, capped by its
`tc.gpu_size` (the `grid` option); else the cap. Shared buffers with
dynamic extents (dynamic shared memory, `gpu_dynamic_shared`) move to the
kernel's entry block, and the launch passes their bytes, computed on the
host, as `dynamic_shared_memory_size`. Example::

    scf.parallel (%i) = (%c0) to (%n) step (%c1) {   // tc.gpu_processor = "thread_x"
      memref.store %x, %A[%i] : memref<?xf32>        // tc.gpu_size = 128
    }

becomes, on the host, ``gpu.launch_func @f_kernels::@f_k0 blocks in (%c1,
%c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %n :
index)`` and the kernel::

    gpu.func @f_k0(%A: memref<?xf32>, %n: index) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %t = gpu.thread_id x
      %d = gpu.block_dim x
      %lb = ... %c0 + %t * %c1 ;  %step = ... %d * %c1
      scf.for %i = %lb to %n step %step { memref.store %x, %A[%i] }
      gpu.return
    }
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable, is_side_effect_free

from tcdialect.conversion.gpu_dynamic_shared import (
    dynamic_allocas,
    hoist,
    launch_bytes,
)
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu, nvvm
from tcdialect.dialects.memref import ATOMIC_RMW_KINDS
from tcdialect.poly.codegen import (
    GPU_PROCESSOR,
    GPU_REDUCE,
    GPU_SIZE,
    GPU_SPLIT,
    GPU_SPLIT_SIZE,
)
from tcdialect.poly.gpu_mapping import MIN_PER_THREAD
from tcdialect.transforms.ir_values import constant_index, defined_outside

AXES = ("x", "y", "z")
_DIM_OPS: dict[str, tuple[type[gpu._DimOp], type[gpu._DimOp]]] = {
    "block": (gpu.BlockIdOp, gpu.GridDimOp),
    "thread": (gpu.ThreadIdOp, gpu.BlockDimOp),
}


def _processor(op: Operation) -> tuple[str, int, int] | None:
    """(`block`|`thread`, axis, size) of a mapped one-dimensional loop."""
    if not isinstance(op, scf.ParallelOp) or len(op.lowerBound) != 1:
        return None
    proc = op.attributes.get(GPU_PROCESSOR)
    size = op.attributes.get(GPU_SIZE)
    if not isinstance(proc, StringAttr) or not isinstance(size, IntegerAttr):
        return None
    kind, _, axis = proc.data.partition("_")
    if kind not in _DIM_OPS or axis not in AXES:
        raise TCError(f"convert-parallel-loops-to-gpu: unknown processor '{proc.data}'")
    return kind, AXES.index(axis), size.value.data


def _is_recurrence(op: Operation) -> bool:
    """A recurrence's step loop (`tc.recurrence`, from `convert-tc-to-affine`)."""
    return isinstance(op, scf.ForOp) and "tc.recurrence" in op.attributes


def _host_op(op: Operation) -> bool:
    """Whether a top-level op stays on the host."""
    if isinstance(op, func.ReturnOp | scf.YieldOp | memref.AllocOp | memref.DeallocOp):
        return True
    return not op.regions and is_side_effect_free(op)


def _segments(ops: Iterable[Operation]) -> list[list[Operation]]:
    """The device segments of a function body's ops (module docstring). A
    side-effect-free op joins a run when it uses a value the run made (the
    arithmetic of a 0-dimensional statement); others stay on the host. An op
    with regions that has results or uses the run's values (a bounds check's
    `scf.if`) joins the run too."""
    out: list[list[Operation]] = []
    run: list[Operation] = []
    made: set[SSAValue] = set()
    for op in ops:
        if _host_op(op):
            if run and not isinstance(
                op, func.ReturnOp | scf.YieldOp | memref.DeallocOp
            ):
                if any(v in made for v in op.operands):
                    run.append(op)
                    made.update(op.results)
            continue
        joins = op.results or any(v in made for v in op.operands)
        if op.regions and not joins:
            if run:
                out.append(run)
                run, made = [], set()
            out.append([op])
        else:  # a statement's ops, `scf.if`s that yield its values included
            run.append(op)
            made.update(op.results)
    if run:
        out.append(run)
    return out


def _writes(op: Operation) -> bool:
    return any(isinstance(o, memref.StoreOp | memref.AtomicRMWOp) for o in op.walk())


#: Ops whose result is a view of their first operand's memory.
_VIEWS = (
    memref.SubviewOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
)


def _array(v: SSAValue) -> SSAValue:
    """The array (kernel argument or allocation) that memref `v` views."""
    while isinstance(v.owner, _VIEWS):
        v = v.owner.operands[0]
    return v


def _arrays(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """The arrays that `op` (and the ops inside it) read and write; an
    unknown op with a memref operand counts as reading and writing it."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for o in op.walk():
        if isinstance(o, memref.LoadOp):
            reads.add(_array(o.memref))
        elif isinstance(o, memref.StoreOp):
            writes.add(_array(o.memref))
        elif isinstance(o, (*_VIEWS, memref.DimOp, memref.AllocaOp)):
            continue
        else:
            for v in o.operands:
                if isinstance(v.type, MemRefType):
                    reads.add(_array(v))
                    writes.add(_array(v))
    return reads, writes


def _touches_memory(op: Operation) -> bool:
    return any(
        isinstance(
            o,
            memref.StoreOp | memref.LoadOp | memref.AtomicRMWOp,
        )
        for o in op.walk()
    )


@dataclass
class _Kernel:
    """One segment being outlined."""

    fn: func.FuncOp
    segment: list[Operation]
    entry: Block = field(default_factory=Block)
    #: host value -> kernel block argument or cloned value
    mapping: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    args: list[SSAValue] = field(default_factory=list[SSAValue])

    def inside(self, v: SSAValue) -> bool:
        """Whether `v` is defined in the segment (or a region of it)."""
        owner = v.owner
        return self.contains(
            owner if isinstance(owner, Operation) else owner.parent_op()
        )

    def contains(self, op: Operation | None) -> bool:
        """Whether `op` is one of the segment's ops or nested in one."""
        while op is not None:
            if op in self.segment:
                return True
            op = op.parent_op()
        return False


class _Outliner:
    def __init__(self, module: ModuleOp, fn: func.FuncOp):
        self.module = module
        self.fn = fn
        self.kernels: gpu.ModuleOp | None = None
        self.count = 0

    def run(self) -> None:
        block = self.fn.body.blocks.first
        if block is None or len(self.fn.body.blocks) != 1:
            return
        ops: list[Operation] = []
        for op in [*block.ops, None]:
            if op is not None and not _is_recurrence(op):
                ops.append(op)
                continue
            for seg in _segments(ops):
                self.outline(seg)
            ops = []
            if op is not None:
                # a recurrence's step loop stays on the host: its body's
                # segments are kernels launched at every step
                assert isinstance(op, scf.ForOp)
                for seg in _segments(list(op.body.block.ops)):
                    self.outline(seg)

    # -- values from the host ---------------------------------------------------------

    def _kernel_value(self, v: SSAValue, k: _Kernel, b: Builder) -> SSAValue:
        """The kernel's version of host value `v` (an argument, or a clone)."""
        if v in k.mapping:
            return k.mapping[v]
        owner = v.owner
        if (
            isinstance(owner, Operation)
            and not owner.regions
            and is_side_effect_free(owner)
            and not isinstance(owner, memref.AllocOp)
        ):
            operands = [self._kernel_value(o, k, b) for o in owner.operands]
            clone = owner.clone(
                value_mapper=dict(zip(owner.operands, operands, strict=True))
            )
            b.insert(clone)
            for old, new in zip(owner.results, clone.results, strict=True):
                k.mapping[old] = new
            return k.mapping[v]
        k.args.append(v)
        arg = k.entry.insert_arg(v.type, len(k.entry.args))
        if v.name_hint:
            arg.name_hint = v.name_hint
        k.mapping[v] = arg
        return arg

    def _host_value(self, v: SSAValue, k: _Kernel, at: InsertPoint) -> SSAValue | None:
        """`v` (from the segment) computed on the host before the launch, when it
        is a pure function of host values; else None."""
        if not k.inside(v):
            return v
        owner = v.owner
        if not isinstance(owner, Operation) or owner.regions:
            return None
        if not is_side_effect_free(owner):
            return None
        operands: list[SSAValue] = []
        for o in owner.operands:
            h = self._host_value(o, k, at)
            if h is None:
                return None
            operands.append(h)
        clone = owner.clone(value_mapper=dict(zip(owner.operands, operands)))
        Rewriter.insert_op(clone, at)
        return clone.results[owner.results.index(v)]  # pyright: ignore[reportArgumentType]

    # -- outlining --------------------------------------------------------------------

    def outline(self, segment: list[Operation]) -> None:
        k = _Kernel(self.fn, segment)
        # external operands, in order: function arguments first, then the rest
        external: list[SSAValue] = []
        for top in segment:
            for op in top.walk():
                for v in op.operands:
                    if not k.inside(v) and v not in external:
                        external.append(v)
        position: dict[SSAValue, tuple[int, int]] = {
            v: (1, i) for i, v in enumerate(external)
        }
        position.update((a, (0, i)) for i, a in enumerate(self.fn.body.block.args))
        external.sort(key=lambda v: position[v])
        entry = k.entry
        b = Builder(InsertPoint.at_end(entry))
        # memrefs and sizes become arguments; pure computations are cloned
        for v in external:
            if not isinstance(v.owner, Operation) or isinstance(
                v.owner, memref.AllocOp
            ):
                self._kernel_value(v, k, b)
        for v in external:
            self._kernel_value(v, k, b)
        mapper = dict(k.mapping)  # one mapper: later ops use earlier results
        clones = [op.clone(value_mapper=mapper) for op in segment]
        entry.add_ops(clones)
        entry.add_op(gpu.ReturnOp())
        for op in segment:
            for r in op.results:
                if any(not k.contains(u.operation) for u in r.uses):
                    raise TCError(
                        f"convert-parallel-loops-to-gpu: the result of "
                        f"'{op.name}' is used outside its kernel"
                    )
        self._declare_callees(entry)

        launch = _Launch()
        plans: list[tuple[str, int, int] | None] = []
        for op in segment:
            _plan(op, frozenset(), plans)
        loops = [o for op in clones for o in op.walk() if isinstance(o, scf.ParallelOp)]
        originals = [
            o for op in segment for o in op.walk() if isinstance(o, scf.ParallelOp)
        ]
        for orig, loop, mapped in zip(originals, loops, plans, strict=True):
            red = None
            if GPU_REDUCE in loop.attributes and mapped is not None:
                red = _reduction(loop)
                if red is None:
                    mapped = None  # not one reduction: a loop in every thread
            if mapped is not None:
                kind, axis, size = mapped
                if kind == "block":
                    launch.blocks[axis].append((orig, size))
                else:
                    dims = list(launch.block)
                    dims[axis] = max(dims[axis], size)
                    launch.block = (dims[0], dims[1], dims[2])
            if red is not None and mapped is not None:
                split = _split(loop, red, entry)
                if split is not None:
                    launch.blocks[split[0]].append((orig, split[1]))
                    launch.split[orig] = mapped[2]
                shared = _share_reduction(
                    loop, mapped[1], mapped[2], red, launch, split and split[0]
                )
                launch.shared.add(shared)
                launch.divergent.add(shared)
                continue
            new = _cyclic(loop, mapped)
            if mapped is not None and mapped[0] == "thread":
                launch.thread_loops[new] = mapped[1]
        _anchor_thread_loops(launch)
        if launch.block != (1, 1, 1):
            _guard_and_sync(entry, launch)

        name = f"{self.fn.sym_name.data}_k{self.count}"
        self.count += 1
        hoist(entry, name)
        kernel = gpu.FuncOp(
            name,
            FunctionType.from_lists([a.type for a in entry.args], []),
            Region(entry),
            known_block_size=list(launch.block),
        )
        self._kernels().body.block.add_op(kernel)

        # the host side: grid from the block loops' bounds, then the launch
        at = InsertPoint.before(segment[0])
        grid: list[SSAValue] = []
        for axis in range(3):
            grid.append(self._grid_size(launch, axis, k, at))
        block = [_constant(n, at) for n in launch.block]
        allocas = dynamic_allocas(segment)
        smem = None
        if allocas:
            smem = launch_bytes(allocas, lambda v: self._host_value(v, k, at), at, name)
        call = gpu.LaunchFuncOp(
            SymbolRefAttr(self._kernels().sym_name.data, [name]),
            grid,
            block,
            k.args,
            smem,
        )
        Rewriter.insert_op(call, at)
        for op in reversed(segment):
            op.detach()
            op.erase(safe_erase=False)

    def _grid_size(
        self, launch: _Launch, axis: int, k: _Kernel, at: InsertPoint
    ) -> SSAValue:
        loops = launch.blocks[axis]
        if not loops:
            return _constant(1, at)
        cap = max(size for _, size in loops)
        if len(loops) > 1:
            return _constant(cap, at)
        ((loop, _),) = loops
        # a reduction shared across blocks: no more blocks than give each
        # thread MIN_PER_THREAD elements
        per_block = launch.split[loop] * MIN_PER_THREAD if loop in launch.split else 1
        bounds = [
            self._host_value(v, k, at)
            for v in (loop.lowerBound[0], loop.upperBound[0], loop.step[0])
        ]
        if any(v is None for v in bounds):
            return _constant(cap, at)
        lb, ub, step = bounds
        assert lb is not None and ub is not None and step is not None
        known = [constant_index(v) for v in (lb, ub, step)]
        if all(c is not None for c in known):
            lo, hi, st = (c for c in known if c is not None)
            trips = -(-(hi - lo) // st) // per_block
            return _constant(max(1, min(cap, trips)), at)
        ops: list[Operation] = [
            span := arith.SubiOp(ub, lb),
            trips := arith.CeilDivSIOp(span, step),
        ]
        if per_block > 1:
            ops += [per := _const_op(per_block), trips := arith.DivSIOp(trips, per)]
        ops += [
            limit := _const_op(cap),
            capped := arith.MinSIOp(trips, limit),
            one := _const_op(1),
            grid := arith.MaxSIOp(capped, one),
        ]
        Rewriter.insert_op(ops, at)
        return grid.result

    def _declare_callees(self, entry: Block) -> None:
        """Copy the declarations of the functions the kernel calls (math
        library functions) into the `gpu.module`."""
        kernels = self._kernels()
        for op in entry.walk():
            if not isinstance(op, func.CallOp):
                continue
            name = op.callee.root_reference.data
            if SymbolTable.lookup_symbol(kernels, name) is not None:
                continue
            callee = SymbolTable.lookup_symbol(self.module, name)
            if not isinstance(callee, func.FuncOp) or callee.body.blocks:
                raise TCError(
                    f"convert-parallel-loops-to-gpu: a kernel calls '@{name}', "
                    "which is not a function declaration"
                )
            kernels.body.block.add_op(callee.clone())

    def _kernels(self) -> gpu.ModuleOp:
        if self.kernels is None:
            self.kernels = gpu.ModuleOp(f"{self.fn.sym_name.data}_kernels")
            Rewriter.insert_op(self.kernels, InsertPoint.after(self.fn))
        return self.kernels


def _const_op(n: int) -> arith.ConstantOp:
    return arith.ConstantOp.from_int_and_width(n, IndexType())


def _constant(n: int, at: InsertPoint) -> SSAValue:
    c = _const_op(n)
    Rewriter.insert_op(c, at)
    return c.result


@dataclass
class _Launch:
    """What the mapped loops of a kernel ask of its launch."""

    blocks: list[list[tuple[scf.ParallelOp, int]]] = field(
        default_factory=lambda: [[], [], []]
    )
    block: tuple[int, int, int] = (1, 1, 1)
    #: the cyclic loops that replaced thread-mapped `scf.parallel`s, by axis
    thread_loops: dict[scf.ForOp, int] = field(default_factory=dict[scf.ForOp, int])
    #: ops whose control flow differs between the threads along x (the
    #: loops of shared reductions, the guards of stores)
    divergent: set[Operation] = field(default_factory=set[Operation])
    #: the loops of shared reductions (their threads along x share one)
    shared: set[Operation] = field(default_factory=set[Operation])
    #: ops whose stores each thread makes itself (not to be guarded)
    own_stores: set[Operation] = field(default_factory=set[Operation])
    #: the shared reductions that blocks share too (`tc.gpu_split`; their
    #: entries in `blocks`), with the threads of a block that share them
    split: dict[Operation, int] = field(default_factory=dict[Operation, int])


def _plan(
    op: Operation,
    active: frozenset[str],
    out: list[tuple[str, int, int] | None],
) -> None:
    """Append the mapping of each `scf.parallel` in `op` (pre-order, as
    `Operation.walk`): None for a loop left unmapped, such as one inside a
    loop mapped to the same processor (`active`)."""
    inner = active
    if isinstance(op, scf.ParallelOp):
        mapped = _processor(op)
        if mapped is not None:
            key = f"{mapped[0]}_{mapped[1]}"
            if key in active:
                mapped = None
            else:
                inner = active | {key}
        out.append(mapped)
    for region in op.regions:
        for block in region.blocks:
            for o in block.ops:
                _plan(o, inner, out)


def _cyclic(op: scf.ParallelOp, mapped: tuple[str, int, int] | None) -> scf.ForOp:
    """Replace the `scf.parallel` `op` by an `scf.for`, cyclic over the
    processor `mapped` when given (mapped loops are one-dimensional); an
    unmapped loop of several dimensions becomes a nest, the first outermost."""
    lbs, ubs, steps = list(op.lowerBound), list(op.upperBound), list(op.step)
    body = op.body.block
    ops: list[Operation] = []
    if mapped is not None:
        kind, axis, _ = mapped
        id_op, count_op = _DIM_OPS[kind]
        ops += [
            idx := id_op(AXES[axis]),
            cnt := count_op(AXES[axis]),
            off := arith.MuliOp(idx, steps[0]),
            lb := arith.AddiOp(lbs[0], off),
            st := arith.MuliOp(cnt, steps[0]),
        ]
        lbs[0], steps[0] = lb.result, st.result
    Rewriter.insert_op(ops, InsertPoint.before(op))
    terminator = body.last_op
    if isinstance(terminator, scf.ReduceOp):
        terminator.detach()
        terminator.erase()
    body.add_op(scf.YieldOp())
    loops = [
        scf.ForOp(lb, ub, st, [], Region(Block(arg_types=[IndexType()])))
        for lb, ub, st in zip(lbs, ubs, steps, strict=True)
    ]
    for iv, loop in zip(body.args, loops, strict=True):
        loop.body.block.args[0].name_hint = iv.name_hint
        iv.replace_all_uses_with(loop.body.block.args[0])
    for o in list(body.ops):  # the innermost loop takes the body
        o.detach()
        loops[-1].body.block.add_op(o)
    for outer, inner in itertools.pairwise(loops):
        outer.body.block.add_ops([inner, scf.YieldOp()])
    Rewriter.replace_op(op, loops[0])
    return loops[0]


def _anchor_thread_loops(launch: _Launch) -> None:
    """Start each thread loop whose lower bound varies inside the kernel and
    is no multiple of the block at `lb + (id - lb) mod count` (see the
    module docstring), so that value `v` is thread `v mod count`'s under
    every bound. Only loops of step 1 (all that `affine-gpu-map` makes)."""
    for loop, axis in launch.thread_loops.items():
        start = loop.lb.owner
        if (
            not isinstance(start, arith.AddiOp)
            or constant_index(_origin_step(loop)) != 1
        ):
            continue
        lb, tid = start.lhs, start.rhs
        if _multiple_of(lb, launch.block[axis]) or not _varies(lb, loop):
            continue
        count = loop.step
        ops = [
            diff := arith.SubiOp(tid, lb),
            rem := arith.RemSIOp(diff, count),
            zero := _const_op(0),
            neg := arith.CmpiOp(rem, zero, "slt"),
            up := arith.AddiOp(rem, count),
            pos := arith.SelectOp(neg, up, rem),
            new := arith.AddiOp(lb, pos),
        ]
        Rewriter.insert_op(ops, InsertPoint.before(loop))
        loop.operands[0] = new.result
        if not start.result.uses:
            start.detach()
            start.erase()


def _origin_step(loop: scf.ForOp) -> SSAValue:
    """The step of the `scf.parallel` a cyclic loop replaced: its step is
    `count * step` (`_cyclic`)."""
    owner = loop.step.owner
    return owner.rhs if isinstance(owner, arith.MuliOp) else loop.step


def _multiple_of(v: SSAValue, m: int, depth: int = 0) -> bool:
    """Whether `v` is provably a multiple of `m`: a constant one, a product
    with one, a sum or difference of two, or the induction variable of a
    loop whose bound and step are (a tile's first element)."""
    if m == 1:
        return True
    if depth > 16:
        return False
    c = constant_index(v)
    if c is not None:
        return c % m == 0
    owner = v.owner
    if isinstance(owner, arith.MuliOp):
        return _multiple_of(owner.lhs, m, depth + 1) or _multiple_of(
            owner.rhs, m, depth + 1
        )
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        return _multiple_of(owner.lhs, m, depth + 1) and _multiple_of(
            owner.rhs, m, depth + 1
        )
    if isinstance(v, BlockArgument) and isinstance(v.owner.parent_op(), scf.ForOp):
        parent = v.owner.parent_op()
        assert isinstance(parent, scf.ForOp)
        return v.index == 0 and all(
            _multiple_of(x, m, depth + 1) for x in (parent.lb, parent.step)
        )
    return False


def _varies(v: SSAValue, loop: Operation, depth: int = 0) -> bool:
    """Whether `v` may change between runs of `loop`: it depends on the
    induction variable of a loop around `loop` (or on an op it cannot see
    through)."""
    if depth > 32:
        return True
    if isinstance(v, BlockArgument):
        parent = v.owner.parent_op()
        return parent is not None and parent.is_ancestor(loop)
    owner = v.owner
    assert isinstance(owner, Operation)
    if owner.regions:
        return True
    return any(_varies(x, loop, depth + 1) for x in owner.operands)


#: The identity of each combining op of a reduction (`poly.scop`'s list).
_IDENTITY: dict[str, float | int] = {
    "arith.addf": 0.0,
    "arith.mulf": 1.0,
    "arith.maximumf": -math.inf,
    "arith.maxnumf": -math.inf,
    "arith.minimumf": math.inf,
    "arith.minnumf": math.inf,
    "arith.addi": 0,
    "arith.muli": 1,
    "arith.maxsi": -(2**31),  # (of the element's width: `_identity`)
    "arith.minsi": 2**31 - 1,
    "arith.maxui": 0,
    "arith.minui": -1,
}
#: Lanes of a warp: a shared reduction is combined across them by shuffles.
WARP = 32


@dataclass
class _Reduction:
    """One reduction in a thread loop: the accumulator's load, the combining
    op and the store, and the `scf.for`s between the loop and them (outer
    first)."""

    load: memref.LoadOp
    combine: Operation
    store: memref.StoreOp
    chain: list[scf.ForOp]


def _for_chain(body: Block, block: Block | None) -> list[scf.ForOp] | None:
    """The `scf.for`s (without results) from `body` down to `block`, outer
    first; None when `block` is not inside `body` through such loops only."""
    chain: list[scf.ForOp] = []
    while block is not body:
        if block is None:
            return None
        op = block.parent_op()
        if not isinstance(op, scf.ForOp) or op.results or op.iter_args:
            return None
        chain.append(op)
        block = op.parent_block()
    return chain[::-1]


def _reduction(loop: scf.ParallelOp) -> _Reduction | None:
    """The reduction when the body of `loop` is one reduction of a number
    of any type (`S[i] = S[i] op x` with `i` defined outside the loop, or
    constants, and nothing else stored), possibly inside `scf.for`s of its
    own (each thread then accumulates over them too); else None."""
    body = loop.body.block
    writes = [
        o
        for o in body.walk()
        if isinstance(o, memref.StoreOp | memref.AtomicRMWOp)
        or not (o.regions or is_side_effect_free(o) or isinstance(o, memref.LoadOp))
    ]
    if len(writes) != 1 or not isinstance(writes[0], memref.StoreOp):
        return None
    store = writes[0]
    combine = store.value.owner
    chain = _for_chain(body, store.parent_block())
    if (
        chain is None
        or not isinstance(combine, Operation)
        or combine.name not in _IDENTITY
        or combine.parent_block() is not store.parent_block()
        or not isinstance(store.value.type, IntegerType | AnyFloat)
        or any(
            not defined_outside(i, loop) and constant_index(i) is None
            for i in store.indices
        )
    ):
        return None
    loads = [
        o
        for o in body.walk()
        if isinstance(o, memref.LoadOp) and o.memref == store.memref
    ]
    if len(loads) != 1:
        return None
    (load,) = loads
    if (
        load.parent_block() is not store.parent_block()
        or len(load.indices) != len(store.indices)
        or not all(map(_same_index, load.indices, store.indices))
        or load.res not in combine.operands
        or load.res.uses.get_length() != 1
    ):
        return None
    return _Reduction(load, combine, store, chain)


def _same_index(a: SSAValue, b: SSAValue) -> bool:
    """Whether two subscripts are one value, or constants of one value (a
    row of extent 1 has each access's `0` made in the loop body)."""
    return a == b or (
        constant_index(a) is not None and constant_index(a) == constant_index(b)
    )


def _accumulate(block: Block, acc: SSAValue, red: _Reduction, depth: int) -> SSAValue:
    """Turn the reduction at `red.chain[depth:]` inside `block` into a
    register accumulation whose value on entry to `block` is `acc`; return
    its value at the end of `block` (the loops of the chain get `acc` as an
    iteration argument)."""
    if depth == len(red.chain):
        load, combine, store = red.load, red.combine, red.store
        x = next(v for v in combine.operands if v != load.res)
        partial = combine.clone(value_mapper={load.res: acc, x: x})
        block.insert_op_before(partial, store)
        for op in (store, combine, load):
            op.detach()
            op.erase(safe_erase=False)
        return partial.results[0]
    loop = red.chain[depth]
    inner = loop.body.block
    inner_acc = inner.insert_arg(acc.type, 1)
    end = _accumulate(inner, inner_acc, red, depth + 1)
    terminator = inner.last_op
    assert terminator is not None
    terminator.detach()
    terminator.erase()
    inner.add_op(scf.YieldOp(end))
    region = loop.detach_region(loop.body)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [acc], region)
    Rewriter.replace_op(loop, new, new_results=[])
    return new.results[0]


#: The combining ops of reductions that an atomic update can apply, and the
#: `memref.atomic_rmw` kind that does (a product has none).
_ATOMIC_KINDS: dict[str, str] = {
    "arith.addf": "addf",
    "arith.addi": "addi",
    "arith.maximumf": "maximumf",
    "arith.maxnumf": "maxnumf",
    "arith.minimumf": "minimumf",
    "arith.minnumf": "minnumf",
    "arith.maxsi": "maxs",
    "arith.minsi": "mins",
    "arith.maxui": "maxu",
    "arith.minui": "minu",
}


def _split(
    loop: scf.ParallelOp, red: _Reduction, entry: Block
) -> tuple[int, int] | None:
    """The block axis and the most blocks of a shared reduction that the
    blocks along that axis share too (`tc.gpu_split`, `tc.gpu_split_size`),
    when atomic updates can combine their totals: the combine has one (not a
    product), and the reduction is all the kernel writes, into a kernel
    argument that nothing else in it touches (each block then finds the
    result as the launch found it, initialised by an earlier kernel, and
    nothing else runs once per block). Else None: one block per row."""
    proc, size = loop.attributes.get(GPU_SPLIT), loop.attributes.get(GPU_SPLIT_SIZE)
    if not isinstance(proc, StringAttr) or not isinstance(size, IntegerAttr):
        return None
    kind, _, axis = proc.data.partition("_")
    if kind != "block" or axis not in AXES:
        raise TCError(
            f"convert-parallel-loops-to-gpu: unknown block axis '{proc.data}'"
        )
    array = red.store.memref
    t = red.store.value.type
    if (
        red.combine.name not in _ATOMIC_KINDS
        or (isinstance(t, IntegerType) and t.width.data < 8)  # (no 1-bit atomics)
        or not isinstance(array, BlockArgument)
        or array.owner is not entry
        or any(u.operation not in (red.load, red.store) for u in array.uses)
        or any(_writes(o) for o in entry.walk() if o is not red.store and not o.regions)
    ):
        return None
    return AXES.index(axis), size.value.data


def _share_reduction(
    loop: scf.ParallelOp,
    axis: int,
    size: int,
    red: _Reduction,
    launch: _Launch,
    split: int | None = None,
) -> scf.ForOp:
    """Replace `loop` (one reduction, `_reduction`) by a loop in which each
    thread along `axis` accumulates every block_dim-th value in a register,
    then a butterfly of shuffles across the warp, then `S[i] = S[i] op total`
    (which `_guard_and_sync` leaves to the thread at index 0)::

        %p = scf.for %r = lb + tid * step to ub step bdim * step
                 iter_args(%acc = identity) { ...; scf.yield (%acc op x) }
        %s16, %ok = gpu.shuffle xor %p, 16, 32 : f32   (then 8, 4, 2, 1)
        ...
        %old = memref.load S[i]; memref.store (%old op total), S[i]

    The `scf.for`s of `red.chain` inside pass the accumulator along. When
    `size` threads along x share the reduction, more than a warp, each
    warp's total goes through shared memory to the first warp, which
    combines them with a second butterfly (`_across_warps`).

    With `split` (a block axis, `_split`), the blocks along it share the
    reduction too: thread `t` of block `b` starts at element
    `b * block_dim + t` and steps by `grid_dim * block_dim`, and each
    block's total goes into `S[i]` with an atomic update
    (``memref.atomic_rmw addf %total, S[i]``).
    """
    at = InsertPoint.before(loop)
    load, combine, store = red.load, red.combine, red.store
    t = store.value.type
    init = _identity(combine, t)
    tid, cnt = gpu.ThreadIdOp(AXES[axis]), gpu.BlockDimOp(AXES[axis])
    step = loop.step[0]
    first: list[Operation] = [init, tid, cnt]
    index, count = tid.result, cnt.result
    if split is not None:
        bid, grid = gpu.BlockIdOp(AXES[split]), gpu.GridDimOp(AXES[split])
        base = arith.MuliOp(bid, cnt)
        glob = arith.AddiOp(base, tid)
        total = arith.MuliOp(grid, cnt)
        first += [bid, grid, base, glob, total]
        index, count = glob.result, total.result
    lb = arith.AddiOp(loop.lowerBound[0], off := arith.MuliOp(index, step))
    st = arith.MuliOp(count, step)
    Rewriter.insert_op([*first, off, lb, st], at)
    # the body: the old one accumulating in a register instead of S[i]
    body = loop.body.block
    acc = body.insert_arg(t, 1)
    x = next(v for v in combine.operands if v != load.res)
    store_memref, store_indices = store.memref, list(store.indices)
    for k, i in enumerate(store_indices):
        if not defined_outside(i, loop):  # a constant (`_reduction`): made again
            c = constant_index(i)
            assert c is not None
            again = _const_op(c)
            Rewriter.insert_op(again, at)
            store_indices[k] = again.result
    end = _accumulate(body, acc, red, 0)
    terminator = body.last_op
    assert terminator is not None
    terminator.detach()
    terminator.erase()
    body.add_op(scf.YieldOp(end))
    region = loop.detach_region(loop.body)
    new = scf.ForOp(lb, loop.upperBound[0], st, [init], region)
    ops: list[Operation] = [new]
    value = _butterfly(ops, new.results[0], WARP, combine, (load.res, x))
    if size > WARP:
        value = _across_warps(ops, value, size // WARP, combine, (load.res, x), launch)
    if split is not None:
        kind = ATOMIC_RMW_KINDS.index(_ATOMIC_KINDS[combine.name])
        ops.append(
            memref.AtomicRMWOp.build(
                operands=[value, store_memref, store_indices],
                result_types=[t],
                properties={"kind": IntegerAttr(kind, 64)},
            )
        )
    else:
        old = memref.LoadOp.get(store_memref, store_indices)
        total = combine.clone(value_mapper={load.res: old.res, x: value})
        ops += [
            old,
            total,
            memref.StoreOp.get(total.results[0], store_memref, store_indices),
        ]
    Rewriter.replace_op(loop, ops, new_results=[])
    return new


def _identity(combine: Operation, t: Attribute) -> arith.ConstantOp:
    """The identity of `combine` (one of `_IDENTITY`) as a constant of type `t`."""
    ident = _IDENTITY[combine.name]
    if isinstance(t, AnyFloat):
        return arith.ConstantOp(FloatAttr(float(ident), t))
    assert isinstance(t, IntegerType)
    bits = t.width.data
    ident = {
        "arith.maxsi": -(2 ** (bits - 1)),
        "arith.minsi": 2 ** (bits - 1) - 1,
    }.get(combine.name, ident)
    return arith.ConstantOp(IntegerAttr(int(ident), t))


def _across_warps(
    ops: list[Operation],
    value: SSAValue,
    warps: int,
    combine: Operation,
    operands: tuple[SSAValue, SSAValue],
    launch: _Launch,
) -> SSAValue:
    """Append to `ops` the combine of the `warps` warps' totals (`value` in
    every lane of each warp, `warps` a power of two up to 32) across the
    block; return the block's total (valid in the first warp)::

        %buf = memref.alloca() : memref<8xf32, 3>
        scf.if (tid % 32 == 0) { memref.store %value, %buf[tid / 32] }
        %v = select(tid < 8, %buf[min(tid, 7)], identity)
        (a butterfly of 4, 2, 1 over %v)

    `_guard_and_sync` puts the barrier after the stores and another at the
    end of an enclosing loop's iteration (before the buffer is reused)."""
    t = value.type
    buf = memref.AllocaOp.get(t, shape=[warps], memory_space=IntegerAttr(3, 32))
    tid = gpu.ThreadIdOp("x")
    c32, last = _const_op(WARP), _const_op(warps - 1)
    lane = arith.RemUIOp(tid, c32)
    warp = arith.DivUIOp(tid, c32)
    zero = _const_op(0)
    first = arith.CmpiOp(lane, zero, "eq")
    guard = scf.IfOp(first, [], [memref.StoreOp.get(value, buf, [warp]), scf.YieldOp()])
    launch.own_stores.add(guard)
    index = arith.MinUIOp(tid, last)
    part = memref.LoadOp.get(buf, [index])
    count = _const_op(warps)
    has = arith.CmpiOp(tid, count, "ult")
    identity = _identity(combine, t)
    pick = arith.SelectOp(has, part.res, identity)
    ops += [buf, tid, c32, last, lane, warp, zero, first, guard, index, part]
    ops += [count, has, identity, pick]
    return _butterfly(ops, pick.result, warps, combine, operands)


def _butterfly(
    ops: list[Operation],
    value: SSAValue,
    lanes: int,
    combine: Operation,
    operands: tuple[SSAValue, SSAValue],
) -> SSAValue:
    """Append to `ops` a butterfly of `gpu.shuffle xor` over the first
    `lanes` lanes of each warp (a power of two up to 32), each step
    combining with `combine` (its `operands` replaced by the two values);
    return the value every lane then holds: the combine of them all."""
    width = arith.ConstantOp.from_int_and_width(WARP, 32)
    ops.append(width)
    offset = lanes // 2
    while offset:
        c = arith.ConstantOp.from_int_and_width(offset, 32)
        shuffle = gpu.ShuffleOp("xor", value, c, width)
        both = combine.clone(
            value_mapper={operands[0]: value, operands[1]: shuffle.shuffleResult}
        )
        ops += [c, shuffle, both]
        value = both.results[0]
        offset //= 2
    return value


def _only_for(store: Operation) -> list[Operation]:
    """`store` and the ops just before it in its block that compute only for
    it (loads and side-effect-free ops whose results nothing else uses), in
    order: what the threads that do not store need not run. (They could read
    an element while the storing thread writes it.)"""
    ops = [store]
    op = store.prev_op
    while op is not None and not op.regions:
        if not (isinstance(op, memref.LoadOp) or is_side_effect_free(op)):
            break
        if not all(u.operation in ops for r in op.results for u in r.uses):
            break
        ops.insert(0, op)
        op = op.prev_op
    return ops


def _guard_and_sync(entry: Block, launch: _Launch) -> None:
    """Make each store run in one thread per element, and put barriers between
    the ops of regions that hold thread loops (see the module docstring)."""
    thread_loops = launch.thread_loops
    ids: dict[int, SSAValue] = {}
    zero = _const_op(0)
    Rewriter.insert_op(zero, InsertPoint.at_start(entry))

    def first_along(axes: list[int], at: InsertPoint) -> SSAValue:
        """`thread_id.a == 0` for every axis in `axes`, built at `at`."""
        ops: list[Operation] = []
        acc: SSAValue | None = None
        for axis in axes:
            if axis not in ids:
                t = gpu.ThreadIdOp(AXES[axis])
                Rewriter.insert_op(t, InsertPoint.after(zero))
                ids[axis] = t.result
            c = arith.CmpiOp(ids[axis], zero, "eq")
            ops.append(c)
            if acc is not None:
                ops.append(both := arith.AndIOp(acc, c))
                acc = both.result
            else:
                acc = c.result
        Rewriter.insert_op(ops, at)
        assert acc is not None
        return acc

    # A store runs in every thread whose loops reach it: along an axis with no
    # enclosing thread loop, only the thread at index 0 may write.
    for store in [
        o for o in entry.walk() if isinstance(o, memref.StoreOp | memref.AtomicRMWOp)
    ]:
        covered: set[int] = set()
        parent = store.parent_op()
        if any(o in launch.own_stores for o in _ancestors(store)):
            continue
        while parent is not None:
            if isinstance(parent, scf.ForOp) and parent in thread_loops:
                covered.add(thread_loops[parent])
            parent = parent.parent_op()
        missing = [a for a in range(3) if launch.block[a] > 1 and a not in covered]
        if not missing:
            continue
        moved = _only_for(store)
        cond = first_along(missing, InsertPoint.before(moved[0]))
        guard = scf.IfOp(cond, [], [scf.YieldOp()])
        launch.divergent.add(guard)
        Rewriter.insert_op(guard, InsertPoint.before(store))
        then = guard.true_region.block
        assert then.last_op is not None
        for op in moved:
            op.detach()
            then.insert_op_before(op, then.last_op)

    def holds_threads(op: Operation) -> bool:
        return any(o in thread_loops or o in launch.shared for o in op.walk())

    def region(block: Block, warp: bool) -> None:
        """Synchronise the ops of `block`: with `gpu.barrier`s, or with warp
        barriers when `warp` (inside a thread loop along y or z while the
        threads along x are one warp: only that warp's threads share data)."""
        for op in block.ops:
            if op in launch.divergent:
                continue
            axis = thread_loops.get(op)  # pyright: ignore[reportArgumentType]
            if axis is not None:
                inner = warp or launch.block[0] == WARP
                if axis == 0:
                    continue
                if not inner:
                    assert isinstance(op, scf.ForOp)
                    uniform(op)
                    continue
                nested = True
            else:
                nested = warp or holds_threads(op)
            if nested:
                for r in op.regions:
                    for b in r.blocks:
                        region(b, warp or axis is not None)
        # barriers: before an op that touches what was written since the last
        # one, or writes what was read since
        memory = [op for op in block.ops if _touches_memory(op)]
        read: set[SSAValue] = set()
        written: set[SSAValue] = set()
        for op in block.ops:
            if isinstance(op, gpu.BarrierOp | nvvm.BarWarpSyncOp):
                read, written = set(), set()
                continue
            r, w = _arrays(op)
            if (r | w) & written or w & read:
                Rewriter.insert_op(_sync(warp), InsertPoint.before(op))
                read, written = set(), set()
            read |= r
            written |= w
        # in a loop, the next iteration's first ops follow this one's last
        if isinstance(block.parent_op(), scf.ForOp) and len(memory) > 1:
            nxt_r: set[SSAValue] = set()
            nxt_w: set[SSAValue] = set()
            for op in block.ops:
                if isinstance(op, gpu.BarrierOp | nvvm.BarWarpSyncOp):
                    break
                r, w = _arrays(op)
                nxt_r |= r
                nxt_w |= w
            if (nxt_r | nxt_w) & written or nxt_w & read:
                last = block.last_op
                assert last is not None
                Rewriter.insert_op(_sync(warp), InsertPoint.before(last))

    def uniform(loop: scf.ForOp) -> None:
        """Barriers in a thread loop along y or z whose threads along x are
        several warps: only where every thread of the block runs the loop
        the same number of times (`_make_uniform`); else none, as before."""
        body = loop.body.block
        before = {o for o in loop.walk() if isinstance(o, gpu.BarrierOp)}
        region(body, False)
        new = [
            o for o in loop.walk() if isinstance(o, gpu.BarrierOp) and o not in before
        ]
        if not new:
            return
        if all(b.parent_block() is body for b in new) and _make_uniform(loop, launch):
            return
        for b in new:
            b.detach()
            b.erase()

    region(entry, False)


def _make_uniform(loop: scf.ForOp, launch: _Launch) -> bool:
    """Give a thread loop `for %i = lb + off to ub step count` (`off` the
    thread's, below `count`) the same trip count in every thread, so that
    the `gpu.barrier`s of its body are reached by the whole block: it runs
    to `lb + off + ceil((ub - lb) / count) * count`, and the ops of its body
    between barriers that touch memory (and those that use their results)
    run under `%i < ub`. False, changing nothing, where the loop does not
    have that form or a guarded value is used past a barrier."""
    start = loop.lb.owner
    if not isinstance(start, arith.AddiOp) or constant_index(_origin_step(loop)) != 1:
        return False
    body = loop.body.block
    segments: list[list[Operation]] = [[]]
    for op in body.ops:
        if isinstance(op, gpu.BarrierOp):
            segments.append([])
        elif op is not body.last_op:
            segments[-1].append(op)
    guarded: list[list[Operation]] = []
    for segment in segments:
        g: list[Operation] = []
        made: set[SSAValue] = set()
        for op in segment:
            if (
                op.regions
                or not is_side_effect_free(op)
                or any(v in made for v in op.operands)
            ):
                g.append(op)
                made.update(op.results)
        for op in g:
            for r in op.results:
                for use in r.uses:
                    user = use.operation
                    if not any(a in g for a in (user, *_ancestors(user))):
                        return False
        guarded.append(g)
    lb, ub, count = start.lhs, loop.ub, loop.step
    ops = [
        span := arith.SubiOp(ub, lb),
        one := _const_op(1),
        less := arith.SubiOp(count, one),
        up := arith.AddiOp(span, less),
        trips := arith.DivSIOp(up, count),
        length := arith.MuliOp(trips, count),
        end := arith.AddiOp(loop.lb, length),
    ]
    Rewriter.insert_op(ops, InsertPoint.before(loop))
    loop.operands[1] = end.result
    inside = arith.CmpiOp(body.args[0], ub, "slt")
    body.insert_op_before(inside, body.first_op)  # pyright: ignore[reportArgumentType]
    for g in guarded:
        if not g:
            continue
        guard = scf.IfOp(inside.result, [], [scf.YieldOp()])
        launch.divergent.add(guard)
        body.insert_op_after(guard, g[-1])
        then = guard.true_region.block
        assert then.last_op is not None
        for op in g:
            op.detach()
            then.insert_op_before(op, then.last_op)
    return True


def _ancestors(op: Operation) -> Iterable[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def _sync(warp: bool) -> list[Operation]:
    """A `gpu.barrier`, or a barrier of the whole warp (`nvvm.bar.warp.sync`)."""
    if not warp:
        return [gpu.BarrierOp()]
    mask = arith.ConstantOp.from_int_and_width(-1, 32)
    return [mask, nvvm.BarWarpSyncOp(mask)]


@dataclass(frozen=True)
class ConvertParallelLoopsToGpuPass(ModulePass):
    name = "convert-parallel-loops-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outlined = False
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                out = _Outliner(op, fn)
                out.run()
                outlined |= out.kernels is not None
        if outlined:
            op.attributes[gpu.CONTAINER_ATTR] = UnitAttr()


__all__ = ["ConvertParallelLoopsToGpuPass"]
