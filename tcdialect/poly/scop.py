"""Extraction of the polyhedral model (a SCoP) from `affine` IR, with islpy.

Contract: `extract_scop(func)` takes a `func.func` at the `affine` stage (the
output of `convert-tc-to-affine`, generic or specialised): a body that is a
sequence of `affine.parallel` / `affine.for` nests, possibly nested and with
`affine.if`, around store-terminated groups of ops. It returns a `Scop`:

- `params`: the `index` arguments of the function (the size parameters; none
  for specialised code), in argument order, then the *derived parameters*:
  `index` values computed before the loops from sizes and constants
  (`arith` ops: a product of sizes ``M * P``, a quotient by a size
  ``(N - K) floordiv S``) that a loop bound, `affine.if` or access uses. isl
  cannot express such a value, so it is a parameter of its own, named after
  its definition (``M_x_P``, ``N_minus_K_div_S``); `param_values` maps every
  parameter to its SSA value, and `nonneg_params` lists those known to be
  >= 0 (the sizes, and derived values built from them with ``+ * floordiv
  max``).
- `statements`: one `S<k>` per store (an `affine.store`, or a `memref.store`
  outside any loop-free `scf.if`), per `memref.atomic_rmw` outside one whose
  old value is unused, and per result-less `scf.if` that writes memory (a
  scatter's guarded atomic update), numbered in textual order. A statement
  owns the ops of its block from the previous statement up to its store
  (that last op). Its
  `domain` is an `isl.Set` over the enclosing loop IVs, outermost first: lower
  bound = max of the lower-map results, upper bound (exclusive) = min of the
  upper-map results, steps > 1 as a congruence, `affine.if` conditions
  intersected (their negation for the `else` block).
- `reads` / `writes`: `isl.UnionMap`s from statement instances to array
  elements `A[...]`, the array named by the memref's function argument (or the
  name of its `memref.alloc`, made unique; with `local_arrays`, also of a
  `memref.alloca`). `may_reads` / `may_writes`: the
  data-dependent accesses (`memref.load` / `memref.store`, and affine
  accesses under `scf.if`) as accesses of the whole array (subscripts kept for
  affine ones). `atomics`: the `memref.atomic_rmw` updates (accesses of the
  whole array too), by kind (MLIR's `AtomicRMWKind`: ``addf``); in neither
  the reads nor the writes.
- `schedule`: the original (textual) order in the 2d+1 encoding,
  `S[i, j] -> [c0, i, c1, j, c2, 0, ...]`, padded with zeros to one length.

`dependences(scop)` computes flow (RAW), anti (WAR) and output (WAW)
dependences with `isl.UnionAccessInfo.compute_flow`. An atomic update reads
and writes its element, so it depends on the plain accesses of its array
both ways. With `commuting_atomics` (the GPU's model), two atomic updates of
one kind commute (the sum of a scatter-accumulate does not depend on the
order of its additions): there is no dependence between them, and the loops
of a scatter are coincident; without (the CPU's), they are ordered like
plain read-modify-writes. For ``d_E[Idx[k], d] += g[k, d]`` after the
zero-init ``S0``, with `commuting_atomics`::

    S0[v, e] -> d_E[v, e]     write
    S1[k, d] -> d_E[o0, o1]   atomic addf (the whole array)
    flow     S0[v, e] -> S1[k, d]   (every instance: the zeroes come first)
    S1 -> S1 none

`reduction_loops(scop)` finds the `load target; arith op; store target`
reductions.

Example, matmul `C(m, n) +=! A(m, r_k) * B(r_k, n)` (generic)::

    params      [M, K, N]
    S0 domain   [M, K, N] -> { S0[m, n] : 0 <= m < M and 0 <= n < N }     C = 0
    S1 domain   [M, K, N] -> { S1[m, n, r_k] : ... and 0 <= r_k < K }     C += A * B
    schedule    S0[m, n] -> [0, m, 0, n, 0, 0, 0];
                S1[m, n, r_k] -> [1, m, 0, n, 0, r_k, 0]
    flow        S0[m, n] -> S1[m, n, 0] (K > 0);
                S1[m, n, k] -> S1[m, n, k + 1] (k < K - 1)
    reductions  S1 over dim 2 (r_k), combined with arith.addf

Unsupported constructs (semi-affine maps, `scf.for` and other region ops in a
statement, loops with iteration arguments or reductions, operands that are
neither IVs, size parameters nor constants) raise `TCError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import islpy as isl
from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind, AffineSet

from tcdialect.diagnostics import TCError
from tcdialect.dialects.memref import ATOMIC_RMW_KINDS

_ISL_WORDS = frozenset(
    "and or not mod min max floor ceil exists true false infty implies xor "
    "domain range rat".split()
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_REDUCTION_OPS = frozenset(
    "arith.addf arith.addi arith.mulf arith.muli arith.maximumf arith.minimumf "
    "arith.maxnumf arith.minnumf arith.maxsi arith.minsi arith.maxui "
    "arith.minui".split()
)


@dataclass
class Access:
    """One memory access of a statement: `map` is not intersected with the domain."""

    kind: str  # "read", "write", "may_read", "may_write" or "atomic"
    array: str
    map: isl.Map
    op: Operation


@dataclass
class Statement:
    name: str
    #: Names of the domain dimensions (the enclosing IVs), outermost first.
    dims: tuple[str, ...]
    domain: isl.Set
    #: The ops of the statement, its store last.
    ops: list[Operation]
    accesses: list[Access] = field(default_factory=list[Access])
    #: The enclosing IVs themselves, in the order of `dims`.
    ivs: tuple[SSAValue, ...] = ()

    @property
    def store(self) -> Operation:
        return self.ops[-1]


@dataclass
class Scop:
    params: tuple[str, ...]
    statements: dict[str, Statement]
    reads: isl.UnionMap
    writes: isl.UnionMap
    may_reads: isl.UnionMap
    may_writes: isl.UnionMap
    schedule: isl.UnionMap
    #: Array name -> the memref value (function argument or alloc result).
    arrays: dict[str, SSAValue]
    #: Parameter name -> its value (an `index` argument or a derived one).
    param_values: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    #: Parameters that are never negative.
    nonneg_params: frozenset[str] = frozenset()
    #: Atomic updates (`memref.atomic_rmw`, accesses of the whole array) by
    #: kind (``addf``): two of one kind may commute (`dependences`).
    atomics: dict[str, isl.UnionMap] = field(default_factory=dict[str, isl.UnionMap])

    @property
    def domain(self) -> isl.UnionSet:
        out = isl.UnionSet.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))
        for s in self.statements.values():
            out = out.union(isl.UnionSet.from_set(s.domain))
        return out


@dataclass
class Dependences:
    flow: isl.UnionMap
    anti: isl.UnionMap
    output: isl.UnionMap

    @property
    def all(self) -> isl.UnionMap:
        return self.flow.union(self.anti).union(self.output)


@dataclass(frozen=True)
class Reduction:
    statement: str
    #: The combining op, e.g. "arith.addf".
    op: str
    #: Positions of the reduction dims in the statement's domain.
    dims: tuple[int, ...]
    dim_names: tuple[str, ...]


#: Ops whose `index` operands may be derived parameters.
_AFFINE_USERS = (
    affine.ForOp,
    affine.ParallelOp,
    affine.IfOp,
    affine.LoadOp,
    affine.StoreOp,
)

#: Ops a derived parameter may be computed with: a word for its name, and
#: whether non-negative operands give a non-negative result.
_DERIVED_OPS: dict[type[Operation], tuple[str, bool]] = {
    arith.AddiOp: ("plus", True),
    arith.SubiOp: ("minus", False),
    arith.MuliOp: ("x", True),
    arith.FloorDivSIOp: ("div", True),
    arith.CeilDivSIOp: ("cdiv", True),
    arith.DivSIOp: ("div", True),
    arith.RemSIOp: ("mod", True),
    arith.MaxSIOp: ("max", True),
    arith.MinSIOp: ("min", True),
}


def _ends_statement(op: Operation) -> bool:
    """A store, an atomic update whose old value is unused, or a result-less
    `scf.if` that writes."""
    if isinstance(op, affine.StoreOp | memref.StoreOp):
        return True
    if isinstance(op, memref.AtomicRMWOp):
        return op.result.first_use is None
    return (
        isinstance(op, scf.IfOp)
        and not op.results
        and any(isinstance(o, memref.StoreOp | memref.AtomicRMWOp) for o in op.walk())
    )


def _anywhere(
    op: memref.LoadOp | memref.StoreOp | memref.AtomicRMWOp, array: str
) -> str:
    """Any element of `array`, the memref of `op`, with the bounds of its
    subscripts (``A[o0, o1] : 0 <= o0 < 4 and o1 >= 0`` for a
    `memref<4x?xf32>`)."""
    mtype = op.memref.type
    assert isinstance(mtype, MemRefType)
    shape = mtype.get_shape()
    outs = ", ".join(f"o{k}" for k in range(len(shape)))
    cond = " and ".join(
        f"0 <= o{k} < {n}" if n >= 0 else f"o{k} >= 0" for k, n in enumerate(shape)
    )
    return f"{array}[{outs}]{' : ' + cond if cond else ''}"


def _atomic_kind(op: Operation) -> str:
    """The kind of a `memref.atomic_rmw` (MLIR's `AtomicRMWKind`: ``addf``)."""
    assert isinstance(op, memref.AtomicRMWOp)
    k = op.kind.value.data
    return ATOMIC_RMW_KINDS[k] if 0 <= k < len(ATOMIC_RMW_KINDS) else str(k)


def _err(msg: str, op: Operation | None = None) -> TCError:
    where = f" (at '{op.name}')" if op is not None else ""
    return TCError(f"polyhedral extraction: {msg}{where}")


@dataclass
class _Nest:
    """What the walk knows at one point: enclosing IVs, constraints, schedule."""

    ivs: dict[SSAValue, str]
    dims: tuple[str, ...]
    constraints: tuple[str, ...]
    sched: tuple[str, ...]


class _Extractor:
    def __init__(self, fn: func.FuncOp, local_arrays: bool = False):
        self.fn = fn
        self.local_arrays = local_arrays
        self.params: dict[SSAValue, str] = {}
        self.arrays: dict[str, SSAValue] = {}
        self.array_of: dict[SSAValue, str] = {}
        self.statements: dict[str, Statement] = {}
        self.scheds: dict[str, tuple[str, ...]] = {}
        self.taken: set[str] = set(_ISL_WORDS)
        body = fn.body.blocks.first
        if body is None:
            raise _err(f"function '{fn.sym_name.data}' has no body")
        for i, arg in enumerate(body.args):
            if isinstance(arg.type, IndexType):
                self.params[arg] = self._fresh(arg.name_hint, f"p{i}")
            elif isinstance(arg.type, MemRefType):
                self._array(arg, arg.name_hint or f"arg{i}")
        self.nonneg: set[str] = set(self.params.values())
        self._derive_params(body)
        self.taken_params = set(self.params.values())

    # -- derived parameters ------------------------------------------------------

    def _derive_params(self, body: Block) -> None:
        """Make a parameter of every value computed before the loops (from
        sizes and constants) that a loop, `affine.if` or access uses."""
        texts: dict[SSAValue, tuple[str, bool] | None] = {}
        for op in body.walk():
            if not isinstance(op, _AFFINE_USERS):
                continue
            for v in op.operands:
                if not isinstance(v.type, IndexType) or v in self.params:
                    continue
                if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
                    continue
                form = self._param_text(v, body, texts)
                if form is not None:
                    text, nonneg = form
                    name = self._fresh(text[:40], f"d{len(self.params)}")
                    self.params[v] = name
                    if nonneg:
                        self.nonneg.add(name)

    def _param_text(
        self, v: SSAValue, body: Block, memo: dict[SSAValue, tuple[str, bool] | None]
    ) -> tuple[str, bool] | None:
        """A name for the derived value `v` and whether it is >= 0, or None
        when `v` is not computed before the loops from sizes and constants."""
        if v in memo:
            return memo[v]
        memo[v] = None  # (a cycle is no form)
        out: tuple[str, bool] | None = None
        if v in self.params:
            out = (self.params[v], self.params[v] in self.nonneg)
        elif isinstance(v, OpResult) and v.op.parent_block() is body:
            op = v.op
            if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
                c = op.value.value.data
                out = (str(c) if c >= 0 else f"m{-c}", c >= 0)
            elif type(op) in _DERIVED_OPS:
                word, keeps_nonneg = _DERIVED_OPS[type(op)]
                parts = [self._param_text(x, body, memo) for x in op.operands]
                if all(p is not None for p in parts):
                    names = [p[0] for p in parts if p is not None]
                    nonneg = keeps_nonneg and all(p[1] for p in parts if p is not None)
                    if isinstance(op, arith.MaxSIOp):
                        nonneg = any(p[1] for p in parts if p is not None)
                    text = f"_{word}_".join(names)
                    if isinstance(op, arith.MuliOp) and "m1" in names:
                        text = "neg_" + names[1 - names.index("m1")]  # x * -1
                    elif isinstance(op, arith.AddiOp) and names[1].startswith("neg_"):
                        text = f"{names[0]}_minus_{names[1][4:]}"
                    out = (text, nonneg)
        memo[v] = out
        return out

    # -- names ---------------------------------------------------------------

    def _fresh(self, hint: str | None, fallback: str) -> str:
        base = hint if hint and _IDENT.match(hint) else fallback
        if re.fullmatch(r"S\d+", base):
            base += "_"
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def _array(self, value: SSAValue, hint: str | None) -> str:
        if value not in self.array_of:
            name = self._fresh(hint, f"m{len(self.arrays)}")
            self.array_of[value] = name
            self.arrays[name] = value
        return self.array_of[value]

    def _array_name(self, value: SSAValue, op: Operation) -> str:
        if value in self.array_of:
            return self.array_of[value]
        if isinstance(value, OpResult) and (
            isinstance(value.op, memref.AllocOp)
            or (self.local_arrays and isinstance(value.op, memref.AllocaOp))
        ):
            return self._array(value, value.name_hint)
        raise _err("memref is neither a function argument nor a memref.alloc", op)

    @property
    def param_prefix(self) -> str:
        return "[" + ", ".join(self.params.values()) + "]"

    # -- affine expressions ----------------------------------------------------

    def _operand(self, v: SSAValue, nest: _Nest, op: Operation) -> str:
        if v in nest.ivs:
            return nest.ivs[v]
        if v in self.params:
            return self.params[v]
        if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
            val = v.op.value
            if isinstance(val, IntegerAttr):
                return f"({val.value.data})"
        raise _err(
            f"operand '{v}' is not a loop IV, a size parameter or a constant", op
        )

    def _expr(
        self, e: AffineExpr, names: Sequence[str], ndims: int, op: Operation
    ) -> str:
        if isinstance(e, AffineDimExpr):
            return names[e.position]
        if isinstance(e, AffineSymExpr):
            return names[ndims + e.position]
        if isinstance(e, AffineConstantExpr):
            return f"({e.value})"
        assert isinstance(e, AffineBinaryOpExpr)
        lhs = self._expr(e.lhs, names, ndims, op)
        if e.kind is AffineBinaryOpKind.Add:
            return f"({lhs} + {self._expr(e.rhs, names, ndims, op)})"
        if e.kind is AffineBinaryOpKind.Mul:
            if isinstance(e.rhs, AffineConstantExpr):
                return f"({e.rhs.value} * {lhs})"
            if isinstance(e.lhs, AffineConstantExpr):
                return f"({e.lhs.value} * {self._expr(e.rhs, names, ndims, op)})"
            raise _err(f"semi-affine expression '{e}' is not supported", op)
        if not isinstance(e.rhs, AffineConstantExpr) or e.rhs.value <= 0:
            raise _err(f"semi-affine expression '{e}' is not supported", op)
        c = e.rhs.value
        if e.kind is AffineBinaryOpKind.FloorDiv:
            return f"floor({lhs} / {c})"
        if e.kind is AffineBinaryOpKind.CeilDiv:
            return f"ceil({lhs} / {c})"
        return f"({lhs} mod {c})"

    def _map(
        self, m: AffineMap, operands: Sequence[SSAValue], nest: _Nest, op: Operation
    ) -> list[str]:
        names = [self._operand(v, nest, op) for v in operands]
        return [self._expr(r, names, m.num_dims, op) for r in m.results]

    def _set(
        self, s: AffineSet, operands: Sequence[SSAValue], nest: _Nest, op: Operation
    ) -> list[str]:
        names = [self._operand(v, nest, op) for v in operands]
        out: list[str] = []
        for c in s.constraints:
            lhs = self._expr(c.lhs, names, s.num_dims, op)
            rhs = self._expr(c.rhs, names, s.num_dims, op)
            rel = {AffineConstraintKind.eq: "=", AffineConstraintKind.ge: ">="}.get(
                c.kind, "<="
            )
            out.append(f"{lhs} {rel} {rhs}")
        return out

    # -- the walk ----------------------------------------------------------------

    def _iv_name(self, v: SSAValue, nest: _Nest) -> str:
        used = set(nest.dims) | set(self.params.values()) | _ISL_WORDS
        hint = v.name_hint
        base = hint if hint and _IDENT.match(hint) else f"i{len(nest.dims)}"
        name, k = base, 1
        while name in used:
            name, k = f"{base}_{k}", k + 1
        return name

    def _enter(
        self,
        nest: _Nest,
        iv: SSAValue,
        lbs: list[str],
        ubs: list[str],
        step: int,
        op: Operation,
    ) -> _Nest:
        name = self._iv_name(iv, nest)
        cons = [f"{name} >= {lb}" for lb in lbs] + [f"{name} < {ub}" for ub in ubs]
        if step != 1:
            if step <= 0 or len(lbs) != 1:
                raise _err(
                    "a step other than 1 needs a positive step and one lower bound", op
                )
            cons.append(f"({name} - {lbs[0]}) mod {step} = 0")
        return _Nest(
            {**nest.ivs, iv: name},
            (*nest.dims, name),
            nest.constraints + tuple(cons),
            (*nest.sched, name),
        )

    def run(self) -> None:
        body = self.fn.body.blocks.first
        assert body is not None
        self._block(body, _Nest({}, (), (), ()), [0])

    def _block(self, block: Block, nest: _Nest, pos: list[int]) -> None:
        pending: list[Operation] = []
        for op in block.ops:
            if _ends_statement(op):
                self._statement([*pending, op], nest, pos)
                pending = []
            elif isinstance(op, affine.ForOp | affine.ParallelOp | affine.IfOp):
                self._check_pure(pending)
                pending = []
                self._loop(op, nest, pos)
            elif isinstance(op, scf.ForOp | scf.WhileOp | scf.ParallelOp):
                raise _err("scf loops are not supported in affine code", op)
            elif isinstance(
                op, affine.YieldOp | func.ReturnOp | memref.AllocOp | memref.DeallocOp
            ) or (self.local_arrays and isinstance(op, memref.AllocaOp)):
                continue
            else:
                pending.append(op)
        self._check_pure(pending)

    def _check_pure(self, ops: list[Operation]) -> None:
        for op in ops:
            for inner in op.walk():
                if isinstance(
                    inner,
                    affine.LoadOp
                    | memref.LoadOp
                    | affine.StoreOp
                    | memref.StoreOp
                    | memref.AtomicRMWOp,
                ):
                    raise _err(
                        "a memory access outside any store-terminated statement", inner
                    )

    def _loop(self, op: Operation, nest: _Nest, pos: list[int]) -> None:
        if isinstance(op, affine.IfOp):
            cond = self._set(op.condition.data, op.args, nest, op)
            then_nest = _Nest(
                nest.ivs, nest.dims, nest.constraints + tuple(cond), nest.sched
            )
            self._block(op.then_region.block, then_nest, pos)
            if op.else_region.blocks:
                neg = "not (" + " and ".join(cond or ["1 = 1"]) + ")"
                else_nest = _Nest(
                    nest.ivs, nest.dims, (*nest.constraints, neg), nest.sched
                )
                self._block(op.else_region.blocks[0], else_nest, pos)
            return
        here = _Nest(nest.ivs, nest.dims, nest.constraints, (*nest.sched, str(pos[0])))
        pos[0] += 1
        if isinstance(op, affine.ForOp):
            if op.inits or op.res:
                raise _err("affine.for with iteration arguments is not supported", op)
            lbs = self._map(op.lowerBoundMap.data, op.lowerBoundOperands, nest, op)
            ubs = self._map(op.upperBoundMap.data, op.upperBoundOperands, nest, op)
            inner = self._enter(
                here, op.body.block.args[0], lbs, ubs, op.step.value.data, op
            )
        else:
            assert isinstance(op, affine.ParallelOp)
            if op.reductions.data or op.res:
                raise _err("affine.parallel with reductions is not supported", op)
            lmap, umap = op.lowerBoundsMap.data, op.upperBoundsMap.data
            nl = lmap.num_dims + lmap.num_symbols
            lbs = self._map(lmap, op.map_operands[:nl], nest, op)
            ubs = self._map(umap, op.map_operands[nl:], nest, op)
            lgroups = [int(g) for g in op.lowerBoundsGroups.get_values()]
            ugroups = [int(g) for g in op.upperBoundsGroups.get_values()]
            inner = here
            li = ui = 0
            for k, iv in enumerate(op.body.block.args):
                step = op.steps.data[k].value.data
                if k:
                    inner = _Nest(
                        inner.ivs, inner.dims, inner.constraints, (*inner.sched, "0")
                    )
                inner = self._enter(
                    inner,
                    iv,
                    lbs[li : li + lgroups[k]],
                    ubs[ui : ui + ugroups[k]],
                    step,
                    op,
                )
                li += lgroups[k]
                ui += ugroups[k]
        self._block(op.body.block, inner, [0])

    def _statement(self, ops: list[Operation], nest: _Nest, pos: list[int]) -> None:
        name = f"S{len(self.statements)}"
        sched = (*nest.sched, str(pos[0]))
        pos[0] += 1
        tup = f"{name}[{', '.join(nest.dims)}]"
        cons = " and ".join(nest.constraints)
        domain = isl.Set(
            f"{self.param_prefix} -> {{ {tup} {': ' + cons if cons else ''} }}"
        )
        by_name = {n: v for v, n in nest.ivs.items()}
        ivs = tuple(by_name[d] for d in nest.dims)
        stmt = Statement(name, nest.dims, domain, ops, ivs=ivs)
        for top in ops:
            for op in top.walk():
                self._access(stmt, op, top, nest, tup)
        self.statements[name] = stmt
        self.scheds[name] = sched

    def _access(
        self, stmt: Statement, op: Operation, top: Operation, nest: _Nest, tup: str
    ) -> None:
        if op is not top and op.regions and not isinstance(op, scf.IfOp):
            raise _err(f"'{op.name}' inside a statement is not supported", op)
        if isinstance(op, func.CallOp) and not self._is_math_call(op):
            raise _err("calls inside a statement are not supported", op)
        guarded = op is not top
        if isinstance(op, affine.LoadOp | affine.StoreOp):
            array = self._array_name(op.memref, op)
            subs = self._map(op.map.data, op.indices, nest, op)
            kind = "read" if isinstance(op, affine.LoadOp) else "write"
            if guarded:
                kind = "may_" + kind
            rel = f"{self.param_prefix} -> {{ {tup} -> {array}[{', '.join(subs)}] }}"
            stmt.accesses.append(Access(kind, array, isl.Map(rel), op))
        elif isinstance(op, memref.LoadOp | memref.StoreOp):
            array = self._array_name(op.memref, op)
            rel = f"{self.param_prefix} -> {{ {tup} -> {_anywhere(op, array)} }}"
            kind = "may_read" if isinstance(op, memref.LoadOp) else "may_write"
            stmt.accesses.append(Access(kind, array, isl.Map(rel), op))
        elif isinstance(op, memref.AtomicRMWOp):
            array = self._array_name(op.memref, op)
            rel = f"{self.param_prefix} -> {{ {tup} -> {_anywhere(op, array)} }}"
            stmt.accesses.append(Access("atomic", array, isl.Map(rel), op))

    def _is_math_call(self, op: func.CallOp) -> bool:
        """A call of a body-less declaration (the C math functions we call)."""
        module = self.fn.parent_op()
        if module is None:
            return False
        callee = op.callee.root_reference.data
        return any(
            isinstance(f, func.FuncOp)
            and f.sym_name.data == callee
            and not f.body.blocks
            for f in module.walk()
        )

    def scop(self) -> Scop:
        space = isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0)
        maps = {
            k: isl.UnionMap.empty(space)
            for k in ("read", "write", "may_read", "may_write")
        }
        atomics: dict[str, isl.UnionMap] = {}
        for s in self.statements.values():
            for a in s.accesses:
                m = isl.UnionMap.from_map(a.map.intersect_domain(s.domain))
                if a.kind == "atomic":
                    kind = _atomic_kind(a.op)
                    atomics[kind] = atomics.get(kind, isl.UnionMap.empty(space)).union(
                        m
                    )
                else:
                    maps[a.kind] = maps[a.kind].union(m)
        width = max((len(s) for s in self.scheds.values()), default=0)
        schedule = isl.UnionMap.empty(space)
        for name, sched in self.scheds.items():
            s = self.statements[name]
            out = ", ".join([*sched, *["0"] * (width - len(sched))])
            rel = f"{self.param_prefix} -> {{ {name}[{', '.join(s.dims)}] -> [{out}] }}"
            m = isl.Map(rel).intersect_domain(s.domain)
            schedule = schedule.union(isl.UnionMap.from_map(m))
        return Scop(
            tuple(self.params.values()),
            self.statements,
            maps["read"],
            maps["write"],
            maps["may_read"],
            maps["may_write"],
            schedule,
            self.arrays,
            {name: v for v, name in self.params.items()},
            frozenset(self.nonneg),
            atomics,
        )


