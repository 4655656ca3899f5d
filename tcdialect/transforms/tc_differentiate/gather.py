"""Subscript inversion in `tc-differentiate`: the adjoint of one read
``V(s(i, r))`` is a scatter ``dV(u) += ...`` at ``u = s(i, r)``, emitted as a
gather over ``dV``'s own index space by solving each subscript for one
index, with range and divisibility guards and clamped index values
(`_Gather.gather`); where a subscript is not affine (a data-dependent read
``E(Idx(k), d)``, ``X(i / 2)``, ``A(i % P)``), as a scatter-accumulate
comprehension over the forward statement's own index space
(`_Gather.scatter`)::

    %d_E = tc.comprehension @d_E() "+=!" (%k in [0, K), %d in [0, D)) : !tc.tensor<[V, D], f32> {
      %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
      %1 = arith.index_cast %0 : i32 to index
      %2 = tc.read %d_O[%k, %d] : !tc.tensor<[K, D], f32>
      tc.yield %2 at [%1, %d] : f32
    }

`_Gather.seed` is the adjoint of the yielded value at one point (read at
the yield's subscripts when the forward statement is itself a scatter)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import BlockArgument, SSAValue

from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr, SymbolicError, provably_le, smax, smin
from tcdialect.transforms.tc_differentiate.adjoints import _Adjoints, _Index
from tcdialect.transforms.tc_differentiate.body import _Body, _position
from tcdialect.transforms.tc_differentiate.derivatives import _body_adjoint
from tcdialect.transforms.tc_differentiate.subscripts import (
    _Affine,
    _affine,
    _guarded,
    _Key,
    _within,
)


class _Gather(_Adjoints):
    """Turns the contribution of each read into a gather (see the module
    docstring)."""

    def gather(
        self,
        op: tc.ComprehensionOp,
        read: tc.ReadOp,
        d_t: SSAValue,
        prods: tuple[SSAValue, SSAValue] | None,
        first: SSAValue | None,
    ) -> None:
        """Add the contribution of `read` in `op` to its tensor's adjoint."""
        args = list(op.body.block.args)
        ranges = op.ranges
        rank = op.num_output_indices
        v = read.tensor
        vt = v.type
        assert isinstance(vt, tc.TensorType)

        subs: list[_Affine] = []
        for s in read.indices:
            a = _affine(s, args)
            if a is None:
                self.scatter(op, read, d_t, prods, first)
                return
            subs.append(a)
        # solve each dimension u_d = sub_d for one index (two for a mixed
        # radix ``c * v + w``), if possible
        solution: dict[int, tuple[_Affine, int]] = {}  # var -> (numerator, divisor)
        #: var -> lo: solved as ``lo + numerator mod divisor`` (a mixed radix)
        remainders: dict[int, SizeExpr] = {}
        solved_dims: dict[int, int] = {}  # dim -> var
        exact_dims: set[int] = set()
        current = [s for s in subs]
        while True:
            best: tuple[tuple[int, bool, bool], int, int, int | None] | None = None
            for d, s in enumerate(current):
                if d in solved_dims:
                    continue
                if any(
                    key[0] == "v" and key[1] in solution and solution[key[1]][1] != 1
                    for key in s.coeffs
                ):
                    continue
                cands = [k for k in s.coeffs if k[0] == "v" and k[1] not in solution]
                radix = _mixed_radix(s, cands, ranges)
                if radix is not None:
                    key = (1, radix[0] >= rank, False)
                    if best is None or key < best[0]:
                        best = (key, d, *radix)
                for k in cands:
                    var = k[1]
                    c = s.constant_coeff(k)
                    if c is None:  # a symbolic stride: not solved for
                        continue
                    key = (len(cands), var >= rank, abs(c) != 1)
                    if best is None or key < best[0]:
                        best = (key, d, var, None)
            if best is None:
                break
            _, d, var, low = best
            s = current[d]
            if low is not None:
                # u_d = c * var + low + rest, low in [lo, lo + c): one of each
                c = s.constant_coeff(("v", var))
                assert c is not None
                others = _Affine(
                    {
                        k: x
                        for k, x in s.coeffs.items()
                        if k not in (("v", var), ("v", low))
                    },
                    s.rest + ranges[low][0],
                )
                num = _Affine.var(("u", d)).plus(others.scaled(-1))
                solution[var] = (num, c)
                solution[low] = (num, c)
                remainders[low] = ranges[low][0]
                solved_dims[d] = var
                exact_dims.add(d)
                continue
            c = s.constant_coeff(("v", var))
            assert c is not None
            # c * var = u_d - (s - c * var)
            others = _Affine(
                {k: x for k, x in s.coeffs.items() if k != ("v", var)}, s.rest
            )
            num = _Affine.var(("u", d)).plus(others.scaled(-1))
            if c < 0:
                num, c = num.scaled(-1), -c
            solution[var] = (num, c)
            solved_dims[d] = var
            if c == 1:
                exact_dims.add(d)
                try:
                    current = [x.substitute(("v", var), num) for x in current]
                    for w, (n, k) in list(solution.items()):
                        if w != var:
                            solution[w] = (n.substitute(("v", var), num), k)
                except SymbolicError:
                    self.scatter(op, read, d_t, prods, first)
                    return
        unsolved = [k for k in range(len(args)) if k not in solution]
        indices = [
            _Index(
                SizeExpr.lit(0),
                e,
                args[solved_dims[d]].name_hint if d in solved_dims else None,
            )
            for d, e in enumerate(vt.extents)
        ]
        indices += [_Index(*ranges[k], args[k].name_hint) for k in unsolved]
        n_dims = vt.rank
        checks: dict[int, tuple[bool, bool]] = {}
        for var, (num, c) in solution.items():
            lo, hi = ranges[var]
            if var in remainders:
                checks[var] = (True, True)
            else:
                checks[var] = _within(num, lo, hi, vt.extents, c)
        # A clamped index reads inside its range, which must not be empty:
        # a trip-count-1 index, 0 when some such range is empty, skips them.
        maybe_empty = [
            smax([SizeExpr.lit(0), ranges[var][1] - ranges[var][0]])
            for var, ok in checks.items()
            if ok != (True, True)
            and not provably_le(ranges[var][0] + 1, ranges[var][1])
        ]
        if maybe_empty:
            extent = smin([SizeExpr.lit(1), *maybe_empty])
            indices.append(_Index(SizeExpr.lit(0), extent, "nonempty"))

        def emit(body: _Body, a: list[BlockArgument]) -> SSAValue:
            keys: dict[_Key, SSAValue] = {("u", d): a[d] for d in range(n_dims)}
            for k, x in zip(unsolved, a[n_dims:]):
                keys[("v", k)] = x
            guard: SSAValue | None = None
            exact: dict[int, SSAValue] = {}
            # a solution refers only to indices solved after it (or never)
            quotients: dict[tuple[SSAValue, int], SSAValue] = {}
            for var, (num, c) in reversed(list(solution.items())):
                x = body.affine(num, keys)
                if c != 1:
                    if (x, c) not in quotients:
                        quotients[x, c] = body.op(arith.FloorDivSIOp(x, body.iconst(c)))
                    q = quotients[x, c]
                    if var in remainders:  # lo + x - c * (x floordiv c)
                        x = body.op(
                            arith.SubiOp(x, body.op(arith.MuliOp(q, body.iconst(c))))
                        )
                        if remainders[var] != SizeExpr.lit(0):
                            x = body.op(arith.AddiOp(x, body.size(remainders[var])))
                    else:
                        x = q
                exact[var] = x
                keys[("v", var)] = x
            safe: dict[int, SSAValue] = {}
            for var, x in exact.items():
                lo, hi = ranges[var]
                low_ok, high_ok = checks[var]
                if not low_ok:
                    lo_v = body.size(lo)
                    guard = body.and_(guard, body.cmpi(x, lo_v, "sge"))
                if not high_ok:
                    hi_v = body.size(hi)
                    guard = body.and_(guard, body.cmpi(x, hi_v, "slt"))
                    last = body.op(arith.SubiOp(hi_v, body.iconst(1)))
                    x = body.op(_guarded(arith.MinSIOp(x, last)))
                if not low_ok:
                    x = body.op(_guarded(arith.MaxSIOp(x, body.size(lo))))
                safe[var] = x
            values: dict[_Key, SSAValue] = {
                ("v", k): (safe[k] if k in safe else keys[("v", k)])
                for k in range(len(args))
            }
            exact_values = {
                ("v", k): (exact[k] if k in exact else keys[("v", k)])
                for k in range(len(args))
            }
            for d, s in enumerate(subs):
                if d in exact_dims:
                    continue
                x = body.affine(s, exact_values)
                guard = body.and_(guard, body.cmpi(x, a[d], "eq"))
            vm: dict[SSAValue, SSAValue] = dict(self.value)
            vm.update({args[k]: values[("v", k)] for k in range(len(args))})
            y = self.clone_body(op, body, vm)
            outs = _outputs(op, vm, [values[("v", k)] for k in range(rank)])
            seed = self.seed(
                op,
                body,
                d_t,
                outs,
                [values[("v", k)] for k in range(len(args))],
                prods,
                first,
            )
            g = _body_adjoint(op, vm, body, y, seed, vm[read.result], self.error)
            zero = body.fconst(0.0, tc.signless(vt.element_type))
            if g is None:
                return zero
            return g if guard is None else body.select(guard, g, zero)

        self.contribute(v, indices, emit)

    def scatter(
        self,
        op: tc.ComprehensionOp,
        read: tc.ReadOp,
        d_t: SSAValue,
        prods: tuple[SSAValue, SSAValue] | None,
        first: SSAValue | None,
    ) -> None:
        """Add the contribution of `read` in `op` to its tensor's adjoint as
        a scatter-accumulate ``dV(s(i, r)) += ...`` over `op`'s index space
        (see the module docstring)."""
        v = read.tensor
        vt = v.type
        assert isinstance(vt, tc.TensorType)
        args = list(op.body.block.args)
        rank = op.num_output_indices
        current, name = self.target_of(v)
        region, block = tc.make_body(len(args))
        for new_arg, arg in zip(block.args, args):
            new_arg.name_hint = arg.name_hint
        body = _Body(block)
        a: list[SSAValue] = list(block.args)
        vm: dict[SSAValue, SSAValue] = dict(self.value)
        vm.update(zip(args, a))
        y = self.clone_body(op, body, vm)
        outs = _outputs(op, vm, a[:rank])
        seed = self.seed(op, body, d_t, outs, a, prods, first)
        g = _body_adjoint(op, vm, body, y, seed, vm[read.result], self.error)
        if g is None:
            g = body.fconst(0.0, tc.signless(vt.element_type))
        body.b.insert(tc.YieldOp(g, [vm[i] for i in read.indices]))
        comp = tc.ComprehensionOp(
            name,
            "+=!" if current is None else "+=",
            [lo for lo, _ in op.ranges],
            [hi for _, hi in op.ranges],
            vt,
            region,
            current,
        )
        comp.result.name_hint = name
        self.b.insert(comp)
        self.adj[v] = comp.result

    def seed(
        self,
        op: tc.ComprehensionOp,
        body: _Body,
        d_t: SSAValue,
        outs: list[SSAValue],
        all_values: list[SSAValue],
        prods: tuple[SSAValue, SSAValue] | None,
        first: SSAValue | None,
    ) -> SSAValue:
        """The adjoint of the yielded value at one point (`outs`: where it
        goes, from `_outputs`)."""
        g = body.op(tc.ReadOp(d_t, outs))
        if first is not None:
            # the first element equal to the result, unless `into` was
            rank = op.num_output_indices
            position = _position(body, all_values[rank:], op.ranges[rank:])
            selected = body.op(tc.ReadOp(first, outs))
            cond = body.cmpi(position, selected, "eq")
            if op.into is not None:
                prev = body.op(tc.ReadOp(self.value[op.into], outs))
                res = body.op(tc.ReadOp(self.value[op.result], outs))
                cond = body.and_(cond, body.cmpf(prev, res, "une"))
            return body.select(cond, g, body.fconst(0.0, g.type))
        if prods is not None:
            rank = op.num_output_indices
            red = op.ranges[rank:]
            ex = [
                x if lo == SizeExpr.lit(0) else body.op(arith.SubiOp(x, body.size(lo)))
                for x, (lo, _) in zip(all_values[rank:], red)
            ]
            e = body.op(tc.ReadOp(prods[1], [*outs, *ex]))
            g = body.mul(g, e)
            if op.into is not None:
                g = body.mul(g, body.op(tc.ReadOp(self.value[op.into], outs)))
        return g


