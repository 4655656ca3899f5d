"""Matching for `register-tile`: which loop nests qualify, and the affine access analysis.

`_band` grows a band of perfectly nested step-1 loops out from a
statement's loop; `_match_statement` checks that the band's one statement is
a reduction `T[f] = T[f] ⊕ e` of the form the package docstring states
(`_FLOAT_COMBINES`, `_INT_COMBINES`, `_VECTOR_OPS`) and collects its loads
as `_Access`es: per subscript, the band IVs it uses and their coefficients.
Nothing here changes the IR.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine as xaffine
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

# XIMPORTS


# ⊕ → (vector.reduction kind, identity: float for floats, int for integers)
_FLOAT_COMBINES: dict[str, tuple[str, float]] = {
    "arith.addf": ("add", -0.0),
    "arith.mulf": ("mul", 1.0),
    "arith.maximumf": ("maximumf", -pymath.inf),
    "arith.minimumf": ("minimumf", pymath.inf),
    "arith.maxnumf": ("maxnumf", -pymath.inf),
    "arith.minnumf": ("minnumf", pymath.inf),
}
_INT_COMBINES: dict[str, tuple[str, Callable[[int], int]]] = {
    "arith.addi": ("add", lambda w: 0),
    "arith.muli": ("mul", lambda w: 1),
    "arith.maxsi": ("maxsi", lambda w: -(1 << (w - 1))),
    "arith.minsi": ("minsi", lambda w: (1 << (w - 1)) - 1),
    "arith.maxui": ("maxui", lambda w: 0),
    "arith.minui": ("minui", lambda w: -1),
    "arith.andi": ("and", lambda w: -1),
    "arith.ori": ("or", lambda w: 0),
    "arith.xori": ("xor", lambda w: 0),
}

_VECTOR_OPS = frozenset(
    (
        "arith.addf arith.subf arith.mulf arith.divf arith.maximumf "
        "arith.minimumf arith.maxnumf arith.minnumf arith.negf arith.extf "
        "arith.truncf arith.addi arith.subi arith.muli arith.andi arith.ori "
        "arith.xori arith.maxsi arith.minsi arith.maxui arith.minui "
        "math.fma math.absf math.sqrt math.floor math.ceil"
    ).split()
)
"""Ops of `e` the pass clones onto vectors: elementwise ops that xDSL 0.74's
arith/math accept on vectors and `convert-to-llvm` lowers (no comparisons,
selects, int<->float casts: xDSL's arith has no vector forms of them)."""


def _linear(expr: AffineExpr, num_dims: int) -> tuple[dict[int, int], set[int]]:
    """(coefficient per operand position, positions inside non-linear parts)."""
    if isinstance(expr, AffineConstantExpr):
        return {}, set()
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, set()
    if isinstance(expr, AffineSymExpr):
        return {num_dims + expr.position: 1}, set()
    assert isinstance(expr, AffineBinaryOpExpr)
    lc, ln = _linear(expr.lhs, num_dims)
    rc, rn = _linear(expr.rhs, num_dims)
    if expr.kind == AffineBinaryOpKind.Add:
        out = dict(lc)
        for p, c in rc.items():
            out[p] = out.get(p, 0) + c
        return out, ln | rn
    if expr.kind == AffineBinaryOpKind.Mul:
        if isinstance(expr.rhs, AffineConstantExpr):
            return {p: c * expr.rhs.value for p, c in lc.items()}, ln
        if isinstance(expr.lhs, AffineConstantExpr):
            return {p: c * expr.lhs.value for p, c in rc.items()}, rn
    return {}, set(lc) | ln | set(rc) | rn


@dataclass
class _Access:
    """An affine access: per subscript, the band IVs it uses."""

    memref: SSAValue
    map: AffineMap
    operands: tuple[SSAValue, ...]
    coeffs: list[dict[SSAValue, int]]
    """Linear coefficients of band IVs, per subscript (no zeros)."""
    nonlinear: list[set[SSAValue]]
    """Band IVs inside non-linear parts (floordiv, mod, products), per subscript."""

    @staticmethod
    def of(
        memref: SSAValue,
        amap: AffineMap,
        operands: Sequence[SSAValue],
        band: set[SSAValue],
    ) -> _Access:
        coeffs: list[dict[SSAValue, int]] = []
        nonlinear: list[set[SSAValue]] = []
        for expr in amap.results:
            lin, nonlin = _linear(expr, amap.num_dims)
            cs: dict[SSAValue, int] = {}
            for p, c in lin.items():
                v = operands[p]
                if v in band:
                    cs[v] = cs.get(v, 0) + c
            coeffs.append({v: c for v, c in cs.items() if c != 0})
            nonlinear.append({operands[p] for p in nonlin if operands[p] in band})
        return _Access(memref, amap, tuple(operands), coeffs, nonlinear)

    def uses(self, k: int) -> set[SSAValue]:
        return set(self.coeffs[k]) | self.nonlinear[k]

    def deps(self) -> set[SSAValue]:
        out: set[SSAValue] = set()
        for k in range(len(self.coeffs)):
            out |= self.uses(k)
        return out

    def unit_last(self, iv: SSAValue) -> bool | None:
        """True: `iv` only in the last subscript, coefficient 1, linearly;
        None: `iv` not used; False: otherwise."""
        if iv not in self.deps():
            return None
        last = len(self.coeffs) - 1
        if last < 0 or self.coeffs[last].get(iv) != 1 or iv in self.nonlinear[last]:
            return False
        return all(iv not in self.uses(k) for k in range(last))


_Bound = tuple[AffineMap, tuple[SSAValue, ...]]
_Val = int | SSAValue
"""An index value being built: a known constant or an SSA value."""


@dataclass
class _Dim:
    """One dimension of the band."""

    iv: SSAValue
    parallel: bool
    lb: _Bound
    ub: _Bound

    def bound_values(self) -> set[SSAValue]:
        return set(self.lb[1]) | set(self.ub[1])

    def static_extent(self) -> int | None:
        """`ub - lb` when it is a constant (single-result bounds whose
        difference is constant, like the point loops of a full tile)."""
        lbm, ubm = self.lb[0], self.ub[0]
        if len(lbm.results) != 1 or len(ubm.results) != 1:
            return None
        lo = _affine_form(lbm.results[0], lbm.num_dims, self.lb[1])
        hi = _affine_form(ubm.results[0], ubm.num_dims, self.ub[1])
        if lo is None or hi is None or lo[0] != hi[0]:
            return None
        return max(0, hi[1] - lo[1])


def _affine_form(
    expr: AffineExpr, num_dims: int, operands: Sequence[SSAValue]
) -> tuple[dict[SSAValue, int], int] | None:
    """`expr` as (coefficient per operand value, constant), None if not linear."""
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineDimExpr | AffineSymExpr):
        pos = expr.position + (num_dims if isinstance(expr, AffineSymExpr) else 0)
        return {operands[pos]: 1}, 0
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs = _affine_form(expr.lhs, num_dims, operands)
    rhs = _affine_form(expr.rhs, num_dims, operands)
    if lhs is None or rhs is None:
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        coeffs = dict(lhs[0])
        for v, c in rhs[0].items():
            coeffs[v] = coeffs.get(v, 0) + c
        return {v: c for v, c in coeffs.items() if c}, lhs[1] + rhs[1]
    if expr.kind == AffineBinaryOpKind.Mul:
        if not rhs[0]:
            return {v: c * rhs[1] for v, c in lhs[0].items() if c * rhs[1]}, (
                lhs[1] * rhs[1]
            )
        if not lhs[0]:
            return {v: c * lhs[1] for v, c in rhs[0].items() if c * lhs[1]}, (
                lhs[1] * rhs[1]
            )
    return None


