"""Numerics of `convert-affine-to-scf`, run with xDSL's interpreter.

- Random affine expressions (floordiv / ceildiv / mod by positive and
  negative constants, negative values) lowered through `affine.apply` must
  compute Python's exact floor semantics.
- Random `affine.for` bounds (max of several lower results, min of several
  upper results, steps) must give the trip count and induction values of
  `range(max(lbs), min(ubs), step)`.
- Random `affine.if` sets must select the same branch as the constraints.
- Small nests (affine.parallel with groups and steps, affine.for with
  iter_args, affine.if with else, symbolic subscripts) give the same memory
  before lowering (run by a reference interpreter for the affine ops, written
  here from the ops' definitions) and after.
- No `arith.floordivsi` / `ceildivsi` and no affine op is left.
- The nests also give the same memory after `outline-parallel-loops`
  (`tcrt.parallel_for` interpreted as calls on chunks of 3 iterations).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import (
    AffineConstraintExpr,
    AffineConstraintKind,
    AffineExpr,
    AffineMap,
    AffineSet,
)
from xdsl.parser import Parser

from tcdialect.conversion.convert_affine_to_scf import ConvertAffineToScfPass
from tcdialect.diagnostics import TCError
from tcdialect.dialects import affine as tcaffine
from tcdialect.dialects.tcrt import ParallelForOp
from tcdialect.transforms.outline_parallel_loops import OutlineParallelLoopsPass

INDEX = IndexType()

# --------------------------------------------------------------------------
# Interpreter support


def _run_affine_parallel(
    interpreter: Interpreter, op: affine.ParallelOp, args: PythonValues
) -> PythonValues:
    lb_map, ub_map = op.lowerBoundsMap.data, op.upperBoundsMap.data
    n = lb_map.num_dims + lb_map.num_symbols
    lbs = _eval_map(lb_map, args[:n])
    ubs = _eval_map(ub_map, args[n:])

    def grouped(values: list[int], groups: Any, pick: Callable) -> list[int]:
        out, start = [], 0
        for g in groups.get_values():
            out.append(pick(values[start : start + int(g)]))
            start += int(g)
        return out

    lo = grouped(lbs, op.lowerBoundsGroups, max)
    hi = grouped(ubs, op.upperBoundsGroups, min)
    steps = [s.value.data for s in op.steps.data]
    ranges = [range(a, b, s) for a, b, s in zip(lo, hi, steps)]
    for ivs in itertools.product(*ranges):
        interpreter.run_ssacfg_region(op.body, tuple(ivs))
    return ()


@register_impls
class _ExtraFunctions(InterpreterFunctions):
    """Ops the stock interpreter lacks: arith.maxsi/minsi, scf.parallel (run
    sequentially) and tcrt.parallel_for (run in chunks of 3)."""

    @impl(scf.ParallelOp)
    def run_parallel(
        self, interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues
    ) -> PythonValues:
        n = len(op.lowerBound)
        lbs, ubs, steps = args[:n], args[n : 2 * n], args[2 * n : 3 * n]
        ranges = [range(a, b, s) for a, b, s in zip(lbs, ubs, steps)]
        for ivs in itertools.product(*ranges):
            interpreter.run_ssacfg_region(op.body, tuple(ivs))
        return ()

    @impl_terminator(scf.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: scf.ReduceOp, args: PythonValues
    ) -> tuple[ReturnedValues, PythonValues]:
        return ReturnedValues(()), ()

    @impl(ParallelForOp)
    def run_parallel_for(
        self, interpreter: Interpreter, op: ParallelForOp, args: PythonValues
    ) -> PythonValues:
        count, *captures = args
        for begin in range(0, count, 3):
            end = min(begin + 3, count)
            interpreter.call_op(op.callee.string_value(), (begin, end, *captures))
        return ()

    @impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        return (max(args[0], args[1]),)

    @impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        return (min(args[0], args[1]),)


def _eval_map(m: AffineMap, args: Sequence[int]) -> list[int]:
    return m.eval(list(args[: m.num_dims]), list(args[m.num_dims :]))


def _holds(s: AffineSet, args: Sequence[int]) -> bool:
    dims, syms = list(args[: s.num_dims]), list(args[s.num_dims :])
    for c in s.constraints:
        lhs, rhs = c.lhs.eval(dims, syms), c.rhs.eval(dims, syms)
        ok = {
            AffineConstraintKind.ge: lhs >= rhs,
            AffineConstraintKind.le: lhs <= rhs,
            AffineConstraintKind.eq: lhs == rhs,
        }[c.kind]
        if not ok:
            return False
    return True


@register_impls
class _AffineReference(InterpreterFunctions):
    """Reference semantics of the affine ops (symbols, min/max bounds, groups)."""

    @impl(affine.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: affine.ForOp, args: PythonValues
    ) -> PythonValues:
        nlb, nub = len(op.lowerBoundOperands), len(op.upperBoundOperands)
        lb = max(_eval_map(op.lowerBoundMap.data, args[:nlb]))
        ub = min(_eval_map(op.upperBoundMap.data, args[nlb : nlb + nub]))
        values = tuple(args[nlb + nub :])
        for i in range(lb, ub, op.step.value.data):
            values = tuple(interpreter.run_ssacfg_region(op.body, (i, *values)))
        return values

    @impl(affine.ParallelOp)
    def run_parallel(
        self, interpreter: Interpreter, op: affine.ParallelOp, args: PythonValues
    ) -> PythonValues:
        return _run_affine_parallel(interpreter, op, args)

    @impl(tcaffine.ParallelOp)
    def run_tc_parallel(
        self, interpreter: Interpreter, op: affine.ParallelOp, args: PythonValues
    ) -> PythonValues:
        """What `tc-opt` parses (the subclass with the stricter verifier)."""
        return _run_affine_parallel(interpreter, op, args)

    @impl(affine.IfOp)
    def run_if(
        self, interpreter: Interpreter, op: affine.IfOp, args: PythonValues
    ) -> PythonValues:
        region = op.then_region if _holds(op.condition.data, args) else op.else_region
        if not region.blocks:
            return ()
        return tuple(interpreter.run_ssacfg_region(region, ()))

    @impl(tcaffine.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: affine.LoadOp, args: PythonValues
    ) -> PythonValues:
        memref: ShapedArray[Any] = args[0]
        return (memref.load(tuple(_eval_map(op.map.data, args[1:]))),)

    @impl(tcaffine.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: affine.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, memref = args[0], args[1]
        memref.store(tuple(_eval_map(op.map.data, args[2:])), value)
        return ()

    @impl(affine.ApplyOp)
    def run_apply(
        self, interpreter: Interpreter, op: affine.ApplyOp, args: PythonValues
    ) -> PythonValues:
        return tuple(_eval_map(op.map.data, args))

    @impl(affine.MinOp)
    def run_min(
        self, interpreter: Interpreter, op: affine.MinOp, args: PythonValues
    ) -> PythonValues:
        return (min(_eval_map(op.map.data, args)),)

    @impl_terminator(affine.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: affine.YieldOp, args: PythonValues
    ) -> tuple[ReturnedValues, PythonValues]:
        return ReturnedValues(args), ()


def _interpreter(module: ModuleOp, *, affine_reference: bool) -> Interpreter:
    interpreter = Interpreter(module)
    for functions in (
        ArithFunctions(),
        FuncFunctions(),
        ScfFunctions(),
        MemRefFunctions(),
        _ExtraFunctions(),
    ):
        interpreter.register_implementations(functions)
    if affine_reference:
        interpreter.register_implementations(_AffineReference())
    return interpreter


def _lower(module: ModuleOp) -> ModuleOp:
    module.verify()
    ConvertAffineToScfPass().apply(Context(), module)
    module.verify()
    for op in module.walk():
        assert op.dialect_name() != "affine", op.name
        assert not isinstance(op, arith.FloorDivSIOp | arith.CeilDivSIOp), op.name
    return module


def _function(
    name: str,
    num_args: int,
    build: Callable[[Block, Sequence[SSAValue]], Sequence[SSAValue]],
) -> ModuleOp:
    """A module with `func.func @name(index x num_args) -> (index...)`."""
    block = Block(arg_types=[INDEX] * num_args)
    results = build(block, block.args)
    block.add_op(func.ReturnOp(*results))
    f = func.FuncOp(
        name, ([INDEX] * num_args, [r.type for r in results]), Region(block)
    )
    return ModuleOp([f])


# --------------------------------------------------------------------------
# Random expressions

_DIVISORS = [-5, -3, -2, -1, 1, 2, 3, 4, 7]


def _random_expr(rng: random.Random, depth: int, num_dims: int) -> AffineExpr:
    if depth == 0 or rng.random() < 0.2:
        choice = rng.randrange(num_dims + 2)
        if choice < num_dims:
            return AffineExpr.dimension(choice)
        if choice == num_dims:
            return AffineExpr.symbol(0)
        return AffineExpr.constant(rng.randint(-7, 7))
    lhs = _random_expr(rng, depth - 1, num_dims)
    kind = rng.choice(["+", "-", "*", "floordiv", "ceildiv", "mod"])
    if kind in ("+", "-"):
        rhs = _random_expr(rng, depth - 1, num_dims)
        return lhs + rhs if kind == "+" else lhs - rhs
    c = rng.choice(_DIVISORS)
    match kind:
        case "*":
            return lhs * c
        case "floordiv":
            return lhs // c
        case "ceildiv":
            return lhs.ceil_div(c)
        case _:
            return lhs % c


def _python_value(expr: AffineExpr, dims: Sequence[int], syms: Sequence[int]) -> int:
    """Exact value, independent of xDSL's `eval`: Python's floor semantics."""
    from xdsl.ir.affine import (
        AffineBinaryOpExpr,
        AffineBinaryOpKind,
        AffineConstantExpr,
        AffineDimExpr,
        AffineSymExpr,
    )

    match expr:
        case AffineConstantExpr(value=v):
            return v
        case AffineDimExpr(position=p):
            return dims[p]
        case AffineSymExpr(position=p):
            return syms[p]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs, rhs=rhs):
            a = _python_value(lhs, dims, syms)
            b = _python_value(rhs, dims, syms)
            match kind:
                case AffineBinaryOpKind.Add:
                    return a + b
                case AffineBinaryOpKind.Mul:
                    return a * b
                case AffineBinaryOpKind.FloorDiv:
                    return a // b
                case AffineBinaryOpKind.CeilDiv:
                    return -((-a) // b)
                case AffineBinaryOpKind.Mod:
                    return a - b * (a // b)
    raise AssertionError(expr)


_POINTS = [(-9, 4, -1), (0, 0, 0), (7, -13, 5), (-1, -1, -1), (12, 3, -8), (5, 6, 23)]


@pytest.mark.parametrize("seed", range(8))
def test_random_expressions(seed: int) -> None:
    rng = random.Random(seed)
    exprs = [_random_expr(rng, 4, 2) for _ in range(12)]

    def build(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
        results = []
        for e in exprs:
            op = affine.ApplyOp(args, AffineMapAttr(AffineMap(2, 1, (e,))))
            block.add_op(op)
            results.append(op.result)
        return results

    module = _lower(_function("f", 3, build))
    interpreter = _interpreter(module, affine_reference=False)
    for d0, d1, s0 in _POINTS:
        got = interpreter.call_op("f", (d0, d1, s0))
        want = [_python_value(e, (d0, d1), (s0,)) for e in exprs]
        assert list(got) == want, [str(e) for e in exprs]


@pytest.mark.parametrize("seed", range(8))
def test_random_loop_bounds(seed: int) -> None:
    rng = random.Random(100 + seed)
    cases = []
    for _ in range(6):
        lbs = tuple(_random_expr(rng, 2, 2) for _ in range(rng.randint(1, 3)))
        ubs = tuple(_random_expr(rng, 2, 2) for _ in range(rng.randint(1, 3)))
        cases.append((lbs, ubs, rng.choice([1, 2, 3, 5])))

    def build(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
        zero = arith.ConstantOp(IntegerAttr(0, INDEX))
        one = arith.ConstantOp(IntegerAttr(1, INDEX))
        block.add_ops([zero, one])
        results: list[SSAValue] = []
        for lbs, ubs, step in cases:
            body = Block(arg_types=[INDEX, INDEX, INDEX])
            iv, count, total = body.args
            inc = arith.AddiOp(count, one)
            acc = arith.AddiOp(total, iv)
            body.add_ops([inc, acc, affine.YieldOp.get(inc, acc)])
            loop = affine.ForOp.from_region(
                args,
                args,
                [zero, zero],
                [INDEX, INDEX],
                AffineMapAttr(AffineMap(2, 1, lbs)),
                AffineMapAttr(AffineMap(2, 1, ubs)),
                Region(body),
                step,
            )
            block.add_op(loop)
            results += loop.results
        return results

    module = _lower(_function("f", 3, build))
    interpreter = _interpreter(module, affine_reference=False)
    for d0, d1, s0 in _POINTS:
        got = list(interpreter.call_op("f", (d0, d1, s0)))
        want: list[int] = []
        for lbs, ubs, step in cases:
            lb = max(_python_value(e, (d0, d1), (s0,)) for e in lbs)
            ub = min(_python_value(e, (d0, d1), (s0,)) for e in ubs)
            ivs = range(lb, ub, step)
            want += [len(ivs), sum(ivs)]
        assert got == want


@pytest.mark.parametrize("seed", range(6))
def test_random_if_sets(seed: int) -> None:
    rng = random.Random(200 + seed)
    sets = []
    for _ in range(8):
        constraints = tuple(
            AffineConstraintExpr(
                rng.choice([AffineConstraintKind.ge, AffineConstraintKind.eq]),
                _random_expr(rng, 2, 2),
                AffineExpr.constant(rng.randint(-3, 3)),
            )
            for _ in range(rng.randint(0, 3))
        )
        sets.append(AffineSet(2, 1, constraints))

    def build(block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
        results: list[SSAValue] = []
        for s in sets:
            then_block, else_block = Block(), Block()
            one = arith.ConstantOp(IntegerAttr(1, INDEX))
            zero = arith.ConstantOp(IntegerAttr(0, INDEX))
            then_block.add_ops([one, affine.YieldOp.get(one)])
            else_block.add_ops([zero, affine.YieldOp.get(zero)])
            op = affine.IfOp.build(
                operands=[args],
                result_types=[[INDEX]],
                properties={"condition": AffineSetAttr(s)},
                regions=[Region(then_block), Region(else_block)],
            )
            block.add_op(op)
            results.append(op.results[0])
        return results

    module = _lower(_function("f", 3, build))
    interpreter = _interpreter(module, affine_reference=False)
    for point in _POINTS + [(0, 2, 1), (3, 3, 0), (1, 0, 0)]:
        got = list(interpreter.call_op("f", point))
        want = [int(_holds(s, point)) for s in sets]
        assert got == want


# --------------------------------------------------------------------------
# Whole nests, before and after

_NEST = """
func.func @nest(%N: index, %M: index) -> memref<12x12xi64> {
  %buf = memref.alloc() : memref<12x12xi64>
  %z = arith.constant 0 : i64
  affine.for %a = 0 to 12 {
    affine.for %b = 0 to 12 {
      affine.store %z, %buf[%a, %b] : memref<12x12xi64>
    }
  }
  "affine.parallel"(%N, %M, %N) <{reductions = [],
      lowerBoundsMap = affine_map<()[s0, s1] -> (0, s0 - 8, s1 floordiv 3, 0)>,
      lowerBoundsGroups = dense<[2, 2]> : vector<2xi32>,
      upperBoundsMap = affine_map<()[s0] -> (12, s0, 12)>,
      upperBoundsGroups = dense<[2, 1]> : vector<2xi32>,
      steps = [2 : i64, 1 : i64]}> ({
  ^bb0(%i: index, %j: index):
    %r = affine.for %k = affine_map<(d0) -> (d0)>(%i) to min affine_map<(d0)[s0] -> (d0 + 3, 12, s0 + 1)>(%i)[%M] iter_args(%acc = %z) -> (i64) {
      %v = arith.index_cast %k : index to i64
      %s = arith.addi %acc, %v : i64
      affine.yield %s : i64
    }
    "affine.if"(%i, %j, %N) <{condition = affine_set<(d0, d1)[s0] : (d0 - d1 >= 0, s0 - d0 - 2 >= 0)>}> ({
      affine.store %r, %buf[%i, (%j + symbol(%N) * 5) mod 12] : memref<12x12xi64>
      "affine.yield"() : () -> ()
    }, {
      %one = arith.constant 1 : i64
      %t = arith.addi %r, %one : i64
      affine.store %t, %buf[%j, (%i + 5) floordiv 2 - (-%i) ceildiv 4] : memref<12x12xi64>
      "affine.yield"() : () -> ()
    }) : (index, index, index) -> ()
    "affine.yield"() : () -> ()
  }) : (index, index, index) -> ()
  func.return %buf : memref<12x12xi64>
}
"""


def _parse(text: str) -> ModuleOp:
    from tcdialect.tc_opt_main import TcOptMain

    ctx = TcOptMain(args=[]).ctx
    return Parser(ctx, text).parse_module()


@pytest.mark.parametrize(("n", "m"), [(10, 4), (13, -7), (3, 30), (2, -5), (7, 0)])
def test_nest_before_and_after(n: int, m: int) -> None:
    before = _parse(_NEST)
    after = _lower(before.clone())
    want = _interpreter(before, affine_reference=True).call_op("nest", (n, m))[0]
    got = _interpreter(after, affine_reference=False).call_op("nest", (n, m))[0]
    assert got.data == want.data
    assert any(want.data), "the nest should write something"

    # And after outlining: tcrt.parallel_for runs the body in chunks.
    OutlineParallelLoopsPass().apply(Context(), after)
    after.verify()
    assert not any(isinstance(op, scf.ParallelOp) for op in after.walk())
    assert any(isinstance(op, ParallelForOp) for op in after.walk())
    outlined = _interpreter(after, affine_reference=False).call_op("nest", (n, m))[0]
    assert outlined.data == want.data


def test_rejects_vector_ops() -> None:
    module = _parse(
        "func.func @f(%A: memref<?xf32>, %i: index) -> vector<4xf32> {\n"
        "  %v = affine.vector_load %A[%i] : memref<?xf32>, vector<4xf32>\n"
        "  func.return %v : vector<4xf32>\n}"
    )
    with pytest.raises(TCError, match="not supported"):
        ConvertAffineToScfPass().apply(Context(), module)
