"""`convert-tc-to-affine`: lower `tc.def`s to `func.func`s of affine loop nests.

The contract is docs/pipeline.md, "affine stage contract". In short, every
`tc.def` becomes a `func.func` of the same name::

    tc.def @matmul<M, K, N>(A, B) -> (C) {
    ^bb0(%A : !tc.tensor<[M, K], f32>, %B : !tc.tensor<[K, N], f32>):
      %C = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%r_k in [0, K)) : !tc.tensor<[M, N], f32> {
        %0 = tc.read %A[%m, %r_k] : !tc.tensor<[M, K], f32>
        %1 = tc.read %B[%r_k, %n] : !tc.tensor<[K, N], f32>
        %2 = arith.mulf %0, %1 : f32
        tc.yield %2 : f32
      }
      tc.return %C : !tc.tensor<[M, N], f32>
    }

becomes (affine.parallel prints in generic form; shown here in MLIR syntax)::

    func.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>,
                      %M: index, %K: index, %N: index)
        attributes {tc.inputs = ["A", "B"], tc.outputs = ["C"], tc.sizes = ["M", "K", "N"]} {
      affine.parallel (%m, %n) = (0, 0) to (symbol(%M), symbol(%N)) {
        %cst = arith.constant 0.0 : f32
        affine.store %cst, %C[%m, %n] : memref<?x?xf32>
      }
      affine.parallel (%m, %n) = (0, 0) to (symbol(%M), symbol(%N)) {
        affine.for %r_k = 0 to %K {
          %0 = affine.load %A[%m, %r_k] : memref<?x?xf32>
          %1 = affine.load %B[%r_k, %n] : memref<?x?xf32>
          %2 = arith.mulf %0, %1 : f32
          %3 = affine.load %C[%m, %n] : memref<?x?xf32>
          %4 = arith.addf %3, %2 : f32
          affine.store %4, %C[%m, %n] : memref<?x?xf32>
        }
      }
      func.return
    }

Details (beyond docs/pipeline.md):

* All versions of one tensor share one buffer: outputs write their argument,
  temporaries get a `memref.alloc` (extents clamped at 0 with `arith.maxsi`)
  before the first statement that writes them and a `memref.dealloc` before
  `func.return`.
* Affine maps are built programmatically: loop induction variables are
  dims, size arguments are symbols. A bound with `min` (upper) or `max`
  (lower) becomes a multi-result map; any other bound is computed with
  `arith` index ops before the loop nest and passed as an extra symbol. A
  product of sizes or a quotient by a size (``M * P``, ``(N - K) floordiv
  S``: not affine) is computed before the loop nests (`arith.muli`,
  `arith.floordivsi`; the caller checked that divisors are positive) and is
  one symbol of the map: ``to (symbol(%M_x_P))`` with ``%M_x_P = arith.muli
  %M, %P``; the scheduler makes it a derived parameter.
* A read is affine when every subscript is ``sum(c * index) + rest`` with
  ``rest`` a size expression, i.e. built from index constants, `tc.size`,
  loop indices, `arith.addi`/`subi`, `arith.muli` by a constant and
  `arith.floordivsi` of an index-free value by a positive constant. (A
  product of two sizes, or of an index and a size, is not: ``I(i * S)`` in
  generic code is a checked read.) Other reads are
  `memref.load` inside `scf.if` on an in-bounds test of the non-affine
  subscripts; the else branch stores the tensor's 1-based position in
  `tc.checked` into the error flag and yields zero.
* A statement that reads its target's previous value anywhere else than at
  the element being written (or any reduction statement that reads its
  target) reads a snapshot: `memref.alloc` + copy nest before the statement,
  `memref.dealloc` right after it.
* A reduction into a 16-bit float tensor (`f16`, `bf16`) accumulates in
  f32, as `tc.comprehension` specifies: a temporary f32 buffer of the
  target's shape (`memref.alloc`, named ``<T>_acc``) is filled with the
  identity (``op=!``) or the target extended with `arith.extf` (``op=``);
  the reduction nest combines `arith.extf` of the yielded value into it;
  a last nest stores its `arith.truncf` into the target, and the buffer is
  deallocated. For ``S(i) +=! X(i, r)`` with f16 `S` and `X`::

      affine.parallel (%i) = (0) to (symbol(%N)) {
        %zero = arith.constant 0.0 : f32
        affine.store %zero, %S_acc[%i] : memref<?xf32>
      }
      affine.parallel (%i) = (0) to (symbol(%N)) {
        affine.for %r = 0 to %R {
          %x = affine.load %X[%i, %r] : memref<?x?xf16>
          %w = arith.extf %x : f16 to f32
          %a = affine.load %S_acc[%i] : memref<?xf32>
          %s = arith.addf %a, %w fastmath<reassoc> : f32
          affine.store %s, %S_acc[%i] : memref<?xf32>
        }
      }
      affine.parallel (%i) = (0) to (symbol(%N)) {
        %a = affine.load %S_acc[%i] : memref<?xf32>
        %h = arith.truncf %a : f32 to f16
        affine.store %h, %S[%i] : memref<?xf16>
      }
      memref.dealloc %S_acc : memref<?xf32>

  (a 32-bit reduction is also what the GPU lowering's warp shuffles take).
* A scatter-accumulate (``tc.yield %v at [%s...]``) is a nest of
  `affine.for`s over its index space around one statement: the subscripts
  not provably in range (one index whose range lies in the extent) are
  tested; under `scf.if` on the test, `memref.atomic_rmw` (``addf``, or
  ``addi`` for integers) adds the value (an update of the whole tensor for
  the polyhedral model, which commutes with the other atomic adds where the
  target says so: the GPU maps the nest's points to threads, the CPU keeps
  it sequential and lowers the update to a plain load, add and store); the
  else branch stores the target's code into the error flag (no load: such
  writes commute). Without a test the update is the statement. ``+=!``
  zeroes the target first (an `affine.parallel` nest); a 16-bit float
  target accumulates in an f32 buffer, as a reduction does::

      affine.for %k = 0 to %K {
        affine.for %d = 0 to %D {
          %i = arith.index_cast %idx : i32 to index   // %idx: Idx[%k]
          %ok = ... 0 <= %i < %V ...                  // %d needs no test
          scf.if %ok {
            %0 = "memref.atomic_rmw"(%g, %dE, %i, %d) <{kind = 0 : i64}>
                : (f32, memref<?x?xf32>, index, index) -> f32
          } else {
            memref.store %code, %err[%c0] : memref<1xi32>
          }
        }
      }

* `tc.builtin`: ``fdim`` → `arith.cmpf ugt` + `arith.subf` + `arith.select`
  (NaN propagates); every other one (``erfc``, ``exp10``, ``hypot``,
  ``fmod``, ``lgamma``, ``norm3d`` ...) → `func.call` of the C function of its
  name (``erfcf``/``erfc`` for f32/f64 ...), declared once per module as
  ``func.func private``; the targets implement the ones no C library has
  (docs/builtins.md). (xDSL 0.74 has neither `math.erfc` nor `arith.remf`.)
* A `tc.recurrence` becomes an `affine.for` over the step index, marked
  `tc.recurrence` (the schedulers keep it as the sequential outer loop),
  around the loop nests of its statements; they write and read the tensors'
  shared buffers, each comprehension at its step (`tc.insert_step`'s
  dimension is the step index), and a read of an earlier step needs no
  snapshot. Fresh carried tensors are allocated before the loop::

      affine.for %t = 1 to affine_map<()[s0] -> ((s0 + 1))>()[%T] {
        "affine.parallel"(%B, %N) ({ ^bb0(%b: index, %n: index):
          affine.for %r_k = 0 to %N {
            ... affine.load %h[%t + -1, %b, %r_k] ...
            affine.store %s, %p[%t, %b, %n] ...
      } {tc.recurrence}
* Everything in the module other than `tc.def`s is left as it is.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.diagnostics import TCError
from tcdialect.dialects import affine as taffine
from tcdialect.dialects import tc
from tcdialect.dialects.memref import ATOMIC_RMW_KINDS
from tcdialect.symbolic import SizeExpr, SymbolicError, provably_le

DYNAMIC = DYNAMIC_INDEX

# ------------------------------------------------------------------ helpers


def _memref_type(t: tc.TensorType) -> MemRefType:
    shape = [e.const if e.is_constant else DYNAMIC for e in t.extents]
    shape = [max(0, s) if s != DYNAMIC else DYNAMIC for s in shape]
    return MemRefType(tc.signless(t.element_type), shape)


def _is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def _is_half(t: Attribute) -> bool:
    """A 16-bit float: reductions into it accumulate in f32."""
    return isinstance(t, Float16Type | BFloat16Type)


def _int_const(value: int, t: IntegerType) -> arith.ConstantOp:
    """An `arith.constant` of signless type `t` holding `value` modulo 2**width."""
    w = t.width.data
    v = value % (1 << w)
    if w == 1:
        return arith.ConstantOp(IntegerAttr(v, IntegerType(1)))
    if v >= 1 << (w - 1):
        v -= 1 << w
    return arith.ConstantOp(IntegerAttr(v, IntegerType(w)))


def _zero(t: Attribute) -> arith.ConstantOp:
    if _is_float(t):
        return arith.ConstantOp(FloatAttr(0.0, t))  # type: ignore[arg-type]
    assert isinstance(t, IntegerType)
    return _int_const(0, t)


def _identity(kind: str, elem: Attribute) -> arith.ConstantOp:
    """The identity of reduction `kind` for tensor element type `elem`."""
    t = tc.signless(elem)
    if _is_float(t):
        value = {"+": 0.0, "*": 1.0, "min": pymath.inf, "max": -pymath.inf}[kind]
        return arith.ConstantOp(FloatAttr(value, t))  # type: ignore[arg-type]
    assert isinstance(elem, IntegerType) and isinstance(t, IntegerType)
    w = elem.width.data
    if kind == "+":
        return _int_const(0, t)
    if kind == "*":
        return _int_const(1, t)
    if w == 1:
        return _int_const(1 if kind == "min" else 0, t)
    if elem.signedness.data == Signedness.UNSIGNED:
        return _int_const((1 << w) - 1 if kind == "min" else 0, t)
    return _int_const((1 << (w - 1)) - 1 if kind == "min" else -(1 << (w - 1)), t)


def _combine(kind: str, elem: Attribute, acc: SSAValue, x: SSAValue) -> Operation:
    """``acc <kind> x`` in the element type `elem` (signedness from `elem`)."""
    t = tc.signless(elem)
    if _is_float(t):
        cls = {
            "+": arith.AddfOp,
            "*": arith.MulfOp,
            "min": arith.MinimumfOp,
            "max": arith.MaximumfOp,
        }[kind]
        # TC treats reductions as associative and commutative (TC-LANGUAGE
        # §4.2): `reassoc` lets LLVM reorder (vectorise) them. A min or max
        # also leaves the sign of a zero result open (`nsz`; NumPy's
        # minimum/maximum, the reference, return either zero depending on
        # the order of the operands), which spares x86 the ordering of -0
        # and +0 (docs/perf/lowering.md). NaNs still propagate. Nothing else
        # in the statement is relaxed.
        flags = [FastMathFlag.REASSOC]
        if kind in ("min", "max"):
            flags.append(FastMathFlag.NO_SIGNED_ZEROS)
        return cls(acc, x, arith.FastMathFlagsAttr(flags))
    assert isinstance(elem, IntegerType)
    unsigned = elem.signedness.data == Signedness.UNSIGNED or elem.width.data == 1
    if kind == "+":
        return arith.AddiOp(acc, x)
    if kind == "*":
        return arith.MuliOp(acc, x)
    if kind == "min":
        return arith.MinUIOp(acc, x) if unsigned else arith.MinSIOp(acc, x)
    return arith.MaxUIOp(acc, x) if unsigned else arith.MaxSIOp(acc, x)


def _atom_expr(atom: object, coeff: int) -> SizeExpr:
    return SizeExpr(((atom, coeff),), 0)  # type: ignore[arg-type]


def _alternatives(e: SizeExpr, kind: str, limit: int = 16) -> list[SizeExpr] | None:
    """Expressions free of `kind` atoms whose `kind` (min/max) is `e`, or None."""
    other = "max" if kind == "min" else "min"
    alts = [SizeExpr.lit(e.const)]
    for atom, c in e.terms:
        k = atom.kind
        if k in ("sym", "floordiv", "mul", "div"):
            parts = [_atom_expr(atom, c)]
        elif (k == kind and c > 0) or (k == other and c < 0):
            parts = []
            for arg in atom.args:
                sub = _alternatives(arg * c, kind, limit)
                if sub is None:
                    return None
                parts.extend(sub)
        else:
            return None
        alts = [a + p for a in alts for p in parts]
        if len(alts) > limit:
            return None
    return alts


class _Symbols:
    """The symbol operands of one affine map under construction.

    A product of sizes or a quotient by a size (not affine) is computed by
    `materialize` and is a symbol of its own."""

    def __init__(
        self,
        sizes: dict[str, SSAValue],
        materialize: Callable[[SizeExpr], SSAValue] | None = None,
    ):
        self.sizes = sizes
        self.materialize = materialize
        self.values: list[SSAValue] = []

    def index(self, v: SSAValue) -> int:
        for i, x in enumerate(self.values):
            if x is v:
                return i
        self.values.append(v)
        return len(self.values) - 1

    def expr(self, e: SizeExpr) -> AffineExpr | None:
        """`e` as an affine expression of symbols; None if it has min/max."""
        out = AffineExpr.constant(e.const)
        for atom, c in e.terms:
            if atom.kind == "sym":
                if atom.name not in self.sizes:
                    raise TCError(f"convert-tc-to-affine: unknown size '{atom.name}'")
                x = AffineExpr.symbol(self.index(self.sizes[atom.name]))
            elif atom.kind == "floordiv":
                inner = self.expr(atom.args[0])
                if inner is None:
                    return None
                x = inner // atom.divisor
            elif atom.kind in ("mul", "div") and self.materialize is not None:
                value = self.materialize(SizeExpr(((atom, 1),), 0))
                x = AffineExpr.symbol(self.index(value))
            else:
                return None
            out = out + x * c
        return out


# ------------------------------------------------------- subscript analysis

#: ``sum(coeff * index_arg) + rest``: coefficients by block-argument number
#: (`STEP` for the step index of the enclosing `tc.recurrence`).
Affine = tuple[dict[int, int], SizeExpr]

STEP = -1


def _trace(
    v: SSAValue, block: Block, memo: dict[SSAValue, Affine | None]
) -> Affine | None:
    """The affine form of index value `v` in a comprehension body, or None.

    Iterative (operands first, from an explicit stack): a subscript of
    thousands of terms is a chain of as many ops."""
    visiting: set[SSAValue] = set()
    stack = [v]
    while stack:
        x = stack[-1]
        if x in memo:
            stack.pop()
            continue
        pending = [a for a in _traced_operands(x) if a not in memo]
        if pending and x not in visiting:
            visiting.add(x)
            stack.extend(pending)
            continue
        stack.pop()
        # (an operand still pending here is on a cycle: no affine form)
        memo[x] = _form(x, block, memo)
    return memo[v]


_TRACED = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.FloorDivSIOp)


def _traced_operands(v: SSAValue) -> tuple[SSAValue, ...]:
    op = v.owner
    return tuple(op.operands) if isinstance(op, _TRACED) else ()


def _form(
    v: SSAValue, block: Block, memo: dict[SSAValue, Affine | None]
) -> Affine | None:
    """`_trace` of `v` once its operands' forms are in `memo`."""
    if isinstance(v, BlockArgument):
        if v.block is not block:
            step = isinstance(v.block.parent_op(), tc.RecurrenceOp) and v.index == 0
            return ({STEP: 1}, SizeExpr.lit(0)) if step else None
        return ({v.index: 1}, SizeExpr.lit(0))
    op = v.owner
    assert isinstance(op, Operation)
    if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, IndexType):
        val = op.value
        if not isinstance(val, IntegerAttr):
            return None
        return ({}, SizeExpr.lit(val.value.data))
    if isinstance(op, tc.SizeOp):
        return ({}, SizeExpr.sym(op.size.data))
    if not isinstance(op, _TRACED):
        return None
    a, b = memo.get(op.operands[0]), memo.get(op.operands[1])
    if a is None or b is None:
        return None
    if not isinstance(op, arith.FloorDivSIOp):
        return _combine_affine(op, a, b)
    d = b[1].constant_value()
    if a[0] or b[0] or d is None or d <= 0:
        return None
    return ({}, a[1].floordiv(d))


