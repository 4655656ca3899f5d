"""The micro-kernel of `register-tile`: accumulators, the reduction loops, the stores.

`_Kernel` emits one register tile for one strip variant: the accumulators
(loaded from T or the folded initial value), the reduction loops over the
original `R` (mode 1) or the split vector loop along `r` and its remainder
(mode 2), the folded epilogue and the (masked) stores. `_Body` builds the
reduction body: `e` at every point of the tile, loads from the original
arrays or from packed buffers, broadcasts, then `⊕` (an FMA for `+ a * b`).
Prefetches are requested from `prefetch.py`, which decides.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith, scf, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tcdialect.dialects.affine import LoadOp, StoreOp
from tcdialect.transforms.register_tile.builder import (
    _Emitter,
    _empty,
    _reduction_loop,
    _Variant,
)
from tcdialect.transforms.register_tile.fold import _Epilogue
from tcdialect.transforms.register_tile.match import (
    _FLOAT_COMBINES,
    _INT_COMBINES,
    _Access,
    _Val,
)
from tcdialect.transforms.register_tile.prefetch import (
    next_rows,
    prefetch_far,
    prefetch_next,
    prefetch_panel,
    prefetch_rows,
    prefetch_target,
)

if TYPE_CHECKING:
    from tcdialect.transforms.register_tile.rewrite import _Rewriter


class _Kernel:
    """One register tile: accumulators, the reduction loops, the stores."""

    def __init__(
        self,
        rw: _Rewriter,
        em: _Emitter,
        env: dict[SSAValue, tuple[SSAValue, _Variant]],
        packed: dict[Operation, tuple[SSAValue, list[SSAValue]]],
    ):
        self.rw = rw
        self.packed = packed
        self.plan = rw.plan
        self.stmt = rw.stmt
        self.em = em
        self.env = env
        self.dims = list(self.plan.unrolled)
        self.counts = [env[iv][1].count for iv in self.dims]
        self.points = list(itertools.product(*(range(c) for c in self.counts)))
        self.offsets: dict[tuple[SSAValue, int], SSAValue] = {}
        self.mask: SSAValue | None = None
        self.zeros: dict[Attribute, SSAValue] = {}
        mode1 = self.plan.mode == 1
        vvar = env[self.plan.vec_iv][1] if mode1 else None
        self.mask_point = -1
        """The vector (its index along the vector IV) that `mask` covers."""
        self.pairs: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        """Pair points -> their two rows' points (`_pair_tails`)."""
        self.half_mask: SSAValue | None = None
        self.pair_iv: SSAValue | None = None
        self.pair_tail = 0
        """Lanes of each row's masked vector in a pair point."""
        if vvar is not None and vvar.masked:
            self.mask_point = vvar.count - 1
            self._pair_tails()
        if any(self._masked(p) for p in self.points if p not in self.pairs):
            assert vvar is not None
            base = env[self.plan.vec_iv][0]
            last = (vvar.count - 1) * self.plan.lanes
            n = em.index(
                em.sym(lambda s0, s1, o=last: s1 - s0 - o, base, self._strip_ub())
            )
            self.mask = em.val(
                vector.CreateMaskOp([n], VectorType(IntegerType(1), [self.plan.lanes]))
            )
        # row-packed loads: only the full row strips have their copy
        self.full_rows = False
        self.strip_index: SSAValue | None = None
        if self.rw.row_buffers:
            u = self.plan.unrolled[0]
            base, var = env[u]
            if var.count == self.plan.factors[0]:
                mr = var.count
                self.full_rows = True
                self.strip_index = em.index(
                    em.sym(lambda s0, s1: (s0 - s1) // mr, base, self.rw.row_base)
                )
        # offsets of the unrolled IVs, hoisted out of the reduction loops
        for iv, c in zip(self.dims, self.counts):
            base, var = env[iv]
            for i in range(c):
                off = i * var.stride
                self.offsets[(iv, i)] = em.index(em.sym(lambda s0, o=off: s0 + o, base))
        if self.pairs:
            half = VectorType(IntegerType(1), [self.plan.lanes // 2])
            tail = em.constant(self.pair_tail, IndexType())
            self.half_mask = em.val(vector.CreateMaskOp([tail], half))
        self.flat_points = [
            q for p in self.points for q in (self.pairs[p] if p in self.pairs else (p,))
        ]
        """The points with each pair point as its two rows' points."""

    def _pair_tails(self) -> None:
        """Mode 1: when the masked vector of each row uses at most half of
        its lanes, the masked vectors of rows `2i` and `2i + 1` of the row
        loop `u` become one vector (a *pair point*), lanes `[0, VL/2)` for
        row `2i` and `[VL/2, VL)` for row `2i + 1`. Every op of the body is
        lane-wise, so the pair runs the same FMAs on half as many vectors:
        54 columns by 16 lanes are 3 full vectors and a masked one of 6
        lanes per row, and 4 rows take 14 FMAs per step instead of 16.

        A pair point has `u` coordinate `-1 - i`, `i` its first row. Its values (`_Body`): a
        vector load is two half-width loads masked to the tail's lanes (one,
        repeated, when `u` does not move it), a value that depends on `u`
        but not on the vector IV the blend of its two rows' broadcasts, and
        a value that depends on neither is the scalar. Its accumulator is
        split into the two rows' halves before the folded updates and the
        (masked) stores.

        Only with a static extent of the vector IV (so that the tail's lane
        count is known), one row loop, and no packed panels or rows."""
        plan = self.plan
        if (
            plan.mode != 1
            or not plan.pair_tails
            or self.packed
            or self.rw.row_buffers
            or len(self.dims) != 2
            or plan.lanes % 2
        ):
            return
        ext = plan.dim(plan.vec_iv).static_extent()
        tail = None if ext is None else ext % plan.lanes
        if tail is None or not 0 < tail <= plan.lanes // 2:
            return
        (u,) = [d for d in self.dims if d != plan.vec_iv]
        ui, vi = self.dims.index(u), self.dims.index(plan.vec_iv)
        rows = self.counts[ui]
        if rows < 2:
            return
        self.pair_iv = u
        self.pair_tail = tail
        points: list[tuple[int, ...]] = []
        for p in self.points:
            i = p[ui]
            if p[vi] != self.mask_point or i + 1 - i % 2 >= rows:
                points.append(p)  # a full vector, or the last of an odd count
            elif i % 2 == 0:
                pair = tuple(-1 - i if d == ui else x for d, x in enumerate(p))
                below = tuple(i + 1 if d == ui else x for d, x in enumerate(p))
                self.pairs[pair] = (p, below)
                points.append(pair)
        self.points = points

    def half_type(self, elem: Attribute) -> VectorType[Attribute]:
        return VectorType(elem, [self.plan.lanes // 2])

    def join(self, em: _Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
        """The vector of lanes `[0, VL/2)` of `a` and then `[0, VL/2)` of
        `b`, from two half vectors or (a blend) two full ones."""
        at = a.type
        assert isinstance(at, VectorType)
        n = at.get_shape()[0]
        h = self.plan.lanes // 2
        if n == h:
            mask = list(range(2 * h))
        else:
            mask = list(range(h)) + [n + h + i for i in range(h)]
        return em.val(
            vector.ShuffleOp(
                a,
                b,
                DenseArrayBase.from_list(i64, mask),
                result_type=VectorType(at.get_element_type(), [2 * h]),
            )
        )

    def halves(self, em: _Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The two rows' halves of a pair point's vector."""
        xt = x.type
        assert isinstance(xt, VectorType)
        h = self.plan.lanes // 2
        t = self.half_type(xt.get_element_type())
        lo, hi = (
            em.val(
                vector.ShuffleOp(
                    x,
                    x,
                    DenseArrayBase.from_list(i64, list(range(o, o + h))),
                    result_type=t,
                )
            )
            for o in (0, h)
        )
        return lo, hi

    def _strip_ub(self) -> _Val:
        return next(s.ub for s in self.rw.strips if s.iv == self.plan.vec_iv)

    # -- values --------------------------------------------------------------

    def iv_value(
        self, v: SSAValue, p: tuple[int, ...], red_iv: SSAValue | None
    ) -> SSAValue:
        if v in self.env:
            return self.offsets[(v, p[self.dims.index(v)])]
        if red_iv is not None and v == self.plan.vec_iv:
            return red_iv
        return self.rw.remap.get(v, v)

    def emit(self) -> None:
        plan, stmt, em = self.plan, self.stmt, self.em
        target = stmt.target
        mode1 = plan.mode == 1
        accs = self.accumulators(em)
        if not mode1:
            kind, ident = self._reduction_kind()
            init = em.constant(ident, self.rw.vt)
            accs = accs + [init] * len(self.points)
        red = [iv for iv in plan.red if not (plan.mode == 2 and iv == plan.vec_iv)]
        if mode1:
            prefetch_rows(self, em)
            prefetch_target(self, em)
        results = self.reduction_nest(em, red, accs)
        n = len(self.points)
        if not mode1:
            scalars, vecs = results[:n], results[n:]
            kind, _ = self._reduction_kind()
            results = [
                em.val(
                    vector.ReductionOp.build(
                        operands=[v, [s]],
                        result_types=[self.rw.elem],
                        properties={
                            "kind": vector.CombiningKindAttr(
                                vector.CombiningKindFlag(kind)
                            ),
                            "fastmath": self._flags(),
                        },
                    )
                )
                for s, v in zip(scalars, vecs)
            ]
        if self.pairs:
            split: list[SSAValue] = []
            for p, value in zip(self.points, results):
                split += self.halves(em, value) if p in self.pairs else [value]
            results = split
        results = self.finish(em, results)
        for p, value in zip(self.flat_points, results):
            operands = [self.iv_value(v, p, None) for v in target.operands]
            if mode1:
                self.vector_store(em, value, target, operands, p)
            else:
                em.op(
                    StoreOp(value, target.memref, operands, AffineMapAttr(target.map))
                )

    def load_target(self, em: _Emitter) -> list[SSAValue]:
        """T at every point: vectors in mode 1, scalars in mode 2."""
        target = self.stmt.target
        out: list[SSAValue] = []
        for p in self.points:
            if p in self.pairs:
                a, b = (
                    self.vector_load(
                        em,
                        target,
                        [self.iv_value(v, q, None) for v in target.operands],
                        self.half_type(self.rw.elem),
                        q,
                    )
                    for q in self.pairs[p]
                )
                out.append(self.join(em, a, b))
                continue
            operands = [self.iv_value(v, p, None) for v in target.operands]
            if self.plan.mode == 1:
                out.append(self.vector_load(em, target, operands, self.rw.vt, p))
            else:
                out.append(
                    em.val(LoadOp(target.memref, operands, AffineMapAttr(target.map)))
                )
        return out

    def accumulators(self, em: _Emitter) -> list[SSAValue]:
        """The accumulators' first values: T, or the folded initial value
        (`_initial`) in the first tile."""
        start = self.plan.start
        if start is None:
            return self.load_target(em)
        owner = start.value.owner
        value = (
            em.val(owner.clone())
            if isinstance(owner, arith.ConstantOp) and start.nest.is_ancestor(owner)
            else start.value
        )
        if self.plan.mode == 1:
            value = em.val(vector.BroadcastOp(value, self.rw.vt))
        initial = [value] * len(self.points)
        if not start.first:
            return initial
        cond = self._at(em, start.first)
        then_block = Block([scf.YieldOp(*initial)])
        else_block = Block()
        loads = self.load_target(_Emitter(else_block))
        else_block.add_op(scf.YieldOp(*loads))
        branch = scf.IfOp(cond, [a.type for a in loads], [then_block], [else_block])
        em.op(branch)
        return list(branch.results)

    def _at(self, em: _Emitter, tiles: list[tuple[SSAValue, int]]) -> SSAValue:
        """Whether every tile IV is at its given iteration."""
        cond: SSAValue | None = None
        for iv, at in tiles:
            eq = em.val(arith.CmpiOp(iv, em.constant(at, IndexType()), "eq"))
            cond = eq if cond is None else em.val(arith.AndIOp(cond, eq))
        assert cond is not None
        return cond

    def finish(self, em: _Emitter, values: list[SSAValue]) -> list[SSAValue]:
        """The values to store: with the folded updates (`_final`) applied
        in the last tile."""
        fin = self.plan.finish
        if fin is None:
            return values
        if not fin.last:
            return self.updated(em, values)
        then_block = Block()
        then_block.add_op(scf.YieldOp(*self.updated(_Emitter(then_block), values)))
        else_block = Block([scf.YieldOp(*values)])
        branch = scf.IfOp(
            self._at(em, fin.last),
            [v.type for v in values],
            [then_block],
            [else_block],
        )
        em.op(branch)
        return list(branch.results)

    def updated(self, em: _Emitter, values: list[SSAValue]) -> list[SSAValue]:
        assert self.plan.finish is not None
        out: list[SSAValue] = []
        for p, value in zip(self.flat_points, values):
            for epi in self.plan.finish.epilogues:
                value = self._epilogue(em, epi, p, value)
            out.append(value)
        return out

    def _epilogue(
        self, em: _Emitter, epi: _Epilogue, p: tuple[int, ...], acc: SSAValue
    ) -> SSAValue:
        """One pointwise update at point `p` of the value `acc` of T (a
        vector of VL lanes, or VL/2 for a row of a pair point, in mode 1)."""
        plan = self.plan
        at = acc.type
        lanes = at.get_shape()[0] if isinstance(at, VectorType) else plan.lanes
        band = {d.iv for d in plan.dims}
        store = epi.ops[-1]
        assert isinstance(store, xaffine.StoreOp)
        env: dict[SSAValue, SSAValue] = {}

        def get(v: SSAValue) -> SSAValue:
            if v not in env and isinstance(v.owner, arith.ConstantOp):
                env[v] = em.val(v.owner.clone())
            return env.get(v, v)

        def widen(x: SSAValue) -> SSAValue:
            if plan.mode != 1 or isinstance(x.type, VectorType):
                return x
            return em.val(vector.BroadcastOp(x, VectorType(x.type, [lanes])))

        for o in epi.ops[:-1]:
            r = o.results[0]
            if isinstance(o, xaffine.LoadOp):
                if o.memref == store.memref:
                    env[r] = acc
                    continue
                mapped = [epi.ivs.get(v, v) for v in o.indices]
                access = _Access.of(o.memref, o.map.data, mapped, band)
                operands = [self.iv_value(v, p, None) for v in mapped]
                if plan.mode == 1 and access.unit_last(plan.vec_iv):
                    t = VectorType(r.type, [lanes])
                    env[r] = self.vector_load(em, access, operands, t, p)
                else:
                    env[r] = em.val(
                        LoadOp(o.memref, operands, AffineMapAttr(o.map.data), r.type)
                    )
                continue
            operands = [get(v) for v in o.operands]
            if isinstance(o, arith.ConstantOp):
                env[r] = get(r)
                continue
            vec = any(isinstance(x.type, VectorType) for x in operands)
            if vec:
                operands = [widen(x) for x in operands]
            env[r] = em.val(
                type(o).create(
                    operands=operands,
                    result_types=[VectorType(r.type, [lanes]) if vec else r.type],
                    properties=dict(o.properties),
                    attributes=dict(o.attributes),
                )
            )
        return widen(get(store.value))

    def _flags(self) -> arith.FastMathFlagsAttr:
        flags = self.stmt.combine.properties.get("fastmath")
        if isinstance(flags, arith.FastMathFlagsAttr):
            return flags
        return arith.FastMathFlagsAttr("none")

    def _reduction_kind(self) -> tuple[str, int | float]:
        name = self.stmt.combine.name
        if name in _FLOAT_COMBINES:
            return _FLOAT_COMBINES[name]
        kind, ident = _INT_COMBINES[name]
        elem = self.rw.elem
        assert isinstance(elem, IntegerType)
        return kind, ident(elem.width.data)

    def reduction_nest(
        self, em: _Emitter, red: list[SSAValue], accs: list[SSAValue]
    ) -> list[SSAValue]:
        if not red:
            if self.plan.mode == 1:
                return _Body(self, em, None, vector=True).update(accs)
            return self.split_reduction(em, accs)
        iv = red[0]
        d = self.plan.dim(iv)
        block = Block(arg_types=[IndexType(), *(a.type for a in accs)])
        new_iv = block.args[0]
        new_iv.name_hint = iv.name_hint
        self.rw.remap[iv] = new_iv
        inner = _Emitter(block)
        results = self.reduction_nest(inner, red[1:], list(block.args[1:]))
        block.add_op(xaffine.YieldOp.get(*results))
        remap = self.rw.remap
        loop = xaffine.ForOp.from_region(
            [remap.get(v, v) for v in d.lb[1]],
            [remap.get(v, v) for v in d.ub[1]],
            accs,
            [a.type for a in accs],
            AffineMapAttr(d.lb[0]),
            AffineMapAttr(d.ub[0]),
            Region(block),
            1,
        )
        em.op(loop)
        return list(loop.results)

    def split_reduction(self, em: _Emitter, accs: list[SSAValue]) -> list[SSAValue]:
        """Mode 2: the loop along r by `split` vectors (that many partial
        vectors per point, folded with ⊕ after it), then by one vector, then
        its scalar remainder."""
        n = len(self.points)
        scalars, vecs = accs[:n], accs[n:]
        assert self.rw.red_range is not None
        lb, end_split, end, ub = self.rw.red_range
        lanes = self.plan.lanes
        name = self.plan.vec_iv.name_hint
        split = self.rw.split
        ahead = next_rows(self, em)
        if split > 1 and not _empty(lb, end_split):
            _, ident = self._reduction_kind()
            init = vecs + [em.constant(ident, self.rw.vt)] * (n * (split - 1))
            block = Block(arg_types=[IndexType(), *(a.type for a in init)])
            iv = block.args[0]
            iv.name_hint = name
            body = _Emitter(block)
            results: list[SSAValue] = []
            for u in range(split):
                at = (
                    iv
                    if u == 0
                    else body.index(body.sym(lambda s0, o=u * lanes: s0 + o, iv))
                )
                results += _Body(self, body, at, vector=True).update(
                    list(block.args[1 + u * n : 1 + (u + 1) * n])
                )
                prefetch_next(self, body, ahead, at, u * lanes)
            block.add_op(xaffine.YieldOp.get(*results))
            parts = _reduction_loop(em, lb, end_split, split * lanes, init, block)
            combine = self.stmt.combine
            vecs = []
            for i in range(n):
                v = parts[i]
                for u in range(1, split):
                    v = em.val(
                        type(combine).create(
                            operands=[v, parts[u * n + i]],
                            result_types=[self.rw.vt],
                            properties=dict(combine.properties),
                            attributes=dict(combine.attributes),
                        )
                    )
                vecs.append(v)
            lb = end_split
        out: list[list[SSAValue]] = []
        for lo, hi, step, vec in ((lb, end, lanes, True), (end, ub, 1, False)):
            init = vecs if vec else scalars
            if _empty(lo, hi):
                out.append(init)
                continue
            block = Block(arg_types=[IndexType(), *(a.type for a in init)])
            iv = block.args[0]
            iv.name_hint = name
            body = _Emitter(block)
            results = _Body(self, body, iv, vector=vec).update(list(block.args[1:]))
            if vec:
                prefetch_next(self, body, ahead, iv, 0)
            block.add_op(xaffine.YieldOp.get(*results))
            out.append(_reduction_loop(em, lo, hi, step, init, block))
        return out[1] + out[0]

    # -- memory ------------------------------------------------------------

    def zero(self, em: _Emitter, t: Attribute) -> SSAValue:
        if t not in self.zeros:
            self.zeros[t] = self.em.constant(0, t)
        return self.zeros[t]

    def _masked(self, p: tuple[int, ...]) -> bool:
        """Whether the vector at point `p` is the masked one (`mask_point` is
        -1 without a mask, and in mode 2)."""
        if self.mask_point < 0:
            return False
        return p[self.dims.index(self.plan.vec_iv)] == self.mask_point

    def vector_load(
        self,
        em: _Emitter,
        access: _Access,
        operands: Sequence[SSAValue],
        t: VectorType[Attribute],
        p: tuple[int, ...],
    ) -> SSAValue:
        indices = em.subscripts(access.map, operands)
        if self._masked(p):
            mask = self.half_mask if t.get_shape()[0] < self.plan.lanes else self.mask
            assert mask is not None
            return em.val(
                vector.MaskedLoadOp(access.memref, indices, mask, self.zero(em, t), t)
            )
        return em.val(vector.LoadOp(access.memref, indices, t))

    def vector_store(
        self,
        em: _Emitter,
        value: SSAValue,
        access: _Access,
        operands: Sequence[SSAValue],
        p: tuple[int, ...],
    ) -> None:
        indices = em.subscripts(access.map, operands)
        if self._masked(p):
            vt = value.type
            assert isinstance(vt, VectorType)
            half = vt.get_shape()[0] < self.plan.lanes
            mask = self.half_mask if half else self.mask
            assert mask is not None
            em.op(vector.MaskedStoreOp(access.memref, indices, mask, value))
        else:
            em.op(vector.StoreOp(value, access.memref, indices))


class _Body:
    """The innermost reduction body of a kernel: e at every point, ⊕."""

    def __init__(
        self, kernel: _Kernel, em: _Emitter, red_iv: SSAValue | None, vector: bool
    ):
        self.k = kernel
        self.em = em
        self.red_iv = red_iv
        self.vector = vector
        self.cache: dict[tuple[SSAValue, tuple[int, ...], bool], SSAValue] = {}
        self.bcast: dict[tuple[SSAValue, tuple[int, ...], bool], SSAValue] = {}
        self.wide: dict[tuple[SSAValue, tuple[int, ...], bool], SSAValue] = {}
        """`wide_value`'s extended factors."""
        self.rel: list[SSAValue] | None = None
        """Packed buffers: the reduction IVs relative to their lower bounds."""
        self.ahead: dict[tuple[SSAValue, int], SSAValue] = {}
        """A reduction IV (or `rel`'s innermost), so many steps on."""

    def key(
        self, v: SSAValue, p: tuple[int, ...]
    ) -> tuple[SSAValue, tuple[int, ...], bool]:
        deps = self.k.plan.deps.get(v, set())
        coords = tuple(o for o, d in zip(p, self.k.dims) if d in deps)
        # a pair point's vectors differ from its first row's; scalars that
        # depend on neither IV are shared
        return v, coords, p in self.k.pairs and bool(deps & set(self.k.dims))

    def is_vec(self, v: SSAValue) -> bool:
        return self.vector and self.k.plan.vec_iv in self.k.plan.deps.get(v, set())

    def value(self, v: SSAValue, p: tuple[int, ...]) -> SSAValue:
        """`v` at point `p`: a vector if it depends on the vector IV."""
        key = self.key(v, p)
        if key in self.cache:
            return self.cache[key]
        k, em = self.k, self.em
        owner = v.owner
        if not isinstance(owner, Operation) or owner not in k.stmt.inner:
            return v
        if p in k.pairs:
            out = self.paired(v, owner, p)
        elif owner in k.rw.row_buffers and k.full_rows:
            buf = k.rw.row_buffers[owner]
            if self.rel is None:
                self.rel = [
                    em.index(em.sym(lambda s0, s1: s0 - s1, k.rw.remap[iv], lb))
                    for iv, (lb, _) in k.rw.red_bounds.items()
                ]
            i = p[0]
            at = [k.strip_index, *self.rel, em.index(i)]
            bt = buf.type
            assert isinstance(bt, MemRefType)
            out = em.val(LoadOp(buf, at, None, bt.get_element_type()))
        elif owner in k.packed:
            buf, prefix = k.packed[owner]
            if self.rel is None:
                self.rel = [
                    em.index(em.sym(lambda s0, s1: s0 - s1, k.rw.remap[iv], lb))
                    for iv, (lb, _) in k.rw.red_bounds.items()
                ]
            rel = self.rel
            j = p[k.dims.index(k.plan.vec_iv)]
            col = em.index(j * k.plan.lanes)
            bt = buf.type
            assert isinstance(bt, MemRefType)
            # the buffer's type: a widened factor's panel is extended (`_pack`)
            t = VectorType(bt.get_element_type(), [k.plan.lanes])
            out = em.val(vector.LoadOp(buf, [*prefix, *rel, col], t))
            prefetch_panel(self, buf, prefix, col, j * k.plan.lanes)
        elif owner in k.stmt.loads:
            access = k.stmt.loads[owner]
            operands = [k.iv_value(x, p, self.red_iv) for x in access.operands]
            if self.is_vec(v):
                t = VectorType(v.type, [k.plan.lanes])
                out = k.vector_load(em, access, operands, t, p)
                prefetch_far(k, self, access, operands, p)
            else:
                out = em.val(
                    LoadOp(access.memref, operands, AffineMapAttr(access.map), v.type)
                )
        elif isinstance(owner, arith.ConstantOp):
            out = em.val(owner.clone())
        else:
            vec = self.is_vec(v)
            operands = [
                self.vec_value(x, p) if vec else self.value(x, p)
                for x in owner.operands
            ]
            t = VectorType(v.type, [k.plan.lanes]) if vec else v.type
            new = type(owner).create(
                operands=operands,
                result_types=[t],
                properties=dict(owner.properties),
                attributes=dict(owner.attributes),
            )
            out = em.val(new)
        self.cache[key] = out
        return out

    def paired(self, v: SSAValue, owner: Operation, p: tuple[int, ...]) -> SSAValue:
        """`v` at pair point `p` (`_Kernel._pair_tails`): a VL-lane vector
        holding both rows, or the scalar when `v` depends on neither the
        vector IV nor the row IV."""
        k, em = self.k, self.em
        pa, pb = k.pairs[p]
        by_row = k.pair_iv in k.plan.deps.get(v, set())
        if not self.is_vec(v):
            if not by_row:
                return self.value(v, pa)
            return k.join(em, self.vec_value(v, pa), self.vec_value(v, pb))
        if owner in k.stmt.loads:
            access = k.stmt.loads[owner]
            t = k.half_type(v.type)
            halves = [
                k.vector_load(
                    em,
                    access,
                    [k.iv_value(x, q, self.red_iv) for x in access.operands],
                    t,
                    q,
                )
                for q in ((pa, pb) if by_row else (pa,))
            ]
            return k.join(em, halves[0], halves[-1])
        new = type(owner).create(
            operands=[self.vec_value(x, p) for x in owner.operands],
            result_types=[VectorType(v.type, [k.plan.lanes])],
            properties=dict(owner.properties),
            attributes=dict(owner.attributes),
        )
        return em.val(new)

    def steps_on(self, iv: SSAValue, steps: int) -> SSAValue:
        """`iv + steps`, once per body."""
        if (iv, steps) not in self.ahead:
            nxt = self.em.sym(lambda s0, d=steps: s0 + d, iv)
            self.ahead[(iv, steps)] = self.em.index(nxt)
        return self.ahead[(iv, steps)]

    def vec_value(self, v: SSAValue, p: tuple[int, ...]) -> SSAValue:
        """`v` at point `p` as a vector (broadcast if scalar)."""
        x = self.value(v, p)
        if isinstance(x.type, VectorType):
            return x
        key = self.key(v, p)
        if key not in self.bcast:
            t = VectorType(x.type, [self.k.plan.lanes])
            self.bcast[key] = self.em.val(vector.BroadcastOp(x, t))
        return self.bcast[key]

    def wide_value(self, v: SSAValue, p: tuple[int, ...]) -> SSAValue:
        """A factor of a widened FMA (`_Statement.widen`) at point `p`,
        extended to the accumulator's type (unless a packed buffer holds it
        extended), then broadcast in a vector body if scalar: a factor that
        does not depend on the vector IV is extended once, as a scalar."""
        key = self.key(v, p)
        if key in self.wide:
            return self.wide[key]
        em, elem = self.em, self.k.rw.elem
        x = self.value(v, p)
        t = x.type
        if isinstance(t, VectorType):
            if t.get_element_type() != elem:
                x = em.val(arith.ExtFOp(x, VectorType(elem, t.get_shape())))
        else:
            if t != elem:
                x = em.val(arith.ExtFOp(x, elem))
            if self.vector:
                x = em.val(vector.BroadcastOp(x, self.k.rw.vt))
        self.wide[key] = x
        return x

    def update(self, accs: list[SSAValue]) -> list[SSAValue]:
        k, em = self.k, self.em
        stmt = k.stmt
        out: list[SSAValue] = []
        get = self.vec_value if self.vector else self.value
        if stmt.widen:
            get = self.wide_value
        for p, acc in zip(k.points, accs):
            if stmt.fma is not None:
                x, y = (get(v, p) for v in stmt.fma)
                new = xmath.FmaOp.build(
                    operands=[x, y, acc],
                    result_types=[acc.type],
                    properties={"fastmath": k._flags()},
                )
            else:
                e = get(stmt.expr, p)
                operands = [acc, e] if stmt.acc_index == 0 else [e, acc]
                new = type(stmt.combine).create(
                    operands=operands,
                    result_types=[acc.type],
                    properties=dict(stmt.combine.properties),
                    attributes=dict(stmt.combine.attributes),
                )
            out.append(em.val(new))
        return out
