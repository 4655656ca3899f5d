"""`outline-parallel-loops`: run outermost `scf.parallel` loops through `tcrt`.

Contract (see docs/pipeline.md, `loops` stage):

- Every outermost `scf.parallel` of a `func.func @f` (one not nested in
  another `scf.parallel`), the k-th in pre-order, is replaced by

      n = max(0, ceildiv(ub0 - lb0, step0))        (arith index ops, folded)
      tcrt.parallel_for @f_par<k>(%n) (captures...) : (types...)

  and the new function `func.func private @f_par<k>(%begin: index,
  %end: index, captures...)`, inserted right after `@f` (after its earlier
  outlined functions), runs iterations `begin .. end-1` of the first
  dimension (`iv0 = lb0 + it * step0`, folded; when that is `it` itself the
  chunk loop's variable keeps the parallel variable's name) and the remaining
  dimensions as nested `scf.for` (same bounds and steps), around a copy of
  the loop body. `k` is bumped past names already taken in the module.
- Captures are the values defined outside the loop and used by it, in order
  of first use: `lb0` and `step0` (unless constant), then each remaining dimension's lower bound,
  upper bound and step, then the operands of the body's ops in pre-order;
  each appears once. Results of `arith.constant` are not captured: the
  constant is cloned at the top of the outlined function (so a constant
  `lb0 = 0` / `step0 = 1` folds `iv0` to `it`).
- Every other `scf.parallel` (the nested ones, now inside outlined functions)
  becomes an `scf.for` nest, first dimension outermost.
- `scf.parallel` with reductions (`init_vals`, results) and non-positive
  constant steps are rejected with `TCError` (`convert-affine-to-scf` never
  produces them).

Example::

    func.func @relu(%A: memref<?xf32>, %B: memref<?xf32>, %N: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      "scf.parallel"(%c0, %N, %c1) ({
      ^bb0(%i: index):
        %x = memref.load %A[%i] : memref<?xf32>
        memref.store %x, %B[%i] : memref<?xf32>
        scf.reduce
      }) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (index, index, index) -> ()
      func.return
    }

becomes::

    func.func @relu(%A: memref<?xf32>, %B: memref<?xf32>, %N: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c0_1 = arith.constant 0 : index
      %n = arith.maxsi %N, %c0_1 : index
      tcrt.parallel_for @relu_par0(%n) (%A, %B) : (memref<?xf32>, memref<?xf32>)
      func.return
    }
    func.func private @relu_par0(%begin: index, %end: index, %A: memref<?xf32>,
                                 %B: memref<?xf32>) {
      %c1 = arith.constant 1 : index
      scf.for %i = %begin to %end step %c1 {
        %x = memref.load %A[%i] : memref<?xf32>
        memref.store %x, %B[%i] : memref<?xf32>
      }
      func.return
    }
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.conversion.convert_affine_to_scf import IndexBuilder, Value
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tcrt import ParallelForOp
from tcdialect.transforms.ir_values import constant_index


def _outermost_parallels(op: Operation) -> Iterator[scf.ParallelOp]:
    """The `scf.parallel` ops nested in `op` but not in another one, pre-order."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if isinstance(inner, scf.ParallelOp):
                    yield inner
                else:
                    yield from _outermost_parallels(inner)


def _check_supported(op: scf.ParallelOp) -> None:
    if op.initVals or op.res:
        raise TCError(
            "outline-parallel-loops: scf.parallel with reductions is not supported"
        )
    for step in op.step:
        value = constant_index(step)
        if value is not None and value <= 0:
            raise TCError(
                f"outline-parallel-loops: scf.parallel with non-positive step {value}"
            )


