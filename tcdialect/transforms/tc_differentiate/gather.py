"""Subscript inversion in `tc-differentiate`: the adjoint of one read
``V(s(i, r))`` is a scatter ``dV(u) += ...`` at ``u = s(i, r)``, emitted as a
gather over ``dV``'s own index space by solving each subscript for one
index, with range and divisibility guards and clamped index values
(`_Gather.gather`), and the adjoint of the yielded value at one point
(`_Gather.seed`)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import BlockArgument, SSAValue

from tcdialect.diagnostics import TCError
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
    _render_access,
    _tensor_name,
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

        def not_affine(d: int) -> TCError:
            return self.error(
                f"cannot differentiate with respect to '{_tensor_name(v)}' "
                f"through the access {_render_access(read)} in the statement "
                f"defining '{op.target.data}': subscript {d} is not an affine "
                "function of the indices (a data-dependent or non-injective "
                "read); its gradient would need a scatter-accumulate, which "
                "tc-differentiate does not support yet"
            )

        subs: list[_Affine] = []
        for d, s in enumerate(read.indices):
            a = _affine(s, args)
            if a is None:
                raise not_affine(d)
            subs.append(a)
        # solve each dimension u_d = sub_d for one index, if possible
        solution: dict[int, tuple[_Affine, int]] = {}  # var -> (numerator, divisor)
        solved_dims: dict[int, int] = {}  # dim -> var
        exact_dims: set[int] = set()
        current = [s for s in subs]
        while True:
            best: tuple[tuple[int, bool, bool], int, int] | None = None
            for d, s in enumerate(current):
                if d in solved_dims:
                    continue
                if any(
                    key[0] == "v" and key[1] in solution and solution[key[1]][1] != 1
                    for key in s.coeffs
                ):
                    continue
                cands = [k for k in s.coeffs if k[0] == "v" and k[1] not in solution]
                for k in cands:
                    var = k[1]
                    c = s.constant_coeff(k)
                    if c is None:  # a symbolic stride: not solved for
                        continue
                    key = (len(cands), var >= rank, abs(c) != 1)
                    if best is None or key < best[0]:
                        best = (key, d, var)
            if best is None:
                break
            _, d, var = best
            s = current[d]
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
                    raise not_affine(d) from None
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
            checks[var] = _within(num, lo, hi, vt.extents) if c == 1 else (False, False)
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
            for var, (num, c) in reversed(list(solution.items())):
                x = body.affine(num, keys)
                if c != 1:
                    x = body.op(arith.FloorDivSIOp(x, body.iconst(c)))
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
            outs = [values[("v", k)] for k in range(rank)]
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
        """The adjoint of the yielded value at one point."""
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
