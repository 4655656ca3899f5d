"""Code regeneration: an isl schedule back into `affine` IR.

Contract: `regenerate(fn, scop, schedule)` rewrites the body of `fn` (the
function `scop` was extracted from) to run the statements of `scop` in the
order of `schedule`:

- isl builds an AST from the schedule (context: sizes >= 0). Parameters are
  the size arguments and the derived parameters of the scop (values computed
  before the loops, e.g. ``M * P``: kept in place, used as symbols). Its `for` loops
  become `affine.for`, or a one-dimensional `affine.parallel` for the loop a
  `parallel@<d>` mark means (the one whose iterator is `c<d>`) unless it is
  inside another parallel loop: a mark whose loop isl dropped (it runs once)
  lets a marked loop further in run in parallel. A loop that a `map@<d>:...`
  mark (`tcdialect.poly.gpu_mapping`) maps to a block or thread index is a
  one-dimensional `affine.parallel` with attributes `tc.gpu_processor`
  (`block_x`, ..., `thread_z`) and `tc.gpu_size` (the grid or block size it
  wants). Lower bounds are `max(...)`
  and upper bounds `min(...)` as multi-result maps over the enclosing loop
  IVs (dims) and the size arguments (symbols); its `if` nodes become
  `affine.if`; a statement call clones the
  statement's ops with its old IVs replaced by the call's arguments, folded
  into the maps of its `affine.load`/`affine.store` (an `affine.apply` is
  materialised only for other uses of an IV).
- Ops of the old body that are not in any statement and not loops (constants,
  `memref.alloc`, size arithmetic) are kept, in order, before the new loops;
  `memref.dealloc`s move after them, then `func.return`. Pure ops that a
  statement uses from inside an old loop body are cloned next to it.

AST constructs that have no affine form (`select`, min/max inside an
expression, non-constant products) raise `TCError`; the pass then leaves the
function as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import islpy as isl
from xdsl.builder import Builder
from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.ir.affine.affine_set import (
    AffineConstraintExpr,
    AffineConstraintKind,
    AffineSet,
)
from xdsl.rewriter import InsertPoint

from tcdialect.diagnostics import TCError
from tcdialect.dialects import affine as taffine
from tcdialect.poly.gpu_mapping import MemberMap, parse_mark
from tcdialect.poly.schedule import PARALLEL_MARK
from tcdialect.poly.scop import Scop, Statement

#: Attributes of an `affine.parallel` that a `map@` mark maps to a GPU
#: processor: the processor (`block_x`, ..., `thread_z`) and the grid or
#: block size it wants along that axis.
GPU_PROCESSOR = "tc.gpu_processor"
GPU_SIZE = "tc.gpu_size"
#: A mapped loop over a reduction member (`thread_x` only): its threads
#: share the reduction (`convert-parallel-loops-to-gpu`).
GPU_REDUCE = "tc.gpu_reduce"
#: A shared reduction's loop whose blocks share it too: the block axis
#: (`block_x`, ...) and the most blocks along it.
GPU_SPLIT = "tc.gpu_split"
GPU_SPLIT_SIZE = "tc.gpu_split_size"

_T = isl.ast_expr_op_type
# islpy's stubs leave out the members named after Python keywords (`and_`,
# `for_`, `if_`); the `pyright: ignore` comments below are for those.


def _err(msg: str) -> TCError:
    return TCError(f"code generation from the isl schedule: {msg}")


class _Env:
    """What is in scope at one point of the AST: loop IVs (dims), sizes (symbols)."""

    def __init__(self, params: dict[str, SSAValue]):
        self.params = params
        self.param_list = list(params.values())
        self.ivs: list[SSAValue] = []
        self.names: dict[str, int] = {}

    def child(self, name: str, iv: SSAValue) -> _Env:
        env = _Env(self.params)
        env.ivs = [*self.ivs, iv]
        env.names = {**self.names, name: len(self.ivs)}
        return env

    # -- expressions ------------------------------------------------------------

    def expr(self, e: isl.AstExpr) -> AffineExpr:
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return AffineExpr.constant(int(e.int_get_val().to_python()))
        if t == isl.ast_expr_type.id:
            name = e.id_get_id().get_name()
            if name in self.names:
                return AffineExpr.dimension(self.names[name])
            if name in self.params:
                return AffineExpr.symbol(self.param_list.index(self.params[name]))
            raise _err(f"unknown identifier '{name}'")
        op = e.op_get_type()
        args = [e.op_get_arg(i) for i in range(e.op_get_n_arg())]
        if op == _T.minus:
            return -self.expr(args[0])
        if op == _T.add:
            return self.expr(args[0]) + self.expr(args[1])
        if op == _T.sub:
            return self.expr(args[0]) - self.expr(args[1])
        if op == _T.mul:
            a, b = self.expr(args[0]), self.expr(args[1])
            return a * b
        if op in (_T.fdiv_q, _T.pdiv_q, _T.div):
            return self.expr(args[0]) // self.expr(args[1])
        if op in (_T.pdiv_r, _T.zdiv_r):
            return self.expr(args[0]) % self.expr(args[1])
        raise _err(f"expression '{e.to_C_str()}' has no affine form")

    def bounds(self, e: isl.AstExpr, kind: Any) -> list[AffineExpr]:
        """The results of a `max` (lower) or `min` (upper) bound."""
        if e.get_type() == isl.ast_expr_type.op and e.op_get_type() == kind:
            out: list[AffineExpr] = []
            for i in range(e.op_get_n_arg()):
                out.extend(self.bounds(e.op_get_arg(i), kind))
            return out
        return [self.expr(e)]

    def upper(self, cond: isl.AstExpr, it: str) -> list[AffineExpr]:
        """Exclusive upper bounds of iterator `it` from a loop condition."""
        op = cond.op_get_type()
        if op in (_T.and_, _T.and_then):  # pyright: ignore[reportAttributeAccessIssue]
            return self.upper(cond.op_get_arg(0), it) + self.upper(
                cond.op_get_arg(1), it
            )
        lhs, rhs = cond.op_get_arg(0), cond.op_get_arg(1)
        if not (
            lhs.get_type() == isl.ast_expr_type.id
            and lhs.id_get_id().get_name() == it
            and op in (_T.le, _T.lt)
        ):
            raise _err(f"loop condition '{cond.to_C_str()}' is not an upper bound")
        ubs = self.bounds(rhs, _T.min)
        return [u + 1 for u in ubs] if op == _T.le else ubs

    def constraints(self, cond: isl.AstExpr) -> list[AffineConstraintExpr]:
        op = cond.op_get_type()
        if op in (_T.and_, _T.and_then):  # pyright: ignore[reportAttributeAccessIssue]
            return self.constraints(cond.op_get_arg(0)) + self.constraints(
                cond.op_get_arg(1)
            )
        kinds = {
            _T.eq: AffineConstraintKind.eq,
            _T.le: AffineConstraintKind.le,
            _T.ge: AffineConstraintKind.ge,
        }
        lhs = self.expr(cond.op_get_arg(0))
        rhs = self.expr(cond.op_get_arg(1))
        if op in kinds:
            return [AffineConstraintExpr(kinds[op], lhs, rhs)]
        if op == _T.lt:
            return [AffineConstraintExpr(AffineConstraintKind.le, lhs, rhs - 1)]
        if op == _T.gt:
            return [AffineConstraintExpr(AffineConstraintKind.ge, lhs, rhs + 1)]
        raise _err(f"condition '{cond.to_C_str()}' is not a conjunction")

    def operands(self) -> list[SSAValue]:
        return [*self.ivs, *self.param_list]

    def map(self, exprs: Sequence[AffineExpr]) -> tuple[AffineMap, list[SSAValue]]:
        """A map over only the dims and symbols that `exprs` use, and its operands."""
        return _compact(
            AffineMap(len(self.ivs), len(self.param_list), tuple(exprs)),
            self.operands(),
        )


def _compact(
    m: AffineMap, operands: Sequence[SSAValue]
) -> tuple[AffineMap, list[SSAValue]]:
    used_d = sorted({d for e in m.results for d in _dims(e)})
    used_s = sorted({s for e in m.results for s in _syms(e)})
    dmap = [
        AffineExpr.dimension(used_d.index(d)) if d in used_d else AffineExpr.constant(0)
        for d in range(m.num_dims)
    ]
    smap = [
        AffineExpr.symbol(used_s.index(s)) if s in used_s else AffineExpr.constant(0)
        for s in range(m.num_symbols)
    ]
    exprs = tuple(e.replace_dims_and_symbols(dmap, smap) for e in m.results)
    ops = [operands[d] for d in used_d] + [operands[m.num_dims + s] for s in used_s]
    return AffineMap(len(used_d), len(used_s), exprs), ops


def _dims(e: AffineExpr) -> set[int]:
    from xdsl.ir.affine import AffineBinaryOpExpr, AffineDimExpr

    if isinstance(e, AffineDimExpr):
        return {e.position}
    if isinstance(e, AffineBinaryOpExpr):
        return _dims(e.lhs) | _dims(e.rhs)
    return set()


def _syms(e: AffineExpr) -> set[int]:
    from xdsl.ir.affine import AffineBinaryOpExpr, AffineSymExpr

    if isinstance(e, AffineSymExpr):
        return {e.position}
    if isinstance(e, AffineBinaryOpExpr):
        return _syms(e.lhs) | _syms(e.rhs)
    return set()


def _body(args: int = 1) -> tuple[Block, Builder]:
    block = Block(arg_types=[IndexType()] * args)
    block.add_op(affine.YieldOp.get())
    terminator = block.last_op
    assert terminator is not None
    return block, Builder(InsertPoint.before(terminator))


class _Generator:
    def __init__(self, fn: func.FuncOp, scop: Scop):
        self.fn = fn
        self.scop = scop
        body = fn.body.blocks.first
        assert body is not None
        self.block = body
        #: AST iterators that a `map@` mark above maps to a GPU processor.
        self.mapped: dict[str, MemberMap] = {}
        index_args = [a for a in body.args if isinstance(a.type, IndexType)]
        self.params: dict[str, SSAValue] = scop.param_values or dict(
            zip(scop.params, index_args)
        )
        self.stmt_ops: set[Operation] = set()
        for s in scop.statements.values():
            for top in s.ops:
                self.stmt_ops.update(top.walk())
        self.kept = [
            op
            for op in body.ops
            if op not in self.stmt_ops
            and not isinstance(
                op,
                affine.ForOp
                | affine.ParallelOp
                | affine.IfOp
                | memref.DeallocOp
                | func.ReturnOp,
            )
        ]
        self.kept_set = set(self.kept)
        for op in self.kept:
            for v in op.operands:
                if isinstance(v, OpResult) and v.op in self.stmt_ops:
                    raise _err(f"'{op.name}' outside the loops uses a statement value")

    # -- the walk ---------------------------------------------------------------------

    def node(
        self, n: isl.AstNode, b: Builder, env: _Env, parallel: frozenset[str] | None
    ) -> None:
        """Emit `n` at `b`. `parallel`: iterators of the marked loops that may
        still become `affine.parallel` here; None inside a parallel loop."""
        t = n.get_type()
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            for i in range(children.n_ast_node()):
                self.node(children.get_at(i), b, env, parallel)
        elif t == isl.ast_node_type.mark:
            name = n.mark_get_id().get_name()
            par = parallel
            if par is not None and name.startswith(PARALLEL_MARK + "@"):
                par = par | {"c" + name.split("@", 1)[1]}
            mapped = parse_mark(name)
            self.mapped.update(mapped)
            self.node(n.mark_get_node(), b, env, par)
            for it in mapped:
                del self.mapped[it]
        elif t == isl.ast_node_type.for_:  # pyright: ignore[reportAttributeAccessIssue]
            self.loop(n, b, env, parallel)
        elif t == isl.ast_node_type.if_:  # pyright: ignore[reportAttributeAccessIssue]
            self.cond(n, b, env, parallel)
        elif t == isl.ast_node_type.user:
            self.user(n.user_get_expr(), b, env)
        else:
            raise _err(f"unsupported AST node type {t}")

    def loop(
        self, n: isl.AstNode, b: Builder, env: _Env, parallel: frozenset[str] | None
    ) -> None:
        it = n.for_get_iterator().id_get_id().get_name()
        lbs = env.bounds(n.for_get_init(), _T.max)
        ubs = env.upper(n.for_get_cond(), it)
        inc = n.for_get_inc()
        if inc.get_type() != isl.ast_expr_type.int:
            raise _err("a loop step that is not a constant")
        step = int(inc.int_get_val().to_python())
        lmap, lops = env.map(lbs)
        umap, uops = env.map(ubs)
        block, inner = _body()
        block.args[0].name_hint = it
        mapped = self.mapped.get(it)
        if mapped is not None or (parallel is not None and it in parallel):
            op: Operation = taffine.parallel_op(
                [*lops, *uops],
                lmap,
                [len(lbs)],
                umap,
                [len(ubs)],
                [step],
                Region(block),
            )
            if mapped is not None:
                op.attributes[GPU_PROCESSOR] = StringAttr(mapped.processor)
                op.attributes[GPU_SIZE] = IntegerAttr(mapped.size, 64)
                if mapped.reduce:
                    op.attributes[GPU_REDUCE] = UnitAttr()
                if mapped.split is not None:
                    op.attributes[GPU_SPLIT] = StringAttr(mapped.split)
                    op.attributes[GPU_SPLIT_SIZE] = IntegerAttr(mapped.split_size, 64)
        else:
            op = affine.ForOp.from_region(
                lops,
                uops,
                [],
                [],
                AffineMapAttr(lmap),
                AffineMapAttr(umap),
                Region(block),
                step,
            )
        b.insert(op)
        inside = None if parallel is not None and it in parallel else parallel
        self.node(n.for_get_body(), inner, env.child(it, block.args[0]), inside)

    def cond(
        self, n: isl.AstNode, b: Builder, env: _Env, parallel: frozenset[str] | None
    ) -> None:
        cons = env.constraints(n.if_get_cond())
        nd, ns = len(env.ivs), len(env.param_list)
        then_block, then_b = _body(0)
        self.node(n.if_get_then_node(), then_b, env, parallel)
        else_region = Region()
        if n.if_has_else_node():
            else_block, else_b = _body(0)
            self.node(n.if_get_else_node(), else_b, env, parallel)
            else_region = Region(else_block)
        op = affine.IfOp.build(
            operands=[env.operands()],
            result_types=[[]],
            properties={"condition": AffineSetAttr(AffineSet(nd, ns, tuple(cons)))},
            regions=[Region(then_block), else_region],
        )
        b.insert(op)

    # -- statements -----------------------------------------------------------------

    def user(self, call: isl.AstExpr, b: Builder, env: _Env) -> None:
        name = call.op_get_arg(0).id_get_id().get_name()
        stmt = self.scop.statements[name]
        exprs = [env.expr(call.op_get_arg(i + 1)) for i in range(len(stmt.dims))]
        self.instantiate(stmt, exprs, b, env)

    def instantiate(
        self, stmt: Statement, exprs: list[AffineExpr], b: Builder, env: _Env
    ) -> None:
        iv_expr = dict(zip(stmt.ivs, exprs))
        for old_iv, e in iv_expr.items():
            if isinstance(e, AffineDimExpr):
                _adopt_name(env.ivs[e.position], old_iv)
        mapper: dict[SSAValue, SSAValue] = {}
        applies: dict[SSAValue, SSAValue] = {}

        def iv_value(old: SSAValue) -> SSAValue:
            if old not in applies:
                e = iv_expr[old]
                m, ops = env.map([e])
                if (
                    m.num_dims == 1
                    and m.num_symbols == 0
                    and m.results[0] == AffineExpr.dimension(0)
                ):
                    applies[old] = ops[0]
                else:
                    applies[old] = b.insert(
                        affine.ApplyOp(ops, AffineMapAttr(m))
                    ).result
            return applies[old]

        own = {op for top in stmt.ops for op in top.walk()}

        def external(v: SSAValue) -> None:
            if v in mapper:
                return
            if v in iv_expr:
                mapper[v] = iv_value(v)
                return
            # Values from an old loop body, or from another statement's ops
            # (a constant that statement happened to own), are cloned here.
            if (
                isinstance(v, OpResult)
                and v.op not in own
                and v.op not in self.kept_set
            ):
                owner = v.op
                if owner.regions or not _pure(owner):
                    raise _err(
                        f"statement uses the result of '{owner.name}' from an old loop"
                    )
                for o in owner.operands:
                    external(o)
                b.insert(owner.clone(value_mapper=mapper))
            # function arguments and kept ops stay as they are

        for top in stmt.ops:
            for op in top.walk():
                folded = op is top and isinstance(op, affine.LoadOp | affine.StoreOp)
                for v in op.operands:
                    if _defined_in(v, top) or (folded and v in iv_expr):
                        continue
                    external(v)
        for top in stmt.ops:
            if isinstance(top, affine.LoadOp | affine.StoreOp):
                new = b.insert(self.access(top, mapper, iv_expr, env))
                for r_old, r_new in zip(top.results, new.results):
                    mapper[r_old] = r_new
            else:
                b.insert(top.clone(value_mapper=mapper))

    def access(
        self,
        op: Operation,
        mapper: dict[SSAValue, SSAValue],
        iv_expr: dict[SSAValue, AffineExpr],
        env: _Env,
    ) -> Operation:
        """The load/store `op` with the statement's IV expressions folded in."""
        assert isinstance(op, affine.LoadOp | affine.StoreOp)
        old = op.map.data
        indices = list(op.indices)
        nd = old.num_dims
        # Operands of the new map: env's ivs (dims) and params plus any other
        # symbol operand of the old map.
        extra: list[SSAValue] = []
        repl: list[AffineExpr] = []
        n_env_d, n_env_s = len(env.ivs), len(env.param_list)
        for k, v in enumerate(indices):
            if v in iv_expr:
                repl.append(iv_expr[v])
                continue
            w = mapper.get(v, v)
            if w in env.param_list:
                repl.append(AffineExpr.symbol(env.param_list.index(w)))
            elif w in env.ivs:
                repl.append(AffineExpr.dimension(env.ivs.index(w)))
            else:
                if w not in extra:
                    extra.append(w)
                repl.append(AffineExpr.symbol(n_env_s + extra.index(w)))
        dims, syms = repl[:nd], repl[nd:]
        exprs = tuple(e.replace_dims_and_symbols(dims, syms) for e in old.results)
        full = AffineMap(n_env_d, n_env_s + len(extra), exprs)
        m, operands = _compact(full, [*env.ivs, *env.param_list, *extra])
        if isinstance(op, affine.LoadOp):
            return taffine.LoadOp(
                op.memref if op.memref not in mapper else mapper[op.memref],
                operands,
                AffineMapAttr(m),
                op.result.type,
            )
        value = mapper.get(op.value, op.value)
        return taffine.StoreOp(
            value, mapper.get(op.memref, op.memref), operands, AffineMapAttr(m)
        )

    # -- driver -------------------------------------------------------------------------

    def run(self, ast: isl.AstNode) -> None:
        tmp = Block()
        b = Builder(InsertPoint.at_end(tmp))
        env = _Env(self.params)
        self.node(ast, b, env, frozenset())
        old = list(self.block.ops)
        deallocs = [op for op in old if isinstance(op, memref.DeallocOp)]
        ret = [op for op in old if isinstance(op, func.ReturnOp)]
        keep = self.kept + deallocs + ret
        for op in keep:
            op.detach()
        for op in reversed(list(self.block.ops)):
            self.block.erase_op(op, safe_erase=False)
        new = list(tmp.ops)
        for op in new:
            op.detach()
        self.block.add_ops([*self.kept, *new, *deallocs, *ret])


def _adopt_name(new: SSAValue, old: SSAValue) -> None:
    """Give a loop IV still named like isl's `c<k>` the statement dim's name."""
    hint = new.name_hint or ""
    if old.name_hint and hint[:1] == "c" and hint[1:].isdigit():
        new.name_hint = old.name_hint


def _defined_in(v: SSAValue, top: Operation) -> bool:
    """Whether `v` is defined by `top` or inside it."""
    owner = v.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op is top:
            return True
        op = op.parent_op()
    return False


def _pure(op: Operation) -> bool:
    from xdsl.traits import is_side_effect_free

    return is_side_effect_free(op)


def regenerate(
    fn: func.FuncOp, scop: Scop, schedule: isl.Schedule, context: isl.Set
) -> None:
    """Rewrite `fn`'s body to follow `schedule` (see the module docstring)."""
    ctx = isl.DEFAULT_CONTEXT
    ctx.set_ast_build_atomic_upper_bound(1)
    ctx.set_ast_build_detect_min_max(1)
    ast = isl.AstBuild.from_context(context).node_from_schedule(schedule)
    gen = _Generator(fn, scop)
    gen.run(ast)


__all__ = ["regenerate"]