def _loop_dims(op: Operation) -> list[_Dim] | None:
    """The dimensions of a band loop, or None if it cannot be in a band."""
    if isinstance(op, xaffine.ForOp):
        if op.inits or op.step.value.data != 1:
            return None
        return [
            _Dim(
                op.body.block.args[0],
                False,
                (op.lowerBoundMap.data, tuple(op.lowerBoundOperands)),
                (op.upperBoundMap.data, tuple(op.upperBoundOperands)),
            )
        ]
    if isinstance(op, xaffine.ParallelOp):
        if op.reductions.data or op.res:
            return None
        if any(s.value.data != 1 for s in op.steps.data):
            return None
        lbm, ubm = op.lowerBoundsMap.data, op.upperBoundsMap.data
        n_lb = lbm.num_dims + lbm.num_symbols
        operands = tuple(op.map_operands)
        lb_ops, ub_ops = operands[:n_lb], operands[n_lb:]
        lb_groups = [int(g) for g in op.lowerBoundsGroups.get_values()]
        ub_groups = [int(g) for g in op.upperBoundsGroups.get_values()]
        args = op.body.block.args
        if not (len(lb_groups) == len(ub_groups) == len(args)):
            return None
        dims: list[_Dim] = []
        lo = hi = 0
        for arg, gl, gu in zip(args, lb_groups, ub_groups):
            lm = AffineMap(lbm.num_dims, lbm.num_symbols, lbm.results[lo : lo + gl])
            um = AffineMap(ubm.num_dims, ubm.num_symbols, ubm.results[hi : hi + gu])
            dims.append(_Dim(arg, True, (lm, lb_ops), (um, ub_ops)))
            lo, hi = lo + gl, hi + gu
        return dims
    return None


