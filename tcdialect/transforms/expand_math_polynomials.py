"""`expand-math-polynomials`: `math.exp` on f32 as vectorisable arithmetic.

A `math.exp` on `f32` becomes plain `arith` code with no calls, so that LLVM
can vectorise loops around it (a libm `expf` call per element keeps them
scalar). Other math ops and other types are left alone (C library calls or
LLVM intrinsics later).

The expansion (accurate to about 1 ulp over the whole f32 range):

* clamp: ``xc = min(max(x, -104), 88.72283)``;
* range reduction: ``n = round(xc * log2(e))`` by adding and subtracting
  ``1.5 * 2^23`` (the sum's low bits then hold ``n``, so no float-to-int
  conversion is needed), ``r = xc - n * ln2_hi - n * ln2_lo`` with
  ``|r| <= ln(2) / 2``;
* ``exp(r)`` by its degree-7 Taylor polynomial (Horner form);
* scaling by ``2^n`` as two factors ``2^(n >> 1)`` and ``2^(n - (n >> 1))``
  built from exponent bits, so that results near overflow and in the
  subnormal range are exact products of normal numbers;
* ``x > 88.72283`` gives ``+inf``, ``x < -104`` gives ``0``, NaN stays NaN.

Example::

    %y = math.exp %x : f32

becomes (abridged)::

    %xc = arith.minnumf ... : f32
    %t = arith.mulf %xc, %log2e : f32
    %tm = arith.addf %t, %magic : f32
    ...
    %y = arith.select %isnan, %x, %y2 : f32
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

_MAGIC = 12582912.0  # 1.5 * 2^23
_MAGIC_BITS = 0x4B400000
_LN2_HI = 0.693145751953125
_LN2_LO = 1.428606765330187e-06
_HIGH = 88.72283  # above: exp overflows f32
_LOW = -104.0  # below: exp rounds to 0 in f32


class _ExpandExpF32(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.ExpOp, rewriter: PatternRewriter) -> None:
        f32 = Float32Type()
        if op.operand.type != f32:
            return

        def emit(o: Operation) -> SSAValue:
            rewriter.insert(o)
            return o.results[0]

        def fc(v: float) -> SSAValue:
            return emit(arith.ConstantOp(FloatAttr(v, f32)))

        def ic(v: int) -> SSAValue:
            return emit(arith.ConstantOp(IntegerAttr(v, i32)))

        x = op.operand
        xc = emit(arith.MinnumfOp(emit(arith.MaxnumfOp(x, fc(_LOW))), fc(_HIGH)))
        t = emit(arith.MulfOp(xc, fc(1.0 / pymath.log(2.0))))
        tm = emit(arith.AddfOp(t, fc(_MAGIC)))
        nf = emit(arith.SubfOp(tm, fc(_MAGIC)))
        r = emit(arith.SubfOp(xc, emit(arith.MulfOp(nf, fc(_LN2_HI)))))
        r = emit(arith.SubfOp(r, emit(arith.MulfOp(nf, fc(_LN2_LO)))))
        p = fc(1.0 / pymath.factorial(7))
        for k in range(6, -1, -1):
            p = emit(
                arith.AddfOp(emit(arith.MulfOp(p, r)), fc(1.0 / pymath.factorial(k)))
            )
        n = emit(arith.SubiOp(emit(arith.BitcastOp(tm, i32)), ic(_MAGIC_BITS)))
        n1 = emit(arith.ShRSIOp(n, ic(1)))
        n2 = emit(arith.SubiOp(n, n1))

        def pow2(e: SSAValue) -> SSAValue:
            bits = emit(arith.ShLIOp(emit(arith.AddiOp(e, ic(127))), ic(23)))
            return emit(arith.BitcastOp(bits, f32))

        y = emit(arith.MulfOp(emit(arith.MulfOp(p, pow2(n1))), pow2(n2)))
        y = emit(
            arith.SelectOp(emit(arith.CmpfOp(x, fc(_HIGH), "ogt")), fc(pymath.inf), y)
        )
        y = emit(arith.SelectOp(emit(arith.CmpfOp(x, fc(_LOW), "olt")), fc(0.0), y))
        isnan = emit(arith.CmpfOp(x, x, "uno"))
        rewriter.replace(op, arith.SelectOp(isnan, x, y))


@dataclass(frozen=True)
class ExpandMathPolynomialsPass(ModulePass):
    """Expand `math.exp` on f32 into vectorisable arithmetic (module docstring)."""

    name = "expand-math-polynomials"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_ExpandExpF32(), apply_recursively=False).rewrite_module(
            op
        )
