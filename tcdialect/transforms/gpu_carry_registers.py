"""`gpu-carry-registers`: keep a thread's accumulators in registers across a loop.

A pass on the `gpu.func`s of `convert-parallel-loops-to-gpu`'s output (scf,
memref, arith and gpu ops), before `unroll-inner-loops`. Register promotion
(`affine-gpu-promote`) carries matmul's `C[m, n]` across the `r_k` loop
inside the thread loops, but the tile loop over `r_k` that encloses the
shared-memory copies runs *above* the thread loops, so each of its
iterations loads the thread's elements of `C` from global memory and
stores them back. In the SPMD form the thread loops are gone and the tile
loop is a plain `scf.for` that every thread runs: its loads and stores of
the thread's own elements can move out of it.

Two steps, in every `gpu.func` with `known_block_size`:

1. A cyclic thread loop that runs one iteration in every thread,
   `scf.for %i = %b + thread_id(a) to %b + B step block_dim(a)` with `B` the
   block size along `a`, is replaced by its body at `%i = %b + thread_id(a)`.
2. In an `scf.for` `L` with constant bounds that runs at least once, an
   array `X` all of whose accesses inside `L` are `memref.load`s and
   `memref.store`s directly in `L`'s body or in guarded blocks there
   (`scf.if`s without results or else, on a condition computed from `L`'s
   IV and constants, holding straight-line code: the initialisation
   `if (%c2 == 0) C[m, n] = 0`, a fused epilogue `if (%c2 == last) { C[m,
   n] = max(C[m, n] + bias[n], 0) }`), at subscripts that do not change in
   `L` (computed from values defined outside it, the arithmetic is copied
   out), each element accessed directly at least once, is loaded before `L`
   (one load per element). Elements that `L` stores are carried in
   `iter_args` (a block holding only a store becomes an `arith.select`,
   another block an `scf.if` that yields the elements it stores) and stored
   after `L`; those it only reads are used as loaded, never stored back (a
   write of an input, racing with the threads that read it). An element
   whose first access in `L`'s body is a store under `%iv == lb` (the first
   iteration only) of a constant or a value defined before `L` starts from
   that value instead: no load (the value loaded would be overwritten
   before any use: a reduction's output is read only to be discarded
   otherwise, a whole extra pass over it) and no select.

Step 2 is sound because no other op of `L` touches `X`, so nothing in `L`
can see a value of `X` that the thread has not yet stored: other threads
reach `X` only through ops of `L` (all of which are the thread's own
accesses, at subscripts that do not depend on where `L` is). It assumes,
as the whole pipeline does, that distinct memrefs do not alias. Loops that
may run no iteration and arrays with any other access in the loop are left
alone.

Example (one element; matmul's `C[m, n]` across the tile loop `%c2`)::

    scf.for %c2 = %c0 to %c128 step %c1 {
      ... copies to shared memory, gpu.barrier ...
      scf.if %first { memref.store %zero, %C[%m, %n] }
      %v = memref.load %C[%m, %n]
      %r = scf.for %k = ... iter_args(%a = %v) { ... }
      memref.store %r, %C[%m, %n]
      gpu.barrier
    }

becomes, with `%first = arith.cmpi eq, %c2, %c0`::

    %c = scf.for %c2 = %c0 to %c128 step %c1 iter_args(%cur = %zero) -> (f32) {
      ...
      %r = scf.for %k = ... iter_args(%a = %cur) { ... }
      gpu.barrier
      scf.yield %r
    }
    memref.store %c, %C[%m, %n]

and, were `%first` any other condition on `%c2`, `%cur` would start from
`memref.load %C[%m, %n]` before the loop and `%v = arith.select %first,
%zero, %cur` would feed the inner loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.dialects import gpu
from tcdialect.transforms.ir_values import constant_index, defined_outside

#: Ops whose value the same in every iteration of any loop they are
#: computed in, given the same operands.
_PURE = (
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.ConstantOp,
    arith.IndexCastOp,
    gpu.ThreadIdOp,
    gpu.BlockIdOp,
    gpu.BlockDimOp,
    gpu.GridDimOp,
)
_AXES = ("x", "y", "z")


def _axis(op: Operation | Block, kind: type[gpu._DimOp]) -> int | None:
    if isinstance(op, kind):
        return _AXES.index(op.dimension.data.value)
    return None


def _terms(v: SSAValue) -> list[SSAValue]:
    """The summands of `v` through `arith.addi`, `muli x, 1` seen through."""
    owner = v.owner
    if isinstance(owner, arith.MuliOp):
        if constant_index(owner.rhs) == 1:
            return _terms(owner.lhs)
        if constant_index(owner.lhs) == 1:
            return _terms(owner.rhs)
    if isinstance(owner, arith.AddiOp):
        return [*_terms(owner.lhs), *_terms(owner.rhs)]
    return [v]


def _same(a: SSAValue, b: SSAValue) -> bool:
    """`a` and `b` are the same pure arithmetic of the same values."""
    if a is b:
        return True
    x, y = a.owner, b.owner
    if not isinstance(x, _PURE) or type(x) is not type(y):
        return False
    assert isinstance(y, Operation)
    return (
        x.properties == y.properties
        and len(x.operands) == len(y.operands)
        and all(_same(p, q) for p, q in zip(x.operands, y.operands))
    )


def _one_trip(loop: scf.ForOp, block: tuple[int, ...]) -> bool:
    """`for %i = %b + tid(a) to %b + B(a) step bdim(a)`: one iteration per thread."""
    step = _terms(loop.step)
    if len(step) != 1:
        return False
    a = _axis(step[0].owner, gpu.BlockDimOp)
    if a is None or a >= len(block):
        return False
    lbs, ubs = _terms(loop.lb), _terms(loop.ub)
    tids = [t for t in lbs if _axis(t.owner, gpu.ThreadIdOp) == a]
    if len(tids) != 1:
        return False
    base = [t for t in lbs if t is not tids[0]]
    consts = [constant_index(t) for t in ubs]
    extent = sum(c for c in consts if c is not None)
    rest = [t for t, c in zip(ubs, consts) if c is None]
    if not base:
        base_const = 0
    elif len(base) == 1 and constant_index(base[0]) is not None:
        base_const = constant_index(base[0]) or 0
        base = []
    else:
        base_const = 0
    return (
        len(rest) == len(base)
        and all(_same(r, b) for r, b in zip(rest, base))
        and extent - base_const == block[a]
    )


def _inline(loop: scf.ForOp) -> None:
    body = loop.body.block
    body.args[0].replace_all_uses_with(loop.lb)
    ops = list(body.ops)[:-1]
    for o in ops:
        o.detach()
    Rewriter.insert_op(ops, InsertPoint.before(loop))
    Rewriter.erase_op(loop)


def _uniform(v: SSAValue, loop: scf.ForOp) -> bool:
    """`v` is computed from `loop`'s IV, constants and the loop's bounds:
    the same in every thread."""
    if v is loop.body.block.args[0]:
        return True
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return True
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.CmpiOp):
        return all(_uniform(o, loop) for o in owner.operands)
    return False


def _hoist(
    v: SSAValue, loop: scf.ForOp, memo: dict[SSAValue, SSAValue]
) -> SSAValue | None:
    """`v` computed before `loop` (copying pure arithmetic out), or None
    when it changes in the loop."""
    if defined_outside(v, loop):
        return v
    if v in memo:
        return memo[v]
    owner = v.owner
    if not isinstance(owner, _PURE) or not isinstance(owner, Operation):
        return None
    operands: list[SSAValue] = []
    for o in owner.operands:
        h = _hoist(o, loop, memo)
        if h is None:
            return None
        operands.append(h)
    new = owner.clone(value_mapper=dict(zip(owner.operands, operands)))
    Rewriter.insert_op(new, InsertPoint.before(loop))
    memo[v] = new.results[0]
    return memo[v]


#: A subscript as a linear form: coefficients of the values it sums, and a
#: constant.
_Lin = tuple[frozenset[tuple[SSAValue, int]], int]


def _lin(v: SSAValue) -> _Lin:
    """`v` as a sum of values times constants plus a constant, through
    `arith.addi`, `arith.subi`, `arith.muli` by a constant and constants."""
    coef: dict[SSAValue, int] = {}
    const = 0

    def add(w: SSAValue, k: int) -> None:
        nonlocal const
        c = constant_index(w)
        owner = w.owner
        if c is not None:
            const += k * c
        elif isinstance(owner, arith.AddiOp):
            add(owner.lhs, k)
            add(owner.rhs, k)
        elif isinstance(owner, arith.SubiOp):
            add(owner.lhs, k)
            add(owner.rhs, -k)
        elif isinstance(owner, arith.MuliOp) and constant_index(owner.rhs) is not None:
            add(owner.lhs, k * (constant_index(owner.rhs) or 0))
        elif isinstance(owner, arith.MuliOp) and constant_index(owner.lhs) is not None:
            add(owner.rhs, k * (constant_index(owner.lhs) or 0))
        else:
            coef[w] = coef.get(w, 0) + k

    add(v, 1)
    return frozenset((w, c) for w, c in coef.items() if c), const


def _distinct(keys: list[tuple[_Lin, ...]]) -> bool:
    """Whether the subscript tuples `keys` name different elements for sure:
    every two differ by a nonzero constant in some subscript."""
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if not any(x[0] == y[0] and x[1] != y[1] for x, y in zip(a, b)):
                return False
    return True


@dataclass
class _Array:
    """The accesses of one array in a loop's body."""

    ops: list[Operation] = field(default_factory=list[Operation])
    ok: bool = True


