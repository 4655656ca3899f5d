"""`unroll-inner-loops`: unroll the innermost loops of GPU kernels.

Contract: in every `gpu.func`, each `scf.for` with no loop inside it is
unrolled by `factor` (TC's `unroll`: copies of each statement below the
threads), capped at `MAX_FACTOR`: a main loop steps by `factor * step` and
runs `factor` copies of the body, iteration arguments threaded through, then
a remainder loop runs what is left, one iteration at a time::

    scf.for %i = %lb to %ub step %s iter_args(%a = %x) { body(%i, %a) }

becomes, for `factor=2`::

    %n = %lb + (%ub - %lb) / (2 * %s) * (2 * %s)     (as %lb when %ub <= %lb)
    %r = scf.for %i = %lb to %n step (2 * %s) iter_args(%a = %x) {
           body(%i, %a) ; body(%i + %s, ...) }
    scf.for %i = %n to %ub step %s iter_args(%a = %r) { body(%i, %a) }

It computes what the loop computed, in the same order. Loops outside
kernels, loops with a loop inside, and everything when `factor` is 1 are
left alone, and so are *copy loops* unless `copies` (the default; TC's
`unrollCopyShared`, `CudaOptions.unroll_copy_shared`, is off by default):
loops that store, and store only into workgroup memory (memory space 3),
which are `affine-gpu-promote`'s copies of tiles into shared memory. The copies make the independent work of consecutive iterations
visible to LLVM's scheduler (its own unroller does not look through
`noalias`-free address arithmetic as readily); beyond `MAX_FACTOR` copies
the code only grows.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu
from tcdialect.transforms.affine_gpu_promote.shared import SHARED_SPACE

#: The most copies of a loop body.
MAX_FACTOR = 16


def _innermost(loop: scf.ForOp) -> bool:
    return not any(isinstance(o, scf.ForOp | scf.WhileOp) for o in loop.body.walk())


def _copies_to_shared(loop: scf.ForOp) -> bool:
    """Whether `loop` stores, and only into workgroup memory (space 3)."""
    stores = [o for o in loop.body.walk() if isinstance(o, memref.StoreOp)]
    return bool(stores) and all(
        isinstance(t := s.memref.type, MemRefType)
        and isinstance(t.memory_space, IntegerAttr)
        and t.memory_space.value.data == SHARED_SPACE
        for s in stores
    )


def unroll(loop: scf.ForOp, factor: int) -> None:
    """Unroll `loop` by `factor` (see the module docstring)."""
    lb, ub, step = loop.lb, loop.ub, loop.step
    t = lb.type
    assert isinstance(t, IndexType | IntegerType)
    at = InsertPoint.before(loop)
    c = arith.ConstantOp.from_int_and_width(factor, t)
    big = arith.MuliOp(step, c)
    span = arith.SubiOp(ub, lb)
    whole = arith.DivSIOp(span, big)
    main = arith.MuliOp(whole, big)
    end = arith.AddiOp(lb, main)
    # an empty loop (ub <= lb) must not run its remainder from a larger end
    end = [end, arith.MaxSIOp(end, lb)]
    Rewriter.insert_op([c, big, span, whole, main, *end], at)
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    # the main loop: `factor` copies of the body
    new_body = Block(arg_types=[a.type for a in body.args])
    iv, *args = new_body.args
    iv.name_hint = body.args[0].name_hint
    values: list[SSAValue] = list(args)
    for k in range(factor):
        if k == 0:
            index: SSAValue = iv
        else:
            kc = arith.ConstantOp.from_int_and_width(k, t)
            off = arith.MuliOp(step, kc)
            ix = arith.AddiOp(iv, off)
            new_body.add_ops([kc, off, ix])
            index = ix.result
        mapper: dict[SSAValue, SSAValue] = {body.args[0]: index}
        mapper.update(zip(body.args[1:], values, strict=True))
        for op in body.ops:
            if op is yielded:
                values = [mapper.get(v, v) for v in yielded.arguments]
            else:
                new_body.add_op(op.clone(value_mapper=mapper))
    new_body.add_op(scf.YieldOp(*values))
    first = scf.ForOp(
        lb, end[-1].results[0], big, list(loop.iter_args), Region(new_body)
    )
    Rewriter.insert_op(first, at)
    # the remainder: the original loop from `end`
    loop.operands[0] = end[-1].results[0]
    for i, r in enumerate(first.results):
        loop.operands[3 + i] = r


@dataclass(frozen=True)
class UnrollInnerLoopsPass(ModulePass):
    name = "unroll-inner-loops"

    factor: int = 4
    #: Unroll the copies into shared memory too (see the module docstring).
    copies: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not isinstance(self.factor, int) or self.factor < 1:
            raise TCError(
                f"unroll-inner-loops: factor must be an integer >= 1, not {self.factor!r}"
            )
        factor = min(self.factor, MAX_FACTOR)
        if factor == 1:
            return
        kernels = [f for f in op.walk() if isinstance(f, gpu.FuncOp)]
        for kernel in kernels:
            loops: list[Operation] = [
                o
                for o in kernel.walk()
                if isinstance(o, scf.ForOp)
                and _innermost(o)
                and (self.copies or not _copies_to_shared(o))
            ]
            for loop in loops:
                assert isinstance(loop, scf.ForOp)
                unroll(loop, factor)