def _combine_affine(op: Operation, a: Affine, b: Affine) -> Affine | None:
    """The form of ``a op b``; None where it is not affine (a product of
    sizes is not: such subscripts are read like data-dependent ones)."""
    (ca, ra), (cb, rb) = a, b
    if isinstance(op, arith.MuliOp) and not (ra.is_constant or rb.is_constant):
        return None
    try:
        if isinstance(op, arith.AddiOp | arith.SubiOp):
            sign = 1 if isinstance(op, arith.AddiOp) else -1
            coeffs = dict(ca)
            for k, c in cb.items():
                coeffs[k] = coeffs.get(k, 0) + sign * c
            return {k: c for k, c in coeffs.items() if c}, ra + rb * sign
        # muli
        if not ca and ra.is_constant:
            k = ra.const
            return {i: c * k for i, c in cb.items() if c * k}, rb * k
        if not cb and rb.is_constant:
            k = rb.const
            return {i: c * k for i, c in ca.items() if c * k}, ra * k
        if not ca and not cb:
            return {}, ra * rb
    except SymbolicError:
        return None
    return None


# ------------------------------------------------------------ the lowering


@dataclass
class _Tensor:
    name: str
    type: tc.TensorType
    kind: str  # "input" | "output" | "temp"
    buffer: SSAValue | None = None