def _guarded_store(op: Operation) -> memref.StoreOp | None:
    """The store of `scf.if %c { memref.store ... }` (no else, nothing else)."""
    if not isinstance(op, scf.IfOp) or op.results or op.false_region.blocks:
        return None
    ops = [o for o in op.true_region.block.ops if not isinstance(o, scf.YieldOp)]
    stores = [o for o in ops if isinstance(o, memref.StoreOp)]
    if len(stores) != 1 or any(
        not isinstance(o, arith.ConstantOp) for o in ops if o is not stores[0]
    ):
        return None
    return stores[0]


def _first_iteration_store(op: Operation, loop: scf.ForOp) -> SSAValue | None:
    """The value of `op` when it is `scf.if (%iv == lb) { memref.store v }`
    with `v` defined before `loop` or a constant: the store of `loop`'s first
    iteration only (the initialisation of a reduction); else None."""
    store = _guarded_store(op) if isinstance(op, scf.IfOp) else None
    if store is None:
        return None
    assert isinstance(op, scf.IfOp)
    cond = op.cond.owner
    if not isinstance(cond, arith.CmpiOp) or cond.predicate.value.data != 0:
        return None  # not `eq`
    iv, lb = loop.body.block.args[0], constant_index(loop.lb)
    sides = (cond.lhs, cond.rhs)
    if not any(a is iv and constant_index(b) == lb for a, b in (sides, sides[::-1])):
        return None
    value = store.value
    if defined_outside(value, loop) or isinstance(value.owner, arith.ConstantOp):
        return value
    return None


