"""The band rewrite of `register-tile`: kept loops, strip loops and their bounds, one kernel per strip.

`_Rewriter.run` replaces a planned band (`_Plan`) by its kept output loops,
the strip loops of the unrolled ones (the full strips, then the remainder
strips, statically empty ones left out, `affine.parallel` where the band's
loop was), with the operand copies (`pack.py`) where the plan asks for them
and a kernel (`kernel.py`) in each strip, then erases the band and the
nests that `fold.py` folded.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    VectorType,
)
from xdsl.ir import Block, Operation, SSAValue

from tcdialect.transforms.register_tile.builder import (
    _body_emitter,
    _detach_all,
    _Emitter,
    _empty,
    _loop,
    _Strip,
    _Variant,
)
from tcdialect.transforms.register_tile.kernel import _Kernel
from tcdialect.transforms.register_tile.match import _Val
from tcdialect.transforms.register_tile.pack import _Packing
from tcdialect.transforms.register_tile.policy import SPLIT_CHAINS, _Plan


class _Rewriter(_Packing):
    """Rewrites one band (`_Plan`) into its strip loops and kernels."""

    def __init__(self, plan: _Plan):
        super().__init__()
        self.plan = plan
        self.stmt = plan.stmt
        self.remap: dict[SSAValue, SSAValue] = {}
        self.elem = self.stmt.store.value.type
        self.vt = VectorType(self.elem, [plan.lanes])
        self.strips: list[_Strip] = []
        self.red_range: tuple[_Val, _Val, _Val, _Val] | None = None
        """Mode 2: r's lower bound, the ends of its `split`-vector and its
        one-vector parts, its upper bound."""
        self.split = 1
        """Mode 2: vector accumulators per point along r (independent chains:
        `maximumf` is ~6 dependent instructions on x86)."""

    # -- driver --------------------------------------------------------------

    def run(self) -> None:
        plan = self.plan
        outer = plan.outer
        parent = outer.parent_block()
        assert parent is not None
        top = Block()
        em = _Emitter(top)
        hoisted = Block()
        if plan.anchor is not None:
            self.strips = self._strips(_Emitter(hoisted))
            if plan.packed:
                self.panels = self._pack_all(_Emitter(hoisted))
        # rows copied before the kept loops when no panel is (policy.py)
        hoist_rows = plan.anchor is not None and not plan.packed
        rows = self._pack_rows(_Emitter(hoisted)) if hoist_rows else []
        # kept output loops, in their original order
        for iv in plan.kept:
            d = plan.dim(iv)
            lb = em.bound(d.lb, self.remap, True)
            ub = em.bound(d.ub, self.remap, False)
            block, new_iv = _loop(em, lb, ub, 1, d.parallel, iv.name_hint)
            self.remap[iv] = new_iv
            em = _body_emitter(block)
        if plan.anchor is None:
            self.strips = self._strips(em)
        if plan.row_packed and not hoist_rows:
            rows = self._pack_rows(em)
        self._emit_strips(em, self.strips, 0, {}, {})
        if not hoist_rows:
            for buf in rows:
                em.op(memref.DeallocOp.get(buf))
        frees = [
            memref.DeallocOp.get(buf) for panel in self.panels for buf in panel.values()
        ]
        if hoist_rows:
            frees += [memref.DeallocOp.get(buf) for buf in rows]
        copies = _detach_all(hoisted)
        if plan.anchor is outer:
            parent.insert_ops_before([*copies, *_detach_all(top), *frees], outer)
        else:
            parent.insert_ops_before(_detach_all(top), outer)
            if plan.anchor is not None:
                anchor_block = plan.anchor.parent_block()
                assert anchor_block is not None
                anchor_block.insert_ops_before(copies, plan.anchor)
                anchor_block.insert_ops_after(frees, plan.anchor)
        outer.detach()
        outer.erase()
        folded = [] if plan.start is None else [plan.start.nest]
        if plan.finish is not None:
            folded += [epi.nest for epi in plan.finish.epilogues]
        for nest in folded:
            nest.detach()
            nest.erase()

    def _strips(self, em: _Emitter) -> list[_Strip]:
        plan = self.plan
        lanes = plan.lanes
        strips: list[_Strip] = []
        for iv, f in zip(plan.unrolled, plan.factors):
            d = plan.dim(iv)
            if plan.mode == 1 and iv == plan.vec_iv:
                variants = [_Variant(f, lanes)]
                ext = d.static_extent()
                if ext is not None:
                    # one strip of exactly the vectors left, the last masked
                    # when partial (54 = 3 x 16 + one strip of 1 masked
                    # vector; 26 = 16 + 10: a strip of 1 masked vector)
                    left = ext % (f * lanes)
                    if left:
                        count = -(-left // lanes)
                        variants.append(_Variant(count, lanes, left % lanes != 0))
                else:
                    if f > 1:
                        variants.append(_Variant(1, lanes))
                    variants.append(_Variant(1, lanes, masked=True))
            else:
                variants = [_Variant(f, 1)]
                ext = d.static_extent()
                if ext is not None:
                    # one strip of exactly the rows left (26 rows by 8: a
                    # strip of 2 rows, whose 2 x NV chains keep the FMA
                    # pipes busier than 2 strips of 1 row, one after the other)
                    if ext % f:
                        variants.append(_Variant(ext % f, 1))
                elif f > 1:
                    variants.append(_Variant(1, 1))
            strips.append(_Strip(iv, d.parallel, variants))
        if plan.packed:
            # column strips outside: one panel copy serves every row strip
            strips.reverse()
            cols, rows = strips
            if rows.parallel and not cols.parallel and self._columns_share(cols, rows):
                # the threads take column strips, each copying its own panels,
                # instead of waiting at every strip for one thread's copy
                cols.parallel, rows.parallel = True, False
        if plan.packed or plan.row_packed:
            for iv in plan.red:
                d = plan.dim(iv)
                lb = em.bound(d.lb, self.remap, True)
                ub = em.max(em.bound(d.ub, self.remap, False), lb)
                self.red_bounds[iv] = (lb, em.sym(lambda s0, s1: s1 - s0, lb, ub))
        bounded: list[tuple[SSAValue, _Strip | None]] = [(s.iv, s) for s in strips]
        if plan.mode == 2:
            bounded.append((plan.vec_iv, None))
        for iv, s in bounded:
            d = plan.dim(iv)
            lb = em.bound(d.lb, self.remap, True)
            ub = em.max(em.bound(d.ub, self.remap, False), lb)
            if s is None:
                ext = d.static_extent()
                points = pymath.prod(plan.factors)
                self.split = max(1, SPLIT_CHAINS // points)
                if ext is not None:
                    self.split = max(1, min(self.split, ext // lanes))
                ends: list[_Val] = []
                for step in (self.split * lanes, lanes):
                    if ext is None:
                        ends.append(self._strip_end(em, lb, ub, step))
                    else:
                        ends.append(em.sym(lambda s0, n=ext // step * step: s0 + n, lb))
                end = ends[1]
                self.red_range = (
                    lb,
                    ends[0],
                    end,
                    ub if ext is None or ext % lanes else end,
                )
                continue
            s.ub = ub
            start = lb
            left = d.static_extent()  # iterations left, when known
            for var in s.variants:
                if var.masked or (var is s.variants[-1] and var.step == 1):
                    s.ranges.append((start, start if left == 0 else ub))
                    break
                if left is None:
                    end = self._strip_end(em, start, ub, var.step)
                else:
                    size = left // var.step * var.step
                    end = start if size == 0 else em.sym(lambda s0: s0 + size, start)
                    left -= size
                s.ranges.append((start, end))
                start = end
        return strips

    def _columns_share(self, cols: _Strip, rows: _Strip) -> bool:
        """Whether packing should move the parallel loop from the row strips
        to the (outer) column strips: there are at least as many full column
        strips as full row strips (both extents known). `v` is an output loop
        of the band's single statement, so its iterations write disjoint
        elements of `T` and read nothing the band writes: any order is legal.
        With the rows parallel, one thread would gather every panel while
        the others wait."""
        ext_v = self.plan.dim(cols.iv).static_extent()
        ext_u = self.plan.dim(rows.iv).static_extent()
        if ext_v is None or ext_u is None:
            return False
        return ext_v // cols.variants[0].step >= ext_u // rows.variants[0].step

    @staticmethod
    def _strip_end(em: _Emitter, lb: _Val, ub: _Val, step: int) -> _Val:
        """`lb` + the largest multiple of `step` not above `ub - lb`."""
        return em.sym(lambda s0, s1: s0 + ((s1 - s0) // step) * step, lb, ub)

    def _emit_strips(
        self,
        em: _Emitter,
        strips: list[_Strip],
        k: int,
        env: dict[SSAValue, tuple[SSAValue, _Variant]],
        packed: dict[Operation, tuple[SSAValue, list[SSAValue]]],
    ) -> None:
        if k == len(strips):
            _Kernel(self, em, env, packed).emit()
            return
        s = strips[k]
        for n, (var, (lo, hi)) in enumerate(zip(s.variants, s.ranges)):
            if _empty(lo, hi):
                continue
            block, iv = _loop(em, lo, hi, var.step, s.parallel, s.iv.name_hint)
            inner = _body_emitter(block)
            inner_env = {**env, s.iv: (iv, var)}
            buffers = dict(packed)
            owned: list[SSAValue] = []
            if self.plan.packed and s.iv == self.plan.vec_iv:
                if self.panels:
                    at = inner.index(
                        inner.sym(lambda s0, s1, st=var.step: (s0 - s1) // st, iv, lo)
                    )
                    buffers.update({op: (b, [at]) for op, b in self.panels[n].items()})
                else:
                    own = self._panel_buffers(inner, var, [])
                    self._pack(inner, iv, var, s.ub, own, [])
                    buffers.update({op: (b, []) for op, b in own.items()})
                    owned = list(own.values())
            self._emit_strips(inner, strips, k + 1, inner_env, buffers)
            for buf in owned:
                inner.op(memref.DeallocOp.get(buf))
