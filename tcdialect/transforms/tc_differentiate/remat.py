"""The rematerialisation policy of `tc-differentiate`: which forward versions
the backward definition reads from tensors the forward saved, instead of
recomputing them (`Policy`, `choose`), and the forward definition that
returns them (`save_versions`).

A candidate is a forward version that the finished backward still
recomputes. ``save=auto`` saves the expensive ones: the reductions (their
work per element is the size of the reduction space) and the elementwise
statements that call a transcendental function (``exp``, ``tanh``, a
builtin: tens of flops per element, against 4 bytes read back); it
recomputes elementwise arithmetic from the inputs and the saved values.
``save=all`` saves every candidate. Both stop at the memory budget, in
elements, reductions first, then transcendentals, then the rest (forward
order among equals). A version fits when ``used + size <= budget`` holds
for every value of the sizes (`provably_le`), so a budget ``T * B`` saves
one of two ``[T, B]`` tensors and a budget ``0`` nothing. With a saved
``max=!``/``min=!`` over a reduction space that is not a constant, the
positions of its first maxima (the backward's ``T_first``) are saved too,
within the budget: softmax's ``@softmax_fwd<N, D>(I) -> (O, mx, e, s,
mx_first)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr, SymbolicError, parse, provably_le
from tcdialect.transforms.tc_differentiate.versions import _dead_code, _exact_extents

SAVE_MODES = ("none", "auto", "all")


@dataclass(frozen=True)
class Policy:
    """``save``: one of `SAVE_MODES`; ``budget``: the most elements the saved
    tensors may hold together (a size expression), None for no limit."""

    save: str = "none"
    budget: SizeExpr | None = None

    @staticmethod
    def parse(save: str, memory_budget: str | int | None) -> Policy:
        """The policy of the pass options ``save`` and ``memory-budget``
        (a size expression, or None for no limit)."""
        if save not in SAVE_MODES:
            raise TCError(
                f"tc-differentiate: save={save!r} is not one of {', '.join(SAVE_MODES)}"
            )
        if memory_budget is None:
            return Policy(save)
        try:
            budget = parse(str(memory_budget))
        except SymbolicError as e:
            raise TCError(
                f"tc-differentiate: memory-budget={memory_budget!r} is not a size "
                f"expression: {e}"
            ) from None
        return Policy(save, budget)


#: `math` ops as cheap as an `arith` op: not worth a saved tensor.
_CHEAP_MATH = {"math.absf", "math.copysign", "math.fma"}


def _cost(op: tc.ComprehensionOp) -> int:
    """2: a reduction (work per element: its reduction space); 1: elementwise
    with a transcendental function (``exp``, ``tanh``, a builtin call: tens
    of flops per element, more than reading it back); 0: elementwise
    arithmetic."""
    if len(op.ranges) > op.num_output_indices:
        return 2
    for inner in op.body.walk():
        if isinstance(inner, tc.BuiltinOp) or (
            inner.dialect_name() == "math" and inner.name not in _CHEAP_MATH
        ):
            return 1
    return 0


def _elements(t: tc.TensorType) -> SizeExpr:
    size = SizeExpr.lit(1)
    for e in t.extents:
        size = size * e
    return size


def choose(
    candidates: Sequence[tc.ComprehensionOp], policy: Policy
) -> list[tc.ComprehensionOp]:
    """The forward statements (among `candidates`, in forward order) whose
    versions the policy saves, in forward order."""
    if policy.save == "none":
        return []
    ranked = [op for op in candidates if policy.save == "all" or _cost(op) > 0]
    ranked.sort(key=lambda op: -_cost(op))
    chosen: set[tc.ComprehensionOp] = set()
    used = SizeExpr.lit(0)
    for op in ranked:
        size = _elements(op.result_type)
        if policy.budget is not None and not provably_le(used + size, policy.budget):
            continue
        chosen.add(op)
        used = used + size
    return [op for op in candidates if op in chosen]


def _copy(name: str, v: SSAValue) -> tc.ComprehensionOp:
    """``name(i...) = v(i...)``."""
    t = v.type
    assert isinstance(t, tc.TensorType)
    region, block = tc.make_body(t.rank)
    b = Builder(InsertPoint.at_end(block))
    x = b.insert(tc.ReadOp(v, list(block.args))).result
    b.insert(tc.YieldOp(x))
    copy = tc.ComprehensionOp(
        name, "=", [SizeExpr.lit(0)] * t.rank, list(t.extents), t, region
    )
    _exact_extents(copy, t)
    copy.result.name_hint = name
    return copy


def _fresh(used: set[str], base: str) -> str:
    """``<base>_saved``, else ``<base>_saved2``...: never ending in ``_<digits>``,
    which xDSL would not keep as an argument's name."""
    name, k = f"{base}_saved", 2
    while name in used:
        name = f"{base}_saved{k}"
        k += 1
    used.add(name)
    return name