def _guarded_block(op: Operation | None, loop: scf.ForOp) -> scf.IfOp | None:
    """`op` when it is an `scf.if` directly in `loop`'s body, on a condition
    computed from the IV and constants, with no results, no else and no
    nested regions: straight-line code that runs in some iterations (a
    fused epilogue under `%iv == last`, the initialisation under
    `%iv == first`)."""
    if (
        not isinstance(op, scf.IfOp)
        or op.parent_block() is not loop.body.block
        or op.results
        or op.false_region.blocks
        or not _uniform(op.cond, loop)
    ):
        return None
    if any(o.regions for o in op.true_region.block.ops):
        return None
    return op


def _arrays(loop: scf.ForOp) -> dict[SSAValue, _Array]:
    found: dict[SSAValue, _Array] = {}
    body = loop.body.block
    for op in loop.body.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            a = found.setdefault(op.memref, _Array())
            if op.parent_block() is body:
                a.ops.append(op)
                continue
            guard = _guarded_block(op.parent_op(), loop)
            if guard is None:
                a.ok = False
            elif not a.ops or a.ops[-1] is not guard:
                a.ops.append(guard)
        else:
            for operand in op.operands:
                if isinstance(operand.type, MemRefType) and not isinstance(
                    op, scf.IfOp | scf.ForOp
                ):
                    found.setdefault(operand, _Array()).ok = False
    return found


