"""Register promotion: scalar replacement of loop-invariant elements.

Inside the thread loops of a kernel, an `affine.for` without `iter_args`
whose body accesses an array only through `affine.load`/`affine.store`s of
its own block, all at one subscript that no IV of the loop changes (matmul's
`C[m, n]` in the `r_k` loop), keeps the element in a register: one load
before the loop, the value carried in `iter_args`, one store after it (none
when the loop only reads it). It must be the thread's own element: the
loop is inside a thread loop along every axis of the kernel's block, and
when the loop stores, the subscript is injective in those thread loops' IVs
(each appears, at most one per subscript), so no other thread touches it.
Loops are visited innermost first, so an accumulator climbs a nest of
reduction loops (conv's `r_c`, `r_kh`, `r_kw`). When the loop may run no
iteration, the three are guarded by an `affine.if` that it runs one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import affine
from xdsl.dialects.builtin import AffineMapAttr, AffineSetAttr, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.ir.affine.affine_set import (
    AffineConstraintExpr,
    AffineConstraintKind,
    AffineSet,
)
from xdsl.rewriter import Rewriter

from tcdialect.dialects import affine as taffine
from tcdialect.transforms.affine_gpu_promote.kernel import (
    Kernel,
    is_reduce,
    loop_depth,
    thread_axis,
)
from tcdialect.transforms.affine_gpu_promote.linear import (
    Lin,
    enclosing_loops,
    extreme,
    loop_bounds,
    subscripts,
    to_exprs,
    to_map,
)
from tcdialect.transforms.ir_values import defined_outside


@dataclass
class _Element:
    """One array's element that a loop reads and writes in a register."""

    array: SSAValue
    subs: list[Lin]
    accesses: list[affine.LoadOp | affine.StoreOp] = field(
        default_factory=list[affine.LoadOp | affine.StoreOp]
    )

    @property
    def stored(self) -> bool:
        return any(isinstance(a, affine.StoreOp) for a in self.accesses)


def _thread_ivs(k: Kernel, loop: affine.ForOp) -> list[SSAValue] | None:
    """The IVs of the outermost thread loop of each axis around `loop`; None
    if an axis of the kernel has none, or one is a shared reduction."""
    ivs: dict[str, SSAValue] = {}
    op = loop.parent_op()
    while op is not None and op is not k.top.parent_op():
        axis = thread_axis(op)
        if axis is not None:
            if is_reduce(op):
                return None
            ivs[axis] = op.regions[0].blocks[0].args[0]  # the outermost wins
        op = op.parent_op()
    if not ivs or any(a not in ivs for a in k.axes):
        return None
    return list(ivs.values())


def _own(subs: list[Lin], threads: list[SSAValue]) -> bool:
    """Whether distinct thread IVs give distinct elements: each thread IV in
    some subscript, no subscript with two."""
    used = [[t for t in threads if t in s.coef] for s in subs]
    return all(len(u) <= 1 for u in used) and all(
        any(t in u for u in used) for t in threads
    )


def _elements(k: Kernel, loop: affine.ForOp) -> list[_Element]:
    """The elements `loop` can keep in registers (the module docstring)."""
    if loop.inits:
        return []
    threads = _thread_ivs(k, loop)
    if threads is None:
        return []
    body = loop.body.block
    found: dict[SSAValue, _Element] = {}
    bad: set[SSAValue] = set()
    for op in loop.body.walk():
        if (
            isinstance(op, affine.LoadOp | affine.StoreOp)
            and op.parent_block() is body
            and op.memref not in bad
        ):
            subs = subscripts(op)
            e = found.get(op.memref)
            if (
                subs is not None
                and all(defined_outside(v, loop) for s in subs for v in s.coef)
                and (e is None or e.subs == subs)
            ):
                found.setdefault(op.memref, _Element(op.memref, subs)).accesses.append(
                    op
                )
                continue
        bad.update(v for v in op.operands if isinstance(v.type, MemRefType))
    return [
        e
        for a, e in found.items()
        if a not in bad and (not e.stored or _own(e.subs, threads))
    ]


