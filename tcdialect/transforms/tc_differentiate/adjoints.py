"""The state of one derivation of `tc-differentiate` and the accumulation
of adjoints: `_Adjoints` names the backward definition's arguments and
tensors, recomputes the forward statements, tracks which tensors are
active, and adds each contribution to a tensor's adjoint as a comprehension
(``=``/``+=!`` first, then ``+=``). `DifferentiationError` is the error it
raises about one forward statement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate.body import _Body, is_float_type
from tcdialect.transforms.tc_differentiate.subscripts import _tensor_name
from tcdialect.transforms.tc_differentiate.versions import (
    _exact_extents,
    _identity_copy,
)


class DifferentiationError(TCError):
    """A `TCError` of `tc-differentiate` about one forward statement:
    `statement` is the position of its `tc.comprehension` in the definition
    (the frontend emits one per TC statement, in order), so that callers
    holding the source (`tcdialect.autodiff.grad`) can point at it."""

    def __init__(self, message: str, statement: int | None):
        super().__init__(message)
        self.message = message
        self.statement = statement


@dataclass
class _Index:
    """One index of a gather comprehension."""

    lo: SizeExpr
    hi: SizeExpr
    name: str | None


class _Adjoints:
    """The backward definition being built and the adjoints found so far;
    `_Gather` and `_Differentiator` add the statement-by-statement sweep."""

    def __init__(self, fwd: tc.DefOp, wrt: Sequence[str]):
        self.fwd = fwd
        self.fname = fwd.sym_name.data
        self.wrt = list(wrt)
        self.block = Block(
            arg_types=[
                *(a.type for a in fwd.body.block.args),
                *fwd.output_types,
            ]
        )
        self.b = Builder(InsertPoint.at_end(self.block))
        fwd_args = fwd.body.block.args
        names = [*fwd.input_names, *(f"d_{n}" for n in fwd.output_names)]
        for a, n in zip(self.block.args, names):
            a.name_hint = n
        #: Forward values (inputs, comprehension results) -> their recomputation.
        self.value: dict[SSAValue, SSAValue] = dict(zip(fwd_args, self.block.args))
        self.used: set[str] = {*fwd.size_names, *names}
        self.out_names = [f"d_{n}" for n in self.wrt]
        for n in self.out_names:
            if n in self.used:
                raise TCError(
                    f"tc-differentiate: @{self.fname} already uses the name '{n}' "
                    f"for its gradient of '{n[2:]}'; rename it"
                )
            self.used.add(n)
        self.comprehensions = [
            op for op in fwd.body.block.ops if isinstance(op, tc.ComprehensionOp)
        ]
        #: Forward tensors recomputed under another name: they are named like
        #: a gradient (`d_A` when differentiating a derived `@f_grad`).
        self.renamed = {op.target.data for op in self.comprehensions} & set(
            self.out_names
        )
        for op in self.comprehensions:
            self.used.add(op.target.data)
        #: Forward value -> current (partial) adjoint in the new def.
        self.adj: dict[SSAValue, SSAValue] = {}
        #: Adjoints that are `d_<output>` block arguments (not yet copied).
        self.seeds: set[SSAValue] = set()
        self.active = self.activity(fwd_args)
        #: The forward statement being differentiated (for errors).
        self.statement_index: int | None = None
        #: ``max=``/``min=`` statements and the positions of their first
        #: selected elements (``T_first``), which a saving policy may save.
        self.firsts: list[tuple[tc.ComprehensionOp, SSAValue]] = []

    # ------------------------------------------------------------ helpers
    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name

    def error(self, msg: str) -> TCError:
        return DifferentiationError(
            f"tc-differentiate: @{self.fname}: {msg}", self.statement_index
        )

    def activity(self, args: Sequence[BlockArgument]) -> set[SSAValue]:
        active: set[SSAValue] = {
            a for a, n in zip(args, self.fwd.input_names) if n in self.wrt
        }
        for op in self.comprehensions:
            if not is_float_type(op.result_type.element_type):
                continue
            reads = [
                r.tensor
                for r in op.body.walk()
                if isinstance(r, tc.ReadOp) and r.tensor in active
            ]
            if reads or (op.into is not None and op.into in active):
                active.add(op.result)
        return active

    # ----------------------------------------------------------- recompute
    def recompute(self) -> None:
        """Copy every forward statement; each version that starts afresh
        (no ``into``) gets a name of its own."""
        names: dict[SSAValue, str] = {}
        taken: set[str] = set()
        for op in self.comprehensions:
            new = op.clone(value_mapper=dict(self.value))
            if op.into is not None:
                name = names[op.into]
            elif op.target.data in taken or op.target.data in self.renamed:
                name = self.fresh(op.target.data)
            else:
                name = op.target.data
            taken.add(name)
            names[op.result] = name
            new.target = StringAttr(name)
            self.b.insert(new)
            self.value[op.result] = new.result

    # ----------------------------------------------------------- adjoints
    def contribute(
        self,
        v: SSAValue,
        indices: Sequence[_Index],
        emit: Callable[[_Body, list[BlockArgument]], SSAValue],
    ) -> None:
        """Add ``sum over the extra indices of emit(...)`` to the adjoint of `v`.

        `indices` are v's dimensions followed by reduction indices; `emit`
        builds the body from the block arguments and returns the value.
        """
        t = v.type
        assert isinstance(t, tc.TensorType)
        current, name = self.target_of(v)
        new = self.comprehension(name, t, indices, emit, current)
        alias = _identity_copy(new)
        if alias is not None and current is None:
            # dV is another adjoint as it is (an in-place update `O = O + b`):
            # share it; a later `+=` into it gets its own copy (see
            # `_copy_shared_versions`)
            self.block.erase_op(new.owner)  # type: ignore[arg-type]
            self.used.discard(name)
            new = alias
        self.adj[v] = new

    def target_of(self, v: SSAValue) -> tuple[SSAValue | None, str]:
        """The adjoint of `v` that a new term accumulates into (None when
        there is none yet; a copy when it is an output's gradient, which is
        an input of the backward and so immutable) and the name of the
        comprehensions that write it."""
        t = v.type
        assert isinstance(t, tc.TensorType)
        current = self.adj.get(v)
        own_name = (
            f"d_{self.fwd.input_names[v.index]}"
            if isinstance(v, BlockArgument)
            else None
        )
        if current is not None and current in self.seeds:
            seed = current
            current = self.comprehension(
                own_name or self.fresh(f"d_{_tensor_name(v)}"),
                t,
                [_Index(SizeExpr.lit(0), e, None) for e in t.extents],
                lambda body, args: body.op(tc.ReadOp(seed, args[: t.rank])),
                None,
            )
        if current is None:
            return None, own_name or self.fresh(f"d_{_tensor_name(v)}")
        owner = current.owner
        assert isinstance(owner, tc.ComprehensionOp)
        return current, owner.target.data

    def comprehension(
        self,
        name: str,
        t: tc.TensorType,
        indices: Sequence[_Index],
        emit: Callable[[_Body, list[BlockArgument]], SSAValue],
        into: SSAValue | None,
        kind: str = "+",
    ) -> SSAValue:
        region, block = tc.make_body(len(indices))
        for a, ix in zip(block.args, indices):
            if ix.name:
                a.name_hint = ix.name
        body = _Body(block)
        value = emit(body, list(block.args))
        body.b.insert(tc.YieldOp(value))
        reduces = len(indices) > t.rank
        if into is not None:
            op = f"{kind}="
        elif reduces or kind != "+":
            op = f"{kind}=!"
        else:
            op = "="
        comp = tc.ComprehensionOp(
            name,
            op,
            [ix.lo for ix in indices],
            [ix.hi for ix in indices],
            t,
            region,
            into,
        )
        _exact_extents(comp, t)
        comp.result.name_hint = name
        self.b.insert(comp)
        return comp.result

    def clone_body(
        self, op: tc.ComprehensionOp, body: _Body, vm: dict[SSAValue, SSAValue]
    ) -> SSAValue:
        """Clone `op`'s body (but its yield) into `body`; return the yielded value."""
        for o in op.body.block.ops:
            if isinstance(o, tc.YieldOp):
                return vm[o.value] if o.value in vm else o.value
            body.b.insert(o.clone(value_mapper=vm))
        raise AssertionError("comprehension without tc.yield")  # pragma: no cover