def _carry(loop: scf.ForOp) -> bool:
    """Step 2 on `loop`; whether it changed anything."""
    lb, ub = constant_index(loop.lb), constant_index(loop.ub)
    if lb is None or ub is None or ub <= lb:
        return False
    memo: dict[SSAValue, SSAValue] = {}
    elements: list[tuple[SSAValue, tuple[SSAValue, ...]]] = []
    # element of each access in the body (a guarded store: its `scf.if`),
    # of each access in a guarded block, and the elements of each block
    where: dict[Operation, int] = {}
    inner: dict[Operation, int] = {}
    blocks: dict[Operation, list[int]] = {}
    for array, acc in _arrays(loop).items():
        if not acc.ok or not defined_outside(array, loop):
            continue
        keys: list[tuple[_Lin, ...]] = []
        firsts: list[tuple[SSAValue, ...]] = []
        plan: dict[Operation, int] = {}
        plan_inner: dict[Operation, tuple[Operation, int]] = {}
        direct: set[int] = set()

        def element(access: memref.LoadOp | memref.StoreOp) -> int:
            lins = tuple(_lin(v) for v in access.indices)
            i = next((j for j, k in enumerate(keys) if k == lins), None)
            if i is None:
                i = len(keys)
                keys.append(lins)
                firsts.append(tuple(access.indices))
            return i

        for op in acc.ops:
            if isinstance(op, memref.LoadOp | memref.StoreOp):
                plan[op] = element(op)
                direct.add(plan[op])
            elif (store := _guarded_store(op)) is not None and store.memref is array:
                plan[op] = element(store)
            else:
                for o in op.regions[0].block.ops:
                    if isinstance(o, memref.LoadOp | memref.StoreOp) and (
                        o.memref is array
                    ):
                        plan_inner[o] = (op, element(o))
        if not _distinct(keys):
            continue  # two elements that may be the same one
        if len(direct) != len(keys):
            continue  # an element only accessed conditionally
        hoisted = [tuple(_hoist(s, loop, memo) for s in subs) for subs in firsts]
        if any(h is None for t in hoisted for h in t):
            continue
        base = len(elements)
        for t in hoisted:
            elements.append((array, t))  # type: ignore[arg-type]  # no None left
        where.update({op: base + i for op, i in plan.items()})
        for o, (block, i) in plan_inner.items():
            inner[o] = base + i
            if base + i not in blocks.setdefault(block, []):
                blocks[block].append(base + i)
    if not elements:
        return False
    before = InsertPoint.before(loop)
    body = loop.body.block
    first: dict[int, Operation] = {}
    for op in body.ops:
        if op in where:
            first.setdefault(where[op], op)
        for i in blocks.get(op, ()):
            first.setdefault(i, op)
    inits: list[SSAValue] = []
    for i, (array, subs) in enumerate(elements):
        value = _first_iteration_store(first[i], loop)
        if value is not None:
            if not defined_outside(value, loop):
                assert isinstance(value.owner, arith.ConstantOp)
                c = value.owner.clone()
                Rewriter.insert_op(c, before)
                value = c.result
            inits.append(value)
            continue
        load = memref.LoadOp.get(array, list(subs))
        Rewriter.insert_op(load, before)
        inits.append(load.res)
    # only stored elements are carried and stored back: an element the loop
    # only reads keeps its value (storing it back would write an input and
    # race with the other threads that read it)
    written = sorted(
        {i for op, i in where.items() if not isinstance(op, memref.LoadOp)}
        | {i for o, i in inner.items() if isinstance(o, memref.StoreOp)}
    )
    cur = list(inits)
    for i in written:
        cur[i] = body.insert_arg(inits[i].type, len(body.args))
    for op in list(body.ops):
        if op in blocks:
            assert isinstance(op, scf.IfOp)
            _carry_through(op, blocks[op], set(written), inner, cur)
            continue
        if op not in where:
            continue
        i = where[op]
        if isinstance(op, memref.LoadOp):
            op.res.replace_all_uses_with(cur[i])
            Rewriter.erase_op(op)
        elif isinstance(op, memref.StoreOp):
            cur[i] = op.value
            Rewriter.erase_op(op)
        elif first[i] is op and _first_iteration_store(op, loop) is not None:
            Rewriter.erase_op(op)  # its value is the init: `cur[i]` holds it
        else:
            assert isinstance(op, scf.IfOp)
            store = _guarded_store(op)
            assert store is not None
            value = store.value
            if not defined_outside(value, op):
                assert isinstance(value.owner, arith.ConstantOp)
                c = value.owner.clone()
                Rewriter.insert_op(c, InsertPoint.before(op))
                value = c.result
            sel = arith.SelectOp(op.cond, value, cur[i])
            Rewriter.insert_op(sel, InsertPoint.before(op))
            cur[i] = sel.result
            Rewriter.erase_op(op)
    old_yield = body.last_op
    assert isinstance(old_yield, scf.YieldOp)
    yields = [cur[i] for i in written]
    Rewriter.replace_op(old_yield, scf.YieldOp(*old_yield.operands, *yields))
    n = len(loop.results)
    carried = [inits[i] for i in written]
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *carried], Region())
    loop.body.move_blocks(new.body)
    Rewriter.insert_op(new, before)
    for old, r in zip(loop.results, new.results[:n]):
        old.replace_all_uses_with(r)
    Rewriter.erase_op(loop)
    after = InsertPoint.after(new)
    stores: list[Operation] = []
    for k, i in enumerate(written):
        array, subs = elements[i]
        stores.append(memref.StoreOp.get(new.results[n + k], array, list(subs)))
    Rewriter.insert_op(stores, after)
    return True