def extract_scop(fn: func.FuncOp, local_arrays: bool = False) -> Scop:
    """The polyhedral model of `fn` (see the module docstring).

    `local_arrays`: also model the buffers of `memref.alloca`s (what
    `contract-temporaries` leaves inside loop bodies) as arrays. A buffer
    allocated in a loop body is fresh at every iteration; as one array its
    accesses give a superset of the true dependences, which is sound for
    questions about the given order (`register-tile`'s coverage checks) but
    not for rescheduling, which would not know where the allocation goes."""
    ex = _Extractor(fn, local_arrays)
    ex.run()
    return ex.scop()


def _flow(
    sink: isl.UnionMap,
    must: isl.UnionMap,
    may: isl.UnionMap,
    schedule: isl.UnionMap,
    kill: isl.UnionMap | None = None,
) -> isl.UnionMap:
    info = isl.UnionAccessInfo.from_sink(sink).set_must_source(must).set_may_source(may)
    if kill is not None:
        info = info.set_kill(kill)
    return info.set_schedule_map(schedule).compute_flow().get_may_dependence()


def error_flag_arrays(fn: func.FuncOp, scop: Scop) -> list[str]:
    """The array of `fn`'s error flag, if it has one: with a `tc.checked`
    attribute, the argument after its inputs and outputs (`tc.inputs`,
    `tc.outputs`; the contract of `convert-tc-to-affine`). Its writes commute
    (any nonzero code will do), so `dependences` may ignore it."""
    ins, outs = fn.attributes.get("tc.inputs"), fn.attributes.get("tc.outputs")
    if (
        "tc.checked" not in fn.attributes
        or not isinstance(ins, ArrayAttr)
        or not isinstance(outs, ArrayAttr)
    ):
        return []
    flag = len(ins.data) + len(outs.data)
    body = fn.body.blocks.first
    if body is None or flag >= len(body.args):
        return []
    return [n for n, v in scop.arrays.items() if v is body.args[flag]]


