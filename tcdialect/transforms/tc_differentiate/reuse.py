"""Reuse of available tensors in the derived definition of `tc-differentiate`
(a common-subexpression elimination across statements): where a body
computes, at indices of its own, exactly what an elementwise statement
``T(i) = body(i)`` computes, it reads ``T`` instead (`reuse_available`).

The available tensors are the saved forward versions (arguments of the
backward definition, their bodies those of the forward statements) and the
elementwise ``=`` statements of the backward definition before the body.
Bodies are rewritten in order, each op after its operands, so a body
already reading ``T`` matches a later one that reads it too. A softmax's
backward with ``e`` saved reads ``e`` where the adjoints of ``exp(I(n, d)
- mx(n))`` recomputed it, and the gradient of ``mx`` reads ``d_I``, whose
body it repeats::

    %d_mx = tc.comprehension @d_mx(%n in [0, N)) "+=!" (%d in [0, D)) ... {
      %0 = tc.read %d_I[%n, %d] : !tc.tensor<[N, D], f32>
      %1 = arith.negf %0 : f32
      tc.yield %1 : f32
    }

A match maps the statement's output indices to index arguments of the
body whose ranges lie inside the statement's (so the read is in bounds);
the ops must be equal (name, attributes, properties) and read the same
tensors at matching subscripts. Expressions that are a read or a constant
are left alone: reading ``T`` instead gains nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tcdialect.dialects import tc
from tcdialect.symbolic import provably_le

#: One available tensor: its value in the backward definition, the
#: statement that defines it, and the map from the tensors that statement
#: reads to their values in the backward definition.
_Candidate = tuple[SSAValue, tc.ComprehensionOp, Callable[[SSAValue], SSAValue]]


def _elementwise(op: tc.ComprehensionOp) -> bool:
    """``T(i) = body(i)``: no reduction, no ``into``, not a scatter, and a
    body worth reading back (not a read or a constant)."""
    if op.op.data != "=" or op.into is not None or op.is_scatter:
        return False
    if len(op.ranges) != op.num_output_indices:
        return False
    root = op.yield_op.value.owner
    return isinstance(root, Operation) and not isinstance(
        root, tc.ReadOp | arith.ConstantOp
    )


class _Match:
    """Structural equality of a statement's body (pattern) and a value of
    another body (target), binding the statement's index arguments."""

    def __init__(self, cand: _Candidate):
        self.tensor, self.op, self.map = cand
        self.args = list(self.op.body.block.args)
        self.env: dict[SSAValue, SSAValue] = {}
        self.memo: dict[tuple[SSAValue, SSAValue], bool] = {}

    def __call__(self, p: SSAValue, t: SSAValue) -> bool:
        key = (p, t)
        if key not in self.memo:
            self.memo[key] = self._match(p, t)
        return self.memo[key]

    def _match(self, p: SSAValue, t: SSAValue) -> bool:
        if isinstance(p, BlockArgument):
            if p not in self.args:
                return False
            bound = self.env.setdefault(p, t)
            return bound is t
        po, to = p.owner, t.owner
        if not isinstance(po, Operation) or not isinstance(to, Operation):
            return False
        if (
            po.name != to.name
            or po.results.index(p) != to.results.index(t)
            or len(po.operands) != len(to.operands)
            or po.attributes != to.attributes
            or po.properties != to.properties
            or po.regions
            or to.regions
        ):
            return False
        if isinstance(po, tc.ReadOp) and isinstance(to, tc.ReadOp):
            if self.map(po.tensor) is not to.tensor:
                return False
            return all(self(a, b) for a, b in zip(po.indices, to.indices))
        return all(self(a, b) for a, b in zip(po.operands, to.operands))

    def indices(self, target: tc.ComprehensionOp) -> list[SSAValue] | None:
        """The subscripts of the read of the tensor in `target`, if the
        binding covers every output index within range."""
        rank = self.op.num_output_indices
        targs = list(target.body.block.args)
        subscripts: list[SSAValue] = []
        for k, (lo, hi) in enumerate(self.op.ranges[:rank]):
            x = self.env.get(self.args[k])
            if not isinstance(x, BlockArgument) or x not in targs:
                return None
            tlo, thi = target.ranges[targs.index(x)]
            if not (provably_le(lo, tlo) and provably_le(thi, hi)):
                return None
            subscripts.append(x)
        return subscripts


def reuse_available(
    block: Block,
    saved: list[tuple[BlockArgument, tc.ComprehensionOp]],
    value: dict[SSAValue, SSAValue],
) -> None:
    """Rewrite the bodies of `block`'s comprehensions to read the available
    tensors (see the module docstring); `saved`: the backward definition's
    arguments that are saved forward versions, with their forward statements
    (whose reads of forward tensors `value` maps to the backward's)."""

    def forward(x: SSAValue) -> SSAValue:
        return value.get(x, x)

    def same(x: SSAValue) -> SSAValue:
        return x

    cands: list[_Candidate] = [(a, op, forward) for a, op in saved if _elementwise(op)]
    for c in [o for o in block.ops if isinstance(o, tc.ComprehensionOp)]:
        body = c.body.block
        for inner in list(body.ops):
            if (
                len(inner.results) != 1
                or not inner.results[0].uses
                or isinstance(inner, tc.ReadOp | arith.ConstantOp)
            ):
                continue
            for cand in cands:
                match = _Match(cand)
                if not match(cand[1].yield_op.value, inner.results[0]):
                    continue
                subscripts = match.indices(c)
                if subscripts is None:
                    continue
                read = tc.ReadOp(cand[0], subscripts)
                if read.result.type != inner.results[0].type:
                    continue
                body.insert_op_before(read, inner)
                inner.results[0].replace_all_uses_with(read.result)
                break
        if _elementwise(c):
            cands.append((c.result, c, same))