def _only_child(block: Block) -> Operation | None:
    """The single op of `block` besides an argument-less `affine.yield`."""
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], xaffine.YieldOp) or ops[1].operands:
        return None
    return ops[0]


@dataclass
class _Statement:
    store: xaffine.StoreOp
    target: _Access
    combine: Operation
    acc_index: int
    """Operand position of the accumulator load in `combine`."""
    expr: SSAValue
    fma: tuple[SSAValue, SSAValue] | None
    loads: dict[Operation, _Access]
    inner: set[Operation]
    """Ops of the innermost block (for telling e's values from outer ones)."""
    widen: bool = False
    """The FMA's operands are narrower floats (a 16-bit product extended to
    the f32 accumulator, `_contraction`): the kernel extends them."""
    wide_loads: frozenset[Operation] = frozenset()
    """With `widen`: the loads that are factors and have no other use, which
    packed copies hold extended (`pack.py`)."""


def _is_reassoc(op: Operation) -> bool:
    flags = op.properties.get("fastmath")
    if not isinstance(flags, arith.FastMathFlagsAttr):
        return False
    return any(f.value in ("reassoc", "fast") for f in flags.data)


def _match_statement(
    store: xaffine.StoreOp, band: set[SSAValue], fma16: bool = False
) -> _Statement | None:
    block = store.parent_block()
    if block is None:
        return None
    ops = list(block.ops)
    if not ops or not isinstance(ops[-1], xaffine.YieldOp) or ops[-1].operands:
        return None
    for op in ops[:-1]:
        if op is store:
            continue
        if isinstance(op, xaffine.LoadOp):
            continue
        if (
            op.name in _VECTOR_OPS
            or op.name in _FLOAT_COMBINES
            or (op.name in _INT_COMBINES)
        ):
            continue
        if isinstance(op, arith.ConstantOp):
            continue
        return None
    combine = store.value.owner
    if not isinstance(combine, Operation) or combine.parent_block() is not block:
        return None
    t = store.memref
    elem = store.value.type
    if isinstance(elem, AnyFloat):
        if combine.name not in _FLOAT_COMBINES or not _is_reassoc(combine):
            return None
    elif isinstance(elem, IntegerType):
        if combine.name not in _INT_COMBINES or elem.width.data < 8:
            return None
    else:
        return None
    if len(combine.operands) != 2 or not combine.results[0].has_one_use():
        return None
    acc_index = None
    for i, operand in enumerate(combine.operands):
        owner = operand.owner
        if (
            isinstance(owner, xaffine.LoadOp)
            and owner.memref == t
            and owner.map == store.map
            and tuple(owner.indices) == tuple(store.indices)
            and operand.has_one_use()
        ):
            acc_index = i
            break
    if acc_index is None:
        return None
    acc_load = combine.operands[acc_index].owner
    expr = combine.operands[1 - acc_index]
    # e: the ops of the block it depends on
    inner = set(ops)
    loads: dict[Operation, _Access] = {}
    seen: set[Operation] = set()
    stack = [expr]
    while stack:
        v = stack.pop()
        owner = v.owner
        if not isinstance(owner, Operation) or owner not in inner or owner in seen:
            continue
        seen.add(owner)
        if owner is acc_load or owner is combine or owner is store:
            return None
        if isinstance(owner, xaffine.LoadOp):
            if owner.memref == t:
                return None
            for idx in owner.indices:
                if isinstance(idx.owner, Operation) and idx.owner in inner:
                    return None
            loads[owner] = _Access.of(owner.memref, owner.map.data, owner.indices, band)
            continue
        if isinstance(owner, arith.ConstantOp):
            continue
        if owner.name not in _VECTOR_OPS:
            return None
        stack.extend(owner.operands)
    # no other read of T in the block
    for op in ops:
        if isinstance(op, xaffine.LoadOp) and op.memref == t and op is not acc_load:
            return None
    for idx in store.indices:
        if isinstance(idx.owner, Operation) and idx.owner in inner:
            return None
    fma, widen, wide_loads = _contraction(combine, expr, inner, elem, fma16)
    return _Statement(
        store,
        _Access.of(t, store.map.data, store.indices, band),
        combine,
        acc_index,
        expr,
        fma,
        loads,
        inner,
        widen,
        wide_loads,
    )