def dependences(
    scop: Scop, ignore: Sequence[str] = (), commuting_atomics: bool = False
) -> Dependences:
    """Flow (RAW), anti (WAR) and output (WAW) dependences between instances.

    Accesses to the arrays named in `ignore` are left out (e.g. an error flag
    whose writes commute: any nonzero code will do). An atomic update is a
    read and a write (of its whole array). With `commuting_atomics` it is
    that for the plain accesses (both ways) and the atomic updates of other
    kinds only: two of one kind commute, with no dependence between them (a
    GPU's atomics: the scatter's loops are coincident). Without, atomic
    updates are ordered like plain read-modify-writes (a target that runs
    them in one thread, without atomics)."""

    def keep(m: isl.UnionMap) -> isl.UnionMap:
        for name in ignore:
            m = m.subtract_range(
                isl.UnionSet.from_set(isl.Set(f"{{ {name}[i] }}"))
            ).subtract_range(isl.UnionSet.from_set(isl.Set(f"{{ {name}[] }}")))
        return m

    empty = isl.UnionMap.empty(isl.Space.params_alloc(isl.DEFAULT_CONTEXT, 0))
    atomics = {k: keep(m) for k, m in scop.atomics.items()}
    every_atomic = empty
    for m in atomics.values():
        every_atomic = every_atomic.union(m)
    must_w, may_w = keep(scop.writes), keep(scop.may_writes)
    reads = keep(scop.reads.union(scop.may_reads))
    if not commuting_atomics:
        may_w, reads = may_w.union(every_atomic), reads.union(every_atomic)
        atomics, every_atomic = {}, empty
    writes = must_w.union(may_w)
    # plain sinks: an atomic update is one more may-write and may-read source
    flow = _flow(reads, must_w, may_w.union(every_atomic), scop.schedule)
    anti = _flow(writes, empty, reads.union(every_atomic), scop.schedule, must_w)
    output = _flow(writes, must_w, may_w.union(every_atomic), scop.schedule)
    # atomic sinks: the plain accesses and the atomic updates of other kinds
    for kind, sink in atomics.items():
        others = empty
        for k, m in atomics.items():
            if k != kind:
                others = others.union(m)
        flow = flow.union(_flow(sink, must_w, may_w.union(others), scop.schedule))
        anti = anti.union(
            _flow(sink, empty, reads.union(others), scop.schedule, must_w)
        )
        output = output.union(_flow(sink, must_w, may_w.union(others), scop.schedule))
    return Dependences(flow, anti, output)