def _carry_through(
    guard: scf.IfOp,
    touched: list[int],
    written: set[int],
    inner: dict[Operation, int],
    cur: list[SSAValue],
) -> None:
    """Replace the guarded block `guard`, whose loads and stores `inner` maps
    to the elements `touched`, by an `scf.if` that yields the values of
    those in `written` after the block (else their values `cur` before it);
    `cur` takes the results."""
    then = guard.true_region.block
    local = {i: cur[i] for i in touched}
    carried = [i for i in touched if i in written]
    for o in list(then.ops):
        i = inner.get(o)
        if i is None:
            continue
        if isinstance(o, memref.LoadOp):
            o.res.replace_all_uses_with(local[i])
        else:
            assert isinstance(o, memref.StoreOp)
            local[i] = o.value
        Rewriter.erase_op(o)
    if not carried:
        return  # the block only reads the elements: it stays as it is
    old_yield = then.last_op
    assert isinstance(old_yield, scf.YieldOp)
    Rewriter.replace_op(old_yield, scf.YieldOp(*(local[i] for i in carried)))
    otherwise = Region(Block([scf.YieldOp(*(cur[i] for i in carried))]))
    new = scf.IfOp(guard.cond, [cur[i].type for i in carried], Region(), otherwise)
    guard.true_region.move_blocks(new.true_region)
    Rewriter.replace_op(guard, new, [])
    for k, i in enumerate(carried):
        cur[i] = new.results[k]


@dataclass(frozen=True)
class GpuCarryRegistersPass(ModulePass):
    name = "gpu-carry-registers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.walk():
            if not isinstance(fn, gpu.FuncOp) or fn.known_block_size is None:
                continue
            block = tuple(fn.known_block_size.get_values())
            for loop in [o for o in fn.walk() if isinstance(o, scf.ForOp)]:
                if not loop.results and _one_trip(loop, block):
                    _inline(loop)
            # innermost loops first, so an element climbs a nest of loops
            for loop in reversed([o for o in fn.walk() if isinstance(o, scf.ForOp)]):
                _carry(loop)


__all__ = ["GpuCarryRegistersPass"]