def _contraction(
    combine: Operation,
    expr: SSAValue,
    inner: set[Operation],
    elem: Attribute,
    fma16: bool,
) -> tuple[tuple[SSAValue, SSAValue] | None, bool, frozenset[Operation]]:
    """The factors of `e` when `T ⊕ e` contracts into an FMA, whether they
    are narrower floats to extend to `elem`, and (then) the factors that are
    loads used only by the product: `e = x * y` in the accumulator's type,
    or, with `fma16`, `e = extf(x * y)` with `x * y` in a narrower type (a
    16-bit product accumulating in f32), whose rounding to that type the
    contraction skips as it skips that of an f32 product (LLVM contracts
    `fadd(fpext(fmul x, y), z)` to `fma(fpext x, fpext y, z)` alike)."""
    if combine.name != "arith.addf":
        return None, False, frozenset()
    x = expr
    ext = expr.owner
    widen = (
        fma16
        and isinstance(ext, arith.ExtFOp)
        and ext in inner
        and ext.result.has_one_use()
    )
    if widen:
        assert isinstance(ext, arith.ExtFOp)
        x = ext.input
    mul = x.owner
    if (
        isinstance(mul, arith.MulfOp)
        and mul in inner
        and mul.result.has_one_use()
        and (widen or mul.result.type == elem)
    ):
        loads = frozenset(
            v.owner
            for v in (mul.lhs, mul.rhs)
            if widen
            and isinstance(v.owner, xaffine.LoadOp)
            and all(u.operation is mul for u in v.uses)
        )
        return (mul.lhs, mul.rhs), widen, loads
    return None, False, frozenset()


def _band(stmt_loop: Operation) -> tuple[Operation, list[_Dim]] | None:
    """The outermost op and the dims of the band around the statement's loop."""
    dims = _loop_dims(stmt_loop)
    if dims is None:
        return None
    outer = stmt_loop
    while True:
        parent_block = outer.parent_block()
        parent = parent_block.parent_op() if parent_block else None
        if (
            parent_block is None
            or parent is None
            or not isinstance(parent, xaffine.ForOp | xaffine.ParallelOp)
        ):
            break
        if (
            parent.body.block is not parent_block
            or _only_child(parent_block) is not outer
        ):
            break
        pdims = _loop_dims(parent)
        if pdims is None:
            break
        used: set[SSAValue] = set()
        for d in dims:
            used |= d.bound_values()
        if any(d.iv in used for d in pdims):
            break
        dims = pdims + dims
        outer = parent
    return outer, dims


def _panel(a: _Access, v: SSAValue, u: SSAValue) -> bool:
    """Whether `a` belongs to the panel of vector IV `v` and row IV `u`: it
    varies along `v`, not along `u`."""
    return v in a.deps() and u not in a.deps()


def _gatherable(a: _Access, iv: SSAValue) -> bool:
    """`iv` appears linearly in exactly one subscript of `a`, not the last."""
    ks = [k for k in range(len(a.coeffs)) if iv in a.uses(k)]
    return (
        len(ks) == 1
        and ks[0] != len(a.coeffs) - 1
        and iv in a.coeffs[ks[0]]
        and iv not in a.nonlinear[ks[0]]
    )


def _stride(a: _Access, iv: SSAValue) -> int | None:
    """Elements between the addresses `a` reads at consecutive values of
    `iv` (any value, not only band IVs): None when that is not a static
    number (dynamic extents, `iv` inside a non-linear part)."""
    t = a.memref.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if any(d < 0 for d in shape[1:]):
        return None
    amap = a.map
    stride = 0
    for k, expr in enumerate(amap.results):
        lin, nonlin = _linear(expr, amap.num_dims)
        if any(a.operands[p] == iv for p in nonlin):
            return None
        trailing = 1
        for d in shape[k + 1 :]:
            trailing *= d
        stride += sum(c for p, c in lin.items() if a.operands[p] == iv) * trailing
    return stride


def _elem_bytes(t: MemRefType) -> int:
    """Bytes per element of `t` (4 for index and other types without a width)."""
    elem = t.get_element_type()
    return elem.bitwidth // 8 if isinstance(elem, AnyFloat | IntegerType) else 4
