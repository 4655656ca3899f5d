"""Operand packing for `register-tile`: copies of panels and rows into contiguous buffers.

This module owns what `register-tile` copies and how; `policy.py` decides
whether (`_Plan.packed`, `_Plan.row_packed`, `_Plan.anchor`), `kernel.py`
reads the buffers.

Packing (mode 1 with a row loop `u`; `pack=auto|always|never`):

- the *panel* (vector loads that do not depend on `u`) is copied, per
  column strip, into `memref.alloc`'d `buf[r_1 - lb_1, ..., r_n - lb_n,
  0 .. NV*VL)` (gathered loads lane by lane, or, read contiguously along
  the one reduction loop (`W[n, k]`), by VL x VL blocks transposed in
  registers with `vector.shuffle`; the others by vectors; masked in the
  masked strip), and the column strips become the outer loop, so
  each copy serves every row strip. `auto` packs when the panel's rows are
  at least 1 KiB apart (4 KiB rows map to the same cache sets) and the row
  extent is unknown or at least 8 * MR; it gathers (instead of mode 2) when
  the row extent is unknown or at least 16 * MR. When the row strips were
  the parallel loop and there are at least as many full column strips as
  full row strips (static extents), the column strips become the parallel
  loop instead, each copying its own panel. When the panel does not vary
  along the band's kept output loops nor along enclosing serial loops that
  leave its arrays unwritten, it is copied once, before them, for every
  column strip: `buf[strip, r_1 - lb_1, ..., 0 .. NV*VL)`, one buffer per
  strip variant (`_hoist_point`; the copy then runs even when those loops
  run zero times, reading only the panel the strip and reduction loops
  span), and the row strips it serves, for the gathering rule above, are
  those of all their iterations;
- *rows* (broadcast loads of `u` that the innermost reduction loop walks
  with a non-unit stride, `A[k, m]`, or whose consecutive rows are a static
  multiple of 2 KiB apart, so that at least 4 of MR share an L1 set) are
  copied once, for all full row strips, into `buf[strip, r_1 - lb_1, ...,
  0 .. MR)` by a loop over the strips (parallel when `u` was), so that a
  kernel reads MR consecutive scalars per step (`auto`: when the column
  extent is unknown or at least 4 * NV * VL). When `u` moves the load along
  its last subscript (`A[k, m]`), the strip's MR rows are consecutive
  elements and each step copies them as one vector (as MR scalar copies,
  LLVM vectorised the copy along `r` into gathers).
  Rows that are only factors of a 16-bit FMA (`fma16`) are copied whatever
  the column extent when the copy can move out of the kept loops as a panel
  does (`_hoist_point`; conv2d's weights, once instead of once per image
  row), and then before them.
- loads that are factors of a 16-bit FMA and have no other use
  (`_Statement.wide_loads`) are copied extended to f32 (`arith.extf` after
  the load, before the store), into f32 buffers: each is converted once per
  copy instead of once per use.
  Buffers are freed after their last use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    DenseArrayBase,
    IntegerType,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import (
    AffineMap,
)

from tcdialect.dialects.affine import LoadOp, StoreOp
from tcdialect.transforms.register_tile.builder import (
    _body_emitter,
    _Emitter,
    _empty,
    _loop,
    _Strip,
    _Variant,
)
from tcdialect.transforms.register_tile.match import _Statement, _Val

if TYPE_CHECKING:
    from tcdialect.transforms.register_tile.policy import _Plan


class _Packing:
    """The operand copies of a band's rewrite (`_Rewriter`, which sets the
    plan, the IV remapping and the strips before it copies)."""

    plan: _Plan
    stmt: _Statement
    remap: dict[SSAValue, SSAValue]
    """Band IVs -> the IVs of the loops emitted in their place."""
    strips: list[_Strip]
    elem: Attribute
    """T's element type (the accumulators')."""

    def __init__(self) -> None:
        self.red_bounds: dict[SSAValue, tuple[_Val, _Val]] = {}
        """(lower bound, extent) of each reduction loop."""
        self.row_buffers: dict[Operation, SSAValue] = {}
        """Row-packed loads -> their buffers (`_pack_rows`)."""
        self.row_base: _Val = 0
        """The row loop's lower bound: strip `s` of a row buffer holds the
        rows `row_base + s * MR + i`."""
        self.panels: list[dict[Operation, SSAValue]] = []
        """Hoisted panels: per variant of the column strips, the buffer of
        each panel load (`_pack_all`)."""

    def _held(self, op: Operation) -> Attribute:
        """The element type of the copies of load `op`: T's for a factor of
        a widened FMA (`_Statement.wide_loads`: extended once, as copied),
        else `op`'s."""
        return self.elem if op in self.stmt.wide_loads else op.results[0].type

    def _extended(self, em: _Emitter, op: Operation, x: SSAValue) -> SSAValue:
        """`x`, a value (vector) of load `op`, as its copies hold it."""
        if op not in self.stmt.wide_loads:
            return x
        t = x.type
        wide = (
            VectorType(self.elem, t.get_shape())
            if isinstance(t, VectorType)
            else self.elem
        )
        return em.val(arith.ExtFOp(x, wide))

    def _pack_all(self, em: _Emitter) -> list[dict[Operation, SSAValue]]:
        """Hoisted panels: per variant of the column strips, copy the panel
        of each of its strips `i` into `buf[i, r_1 - lb_1, ..., 0 .. count *
        VL)`, one buffer per panel load."""
        cols = next(st for st in self.strips if st.iv == self.plan.vec_iv)
        panels: list[dict[Operation, SSAValue]] = []
        for var, (lo, hi) in zip(cols.variants, cols.ranges):
            if _empty(lo, hi):
                panels.append({})
                continue
            step = var.step
            n = em.sym(lambda s0, s1, st=step: (s1 - s0 + st - 1) // st, lo, hi)
            buffers = self._panel_buffers(em, var, [n])
            block, i = _loop(em, 0, n, 1, False, "strip")
            loop_em = _body_emitter(block)
            v0 = loop_em.index(loop_em.sym(lambda s0, s1, st=step: s0 + s1 * st, lo, i))
            self._pack(loop_em, v0, var, cols.ub, buffers, [i])
            panels.append(buffers)
        return panels

    def _panel_buffers(
        self, em: _Emitter, var: _Variant, lead: list[_Val]
    ) -> dict[Operation, SSAValue]:
        """`memref.alloc`s for the panel loads of strips of `var`: `lead`
        dimensions, then the reduction extents, then `count * VL`."""
        extents = [*lead, *(self.red_bounds[iv][1] for iv in self.plan.red)]
        shape = [e if isinstance(e, int) else DYNAMIC_INDEX for e in extents]
        dyn = [e for e in extents if isinstance(e, SSAValue)]
        return {
            op: em.val(
                memref.AllocOp(
                    dyn,
                    [],
                    MemRefType(self._held(op), [*shape, var.count * self.plan.lanes]),
                )
            )
            for op in self.plan.packed
        }

    def _pack(
        self,
        em: _Emitter,
        v0: SSAValue,
        var: _Variant,
        ub: _Val,
        buffers: dict[Operation, SSAValue],
        prefix: list[SSAValue],
    ) -> None:
        """Copy the panel loads of one column strip into contiguous buffers
        `buf[*prefix, r_1 - lb_1, ..., r_n - lb_n, 0 .. count * VL)`."""
        plan = self.plan
        lanes = plan.lanes
        width = var.count * lanes
        mask = None
        zeros: dict[Attribute, SSAValue] = {}
        copies = [op for op in plan.packed if op not in plan.gathers]
        if var.masked and copies:
            last = (var.count - 1) * lanes
            n = em.index(em.sym(lambda s0, s1, o=last: s1 - s0 - o, v0, ub))
            mask = em.val(vector.CreateMaskOp([n], VectorType(IntegerType(1), [lanes])))
            for op in plan.packed:
                if op in plan.gathers:
                    continue
                t = VectorType(op.results[0].type, [lanes])
                if t not in zeros:
                    zeros[t] = em.constant(0, t)
        cols = [
            em.index(em.sym(lambda s0, o=j * lanes: s0 + o, v0))
            for j in range(var.count)
        ]
        for op in plan.gathers:
            count = em.min(width, em.sym(lambda s0, s1: s1 - s0, v0, ub))
            # register transposes in the main strip only: each is ~130 ops
            # (VL = 16), and the strips left over cover few columns
            main = next(st for st in self.strips if st.iv == plan.vec_iv)
            full = 0
            if var is main.variants[0]:
                full = var.count - 1 if var.masked else var.count
            self._gather(em, op, buffers[op], v0, count, full, prefix)
        if not copies:
            return
        # the copy loops: the reduction loops (original bounds), then the vectors
        loop_em, remap, rel = self._reduction_copy_loops(em)
        for op in copies:
            buf = buffers[op]
            access = self.stmt.loads[op]
            t = VectorType(op.results[0].type, [lanes])
            for j in range(var.count):
                col = cols[j]
                operands: list[SSAValue] = [
                    col if x == plan.vec_iv else remap.get(x, self.remap.get(x, x))
                    for x in access.operands
                ]
                indices = loop_em.subscripts(access.map, operands)
                if mask is not None and j == var.count - 1:
                    x = loop_em.val(
                        vector.MaskedLoadOp(access.memref, indices, mask, zeros[t], t)
                    )
                else:
                    x = loop_em.val(vector.LoadOp(access.memref, indices, t))
                x = self._extended(loop_em, op, x)
                at = [*prefix, *rel, loop_em.index(j * lanes)]
                loop_em.op(vector.StoreOp(x, buf, at))

    def _reduction_copy_loops(
        self, em: _Emitter
    ) -> tuple[_Emitter, dict[SSAValue, SSAValue], list[SSAValue]]:
        """Serial loops over the reduction IVs (their original bounds) at `em`.

        Returns the innermost body's emitter, old IV -> new IV, and each new
        IV relative to its lower bound (the packed buffers' subscripts)."""
        ivs: list[SSAValue] = []
        for iv in self.plan.red:
            lb, ext = self.red_bounds[iv]
            ub_r = em.sym(lambda s0, s1: s0 + s1, lb, ext)
            block, new_iv = _loop(em, lb, ub_r, 1, False, iv.name_hint)
            em = _body_emitter(block)
            ivs.append(new_iv)
        rel = [
            em.index(em.sym(lambda s0, s1: s0 - s1, i, self.red_bounds[iv][0]))
            for iv, i in zip(self.plan.red, ivs)
        ]
        return em, dict(zip(self.plan.red, ivs)), rel

    def _pack_rows(self, em: _Emitter) -> list[SSAValue]:
        """Copy the row-packed loads of every full row strip, in parallel over
        the strips: `buf[s, r - lb, i] = op(u = lb_u + s * MR + i, r)`."""
        plan = self.plan
        u = plan.unrolled[0]
        mr = plan.factors[0]
        strip = next(st for st in self.strips if st.iv == u)
        lb_u, u_end = strip.ranges[0]
        self.row_base = lb_u
        count = em.sym(lambda s0, s1: (s1 - s0) // mr, lb_u, u_end)
        extents = [self.red_bounds[iv][1] for iv in plan.red]
        dims = [count, *extents]
        shape = [e if isinstance(e, int) else DYNAMIC_INDEX for e in dims] + [mr]
        dyn = [e for e in dims if isinstance(e, SSAValue)]
        for op in plan.row_packed:
            t = MemRefType(self._held(op), shape)
            self.row_buffers[op] = em.val(memref.AllocOp(dyn, [], t))
        block, s_iv = _loop(em, 0, count, 1, plan.dim(u).parallel, "strip")
        loop_em = _body_emitter(block)
        u0 = loop_em.index(loop_em.sym(lambda s0, s1: s0 + s1 * mr, lb_u, s_iv))
        # a strip's MR rows are consecutive elements of loads that `u` moves
        # along their last subscript (AᵀB's `A[k, m]`): one vector copy each
        # (LLVM would turn MR scalar copies into gathers along `r`)
        contiguous = {
            op: self.stmt.loads[op].unit_last(u) is True for op in self.row_buffers
        }
        rows = [u0]
        if not all(contiguous.values()):
            rows += [
                loop_em.index(loop_em.sym(lambda s0, o=i: s0 + o, u0))
                for i in range(1, mr)
            ]
        loop_em, remap, rel = self._reduction_copy_loops(loop_em)
        for op, buf in self.row_buffers.items():
            access = self.stmt.loads[op]
            elem = op.results[0].type
            for i in range(1 if contiguous[op] else mr):
                operands = [
                    rows[i] if x == u else remap.get(x, self.remap.get(x, x))
                    for x in access.operands
                ]
                if contiguous[op]:
                    indices = loop_em.subscripts(access.map, operands)
                    t = VectorType(elem, [mr])
                    x = loop_em.val(vector.LoadOp(access.memref, indices, t))
                    x = self._extended(loop_em, op, x)
                    loop_em.op(vector.StoreOp(x, buf, [s_iv, *rel, loop_em.index(0)]))
                    continue
                amap = AffineMapAttr(access.map)
                x = loop_em.val(LoadOp(access.memref, operands, amap, elem))
                x = self._extended(loop_em, op, x)
                loop_em.op(StoreOp(x, buf, [s_iv, *rel, loop_em.index(i)]))
        return list(self.row_buffers.values())

    def _gather(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        count: _Val,
        full: int,
        prefix: list[SSAValue],
    ) -> None:
        """Copy `op`'s elements for columns `v0 .. v0 + count` into
        `buf[*prefix, r - lb, l] = op(v = v0 + l, r)` (at most `full`
        blocks of VL columns are complete).

        With one reduction loop `r` that the source reads contiguously (its
        last subscript, coefficient 1: MLP's `W1[n, r_m]`), full VL x VL
        blocks are transposed in registers (`_transpose`); the rest, and
        other panels, are copied element by element (`_gather_elements`)."""
        plan = self.plan
        access = self.stmt.loads[op]
        lanes = plan.lanes
        r = plan.red[0]
        if (
            not full
            or len(plan.red) != 1
            or not access.unit_last(r)
            or lanes & (lanes - 1)
        ):
            self._gather_elements(em, op, buf, v0, (0, count), 0, prefix)
            return
        _, ext = self.red_bounds[r]
        blocks = em.min(full, em.sym(lambda s0: s0 // lanes, count))
        ext_v = em.sym(lambda s0: (s0 // lanes) * lanes, ext)
        lane_v = em.sym(lambda s0: (s0 // lanes) * lanes, count)
        self._transpose(em, op, buf, v0, blocks, ext_v, prefix)
        if not (isinstance(ext, int) and ext_v == ext):
            self._gather_elements(em, op, buf, v0, (0, lane_v), ext_v, prefix)
        self._gather_elements(em, op, buf, v0, (lane_v, count), 0, prefix)

    def _transpose(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        blocks: _Val,
        ext: _Val,
        prefix: list[SSAValue],
    ) -> None:
        """Per block of VL columns and VL steps of `r` (the first `ext`): VL
        vector loads along `r` (one per column), a transpose by log2(VL)
        stages of two-input `vector.shuffle`s (stage `s` swaps, in every 2s x
        2s block, the off-diagonal s x s blocks of the vector pairs `i, i +
        s`), VL vector stores along the lanes. x86 does each shuffle in one
        instruction (`vpermt2ps` at worst) where the element-wise copy takes a
        load and a store per element."""
        plan = self.plan
        lanes = plan.lanes
        access = self.stmt.loads[op]
        r = plan.red[0]
        lb, _ = self.red_bounds[r]
        t = VectorType(op.results[0].type, [lanes])
        block, b = _loop(em, 0, blocks, 1, False, "lanes")
        bem = _body_emitter(block)
        first = bem.index(bem.sym(lambda s0: s0 * lanes, b))
        end = bem.sym(lambda s0, s1: s0 + s1, lb, ext)
        block, k = _loop(bem, lb, end, lanes, False, r.name_hint)
        kem = _body_emitter(block)
        amap = access.map
        rows: list[SSAValue] = []
        for i in range(lanes):
            col = kem.index(kem.sym(lambda s0, s1, o=i: s0 + s1 + o, v0, first))
            operands = [
                col if x == plan.vec_iv else k if x == r else self.remap.get(x, x)
                for x in access.operands
            ]
            indices = [
                kem.index(
                    kem.apply(
                        AffineMap(amap.num_dims, amap.num_symbols, (e,)), operands
                    )
                )
                for e in amap.results
            ]
            rows.append(kem.val(vector.LoadOp(access.memref, indices, t)))
        s = lanes // 2
        while s:
            lo = [x if not x & s else lanes + x - s for x in range(lanes)]
            hi = [x + s if not x & s else lanes + x for x in range(lanes)]
            out = list(rows)
            for i in range(lanes):
                if i & s:
                    continue
                for at, mask in ((i, lo), (i + s, hi)):
                    out[at] = kem.val(
                        vector.ShuffleOp(
                            rows[i],
                            rows[i + s],
                            DenseArrayBase.from_list(i64, mask),
                            result_type=t,
                        )
                    )
            rows = out
            s //= 2
        rel = kem.sym(lambda s0, s1: s0 - s1, k, lb)
        for j, row in enumerate(rows):
            at = kem.index(kem.sym(lambda s0, o=j: s0 + o, rel))
            row = self._extended(kem, op, row)
            kem.op(vector.StoreOp(row, buf, [*prefix, at, first]))

    def _gather_elements(
        self,
        em: _Emitter,
        op: Operation,
        buf: SSAValue,
        v0: SSAValue,
        lanes: tuple[_Val, _Val],
        skip: _Val,
        prefix: list[SSAValue],
    ) -> None:
        """Copy the lanes `lanes` one by one, the lanes outermost (each lane
        reads a contiguous run of the source when `r` is its last subscript);
        with one reduction loop, only its steps from `lb + skip` on."""
        if _empty(*lanes):
            return
        plan = self.plan
        access = self.stmt.loads[op]
        block, lane = _loop(em, lanes[0], lanes[1], 1, False, "lane")
        loop_em = _body_emitter(block)
        col = loop_em.index(loop_em.sym(lambda s0, s1: s0 + s1, v0, lane))
        ivs: list[SSAValue] = []
        for iv in plan.red:
            lb, ext = self.red_bounds[iv]
            ub_r = loop_em.sym(lambda s0, s1: s0 + s1, lb, ext)
            lo = loop_em.sym(lambda s0, s1: s0 + s1, lb, skip) if skip != 0 else lb
            if _empty(lo, ub_r):
                return
            block, new_iv = _loop(loop_em, lo, ub_r, 1, False, iv.name_hint)
            loop_em = _body_emitter(block)
            ivs.append(new_iv)
        remap = dict(zip(plan.red, ivs))
        operands = [
            col if x == plan.vec_iv else remap.get(x, self.remap.get(x, x))
            for x in access.operands
        ]
        x = loop_em.val(
            LoadOp(
                access.memref, operands, AffineMapAttr(access.map), op.results[0].type
            )
        )
        x = self._extended(loop_em, op, x)
        rel = [
            loop_em.index(
                loop_em.sym(lambda s0, s1: s0 - s1, i, self.red_bounds[iv][0])
            )
            for iv, i in zip(plan.red, ivs)
        ]
        loop_em.op(StoreOp(x, buf, [*prefix, *rel, lane]))