def reduction_loops(scop: Scop) -> dict[str, Reduction]:
    """The statements that reduce into their store target, with their reduction dims.

    The pattern is `%a = affine.load T[f(i)]; %r = <op> %a, %x (or %x, %a);
    affine.store %r, T[f(i)]` with `<op>` an add, mul, min or max; the reduction
    dims are the domain dims that the store subscript does not involve. A
    statement of that shape without such dims (an in-place update) is not one.
    """
    out: dict[str, Reduction] = {}
    for name, s in scop.statements.items():
        store = s.store
        if not isinstance(store, affine.StoreOp):
            continue
        combine = store.value.owner
        if not isinstance(combine, Operation) or combine.name not in _REDUCTION_OPS:
            continue
        write = next(a for a in s.accesses if a.op is store)
        if not any(
            isinstance(v, OpResult)
            and isinstance(v.op, affine.LoadOp)
            and any(
                a.op is v.op and a.kind == "read" and a.map.is_equal(write.map)
                for a in s.accesses
            )
            for v in combine.operands
        ):
            continue
        dims = tuple(
            d
            for d in range(len(s.dims))
            if not write.map.involves_dims(isl.dim_type.in_, d, 1)
        )
        if dims:
            out[name] = Reduction(
                name, combine.name, dims, tuple(s.dims[d] for d in dims)
            )
    return out