def _mixed_radix(
    s: _Affine, cands: list[_Key], ranges: Sequence[tuple[SizeExpr, SizeExpr]]
) -> tuple[int, int] | None:
    """``(v, w)`` where `s` is ``c * v + w + rest`` (``c >= 2`` a constant,
    ``w`` an index of range ``[lo, lo + c)``, both among `cands`): a mixed
    radix, one-to-one onto its range, so ``v = (s - rest - lo) floordiv c``
    and ``w = lo + (s - rest - lo) mod c`` (a 2 x 2 pooling window
    ``I(2 * h + r)``, ``r in 0:2``: no reduction over ``r``, no guard)."""
    for v in cands:
        c = s.constant_coeff(v)
        if c is None or c < 2:
            continue
        for w in cands:
            lo, hi = ranges[w[1]]
            if s.constant_coeff(w) == 1 and (hi - lo).constant_value() == c:
                return v[1], w[1]
    return None


def _outputs(
    op: tc.ComprehensionOp, vm: dict[SSAValue, SSAValue], outs: list[SSAValue]
) -> list[SSAValue]:
    """Where `op` writes the value of its body cloned with `vm`: its output
    indices `outs`, or the subscripts of a scatter's yield."""
    if not op.is_scatter:
        return outs
    return [vm.get(i, i) for i in op.yield_op.indices]