def _is_defined_in(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined inside `op` (a result of a nested op or an
    argument of a block in its regions)."""
    if isinstance(value, BlockArgument):
        parent = value.block.parent_op()
    else:
        parent = value.owner
    assert isinstance(parent, Operation | None)
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False


def _used_from_outside(op: scf.ParallelOp) -> list[SSAValue]:
    """Values the outlined body of `op` needs, in capture order (module doc)."""
    # A constant lb0 / step0 is folded into `iv0`, not needed as a value.
    candidates = [
        v for v in (op.lowerBound[0], op.step[0]) if constant_index(v) is None
    ]
    for lb, ub, step in zip(op.lowerBound[1:], op.upperBound[1:], op.step[1:]):
        candidates += [lb, ub, step]
    for inner in op.body.walk():
        candidates += inner.operands
    seen: set[SSAValue] = set()
    result: list[SSAValue] = []
    for v in candidates:
        if v not in seen and not _is_defined_in(v, op):
            seen.add(v)
            result.append(v)
    return result


def _trip_count(op: scf.ParallelOp, b: IndexBuilder) -> SSAValue:
    """`max(0, ceildiv(ub0 - lb0, step0))` for a positive step."""

    def known(v: SSAValue) -> Value:
        c = constant_index(v)
        return v if c is None else c

    lb, ub, step = known(op.lowerBound[0]), known(op.upperBound[0]), known(op.step[0])
    # ceildiv(ub - lb, step) as (ub - lb + step - 1) divsi step: truncating
    # division is enough, since the count is clamped at 0 below.
    if isinstance(step, int):
        if isinstance(lb, int):
            bumped = b.add(ub, step - 1 - lb)
        else:
            bumped = b.add(b.sub(ub, lb), step - 1)
    else:
        bumped = b.add(b.sub(ub, lb), b.sub(step, 1))
    count = b.divsi(bumped, step)
    n = b.value(b.max(count, 0))
    if n.name_hint is None:
        n.name_hint = "n"
    return n


def _for_nest(
    lbs: Sequence[SSAValue],
    ubs: Sequence[SSAValue],
    steps: Sequence[SSAValue],
) -> tuple[scf.ForOp, list[SSAValue], Block]:
    """An `scf.for` nest (first bounds outermost) with empty bodies; returns the
    outer loop, the induction variables and the innermost body block."""
    outer: scf.ForOp | None = None
    block: Block | None = None
    ivs: list[SSAValue] = []
    for lb, ub, step in zip(lbs, ubs, steps, strict=True):
        body = Block(arg_types=[IndexType()])
        loop = scf.ForOp(lb, ub, step, [], body)
        if block is None:
            outer = loop
        else:
            block.add_op(loop)
            block.add_op(scf.YieldOp())
        block = body
        ivs.append(body.args[0])
    assert outer is not None and block is not None
    return outer, ivs, block


def _outline(op: scf.ParallelOp, name: str) -> func.FuncOp:
    """Replace `op` by `tcrt.parallel_for @name`; return the new function."""
    _check_supported(op)
    used = _used_from_outside(op)
    constants = [v for v in used if isinstance(v.owner, arith.ConstantOp)]
    captures = [v for v in used if not isinstance(v.owner, arith.ConstantOp)]

    arg_types: list[Attribute] = [IndexType(), IndexType(), *(c.type for c in captures)]
    entry = Block(arg_types=arg_types)
    begin, end, *capture_args = entry.args
    begin.name_hint, end.name_hint = "begin", "end"
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(captures, capture_args, strict=True):
        new.name_hint = old.name_hint
        mapping[old] = new
    index_constants: dict[int, SSAValue] = {}
    for c in constants:
        assert isinstance(c.owner, Operation)
        clone = c.owner.clone()
        entry.add_op(clone)
        mapping[c] = clone.results[0]
        value = constant_index(c)
        if value is not None and isinstance(c.type, IndexType):
            index_constants.setdefault(value, clone.results[0])

    # The chunk loop over the first dimension.
    top = IndexBuilder(index_constants)
    one = top.value(1)
    entry.add_ops(top.ops)
    chunk_body = Block(arg_types=[IndexType()])
    it = chunk_body.args[0]
    it.name_hint = "it"
    entry.add_op(scf.ForOp(begin, end, one, [], chunk_body))
    entry.add_op(func.ReturnOp())

    lb0 = constant_index(op.lowerBound[0])
    step0 = constant_index(op.step[0])
    b = IndexBuilder(top.constants)
    iv0 = b.value(
        b.add(
            mapping[op.lowerBound[0]] if lb0 is None else lb0,
            b.mul(it, mapping[op.step[0]] if step0 is None else step0),
        )
    )
    chunk_body.add_ops(b.ops)
    par_args = op.body.block.args
    mapping[par_args[0]] = iv0
    if iv0 is it or iv0.name_hint is None:
        # `it` itself when lb0 = 0 and step0 = 1: keep the loop's name.
        iv0.name_hint = par_args[0].name_hint or iv0.name_hint

    # The remaining dimensions as scf.for, then a copy of the body.
    inner = chunk_body
    if len(par_args) > 1:
        nest, ivs, inner = _for_nest(
            [mapping[v] for v in op.lowerBound[1:]],
            [mapping[v] for v in op.upperBound[1:]],
            [mapping[v] for v in op.step[1:]],
        )
        chunk_body.add_op(nest)
        for old, new in zip(par_args[1:], ivs, strict=True):
            new.name_hint = old.name_hint
            mapping[old] = new
    for body_op in op.body.block.ops:
        if isinstance(body_op, scf.ReduceOp):
            continue
        inner.add_op(body_op.clone(value_mapper=mapping))
    inner.add_op(scf.YieldOp())
    if inner is not chunk_body:
        chunk_body.add_op(scf.YieldOp())

    outlined = func.FuncOp(
        name, (arg_types, []), Region(entry), visibility=StringAttr("private")
    )

    count_builder = IndexBuilder()
    n = _trip_count(op, count_builder)
    Rewriter.insert_op(count_builder.ops, InsertPoint.before(op))
    Rewriter.replace_op(op, ParallelForOp(name, n, captures))
    return outlined


def _parallel_to_for(op: scf.ParallelOp) -> None:
    """Replace `op` by an `scf.for` nest running the same iterations."""
    _check_supported(op)
    nest, ivs, inner = _for_nest(op.lowerBound, op.upperBound, op.step)
    body = op.body.block
    terminator = body.last_op
    if isinstance(terminator, scf.ReduceOp):
        Rewriter.erase_op(terminator)
    for old, new in zip(body.args, ivs, strict=True):
        new.name_hint = old.name_hint
    Rewriter.inline_block(body, InsertPoint.at_end(inner), ivs)
    inner.add_op(scf.YieldOp())
    Rewriter.replace_op(op, nest)


def _symbol_names(module: ModuleOp) -> set[str]:
    names: set[str] = set()
    for op in module.ops:
        sym = op.properties.get("sym_name", op.attributes.get("sym_name"))
        if isinstance(sym, StringAttr):
            names.add(sym.data)
    return names


@dataclass(frozen=True)
class OutlineParallelLoopsPass(ModulePass):
    """Outline outermost `scf.parallel` loops into `tcrt.parallel_for` (module doc)."""

    name = "outline-parallel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken = _symbol_names(op)
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            anchor: Operation = function
            k = 0
            for loop in list(_outermost_parallels(function)):
                while f"{function.sym_name.data}_par{k}" in taken:
                    k += 1
                name = f"{function.sym_name.data}_par{k}"
                taken.add(name)
                outlined = _outline(loop, name)
                Rewriter.insert_op(outlined, InsertPoint.after(anchor))
                anchor = outlined
        for loop in [p for p in op.walk() if isinstance(p, scf.ParallelOp)]:
            _parallel_to_for(loop)