def _positions(
    fwd: tc.DefOp,
    block: Block,
    policy: Policy,
    firsts: Sequence[tuple[tc.ComprehensionOp, SSAValue]],
    saves: Sequence[tuple[tc.ComprehensionOp, str]],
) -> list[tuple[tc.ComprehensionOp, tc.ComprehensionOp]]:
    """The ``(statement, T_first)`` pairs of `firsts` whose positions
    `save_versions` saves: the statement (``max=!``/``min=!``, no ``into``)
    is saved, its reduction space is not a constant (recomputing reads a
    whole row again; a pooling window's positions are recomputed, O(1) per
    element), ``T_first`` is still computed and reads only arguments, its
    name is one an argument keeps, and it fits in the budget."""
    saved = {op for op, _ in saves}
    spent = SizeExpr.lit(0)
    for op, _ in saves:
        spent = spent + _elements(op.result_type)
    n_in = len(fwd.input_names)
    chosen: list[tuple[tc.ComprehensionOp, tc.ComprehensionOp]] = []
    for op, first in firsts:
        owner = first.owner
        if (
            op.into is not None
            or op not in saved
            or not isinstance(owner, tc.ComprehensionOp)
            or owner.parent is not block
            or re.fullmatch(r".*_[0-9]+", owner.target.data)
        ):
            continue
        window = SizeExpr.lit(1)
        for lo, hi in op.ranges[op.num_output_indices :]:
            window = window * (hi - lo)
        if window.constant_value() is not None:
            continue  # a constant window (pooling): recomputed, O(1) per element
        reads = [r.tensor for r in owner.body.walk() if isinstance(r, tc.ReadOp)]
        if not all(
            isinstance(t, BlockArgument)
            and t.owner is block
            and t.index < n_in + len(saves)
            for t in reads
        ):
            continue
        size = _elements(owner.result_type)
        if policy.budget is not None and not provably_le(spent + size, policy.budget):
            continue
        spent = spent + size
        chosen.append((op, owner))
    return chosen


def save_versions(
    fwd: tc.DefOp,
    block: Block,
    value: dict[SSAValue, SSAValue],
    used: set[str],
    policy: Policy,
    firsts: Sequence[tuple[tc.ComprehensionOp, SSAValue]] = (),
) -> tc.DefOp:
    """Replace the recomputations in the backward `block` (forward value ->
    recomputed value in `value`) of the versions `policy` saves by new block
    arguments, after the forward inputs; return ``@<name>_fwd``, `fwd` with
    these versions as extra outputs (after its own), named like the block
    arguments. A version that is not the last of its tensor in `fwd`, or
    whose name the backward uses otherwise, is returned through a copy of a
    fresh name (`used`: the names taken), made right after it. A chosen
    version that nothing reads once the later ones are saved is not saved.

    `firsts`: the ``max=!``/``min=!`` statements and the backward's
    positions of their first selected elements (``T_first``). Where the
    statement's version is saved and ``T_first`` reads only arguments, the
    positions are saved too (within the budget, after the versions): `@f_fwd`
    computes ``T_first`` right after the statement and returns it last, so
    the backward no longer reads the statement's inputs again for it."""
    comps = [op for op in fwd.body.block.ops if isinstance(op, tc.ComprehensionOp)]
    candidates = [
        op
        for op in comps
        if isinstance(r := value.get(op.result), SSAValue)
        and isinstance(r.owner, tc.ComprehensionOp)
        and r.owner.parent is block
    ]
    chosen = choose(candidates, policy)
    last = {op.target.data: op for op in comps}
    replaced = {value[op.result].owner for op in chosen}
    taken = {a.name_hint for a in block.args} | {
        op.target.data
        for op in block.ops
        if isinstance(op, tc.ComprehensionOp) and op not in replaced
    }
    position = len(fwd.input_names)
    saves: list[tuple[tc.ComprehensionOp, str]] = []
    for op in reversed(chosen):
        _dead_code(block)
        recomputed = value[op.result]
        owner = recomputed.owner
        assert isinstance(owner, tc.ComprehensionOp)
        if owner.parent is not block:
            continue  # read only by versions saved already
        name = op.target.data
        if last[name] is not op or name in taken:
            name = _fresh(used, name)
        taken.add(name)
        arg = block.insert_arg(op.result_type, position)
        arg.name_hint = name
        recomputed.replace_all_uses_with(arg)
        block.erase_op(owner)
        value[op.result] = arg
        saves.append((op, name))
    positions = _positions(fwd, block, policy, firsts, saves)
    fdef = fwd.clone()
    fdef.sym_name = StringAttr(f"{fwd.sym_name.data}_fwd")
    fvalue = {
        a.result: b.result
        for a, b in zip(fwd.body.block.ops, fdef.body.block.ops)
        if isinstance(a, tc.ComprehensionOp) and isinstance(b, tc.ComprehensionOp)
    }
    # the backward's arguments -> the forward's values
    fmap: dict[SSAValue, SSAValue] = dict(zip(block.args, fdef.body.block.args))
    for op, _ in saves:
        fmap[value[op.result]] = fvalue[op.result]
    outputs = list(fwd.output_names)
    returned = list(fdef.return_op.values)
    for op, name in reversed(saves):
        fv = fvalue[op.result]
        if name != op.target.data:
            copy = _copy(name, fv)
            fowner = fv.owner
            assert isinstance(fowner, tc.ComprehensionOp)
            fdef.body.block.insert_op_after(copy, fowner)
            fv = copy.result
        if name not in fwd.output_names:
            outputs.append(name)
            returned.append(fv)
    for op, first in positions:
        clone = first.clone(value_mapper=dict(fmap))
        fowner = fvalue[op.result].owner
        assert isinstance(fowner, tc.ComprehensionOp)
        fdef.body.block.insert_op_after(clone, fowner)
        arg = block.insert_arg(first.result_type, position + len(saves))
        arg.name_hint = first.target.data
        first.result.replace_all_uses_with(arg)
        block.erase_op(first)
        position += 1
        outputs.append(first.target.data)
        returned.append(clone.result)
    ret = fdef.return_op
    fdef.body.block.insert_op_before(tc.ReturnOp(returned), ret)
    fdef.body.block.erase_op(ret)
    fdef.outputs = ArrayAttr([StringAttr(n) for n in outputs])
    return fdef
