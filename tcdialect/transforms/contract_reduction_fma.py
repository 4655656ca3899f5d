"""`contract-reduction-fma`: a reduction's multiply-add as one fused multiply-add.

Contract: every ``%s = arith.addf %acc, %p fastmath<reassoc>`` (or
``arith.addf %p, %acc``) whose operand ``%p = arith.mulf %x, %y`` has no
other use and the same type becomes ``%s = math.fma %x, %y, %acc`` with the
add's fast-math flags; the `arith.mulf` goes. Nothing else changes.

Why: `reassoc` marks the update of a `+=` (`convert-tc-to-affine` puts it
on the combine of every `+=`, a reduction's or an accumulation into a
tensor's, and on nothing else), whose order and rounding TC leaves
unspecified (docs/language-notes.md), which licenses skipping the product's
rounding as the CPU's `register-tile` does (the CPU leaves `+=` outside its
register tiles uncontracted, so the two targets may differ there in the
last bit). LLVM contracts only under `contract`, and
NVPTX then prints `mul.rn` and `add.rn`, which ptxas may not fuse either:
a GPU matmul spends two instructions on each multiply-add without this
pass, one with it. The result is the exact product added and rounded once:
never less accurate than the two roundings it replaces.

Left alone: an add without `reassoc` (an expression `a * b + c`, which the
language rounds twice), a product with another use, a product of narrower
floats extended to the accumulator's type (`arith.extf` between them: the
16-bit contraction is the CPU option `fma16`), and integers. Example::

    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32

becomes::

    %s = math.fma %a, %b, %acc fastmath<reassoc> : f32
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.hints import isa


class _ContractReduction(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter) -> None:
        if FastMathFlag.REASSOC not in op.fastmath.data:
            return
        for product, acc in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
            mul = product.owner
            if (
                isa(mul, arith.MulfOp)
                and product.has_one_use()
                and mul.result.type == op.result.type
            ):
                fma = math.FmaOp(mul.lhs, mul.rhs, acc, op.fastmath)
                rewriter.replace(op, fma)
                rewriter.erase(mul)
                return


@dataclass(frozen=True)
class ContractReductionFmaPass(ModulePass):
    """See the module docstring."""

    name = "contract-reduction-fma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            _ContractReduction(), apply_recursively=False
        ).rewrite_module(op)


__all__ = ["ContractReductionFmaPass"]
