"""Tensor versions in the derived definition of `tc-differentiate`: copies
that only alias another tensor (`_identity_copy`), output-index bounds
spelled as the result's extents (`_exact_extents`), and the clean-ups of
the finished definition: unused ops and comprehensions (`_dead_code`) and a
copy of each version that an accumulating statement updates while it is
still read afterwards, or that is an argument (a saved version; `_copy_shared_versions`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate.subscripts import _tensor_name


def _identity_copy(v: SSAValue) -> SSAValue | None:
    """The tensor `v` copies element for element (``=`` of ``X(i, j)``), if any."""
    op = v.owner
    assert isinstance(op, tc.ComprehensionOp)
    if op.op.data != "=" or op.into is not None:
        return None
    read = op.yield_op.value.owner  # (body ops are pure: the rest is dead)
    if not isinstance(read, tc.ReadOp):
        return None
    if read.tensor.type != v.type or list(read.indices) != list(op.body.block.args):
        return None
    return read.tensor


def _exact_extents(comp: tc.ComprehensionOp, t: tc.TensorType) -> None:
    """Output-index upper bounds spelled exactly as the result's extents."""
    ubs = list(comp.upper_bounds.data)
    ubs[: t.rank] = [StringAttr(d.data) for d in t.shape.data]
    comp.upper_bounds = ArrayAttr(ubs)


def _dead_code(block: Block) -> None:
    """Drop unused ops inside bodies, then unused comprehensions."""
    for op in block.ops:
        if isinstance(op, tc.ComprehensionOp):
            inner_block = op.body.block
            for inner in reversed(list(inner_block.ops)):
                if not isinstance(inner, tc.YieldOp) and all(
                    not r.uses for r in inner.results
                ):
                    inner_block.erase_op(inner)
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if isinstance(op, tc.ComprehensionOp) and not op.result.uses:
                block.erase_op(op)
                changed = True


def _before(user: Operation, op: Operation) -> bool:
    """Whether `user` (an op of `op`'s block, or inside one) comes before `op`."""
    while user.parent_block() is not op.parent_block():
        parent = user.parent_op()
        if parent is None:
            return False
        user = parent
    return user is not op and user.is_before_in_block(op)


def _copy_shared_versions(block: Block, fresh: Callable[[str], str]) -> None:
    """Versions of one tensor share a buffer once compiled: a version that an
    accumulating statement updates must not be read afterwards. Give such a
    statement its own copy of the version to update."""
    for op in list(block.ops):
        if not isinstance(op, tc.ComprehensionOp) or op.into is None:
            continue
        prev = op.into
        if isinstance(prev, BlockArgument):
            pass  # (a saved version, an argument, is never updated)
        elif all(_before(u.operation, op) for u in prev.uses if u.operation is not op):
            continue  # read only before the update: in place
        t = prev.type
        assert isinstance(t, tc.TensorType)
        name = fresh(_tensor_name(prev))
        region, body_block = tc.make_body(t.rank)
        b = Builder(InsertPoint.at_end(body_block))
        x = b.insert(tc.ReadOp(prev, list(body_block.args))).result
        b.insert(tc.YieldOp(x))
        copy = tc.ComprehensionOp(
            name, "=", [SizeExpr.lit(0)] * t.rank, list(t.extents), t, region
        )
        _exact_extents(copy, t)
        copy.result.name_hint = name
        block.insert_op_before(copy, op)
        op.operands = [copy.result]
        # the chain that follows keeps the copy's name
        chain: Operation | None = op
        while isinstance(chain, tc.ComprehensionOp):
            chain.target = StringAttr(name)
            nxt = [
                u.operation
                for u in chain.result.uses
                if isinstance(u.operation, tc.ComprehensionOp)
                and u.operation.into is chain.result
            ]
            chain = nxt[0] if nxt else None