@dataclass
class _Stmt:
    op: tc.ComprehensionOp
    affine: dict[SSAValue, Affine | None] = field(default_factory=dict)
    #: In a `tc.recurrence`: it and the step dimension of the target.
    step: tuple[tc.RecurrenceOp, int] | None = None


#: Lower and upper bound of an `affine.for`: map results and symbol operands.
_ForBounds = tuple[
    tuple[list[AffineExpr], list[SSAValue]], tuple[list[AffineExpr], list[SSAValue]]
]


class _DefLowering:
    def __init__(self, d: tc.DefOp, decls: _Declarations):
        self.d = d
        self.decls = decls
        self.fname = d.sym_name.data
        self.tensors: dict[str, _Tensor] = {}
        self.value_tensor: dict[SSAValue, str] = {}
        self.checked: list[str] = []
        self.stmts: list[_Stmt] = []
        self.cache: dict[str, SSAValue] = {}
        self.sizes: dict[str, SSAValue] = {}
        #: While a recurrence is emitted: before its loop, and its index.
        self.hoist: Builder | None = None
        self.step_iv: SSAValue | None = None

    def error(self, msg: str) -> TCError:
        return TCError(f"convert-tc-to-affine: @{self.fname}: {msg}")

    # ----------------------------------------------------------- analysis
    def analyze(self) -> None:
        d = self.d
        for name, arg in zip(d.input_names, d.body.block.args, strict=True):
            t = arg.type
            assert isinstance(t, tc.TensorType)
            self.tensors[name] = _Tensor(name, t, "input")
            self.value_tensor[arg] = name
        current: dict[str, SSAValue] = {
            n: a for n, a in zip(d.input_names, d.body.block.args)
        }
        outputs = set(d.output_names)
        for op in _flat_ops(d.body.block):
            if isinstance(op, tc.ReturnOp):
                break
            if self.recurrence_op(op, current):
                continue
            if not isinstance(op, tc.ComprehensionOp):
                if op.regions or not (
                    op.dialect_name() in ("arith", "math") or isinstance(op, tc.SizeOp)
                ):
                    raise self.error(
                        f"unsupported operation '{op.name}' in the body of a tc.def"
                    )
                continue
            target = op.target.data
            if target in self.tensors and self.tensors[target].kind == "input":
                raise self.error(f"input '{target}' cannot be written")
            full_type = op.result_type
            step = _insert_step(op)
            if step is not None:
                full_type = step.result.type
                assert isinstance(full_type, tc.TensorType)
            if target not in self.tensors:
                kind = "output" if target in outputs else "temp"
                self.tensors[target] = _Tensor(target, full_type, kind)
            elif self.tensors[target].type != full_type:
                raise self.error(
                    f"'{target}' is written with types {self.tensors[target].type} "
                    f"and {full_type}"
                )
            if op.into is not None and op.into is not current.get(target):
                raise self.error(
                    f"the statement writing '{target}' accumulates into a value that "
                    f"is not the latest value of '{target}'"
                )
            stmt = _Stmt(op)
            block = op.body.block
            if op.is_scatter and target not in self.checked:
                self.checked.append(target)
            for inner in block.walk():
                if inner.regions:
                    raise self.error(
                        f"unsupported operation '{inner.name}' with regions"
                    )
                if isinstance(inner, tc.ReadOp):
                    src = inner.tensor
                    name = self.value_tensor.get(src)
                    if name is None or current.get(name) is not src:
                        raise self.error(
                            f"the statement writing '{target}' reads a value that is "
                            f"not the latest value of a tensor"
                        )
                    forms = [_trace(i, block, stmt.affine) for i in inner.indices]
                    if any(f is None for f in forms) and name not in self.checked:
                        self.checked.append(name)
                elif inner.dialect_name() not in ("arith", "math") and not isinstance(
                    inner, tc.SizeOp | tc.BuiltinOp | tc.YieldOp
                ):
                    raise self.error(
                        f"unsupported operation '{inner.name}' in a tc.comprehension"
                    )
            self.stmts.append(stmt)
            current[target] = op.result
            self.value_tensor[op.result] = target
            if step is not None:
                rec = step.parent_op()
                assert isinstance(rec, tc.RecurrenceOp)
                stmt.step = (rec, step.step_dim)
                if op.into is not None:
                    raise self.error(
                        f"the statement writing '{target}' in a recurrence "
                        f"accumulates into an earlier value: not supported"
                    )
        ret = d.return_op
        for name, v in zip(d.output_names, ret.values, strict=True):
            if self.value_tensor.get(v) != name or name not in self.tensors:
                raise self.error(
                    f"output '{name}' is not the result of a statement on it"
                )
            if current[name] is not v:
                raise self.error(
                    f"tc.return does not return the final value of '{name}'"
                )

    def recurrence_op(self, op: Operation, current: dict[str, SSAValue]) -> bool:
        """Track the values of `tc.recurrence`, `tc.insert_step` and
        `tc.next` (False for other ops)."""
        if isinstance(op, tc.RecurrenceOp):
            for name, arg in zip(op.tensor_names, op.body.block.args[1:]):
                if name in self.tensors and self.tensors[name].kind == "input":
                    raise self.error(f"input '{name}' cannot be written")
                self.value_tensor[arg] = name
                current[name] = arg
            return True
        if isinstance(op, tc.InsertStepOp):
            name = self.value_tensor.get(op.slice)
            if name is None or current.get(name) is not op.slice:
                raise self.error("tc.insert_step of a value that is not a statement's")
            if self.value_tensor.get(op.tensor) != name:
                raise self.error(f"tc.insert_step of '{name}' into another tensor")
            self.value_tensor[op.result] = name
            current[name] = op.result
            return True
        if isinstance(op, tc.NextOp):
            rec = op.parent_op()
            assert isinstance(rec, tc.RecurrenceOp)
            for name, v, r in zip(rec.tensor_names, op.values, rec.res):
                if current.get(name) is not v:
                    raise self.error(f"tc.next does not carry the last '{name}'")
                self.value_tensor[r] = name
                current[name] = r
            return True
        if isinstance(op.parent_op(), tc.RecurrenceOp) and not isinstance(
            op, tc.ComprehensionOp
        ):
            raise self.error(f"unsupported operation '{op.name}' in a tc.recurrence")
        return False

    # ------------------------------------------------------ size values
    def materialize(self, b: Builder, e: SizeExpr) -> SSAValue:
        """`e` computed with arith index ops at the function level (cached;
        before the recurrence's loop while one is emitted)."""
        b = self.hoist or b
        key = str(e)
        if key in self.cache:
            return self.cache[key]
        if e.is_constant:
            v = b.insert(arith.ConstantOp(IntegerAttr(e.const, IndexType()))).result
            self.cache[key] = v
            return v
        acc: SSAValue | None = None
        for atom, c in e.terms:
            if atom.kind == "sym":
                x = self.sizes[atom.name]
            elif atom.kind == "floordiv":
                inner = self.materialize(b, atom.args[0])
                dv = self.materialize(b, SizeExpr.lit(atom.divisor))
                x = b.insert(arith.FloorDivSIOp(inner, dv)).result
            elif atom.kind == "mul":
                factors = [self.materialize(b, a) for a in atom.args]
                x = factors[0]
                for y in factors[1:]:
                    x = b.insert(arith.MuliOp(x, y)).result
            elif atom.kind == "div":
                # (the caller checked that the divisor is positive:
                # `tcdialect.arguments.check_divisors`)
                num, den = (self.materialize(b, a) for a in atom.args)
                x = b.insert(arith.FloorDivSIOp(num, den)).result
            else:
                args = [self.materialize(b, a) for a in atom.args]
                x = args[0]
                for y in args[1:]:
                    cls = arith.MinSIOp if atom.kind == "min" else arith.MaxSIOp
                    x = b.insert(cls(x, y)).result
            if c != 1:
                k = self.materialize(b, SizeExpr.lit(c))
                x = b.insert(arith.MuliOp(x, k)).result
            acc = x if acc is None else b.insert(arith.AddiOp(acc, x)).result
        assert acc is not None
        if e.const:
            k = self.materialize(b, SizeExpr.lit(e.const))
            acc = b.insert(arith.AddiOp(acc, k)).result
        self.cache[key] = acc
        return acc

    def extent(self, b: Builder, e: SizeExpr) -> SSAValue:
        """The extent `e` clamped at 0, as an index value."""
        v = self.materialize(b, e)
        if e.is_constant:
            return self.materialize(b, SizeExpr.lit(max(0, e.const)))
        key = f"max(0, {e})"
        if key not in self.cache:
            zero = self.materialize(b, SizeExpr.lit(0))
            hb = self.hoist or b
            self.cache[key] = hb.insert(arith.MaxSIOp(v, zero)).result
        return self.cache[key]

    def bound(
        self, b: Builder, e: SizeExpr, kind: str
    ) -> tuple[list[AffineExpr], list[SSAValue]]:
        """Map results (their min for upper, max for lower bounds) and symbols."""
        syms = _Symbols(self.sizes, lambda x: self.materialize(b, x))
        alts = _alternatives(e, kind)
        if alts is not None:
            exprs = [syms.expr(a) for a in alts]
            if all(x is not None for x in exprs):
                return [x for x in exprs if x is not None], syms.values
        syms = _Symbols(self.sizes)
        v = self.materialize(b, e)
        return [AffineExpr.symbol(syms.index(v))], syms.values

    def alloc(self, b: Builder, t: tc.TensorType, name: str) -> SSAValue:
        mt = _memref_type(t)
        dyn = [self.extent(b, e) for e in t.extents if not e.is_constant]
        op = b.insert(memref.AllocOp(dyn, [], mt))
        op.memref.name_hint = name
        return op.memref

    # ---------------------------------------------------------- loops
    def parallel(
        self, b: Builder, extents: Sequence[SizeExpr], names: Sequence[str | None]
    ) -> tuple[Builder, list[SSAValue]]:
        """An `affine.parallel` over ``[0, extent)`` per dim; builder inside it."""
        if not extents:
            return b, []
        ub_exprs: list[AffineExpr] = []
        groups: list[int] = []
        syms = _Symbols(self.sizes)
        for e in extents:
            exprs, values = self.bound(b, e, "min")
            remap = [AffineExpr.symbol(syms.index(v)) for v in values]
            ub_exprs.extend(x.replace_dims_and_symbols([], remap) for x in exprs)
            groups.append(len(exprs))
        n = len(extents)
        block = Block(arg_types=[IndexType()] * n)
        for a, nm in zip(block.args, names):
            if nm:
                a.name_hint = nm
        block.add_op(affine.YieldOp.get())
        op = taffine.parallel_op(
            syms.values,
            AffineMap(0, 0, tuple(AffineExpr.constant(0) for _ in range(n))),
            [1] * n,
            AffineMap(0, len(syms.values), tuple(ub_exprs)),
            groups,
            [1] * n,
            Region(block),
        )
        b.insert(op)
        terminator = block.last_op
        assert terminator is not None
        return Builder(InsertPoint.before(terminator)), list(block.args)

    def for_loop(
        self, fb: Builder, bounds: _ForBounds, name: str | None
    ) -> tuple[Builder, SSAValue]:
        """An `affine.for` at `fb` with bounds from `for_bounds`."""
        (lo_exprs, lo_syms), (hi_exprs, hi_syms) = bounds
        block = Block(arg_types=[IndexType()])
        if name:
            block.args[0].name_hint = name
        block.add_op(affine.YieldOp.get())
        op = affine.ForOp.from_region(
            lo_syms,
            hi_syms,
            [],
            [],
            AffineMapAttr(AffineMap(0, len(lo_syms), tuple(lo_exprs))),
            AffineMapAttr(AffineMap(0, len(hi_syms), tuple(hi_exprs))),
            Region(block),
        )
        fb.insert(op)
        terminator = block.last_op
        assert terminator is not None
        return Builder(InsertPoint.before(terminator)), block.args[0]

    def copy_nest(
        self, b: Builder, t: tc.TensorType, src: SSAValue, dst: SSAValue
    ) -> None:
        ib, ivs = self.parallel(b, t.extents, [None] * t.rank)
        x = ib.insert(taffine.LoadOp(src, ivs)).result
        ib.insert(taffine.StoreOp(x, dst, ivs))

    # --------------------------------------------------------- emission
    def lower(self) -> func.FuncOp:
        self.analyze()
        d = self.d
        in_types = [_memref_type(t) for t in d.input_types]
        out_types = [_memref_type(t) for t in d.output_types]
        flag_types: list[Attribute] = [MemRefType(i32, [1])] if self.checked else []
        size_names = list(d.size_names)
        arg_types = [
            *in_types,
            *out_types,
            *flag_types,
            *[IndexType()] * len(size_names),
        ]
        entry = Block(arg_types=arg_types)
        args = list(entry.args)
        names = [*d.input_names, *d.output_names]
        for a, n in zip(args, names):
            a.name_hint = n
        for name, a in zip(names, args):
            self.tensors[name].buffer = a
        pos = len(names)
        self.flag: SSAValue | None = None
        if self.checked:
            self.flag = args[pos]
            self.flag.name_hint = "err"
            pos += 1
        for n, a in zip(size_names, args[pos:]):
            a.name_hint = n
            self.sizes[n] = a
        b = Builder(InsertPoint.at_end(entry))
        self.outer_map: dict[SSAValue, SSAValue] = {}
        temps: list[SSAValue] = []
        for op in d.body.block.ops:
            if isinstance(op, tc.ReturnOp):
                break
            if isinstance(op, tc.ComprehensionOp | tc.RecurrenceOp):
                continue
            self.clone_simple(b, op, self.outer_map)
        fb = b
        rec: tc.RecurrenceOp | None = None
        for n, stmt in enumerate(self.stmts):
            here = stmt.step[0] if stmt.step is not None else None
            if here is not rec:
                b, rec = self.enter_recurrence(fb, here, self.stmts[n:], temps), here
            t = self.tensors[stmt.op.target.data]
            if t.buffer is None:
                t.buffer = self.alloc(fb, t.type, t.name)
                temps.append(t.buffer)
            self.statement(b, stmt, t)
        b = fb
        self.hoist = self.step_iv = None
        for buf in temps:
            b.insert(memref.DeallocOp.get(buf))
        b.insert(func.ReturnOp())
        f = func.FuncOp(self.fname, (arg_types, []), Region(entry))
        f.attributes["tc.inputs"] = ArrayAttr([StringAttr(n) for n in d.input_names])
        f.attributes["tc.outputs"] = ArrayAttr([StringAttr(n) for n in d.output_names])
        f.attributes["tc.sizes"] = ArrayAttr([StringAttr(n) for n in size_names])
        if self.checked:
            f.attributes["tc.checked"] = ArrayAttr(
                [StringAttr(n) for n in self.checked]
            )
        _dce(f)
        return f

    def enter_recurrence(
        self,
        fb: Builder,
        rec: tc.RecurrenceOp | None,
        stmts: list[_Stmt],
        temps: list[SSAValue],
    ) -> Builder:
        """Leave the recurrence being emitted, if any, and start `rec`'s
        `affine.for` over the step index (its fresh tensors allocated
        before it); the builder for the statements."""
        self.hoist = self.step_iv = None
        if rec is None:
            return fb
        for stmt in stmts:
            if stmt.step is None or stmt.step[0] is not rec:
                break
            t = self.tensors[stmt.op.target.data]
            if t.buffer is None:
                t.buffer = self.alloc(fb, t.type, t.name)
                temps.append(t.buffer)
        lo, hi = rec.range
        bounds = (self.bound(fb, lo, "max"), self.bound(fb, hi, "min"))
        b, iv = self.for_loop(fb, bounds, rec.step.name_hint)
        loop = iv.owner.parent_op() if isinstance(iv, BlockArgument) else None
        assert loop is not None
        loop.attributes["tc.recurrence"] = UnitAttr()
        self.hoist = Builder(InsertPoint.before(loop))
        self.step_iv = iv
        return b

    def clone_simple(
        self, b: Builder, op: Operation, vmap: dict[SSAValue, SSAValue]
    ) -> None:
        if isinstance(op, tc.SizeOp):
            vmap[op.result] = self.sizes[op.size.data]
            return
        new = op.clone(value_mapper=vmap)
        b.insert(new)

    def statement(self, b: Builder, stmt: _Stmt, t: _Tensor) -> None:
        op = stmt.op
        block = op.body.block
        rank = op.num_output_indices
        kind = op.reduction
        elem = t.type.element_type
        assert t.buffer is not None
        ranges = op.ranges
        iv_names = [a.name_hint for a in block.args]

        # Reads of the target's previous value: in place or from a snapshot?
        prev = op.into if op.into is not None else None
        if prev is None:
            for inner in block.walk():
                if (
                    isinstance(inner, tc.ReadOp)
                    and self.value_tensor.get(inner.tensor) == t.name
                ):
                    prev = inner.tensor
                    break
        snapshot: SSAValue | None = None
        if prev is not None and self.reads_elsewhere(
            stmt, prev, kind is not None or op.is_scatter
        ):
            snapshot = self.alloc(b, t.type, f"{t.name}_prev")
            self.copy_nest(b, t.type, t.buffer, snapshot)

        # Function-level values needed inside the nest: extents of checked reads.
        dims: dict[str, list[SSAValue]] = {}
        for inner in block.walk():
            if isinstance(inner, tc.ReadOp):
                name = self.value_tensor[inner.tensor]
                if name not in dims and any(
                    stmt.affine.get(i) is None for i in inner.indices
                ):
                    dims[name] = [
                        self.materialize(b, e) for e in self.tensors[name].type.extents
                    ]
        zero_idx = self.materialize(b, SizeExpr.lit(0)) if dims else None
        if op.is_scatter:
            self.scatter(b, stmt, t, snapshot, dims)
            return

        out_extents = [hi for _, hi in ranges[:rank]]
        # Where the reduction accumulates: the target, or for a 16-bit float
        # target an f32 buffer of its shape (in a recurrence, of one step's
        # slice: the step dimension left out).
        acc_buf, acc_elem = t.buffer, elem
        acc_step: _Stmt | None = stmt
        if kind is not None and _is_half(elem):
            acc_elem = Float32Type()
            acc_extents = list(t.type.extents)
            if stmt.step is not None:
                del acc_extents[stmt.step[1]]
            acc_buf = self.alloc(
                b, tc.TensorType(acc_extents, acc_elem), f"{t.name}_acc"
            )
            acc_step = None
            if not op.init:
                ib, ivs = self.parallel(b, out_extents, iv_names[:rank])
                at = self.at_step(stmt, ivs)
                x = ib.insert(taffine.LoadOp(t.buffer, at)).result
                wide = ib.insert(arith.ExtFOp(x, acc_elem)).result
                ib.insert(taffine.StoreOp(wide, acc_buf, ivs))
        if kind is not None and op.init:
            ib, ivs = self.parallel(b, out_extents, iv_names[:rank])
            ident = ib.insert(_identity(kind, acc_elem)).result
            ib.insert(taffine.StoreOp(ident, acc_buf, self.at_step(acc_step, ivs)))

        # Bounds that need arith ops are computed before the nest.
        red_bounds = [
            (self.bound(b, lo, "max"), self.bound(b, hi, "min"))
            for lo, hi in ranges[rank:]
        ]
        ib, ivs = self.parallel(b, out_extents, iv_names[:rank])
        ivs = list(ivs)
        for bounds, name in zip(red_bounds, iv_names[rank:]):
            ib, iv = self.for_loop(ib, bounds, name)
            ivs.append(iv)

        vmap = self.body(ib, stmt, t, ivs, snapshot, dims, zero_idx)
        result = vmap[op.yield_op.value]
        out_ivs = self.at_step(stmt, ivs[:rank])
        if kind is None:
            ib.insert(taffine.StoreOp(result, t.buffer, out_ivs))
        else:
            if acc_elem != elem:
                result = ib.insert(arith.ExtFOp(result, acc_elem)).result
            acc_ivs = self.at_step(acc_step, ivs[:rank])
            acc = ib.insert(taffine.LoadOp(acc_buf, acc_ivs)).result
            new = ib.insert(_combine(kind, acc_elem, acc, result)).results[0]
            ib.insert(taffine.StoreOp(new, acc_buf, acc_ivs))
        self._finish(b, t, acc_buf, elem, out_extents, iv_names[:rank], snapshot, stmt)

    def body(
        self,
        ib: Builder,
        stmt: _Stmt,
        t: _Tensor,
        ivs: list[SSAValue],
        snapshot: SSAValue | None,
        dims: dict[str, list[SSAValue]],
        zero_idx: SSAValue | None,
    ) -> dict[SSAValue, SSAValue]:
        """Clone the body of `stmt` (but its yield) at `ib` with the loop
        indices `ivs`; return the value map."""
        block = stmt.op.body.block
        vmap: dict[SSAValue, SSAValue] = dict(self.outer_map)
        vmap.update(zip(block.args, ivs))
        if stmt.step is not None and self.step_iv is not None:
            vmap[stmt.step[0].step] = self.step_iv  # the step index as a value
        for inner in block.ops:
            if isinstance(inner, tc.YieldOp):
                break
            elif isinstance(inner, tc.SizeOp):
                vmap[inner.result] = self.sizes[inner.size.data]
            elif isinstance(inner, tc.ReadOp):
                name = self.value_tensor[inner.tensor]
                buf = self.tensors[name].buffer
                if snapshot is not None and name == t.name:
                    buf = snapshot
                assert buf is not None
                v = self.read(
                    ib, stmt, inner, name, buf, ivs, vmap, dims.get(name), zero_idx
                )
                v.name_hint = inner.result.name_hint
                vmap[inner.result] = v
            elif isinstance(inner, tc.BuiltinOp):
                v = self.builtin(ib, inner, [vmap[a] for a in inner.args])
                v.name_hint = inner.result.name_hint
                vmap[inner.result] = v
            else:
                ib.insert(inner.clone(value_mapper=vmap))
        return vmap

    def scatter(
        self,
        b: Builder,
        stmt: _Stmt,
        t: _Tensor,
        snapshot: SSAValue | None,
        dims: dict[str, list[SSAValue]],
    ) -> None:
        """A scatter-accumulate (see the module docstring)."""
        op = stmt.op
        block = op.body.block
        elem = t.type.element_type
        assert t.buffer is not None and self.flag is not None
        acc_buf, acc_elem = t.buffer, elem
        extents = list(t.type.extents)
        if _is_half(elem):
            acc_elem = Float32Type()
            acc_buf = self.alloc(b, tc.TensorType(extents, acc_elem), f"{t.name}_acc")
        if acc_buf is not t.buffer and not op.init:
            ib, ivs = self.parallel(b, extents, [None] * len(extents))
            x = ib.insert(taffine.LoadOp(t.buffer, ivs)).result
            wide = ib.insert(arith.ExtFOp(x, acc_elem)).result
            ib.insert(taffine.StoreOp(wide, acc_buf, ivs))
        elif op.init:
            ib, ivs = self.parallel(b, extents, [None] * len(extents))
            zero = ib.insert(_identity("+", acc_elem)).result
            ib.insert(taffine.StoreOp(zero, acc_buf, ivs))
        bounds = [
            (self.bound(b, lo, "max"), self.bound(b, hi, "min")) for lo, hi in op.ranges
        ]
        extent_values = [self.materialize(b, e) for e in extents]
        zero_idx = self.materialize(b, SizeExpr.lit(0))
        ib, ivs = b, []
        for bnds, a in zip(bounds, block.args):
            ib, iv = self.for_loop(ib, bnds, a.name_hint)
            ivs.append(iv)
        vmap = self.body(ib, stmt, t, ivs, snapshot, dims, zero_idx)
        yielded = op.yield_op
        value = vmap[yielded.value]
        subs = [vmap[i] for i in yielded.indices]
        ok: SSAValue | None = None
        for i, x, n, e in zip(yielded.indices, subs, extent_values, extents):
            form = _trace(i, block, stmt.affine)
            if form is not None and _in_range(form, op.ranges, e):
                continue
            ge = ib.insert(arith.CmpiOp(x, zero_idx, "sge")).result
            lt = ib.insert(arith.CmpiOp(x, n, "slt")).result
            in_range = ib.insert(arith.AndIOp(ge, lt)).result
            ok = (
                in_range if ok is None else ib.insert(arith.AndIOp(ok, in_range)).result
            )
        then_block, else_block = Block(), Block()
        tb = ib if ok is None else Builder(InsertPoint.at_end(then_block))
        if acc_elem != elem:
            value = tb.insert(arith.ExtFOp(value, acc_elem)).result
        add = "addf" if _is_float(tc.signless(acc_elem)) else "addi"
        tb.insert(
            memref.AtomicRMWOp.build(
                operands=[value, acc_buf, subs],
                result_types=[value.type],
                properties={"kind": IntegerAttr(ATOMIC_RMW_KINDS.index(add), i64)},
            )
        )
        if ok is not None:
            tb.insert(scf.YieldOp())
            eb = Builder(InsertPoint.at_end(else_block))
            code = eb.insert(_int_const(self.checked.index(t.name) + 1, i32)).result
            c0 = eb.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
            eb.insert(memref.StoreOp.get(code, self.flag, [c0]))
            eb.insert(scf.YieldOp())
            ib.insert(scf.IfOp(ok, [], Region(then_block), Region(else_block)))
        self._finish(b, t, acc_buf, elem, extents, [None] * len(extents), snapshot)

    def _finish(
        self,
        b: Builder,
        t: _Tensor,
        acc_buf: SSAValue,
        elem: Attribute,
        extents: Sequence[SizeExpr],
        names: Sequence[str | None],
        snapshot: SSAValue | None,
        stmt: _Stmt | None = None,
    ) -> None:
        """After a statement: round a float32 accumulator (`acc_buf`, when it
        is not the target's buffer) into the 16-bit target (at `stmt`'s step
        in a recurrence), and free it and the snapshot."""
        if acc_buf is not t.buffer:
            assert t.buffer is not None
            ib, ivs = self.parallel(b, extents, names)
            x = ib.insert(taffine.LoadOp(acc_buf, ivs)).result
            narrow = ib.insert(arith.TruncFOp(x, elem)).result
            ib.insert(taffine.StoreOp(narrow, t.buffer, self.at_step(stmt, ivs)))
            b.insert(memref.DeallocOp.get(acc_buf))
        if snapshot is not None:
            b.insert(memref.DeallocOp.get(snapshot))

    def at_step(self, stmt: _Stmt | None, ivs: list[SSAValue]) -> list[SSAValue]:
        """The store position of `ivs` (a recurrence's: the step inserted)."""
        if stmt is None or stmt.step is None:
            return ivs
        assert self.step_iv is not None
        k = stmt.step[1]
        return [*ivs[:k], self.step_iv, *ivs[k:]]

    def reads_elsewhere(self, stmt: _Stmt, prev: SSAValue, reduction: bool) -> bool:
        block = stmt.op.body.block
        rank = stmt.op.num_output_indices
        k = stmt.step[1] if stmt.step is not None else None
        for inner in block.walk():
            if not isinstance(inner, tc.ReadOp) or inner.tensor is not prev:
                continue
            forms = [stmt.affine.get(i) for i in inner.indices]
            if k is not None:
                # a read of an earlier step is never overwritten by this one
                f = forms[k]
                if f is not None and f[0] == {STEP: 1} and f[1].is_constant:
                    if f[1].const < 0:
                        continue
                if f is None or f[0] != {STEP: 1} or f[1] != SizeExpr.lit(0):
                    return True
                forms = forms[:k] + forms[k + 1 :]
            if reduction:
                return True
            for d, f in enumerate(forms):
                if f is None or f[0] != {d: 1} or f[1] != SizeExpr.lit(0):
                    return True
            if len(forms) != rank:  # pragma: no cover - verifier
                return True
        return False

    def read(
        self,
        b: Builder,
        stmt: _Stmt,
        op: tc.ReadOp,
        name: str,
        buf: SSAValue,
        ivs: list[SSAValue],
        vmap: dict[SSAValue, SSAValue],
        dims: list[SSAValue] | None,
        zero_idx: SSAValue | None,
    ) -> SSAValue:
        forms = [stmt.affine.get(i) for i in op.indices]
        if all(f is not None for f in forms):
            used = sorted({k for f in forms if f is not None for k in f[0]})
            dim_pos = {k: n for n, k in enumerate(used)}
            syms = _Symbols(self.sizes)
            exprs: list[AffineExpr] = []
            for f in forms:
                assert f is not None
                coeffs, rest = f
                e = syms.expr(rest)
                if e is None:  # pragma: no cover - traced subscripts have no min/max
                    raise self.error("min/max in a subscript")
                for k, c in coeffs.items():
                    e = e + AffineExpr.dimension(dim_pos[k]) * c
                exprs.append(e)
            amap = AffineMap(len(used), len(syms.values), tuple(exprs))
            step = [self.step_iv] if self.step_iv is not None else []
            operands = [step[0] if k == STEP else ivs[k] for k in used] + syms.values
            load = taffine.LoadOp(buf, operands, AffineMapAttr(amap))
            b.insert(load)
            return load.result
        # Checked read: memref.load under an in-bounds test of the others.
        assert dims is not None and zero_idx is not None and self.flag is not None
        indices = [vmap[i] for i in op.indices]
        cond: SSAValue | None = None
        for d, (f, idx) in enumerate(zip(forms, indices)):
            if f is not None:
                continue
            ge = b.insert(arith.CmpiOp(idx, zero_idx, "sge")).result
            lt = b.insert(arith.CmpiOp(idx, dims[d], "slt")).result
            ok = b.insert(arith.AndIOp(ge, lt)).result
            cond = ok if cond is None else b.insert(arith.AndIOp(cond, ok)).result
        assert cond is not None
        t = op.result.type
        then_block = Block()
        load = memref.LoadOp.get(buf, indices)
        then_block.add_ops([load, scf.YieldOp(load.res)])
        else_block = Block()
        code = _int_const(self.checked.index(name) + 1, i32)
        c0 = arith.ConstantOp(IntegerAttr(0, IndexType()))
        zero = _zero(t)
        else_block.add_ops(
            [
                code,
                c0,
                memref.StoreOp.get(code.result, self.flag, [c0.result]),
                zero,
                scf.YieldOp(zero.result),
            ]
        )
        if_op = scf.IfOp(cond, [t], Region(then_block), Region(else_block))
        b.insert(if_op)
        return if_op.results[0]

    def builtin(self, b: Builder, op: tc.BuiltinOp, xs: list[SSAValue]) -> SSAValue:
        name = op.callee.data
        t = op.result.type
        if name == "fdim":
            gt = b.insert(arith.CmpfOp(xs[0], xs[1], "ugt")).result
            diff = b.insert(arith.SubfOp(xs[0], xs[1])).result
            zero = b.insert(_zero(t)).result
            return b.insert(arith.SelectOp(gt, diff, zero)).result
        if isinstance(t, Float32Type):
            cname = name + "f"
        elif isinstance(t, Float64Type):
            cname = name
        else:
            raise self.error(f"builtin '{name}' is not supported on {t}")
        self.decls.declare(cname, [t] * len(xs), t)
        return b.insert(func.CallOp(cname, xs, [t])).res[0]


