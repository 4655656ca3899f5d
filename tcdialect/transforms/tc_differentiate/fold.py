"""Folding of pointwise accumulations in the derived definition of
`tc-differentiate` (`fold_updates`).

The sweep accumulates the contributions to an adjoint in place: a first
statement ``dV(i) = a(i)``, then one update ``dV(i) += b(i)`` per further
contribution, each a pass over ``dV`` once compiled, and the gradient of an
input whose adjoint is another tensor's (``cen = I - mean`` gives ``d_I``
the adjoint ``d_cen``) ends in a copy ``d_I(i) = d_cen(i)``. Two rewrites
make one statement of such chains, so one loop writes the values once:

* **into its definition**: an update ``V1 = V0 += b`` without reduction
  indices, whose ``V0`` is an elementwise ``V0(i) = a(i)`` (no reduction
  indices) that nothing else reads, becomes ``V1(i) = a(i) + b(i)`` at the
  update's place (the definition is dropped);
* **into a copy**: a copy ``X(i) = V1(i)`` of such an update's result, the
  copy its only reader, becomes ``X(i) = V0(i) + b(i)`` at the copy's place
  (the update is dropped), so the output is written once, from ``V0``.

The update's reads of ``V0`` at its own point read ``a(i)`` instead (the
reuse of available tensors, `reuse.py`, makes the second contribution of
``O(i) = A(i) * A(i)`` read the first: ``d_A(i) += d_A(i)`` becomes
``d_A(i) = d_O(i) * A(i) + <the same>``). A rewrite is made only where the
tensors that the moved body reads are not updated in place between its old
and new places (versions share a buffer once compiled). The values are the
same: ``+=`` adds the yielded value to the previous one, as ``a + b`` does;
for 16-bit floats, which ``+=`` adds in ``f32`` and rounds once, the sum is
``truncf(extf(a) + extf(b))``.

Layer normalisation's backward (`bench.kernels.LAYERNORM`), where ``cen``
is read twice in ``var +=! cen(t, b, r_c) * cen(t, b, r_c)``::

    d_cen(t, b, c) = d_O(t, b, c) * rsqrt(var(t, b))
    d_var(t, b) +=! ...
    d_cen(t, b, c) += d_var_1(t, b) * cen(t, b, c)
    d_cen(t, b, c) += d_var_1(t, b) * cen(t, b, c)
    d_mean(t, b) +=! -d_cen(t, b, r_c)
    d_cen(t, b, c) += d_mean_1(t, b)
    d_I(t, b, c) = d_cen(t, b, c)

becomes::

    d_var(t, b) +=! ...
    d_cen(t, b, c) = d_O(t, b, c) * rsqrt(var(t, b))
                     + d_var_1(t, b) * cen(t, b, c) + d_var_1(t, b) * cen(t, b, c)
    d_mean(t, b) +=! -d_cen(t, b, r_c)
    d_I(t, b, c) = d_cen(t, b, c) + d_mean_1(t, b)

(three passes over a row less; ``d_cen`` is then a temporary of one row,
and the loop of ``d_I`` stores nothing else, so it streams to memory).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tcdialect.dialects import tc
from tcdialect.transforms.tc_differentiate.body import is_float_type
from tcdialect.transforms.tc_differentiate.versions import _identity_copy


def _pointwise(op: tc.ComprehensionOp) -> bool:
    """No reduction index, not a scatter, a float result."""
    return (
        not op.is_scatter
        and len(op.ranges) == op.num_output_indices
        and is_float_type(op.result_type.element_type)
    )


def _add(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """``x + y`` as ``+=`` adds: in `f32` for 16-bit floats, rounded once."""
    t = x.type
    if isinstance(t, Float32Type | Float64Type):
        return b.insert(arith.AddfOp(x, y)).result
    wx = b.insert(arith.ExtFOp(x, Float32Type())).result
    wy = b.insert(arith.ExtFOp(y, Float32Type())).result
    s = b.insert(arith.AddfOp(wx, wy)).result
    return b.insert(arith.TruncFOp(s, t)).result


def _update(op: Operation) -> bool:
    """``V1 = V0 += b(i)``, pointwise, into the result of a comprehension."""
    return (
        isinstance(op, tc.ComprehensionOp)
        and op.op.data == "+="
        and op.into is not None
        and isinstance(op.into.owner, tc.ComprehensionOp)
        and _pointwise(op)
    )


def _read_tensors(op: tc.ComprehensionOp) -> set[SSAValue]:
    return {r.tensor for r in op.body.walk() if isinstance(r, tc.ReadOp)}


def _kept(tensors: set[SSAValue], start: Operation, end: Operation) -> bool:
    """Whether no statement strictly between `start` and `end` (ops of one
    block, `start` first) updates one of `tensors` in place."""
    op = start.next_op
    while op is not None and op is not end:
        if isinstance(op, tc.ComprehensionOp) and op.into in tensors:
            return False
        op = op.next_op
    return True


def _own_point(read: Operation, op: tc.ComprehensionOp) -> bool:
    """Whether `read` reads at `op`'s own point (its indices, in order)."""
    return isinstance(read, tc.ReadOp) and list(read.indices) == list(
        op.body.block.args
    )


