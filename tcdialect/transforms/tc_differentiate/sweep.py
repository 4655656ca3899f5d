"""The reverse sweep of `tc-differentiate`: `_Differentiator` seeds the
adjoints of the outputs, then differentiates the forward statements one at
a time in reverse order (the ``into`` value, the reductions ``*=`` and
``max=``/``min=`` with their helper tensors, every active read), and returns
the backward definition; `differentiate` and `check_wrt` are its entry
points."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue

from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate.adjoints import _Index
from tcdialect.transforms.tc_differentiate.body import (
    _Body,
    _position,
    _position_type,
    is_float_type,
)
from tcdialect.transforms.tc_differentiate.derivatives import _depends
from tcdialect.transforms.tc_differentiate.fold import fold_updates
from tcdialect.transforms.tc_differentiate.gather import _Gather
from tcdialect.transforms.tc_differentiate.remat import Policy, save_versions
from tcdialect.transforms.tc_differentiate.reuse import reuse_available
from tcdialect.transforms.tc_differentiate.subscripts import _tensor_name
from tcdialect.transforms.tc_differentiate.versions import (
    _copy_shared_versions,
    _dead_code,
)


def _elem(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, tc.TensorType)
    return t.element_type


class _Differentiator(_Gather):
    """One derivation: the reverse sweep over the forward statements."""

    # ---------------------------------------------------------- statements
    def statement(self, op: tc.ComprehensionOp) -> None:
        d_t = self.adj.get(op.result)
        if d_t is None:
            return
        kind = op.reduction
        rank = op.num_output_indices
        t = op.result_type
        prods = self.product_helpers(op) if kind == "*" else None
        first = self.first_selected(op) if kind in ("max", "min") else None
        # the `into` value
        if op.into is not None and op.into in self.active:
            into = op.into

            def emit_into(body: _Body, u: list[BlockArgument]) -> SSAValue:
                g = body.op(tc.ReadOp(d_t, u[: t.rank]))  # (a scatter: rank 0)
                if kind in ("max", "min"):
                    prev = body.op(tc.ReadOp(self.value[into], u[:rank]))
                    res = body.op(tc.ReadOp(self.value[op.result], u[:rank]))
                    return body.select(
                        body.cmpf(prev, res, "oeq"), g, body.fconst(0.0, g.type)
                    )
                if prods is not None:
                    p = body.op(tc.ReadOp(prods[0], u[:rank]))
                    return body.mul(g, p)
                return g

            self.contribute(
                into,
                [_Index(SizeExpr.lit(0), e, None) for e in t.extents],
                emit_into,
            )
        # every read of an active tensor
        for read in [r for r in op.body.walk() if isinstance(r, tc.ReadOp)]:
            if read.tensor not in self.active:
                continue
            if not _depends(op.yield_op.value, read.result):
                continue
            self.gather(op, read, d_t, prods, first)

    def product_helpers(self, op: tc.ComprehensionOp) -> tuple[SSAValue, SSAValue]:
        """For a ``*=`` statement: the full product P(i) of the factors and
        the exclusive products E(i, r) (every factor but the one at r)."""
        rank = op.num_output_indices
        ranges = op.ranges
        t = op.result_type
        nred = len(ranges) - rank
        fwd_args = list(op.body.block.args)

        def clone_body(body: _Body, mapping: Sequence[SSAValue]) -> SSAValue:
            vm: dict[SSAValue, SSAValue] = dict(self.value)
            vm.update(zip(fwd_args, mapping))
            return self.clone_body(op, body, vm)

        full = self.comprehension(
            self.fresh(f"{op.target.data}_prod"),
            t,
            [_Index(lo, hi, a.name_hint) for (lo, hi), a in zip(ranges, fwd_args)],
            lambda body, a: clone_body(body, a),
            None,
            kind="*",
        )
        red = ranges[rank:]
        ex_type = tc.TensorType(
            [*t.extents, *(hi - lo for lo, hi in red)], t.element_type
        )

        def emit_ex(body: _Body, a: list[BlockArgument]) -> SSAValue:
            outs, ex, s = a[:rank], a[rank : rank + nred], a[rank + nred :]
            y = clone_body(body, [*outs, *s])
            differs: SSAValue | None = None
            for (lo, _), e, si in zip(red, ex, s):
                r = (
                    e
                    if lo == SizeExpr.lit(0)
                    else body.op(arith.AddiOp(e, body.size(lo)))
                )
                differs = body.or_(differs, body.cmpi(r, si, "ne"))
            if differs is None:  # no reduction index: no other factor
                return body.fconst(1.0, y.type)
            return body.select(differs, y, body.fconst(1.0, y.type))

        exclusive = self.comprehension(
            self.fresh(f"{op.target.data}_excl"),
            ex_type,
            [
                *(
                    _Index(SizeExpr.lit(0), e, a.name_hint)
                    for e, a in zip(ex_type.extents, fwd_args)
                ),
                *(
                    _Index(lo, hi, a.name_hint)
                    for (lo, hi), a in zip(red, fwd_args[rank:])
                ),
            ],
            emit_ex,
            None,
            kind="*",
        )
        return full, exclusive

    def first_selected(self, op: tc.ComprehensionOp) -> SSAValue:
        """For a ``max=``/``min=`` statement: ``F(i)``, the position (row-major
        over the reduction indices) of the first element equal to the
        result, or the largest integer of its type (`_position_type`: i32
        for a constant reduction space such as a pooling window, else i64)
        when none is."""
        rank = op.num_output_indices
        ranges = op.ranges
        fwd_args = list(op.body.block.args)
        int_type = _position_type(ranges[rank:])
        t = tc.TensorType(list(op.result_type.extents), int_type)

        def emit(body: _Body, a: list[BlockArgument]) -> SSAValue:
            vm: dict[SSAValue, SSAValue] = dict(self.value)
            vm.update(zip(fwd_args, a))
            y = self.clone_body(op, body, vm)
            res = body.op(tc.ReadOp(self.value[op.result], a[:rank]))
            position = _position(body, a[rank:], ranges[rank:])
            largest = (1 << (int_type.width.data - 1)) - 1
            none = body.op(arith.ConstantOp(IntegerAttr(largest, int_type)))
            return body.select(body.cmpf(y, res, "oeq"), position, none)

        first = self.comprehension(
            self.fresh(f"{op.target.data}_first"),
            t,
            [_Index(lo, hi, a.name_hint) for (lo, hi), a in zip(ranges, fwd_args)],
            emit,
            None,
            kind="min",
        )
        self.firsts.append((op, first))
        return first

    # ------------------------------------------------------------- driver
    def run(self, policy: Policy | None = None) -> tuple[tc.DefOp | None, tc.DefOp]:
        """The backward definition, and with a saving `policy` the forward
        definition that returns what it saves (else None)."""
        self.recompute()
        ret = self.fwd.return_op
        n_in = len(self.fwd.input_names)
        for k, v in enumerate(ret.values):
            if is_float_type(_elem(v)) and v in self.active:
                seed = self.block.args[n_in + k]
                self.adj[v] = seed
                self.seeds.add(seed)
        for k in reversed(range(len(self.comprehensions))):
            op = self.comprehensions[k]
            if op.result in self.active:
                self.statement_index = k
                self.statement(op)
        self.statement_index = None
        results: list[SSAValue] = []
        for arg, name in zip(self.fwd.body.block.args, self.fwd.input_names):
            if name not in self.wrt:
                continue
            g = self.adj.get(arg)
            t = arg.type
            assert isinstance(t, tc.TensorType)
            indices = [_Index(SizeExpr.lit(0), e, None) for e in t.extents]
            if g is None:
                g = self.comprehension(
                    f"d_{name}",
                    t,
                    indices,
                    lambda body, _a, t=t: body.fconst(0.0, tc.signless(t.element_type)),
                    None,
                )
            elif _tensor_name(g) != f"d_{name}" or isinstance(g, BlockArgument):
                shared = g
                g = self.comprehension(
                    f"d_{name}",
                    t,
                    indices,
                    lambda body, a, rank=t.rank: body.op(tc.ReadOp(shared, a[:rank])),
                    None,
                )
            results.append(g)
        self.b.insert(tc.ReturnOp(results))
        _dead_code(self.block)
        fwd_def = None
        if policy is not None and policy.save != "none":
            fwd_def = save_versions(
                self.fwd, self.block, self.value, self.used, policy, self.firsts
            )
            _dead_code(self.block)
        saved = [
            (a, op)
            for op in self.comprehensions
            if isinstance(a := self.value.get(op.result), BlockArgument)
            and a.owner is self.block
        ]
        reuse_available(self.block, saved, self.value)
        _dead_code(self.block)
        fold_updates(self.block)
        _copy_shared_versions(self.block, self.fresh)
        return fwd_def, tc.DefOp(
            f"{self.fname}_grad",
            list(self.fwd.size_names),
            [a.name_hint or "" for a in self.block.args],
            self.out_names,
            Region(self.block),
        )


def float_inputs(d: tc.DefOp) -> list[str]:
    """The floating-point inputs of `d`, in declared order."""
    return [
        n for n, t in zip(d.input_names, d.input_types) if is_float_type(t.element_type)
    ]


def check_wrt(d: tc.DefOp, wrt: Sequence[str] | None) -> list[str]:
    """`wrt` checked against `d`'s inputs (default: every float input), in
    declared order; a `TCError` names a bad entry."""
    name = d.sym_name.data
    if any(isinstance(op, tc.RecurrenceOp) for op in d.body.block.ops):
        raise TCError(
            f"tc-differentiate: @{name} has a recurrence ('for ... in'): "
            f"recurrences are not differentiable yet"
        )
    floats = float_inputs(d)
    if wrt is None:
        if not floats:
            raise TCError(
                f"tc-differentiate: @{name} has no floating-point input to "
                "differentiate with respect to"
            )
        return floats
    for w in wrt:
        if w not in d.input_names:
            raise TCError(
                f"tc-differentiate: '{w}' is not an input of @{name}; its inputs "
                f"are: {', '.join(d.input_names) or 'none'}"
            )
        if w not in floats:
            t = d.input_types[d.input_names.index(w)]
            raise TCError(
                f"tc-differentiate: input '{w}' of @{name} has element type "
                f"{t.element_type}: only floating-point inputs have gradients"
            )
    if len(set(wrt)) != len(wrt):
        raise TCError(f"tc-differentiate: wrt names an input of @{name} twice")
    return [n for n in d.input_names if n in wrt]


def differentiate(d: tc.DefOp, wrt: Sequence[str] | None = None) -> tc.DefOp:
    """The backward definition ``@<name>_grad`` of `d` that recomputes every
    forward value it needs (see the package docstring)."""
    return _Differentiator(d, check_wrt(d, wrt)).run()[1]


def differentiate_saving(
    d: tc.DefOp, wrt: Sequence[str] | None, policy: Policy
) -> tuple[tc.DefOp, tc.DefOp]:
    """``(@<name>_fwd, @<name>_grad)``: the forward definition that also
    returns the versions `policy` saves, and the backward definition that
    takes them after the forward inputs (see the package docstring)."""
    if policy.save == "none":  # save nothing, but still define @<name>_fwd
        policy = Policy("auto", SizeExpr.lit(0))
    fwd_def, grad_def = _Differentiator(d, check_wrt(d, wrt)).run(policy)
    assert fwd_def is not None
    return fwd_def, grad_def