def _flat_ops(block: Block) -> Iterator[Operation]:
    """The ops of a `tc.def` body, each `tc.recurrence` followed by its
    body's ops (its `tc.next` last)."""
    for op in block.ops:
        yield op
        if isinstance(op, tc.RecurrenceOp):
            yield from op.body.block.ops


def _insert_step(op: tc.ComprehensionOp) -> tc.InsertStepOp | None:
    """The `tc.insert_step` that makes `op`'s result a step of its tensor."""
    for use in op.result.uses:
        if isinstance(use.operation, tc.InsertStepOp) and use.index == 0:
            return use.operation
    return None


def _in_range(
    form: Affine, ranges: Sequence[tuple[SizeExpr, SizeExpr]], extent: SizeExpr
) -> bool:
    """Whether a subscript of affine `form` is one index whose range
    provably lies in ``[0, extent)`` (its check is left out)."""
    coeffs, rest = form
    if len(coeffs) != 1 or rest != SizeExpr.lit(0):
        return False
    ((k, c),) = coeffs.items()
    lo, hi = ranges[k]
    return c == 1 and provably_le(SizeExpr.lit(0), lo) and provably_le(hi, extent)


def _dce(f: func.FuncOp) -> None:
    """Erase unused arith/math ops (e.g. the index arithmetic of affine reads)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(f.walk())):
            if op.dialect_name() in ("arith", "math") and all(
                not r.uses for r in op.results
            ):
                Rewriter.erase_op(op)
                changed = True


class _Declarations:
    """External C functions declared once per module."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.existing: dict[str, func.FuncOp] = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }

    def declare(self, name: str, inputs: list[Attribute], output: Attribute) -> None:
        if name in self.existing:
            f = self.existing[name]
            if list(f.function_type.inputs.data) != inputs or list(
                f.function_type.outputs.data
            ) != [output]:
                raise TCError(
                    f"convert-tc-to-affine: @{name} already exists with type "
                    f"{f.function_type}"
                )
            return
        f = func.FuncOp.external(name, inputs, [output])
        self.module.body.block.add_op(f)
        self.existing[name] = f


@dataclass(frozen=True)
class ConvertTcToAffinePass(ModulePass):
    """Lower every `tc.def` to a `func.func` of affine loops (module docstring)."""

    name = "convert-tc-to-affine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decls = _Declarations(op)
        defs = [d for d in op.walk() if isinstance(d, tc.DefOp)]
        for d in defs:
            f = _DefLowering(d, decls).lower()
            Rewriter.replace_op(d, f)
