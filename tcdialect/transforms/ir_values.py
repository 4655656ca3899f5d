"""Queries on SSA values that several loop passes share."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue


def constant_index(v: SSAValue) -> int | None:
    """The value of `v` when an integer `arith.constant` defines it, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def defined_outside(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined outside `op` (so it is available before it): not
    by `op`, an op nested in it, or a block argument of its regions."""
    owner = v.owner
    where = owner if isinstance(owner, Operation) else owner.parent_op()
    return where is None or not op.is_ancestor(where)
