"""`fuse-sibling-loops`: read-only loops that walk the same array run as one.

On the CPU (docs/pipeline.md: `loops` stage) it runs after `register-tile`
and before `convert-affine-to-scf`, on `affine.for`s; on the GPU (`gpu`
stage) after `convert-parallel-loops-to-gpu`, on the `scf.for`s in which
each thread of a shared reduction accumulates its part. Two reductions over
the same data, such as moments2's

    mean(n) +=! I(n, r_k)
    var(n) +=! I(n, r_k) * I(n, r_k)

become, after register-tile, two loops over `r_k` in one row's iteration,
each carrying its partial sums in `iter_args`; the second reads the row
again, from L2 at best. This pass merges them into one loop that reads it
once (sibling fusion, like MLIR's affine loop fusion in sibling mode).

Contract. Two `affine.for` ops, or two `scf.for` ops, `A` and `B` of the
same block, `A` first, are fused when:

- both have `iter_args` and the same bounds (the same maps and the same SSA
  operands, or the same SSA bounds) and step;
- neither body writes memory: every op in them is a load (`affine.load`,
  `memref.load`, `vector.load`, `vector.maskedload`), a `memref.prefetch`
  (a hint), an op without memory effects, or a loop whose body satisfies
  the same;
- `B` reads at least one array that `A` reads (otherwise nothing is saved);
- every value `B` uses that is defined outside it is defined before `A`, or
  by an op between them without memory effects and regions whose operands
  satisfy the same (such ops, constants mostly, move up before `A`);
- no op between them writes an array `B` reads, and every op between them
  has known effects (loads, stores, allocations and frees of memrefs, pure
  ops, a GPU thread's indices and shuffles, loops and conditionals of such
  ops). Arrays are compared by SSA value, so each one read by `B` must be a
  block argument or come from `memref.alloc`/`alloca` (distinct memrefs
  never alias: docs/pipeline.md's buffer contract);
- a barrier between them (`gpu.barrier`, `nvvm.bar.warp.sync`), which is
  what makes other threads' writes visible, only when nothing in the
  enclosing function writes an array `B` reads (a kernel's input);
- the fused loop carries at most `MAX_CARRIED` values (register pressure:
  two register tiles of matmul are not merged).

Then one loop at `A`'s place runs `A`'s body and then `B`'s in each
iteration, carrying `A`'s values and then `B`'s, and their results replace
those of `A` and `B`. It is legal because `B` moves only past ops that do
not write what it reads, and neither loop writes anything, so every value
computed is the same. A fused loop may fuse again with a later sibling.
Loops without `iter_args`, loops that store, and loops with different bounds
are left alone. (On the GPU, each thread's two partial sums then come from
one pass over its elements; the shuffles and the shared memory that combine
them across the block stay where they were.)

Example (moments2 after register-tile, 16 lanes; `I` read once)::

    %m:4, %v:4 = affine.for %k = 0 to 36864 step 64
        iter_args(%a0 = %z, ..., %b0 = %z, ...) -> (vector<16xf32>, ...) {
      %x = vector.load %I[%n, %k] : memref<128x36864xf32>, vector<16xf32>
      %s = arith.addf %a0, %x fastmath<reassoc> : vector<16xf32>
      ...
      %y = vector.load %I[%n, %k] : memref<128x36864xf32>, vector<16xf32>
      %q = math.fma %y, %y, %b0 fastmath<reassoc> : vector<16xf32>
      ...
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine as xaffine
from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from tcdialect.dialects.memref import PrefetchOp
from tcdialect.transforms.ir_values import defined_outside

MAX_CARRIED = 12
"""The most values a fused loop may carry (12 of 16 ymm registers with AVX2;
moments2's two 4-vector reductions take 8)."""

_LOADS = (xaffine.LoadOp, memref.LoadOp, vector.LoadOp, vector.MaskedLoadOp)
_WRITES = (
    xaffine.StoreOp,
    memref.StoreOp,
    vector.StoreOp,
    vector.MaskedStoreOp,
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
)
_PURE_NAMES = frozenset(
    (
        "vector.reduction",
        "vector.create_mask",
        "gpu.thread_id",
        "gpu.block_id",
        "gpu.block_dim",
        "gpu.grid_dim",
    )
)
"""Pure ops declared without a memory-effect trait (xDSL 0.74's, and a GPU
thread's indices, which do not change during a kernel)."""
_NO_MEMORY = frozenset(("gpu.shuffle",))
"""Ops that touch no memory but stay where they are (a shuffle exchanges
registers between the lanes of a warp; so do `arith` and `math` ops that
xDSL does not declare pure, such as a division, which may trap)."""
_NO_MEMORY_DIALECTS = ("arith.", "math.")
_BARRIERS = frozenset(("gpu.barrier", "nvvm.bar.warp.sync"))
"""Ops after which a thread sees what the others wrote before them."""
_FUNCTIONS = frozenset(("func.func", "gpu.func"))

Loop = xaffine.ForOp | scf.ForOp


def _memref(op: Operation) -> SSAValue:
    """The memref a load, store, allocation or free touches."""
    if isinstance(op, memref.AllocOp | memref.AllocaOp):
        return op.results[0]
    return next(v for v in op.operands if isinstance(v.type, MemRefType))


def _pure(op: Operation) -> bool:
    return not op.regions and (is_side_effect_free(op) or op.name in _PURE_NAMES)


def _effects(
    op: Operation,
    reads: set[SSAValue],
    writes: set[SSAValue],
    barriers: list[Operation] | None = None,
) -> bool:
    """Add the memrefs `op` (and the ops it holds) reads and writes, and the
    barriers to `barriers`; False when an effect is unknown (a barrier, when
    `barriers` is None)."""
    if isinstance(op, _LOADS):
        reads.add(_memref(op))
        return True
    if isinstance(op, _WRITES):
        writes.add(_memref(op))
        return True
    if _pure(op) or op.name in _NO_MEMORY or op.name.startswith(_NO_MEMORY_DIALECTS):
        return True
    if isinstance(op, xaffine.YieldOp | scf.YieldOp | PrefetchOp):
        return True  # a prefetch is a hint: it reads and writes nothing
    if op.name in _BARRIERS:
        if barriers is None:
            return False
        barriers.append(op)
        return True
    if isinstance(
        op, xaffine.ForOp | xaffine.ParallelOp | xaffine.IfOp | scf.ForOp | scf.IfOp
    ):
        return all(
            _effects(inner, reads, writes, barriers)
            for region in op.regions
            for block in region.blocks
            for inner in block.ops
        )
    return False


def _written_in_function(loop: Operation, arrays: set[SSAValue]) -> bool:
    """Whether an op of the function (kernel) around `loop` may write one of
    `arrays`: any op given one, other than a load or a prefetch."""
    top = loop
    while top.name not in _FUNCTIONS and (parent := top.parent_op()) is not None:
        if isinstance(parent, ModuleOp):
            break
        top = parent
    for op in top.walk():
        if isinstance(op, (*_LOADS, PrefetchOp)):
            continue
        if any(v in arrays for v in op.operands):
            return True
    return False


def _distinct(v: SSAValue) -> bool:
    """Whether `v` is a memref that aliases no other SSA value."""
    owner = v.owner
    return isinstance(owner, Block) or isinstance(
        owner, memref.AllocOp | memref.AllocaOp
    )


def _same_bounds(a: Loop, b: Loop) -> bool:
    if isinstance(a, scf.ForOp) or isinstance(b, scf.ForOp):
        return (
            isinstance(a, scf.ForOp)
            and isinstance(b, scf.ForOp)
            and (a.lb, a.ub, a.step) == (b.lb, b.ub, b.step)
        )
    return (
        a.lowerBoundMap == b.lowerBoundMap
        and a.upperBoundMap == b.upperBoundMap
        and a.step == b.step
        and list(a.lowerBoundOperands) == list(b.lowerBoundOperands)
        and list(a.upperBoundOperands) == list(b.upperBoundOperands)
    )


def _inits(loop: Loop) -> list[SSAValue]:
    return list(loop.iter_args if isinstance(loop, scf.ForOp) else loop.inits)


def _free_values(loop: Operation) -> list[SSAValue]:
    """Values `loop` uses (as operands, or inside its body) defined outside it."""
    out: list[SSAValue] = []
    for op in loop.walk():
        for v in op.operands:
            if v not in out and defined_outside(v, loop):
                out.append(v)
    return out


def _movable(a: Loop, b: Loop, between: list[Operation]) -> list[Operation] | None:
    """The ops between A and B that B needs and that can move before A (in
    their order), or None when B uses a value that cannot be available
    there."""
    index = {op: i for i, op in enumerate(between)}
    need: set[Operation] = set()
    todo = _free_values(b)
    while todo:
        v = todo.pop()
        owner = v.owner
        if owner is a:
            return None
        if not isinstance(owner, Operation) or owner not in index:
            continue  # defined before A (the ops between are all at A's level)
        if owner in need:
            continue
        if not _pure(owner):
            return None
        need.add(owner)
        todo.extend(owner.operands)
    return sorted(need, key=index.__getitem__)


def _fusible(a: Loop, b: Loop) -> list[Operation] | None:
    """The ops to move before `a` when `a` and `b` can fuse, else None."""
    if not _inits(a) or not _inits(b) or not _same_bounds(a, b):
        return None
    if len(_inits(a)) + len(_inits(b)) > MAX_CARRIED:
        return None
    reads_a: set[SSAValue] = set()
    reads_b: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    if not _effects(a, reads_a, writes) or not _effects(b, reads_b, writes):
        return None
    if writes or not reads_a & reads_b:
        return None
    between: list[Operation] = []
    op = a.next_op
    while op is not None and op is not b:
        between.append(op)
        op = op.next_op
    if op is None:
        return None
    reads: set[SSAValue] = set()
    barriers: list[Operation] = []
    for op in between:
        if not _effects(op, reads, writes, barriers):
            return None
    if writes and (not all(_distinct(v) for v in reads_b | writes) or reads_b & writes):
        return None
    if barriers and (
        not all(_distinct(v) for v in reads_b) or _written_in_function(a, reads_b)
    ):
        return None
    return _movable(a, b, between)


def _fuse(a: Loop, b: Loop, moved: list[Operation]) -> None:
    block = a.parent_block()
    assert block is not None
    for op in moved:
        op.detach()
        block.insert_op_before(op, a)
    inits = [*_inits(a), *_inits(b)]
    body = Block(arg_types=[a.body.block.args[0].type, *(v.type for v in inits)])
    iv = body.args[0]
    iv.name_hint = a.body.block.args[0].name_hint
    n = len(_inits(a))
    yielded: list[SSAValue] = []
    for loop, args in ((a, body.args[1 : 1 + n]), (b, body.args[1 + n :])):
        old = loop.body.block
        mapping: dict[SSAValue, SSAValue] = {old.args[0]: iv}
        mapping.update(zip(old.args[1:], args))
        for op in old.ops:
            if isinstance(op, xaffine.YieldOp | scf.YieldOp):
                yielded += [mapping.get(v, v) for v in op.operands]
                continue
            new = op.clone(value_mapper=mapping)
            body.add_op(new)
    fused: Operation
    if isinstance(a, scf.ForOp):
        body.add_op(scf.YieldOp(*yielded))
        fused = scf.ForOp(a.lb, a.ub, a.step, inits, Region(body))
    else:
        body.add_op(xaffine.YieldOp.get(*yielded))
        fused = xaffine.ForOp.from_region(
            list(a.lowerBoundOperands),
            list(a.upperBoundOperands),
            inits,
            [v.type for v in inits],
            a.lowerBoundMap,
            a.upperBoundMap,
            Region(body),
            a.step,
        )
    block.insert_op_before(fused, a)
    for old, new in zip([*a.results, *b.results], fused.results):
        old.replace_all_uses_with(new)
    for loop in (a, b):
        loop.detach()
        loop.erase()


def fuse_sibling_loops(module: ModuleOp) -> int:
    """Fuse every pair the contract allows; the number of fusions."""
    count = 0
    changed = True
    while changed:
        changed = False
        for op in module.walk():
            if not isinstance(op, Loop):
                continue
            b = op.next_op
            while b is not None:
                if isinstance(b, Loop):
                    moved = _fusible(op, b)
                    if moved is not None:
                        _fuse(op, b, moved)
                        count += 1
                        changed = True
                        break
                b = b.next_op
            if changed:
                break
    return count


@dataclass(frozen=True)
class FuseSiblingLoopsPass(ModulePass):
    """Read-only sibling loops over the same array, fused into one.

    See the module docstring.
    """

    name = "fuse-sibling-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_sibling_loops(op)


__all__ = ["FuseSiblingLoopsPass", "fuse_sibling_loops"]