def _runs(loop: affine.ForOp) -> list[Lin] | None:
    """The differences `ub - lb - 1` that must be >= 0 for `loop` to run
    (empty when it always runs); None if its bounds are not linear."""
    bounds = loop_bounds(loop)
    if bounds is None:
        return None
    lbs, ubs, _ = bounds
    outer = [around.limits for around in enclosing_loops(loop)]
    need: list[Lin] = []
    for lb in lbs:
        for ub in ubs:
            least = extreme(ub - lb - 1, outer, highest=False)
            if least is None or least.constant is None or least.constant < 0:
                need.append(ub - lb - 1)
    return need


def promote_private(k: Kernel, depth: int | None = None) -> None:
    """Scalar-replace the loop-invariant elements of every loop in `k` (with
    `depth`, of the loops at that `loop_depth` or deeper only: a register
    then holds an element across those loops and no further out)."""
    loops = [
        op
        for op in k.top.walk()
        if isinstance(op, affine.ForOp)
        and (depth is None or loop_depth(op, k) >= depth)
    ]
    for loop in reversed(loops):  # innermost first
        elements = _elements(k, loop)
        runs = _runs(loop)
        if elements and runs is not None:
            _replace(loop, elements, runs)


def _replace(loop: affine.ForOp, elements: list[_Element], runs: list[Lin]) -> None:
    body = loop.body.block
    current: dict[SSAValue, SSAValue] = {}
    before: list[Operation] = []
    inits: list[SSAValue] = []
    for e in elements:
        t = e.array.type
        assert isinstance(t, MemRefType)
        m, operands = to_map(e.subs)
        init = taffine.LoadOp(e.array, operands, AffineMapAttr(m), t.element_type)
        before.append(init)
        current[e.array] = init.result
        if e.stored:
            inits.append(init.result)
            current[e.array] = body.insert_arg(t.element_type, len(body.args))
    for e in elements:
        for a in e.accesses:
            if isinstance(a, affine.LoadOp):
                a.result.replace_all_uses_with(current[e.array])
            else:
                current[e.array] = a.value
            Rewriter.erase_op(a)
    stored = [e for e in elements if e.stored]
    yield_ = body.last_op
    assert isinstance(yield_, affine.YieldOp)
    Rewriter.replace_op(yield_, affine.YieldOp.get(*(current[e.array] for e in stored)))
    new = affine.ForOp.from_region(
        list(loop.lowerBoundOperands),
        list(loop.upperBoundOperands),
        inits,
        [v.type for v in inits],
        loop.lowerBoundMap,
        loop.upperBoundMap,
        loop.detach_region(loop.body),
        loop.step,
    )
    after: list[Operation] = []
    for e, r in zip(stored, new.results, strict=True):
        m, operands = to_map(e.subs)
        after.append(taffine.StoreOp(r, e.array, operands, AffineMapAttr(m)))
    ops = [*before, new, *after]
    Rewriter.replace_op(loop, [_guard(runs, ops)] if runs else ops, new_results=[])


def _guard(runs: list[Lin], ops: list[Operation]) -> affine.IfOp:
    """`affine.if` every form of `runs` is >= 0, around `ops`."""
    exprs, nd, operands = to_exprs(runs)
    zero = AffineExpr.constant(0)
    cons = tuple(AffineConstraintExpr(AffineConstraintKind.ge, e, zero) for e in exprs)
    then = Block([*ops, affine.YieldOp.get()])
    return affine.IfOp.build(
        operands=[operands],
        result_types=[[]],
        properties={
            "condition": AffineSetAttr(AffineSet(nd, len(operands) - nd, cons))
        },
        regions=[Region(then), Region()],
    )