def _sum(
    name: str,
    like: tc.ComprehensionOp,
    first: tc.ComprehensionOp | SSAValue,
    update: tc.ComprehensionOp,
) -> tc.ComprehensionOp:
    """``name(i) = first(i) + b(i)``, `b` the body of `update` with its reads
    of the updated version at its own point replaced by ``first(i)``, over
    the index space of `like` (whose indices it is named after): `first` is
    a statement whose body is cloned, or a tensor read."""
    t = like.result_type
    region, block = tc.make_body(t.rank)
    for arg, old in zip(block.args, like.body.block.args):
        arg.name_hint = old.name_hint
    b = Builder(InsertPoint.at_end(block))

    def clone(op: tc.ComprehensionOp, a: SSAValue | None = None) -> SSAValue:
        vm: dict[SSAValue, SSAValue] = dict(zip(op.body.block.args, block.args))
        for o in op.body.block.ops:
            if isinstance(o, tc.YieldOp):
                return vm[o.value]
            if a is not None and _own_point(o, op) and o.operands[0] is op.into:
                vm[o.results[0]] = a
                continue
            b.insert(c := o.clone(value_mapper=vm))
            vm.update(zip(o.results, c.results))
        raise AssertionError("a comprehension body ends in tc.yield")

    a = (
        clone(first)
        if isinstance(first, tc.ComprehensionOp)
        else b.insert(tc.ReadOp(first, list(block.args))).result
    )
    s = _add(b, a, clone(update, a))
    b.insert(tc.YieldOp(s))
    out = tc.ComprehensionOp(name, "=", [], [], t, region)
    out.lower_bounds = like.lower_bounds
    out.upper_bounds = like.upper_bounds
    return out


def _fold_into_definition(block: Block, update: tc.ComprehensionOp) -> bool:
    v0 = update.into
    assert v0 is not None
    d = v0.owner
    if not (
        isinstance(d, tc.ComprehensionOp)
        and d.op.data == "="
        and d.into is None
        and _pointwise(d)
        and all(
            u.operation is update or _own_point(u.operation, update) for u in v0.uses
        )
        and _kept(_read_tensors(d), d, update)
    ):
        return False
    _replace(block, _sum(update.target.data, d, d, update), update, d)
    return True


def _fold_into_copy(block: Block, update: tc.ComprehensionOp) -> bool:
    v0 = update.into
    assert v0 is not None
    read = update.result.get_user_of_unique_use()
    copy = read.parent_op() if isinstance(read, tc.ReadOp) else None
    if (
        not isinstance(copy, tc.ComprehensionOp)
        or copy.parent_block() is not block
        or _identity_copy(copy.result) is not update.result
        or not _kept({v0, *_read_tensors(update)}, update, copy)
    ):
        return False
    _replace(block, _sum(copy.target.data, copy, v0, update), copy, update)
    return True


def _replace(
    block: Block,
    new: tc.ComprehensionOp,
    old: tc.ComprehensionOp,
    folded: tc.ComprehensionOp,
) -> None:
    """Put `new` in `old`'s place (its name, its uses), and erase `old` and
    then `folded`, the statement it was folded with."""
    new.result.name_hint = old.result.name_hint
    block.insert_op_before(new, old)
    old.result.replace_all_uses_with(new.result)
    block.erase_op(old)
    block.erase_op(folded)


def fold_updates(block: Block) -> None:
    """Fold the pointwise updates of `block` (a backward definition's body)
    into their definitions or their copies (see the module docstring),
    until none folds."""
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if op.parent_block() is not block or not _update(op):
                continue
            assert isinstance(op, tc.ComprehensionOp)
            if _fold_into_definition(block, op) or _fold_into_copy(block, op):
                changed = True