def tiles_cover(
    other: Statement,
    stmt: Statement,
    depth: int,
    first: Sequence[int],
    free: Sequence[int] = (),
) -> bool:
    """Whether each tile of `stmt` writes exactly what `other` writes.

    `other` and `stmt` share their `depth` outermost loops (the prefix `p`);
    the next `len(first)` loops of `stmt` are tile loops `t`, and `first` is
    one of their iterations. `stmt`'s domain dims at the positions `free`
    count as unbounded (a register tile loads and stores its target at
    every point of its output loops, whatever the reduction loops' extent).
    True when, for every prefix:

    - every iteration `t` of the tile loops writes exactly the elements that
      `other` writes under the same prefix (so `t = first` touches all of
      them, and the other tiles nothing else);
    - the tile `t = first` runs whenever `other` writes anything.

    With `other` an initialisation before the tiles and `first` their first
    iteration, that tile can start from `other`'s value instead of reading
    it back; with `other` a pointwise update after them and `first` their
    last iteration, that tile can apply it before storing (register-tile's
    folded initialisation and updates). Example: `S0[c, m, n] -> C[m, n]`
    and `S1[c, kt, m, k, n] -> C[m, n]` with `256 kt <= k < 256 kt + 256`,
    `0 <= kt < 4`, depth 1, first (0,), free (3,).
    """
    q = len(first)

    def written(s: Statement, keep: int, free: Sequence[int]) -> isl.Map:
        store = s.store
        w = next(a for a in s.accesses if a.op is store and a.kind == "write")
        domain = s.domain
        for d in free:
            domain = domain.drop_constraints_involving_dims(isl.dim_type.set, d, 1)
        m = w.map.intersect_domain(domain)
        m = m.project_out(isl.dim_type.in_, keep, len(s.dims) - keep)
        return m.reset_tuple_id(isl.dim_type.in_)

    if len(other.dims) < depth or len(stmt.dims) < depth + q:
        return False
    if any(d < depth + q or d >= len(stmt.dims) for d in free):
        return False
    before = written(other, depth, ())
    tiles = written(stmt, depth + q, free)
    if before.get_tuple_name(isl.dim_type.out) != tiles.get_tuple_name(
        isl.dim_type.out
    ):
        return False
    runs = tiles.domain()
    lifted = before.insert_dims(isl.dim_type.in_, depth, q).intersect_domain(runs)
    if not tiles.is_equal(lifted):
        return False
    firsts = runs
    for i, lb in enumerate(first):
        firsts = firsts.fix_val(
            isl.dim_type.set, depth + i, isl.Val.int_from_si(runs.get_ctx(), lb)
        )
    firsts = firsts.project_out(isl.dim_type.set, depth, q)
    return before.domain().is_subset(firsts)


__all__ = [
    "Access",
    "Dependences",
    "Reduction",
    "Scop",
    "Statement",
    "dependences",
    "error_flag_arrays",
    "extract_scop",
    "reduction_loops",
    "tiles_cover",
]
