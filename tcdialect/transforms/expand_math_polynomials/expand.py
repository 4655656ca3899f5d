"""The `expand-math-polynomials` pass: which ops are expanded, and the rewrite.

`EXPANDED_OPS` and `EXPANDED_CALLS` map each expanded `math` op and C
function to its algorithm; `MAX_ULP` is the error bound the tests check. The
pattern rewrites an op whose operands and result are `f32` or
`vector<...xf32>` with an `Emitter` for that type, sharing constants per
block; the pass erases the declarations of C functions no longer called.
The contract: the package docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, VectorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from tcdialect.transforms.expand_math_polynomials import (
    exp_log,
    gamma_bessel,
    inverse_erf,
    special,
    trig,
)
from tcdialect.transforms.expand_math_polynomials.emitter import Emitter, V

Algorithm = Callable[..., V]  # (emitter, *operands) -> result

#: math ops expanded on f32 (scalars and vectors), and their algorithms.
EXPANDED_OPS: dict[str, Algorithm] = {
    "math.exp": exp_log.exp,
    "math.exp2": exp_log.exp2,
    "math.expm1": exp_log.expm1,
    "math.log": exp_log.log,
    "math.log2": exp_log.log2,
    "math.log10": exp_log.log10,
    "math.log1p": exp_log.log1p,
    "math.sin": trig.sin,
    "math.cos": trig.cos,
    "math.tan": trig.tan,
    "math.atan": trig.atan,
    "math.asin": trig.asin,
    "math.acos": trig.acos,
    "math.sinh": exp_log.sinh,
    "math.cosh": exp_log.cosh,
    "math.tanh": exp_log.tanh,
    "math.erf": special.erf,
    "math.cbrt": special.cbrt,
    "math.asinh": exp_log.asinh,
    "math.acosh": exp_log.acosh,
    "math.atanh": exp_log.atanh,
    "math.atan2": trig.atan2,
}
#: C functions (`func.call` of an external declaration, as
#: convert-tc-to-affine emits them) expanded on f32.
EXPANDED_CALLS: dict[str, Algorithm] = {
    "erfcf": special.erfc,
    "exp10f": exp_log.exp10,
    "hypotf": special.hypot,
    "cospif": trig.cospi,
    "sinpif": trig.sinpi,
    "lgammaf": gamma_bessel.lgamma,
    "erfinvf": inverse_erf.erfinv,
    "erfcinvf": inverse_erf.erfcinv,
    "normcdfinvf": inverse_erf.normcdfinv,
    "erfcxf": special.erfcx,
    "normcdff": special.normcdf,
    "cyl_bessel_i0f": gamma_bessel.cyl_bessel_i0,
    "cyl_bessel_i1f": gamma_bessel.cyl_bessel_i1,
    "rcbrtf": special.rcbrt,
    "rhypotf": special.rhypot,
    "norm3df": special.norm3d,
    "norm4df": special.norm4d,
    "rnorm3df": special.rnorm3d,
    "rnorm4df": special.rnorm4d,
}


#: Maximum error in f32 ulps (the package docstring and
#: docs/perf/expand-math-polynomials.md: how it was measured).
MAX_ULP: dict[str, float] = {
    "math.exp": 1.25,
    "math.exp2": 1.25,
    "math.expm1": 1.5,
    "exp10f": 1.5,
    "math.log": 1.0,
    "math.log2": 1.3,
    "math.log10": 1.75,
    "math.log1p": 1.25,
    "math.sinh": 1.75,
    "math.cosh": 1.75,
    "math.tanh": 1.75,
    "math.asinh": 2.0,
    "math.acosh": 2.5,
    "math.atanh": 2.0,
    "math.erf": 1.5,
    "erfcf": 3.5,
    "math.sin": 1.5,
    "math.cos": 1.5,
    "math.tan": 2.0,
    "math.asin": 2.5,
    "math.acos": 1.25,
    "math.atan": 2.0,
    "math.atan2": 2.5,
    "math.cbrt": 1.25,
    "hypotf": 2.25,
    # the builtins without a math op (docs/builtins.md; lgammaf for
    # x >= -1/4, see there for negative x)
    "cospif": 1.5,
    "sinpif": 1.5,
    "lgammaf": 2.5,
    "erfinvf": 2.5,
    "erfcinvf": 3.0,
    "normcdfinvf": 2.75,
    "erfcxf": 2.5,
    "normcdff": 2.25,
    "cyl_bessel_i0f": 4.0,
    "cyl_bessel_i1f": 4.0,
    "rcbrtf": 2.0,
    "rhypotf": 2.5,
    "norm3df": 1.75,
    "norm4df": 1.75,
    "rnorm3df": 2.75,
    "rnorm4df": 2.75,
}


def _is_f32_like(t: Attribute) -> bool:
    if isinstance(t, VectorType):
        return isinstance(t.element_type, Float32Type)
    return isinstance(t, Float32Type)


@dataclass
class _ExpandMath(RewritePattern):
    masks: bool
    native_ldexp: bool
    externals: frozenset[str]
    expanded_calls: set[str]
    # constants already made, per block and type (reused: the walk goes
    # forward, so they come before later expansions in the block)
    consts: dict[tuple[Block, Attribute], dict[tuple[str, float | int], SSAValue]]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, func.CallOp):
            name = op.callee.string_value()
            algorithm = EXPANDED_CALLS.get(name)
            if algorithm is None or name not in self.externals:
                return
            self.expanded_calls.add(name)
        else:
            algorithm = EXPANDED_OPS.get(op.name)
            if algorithm is None:
                return
        if len(op.results) != 1:
            return
        t = op.results[0].type
        if not _is_f32_like(t) or any(a.type != t for a in op.operands):
            return
        block = op.parent_block()
        assert block is not None
        consts = self.consts.setdefault((block, t), {})
        e = Emitter(rewriter, t, self.masks, consts, self.native_ldexp)
        y = algorithm(e, *op.operands)
        rewriter.replace(op, (), (y,))


@dataclass(frozen=True)
class ExpandMathPolynomialsPass(ModulePass):
    """Expand f32 transcendentals into vectorisable arithmetic (package docstring)."""

    name = "expand-math-polynomials"

    #: encode conditions as integer masks (always done for vectors); for tests
    mask_selects: bool = False

    #: scale by 2^n with LLVM's `llvm.ldexp` instead of exponent-bit
    #: arithmetic: for targets where it is one instruction (x86 AVX-512's
    #: vscalef; the CPU pipeline sets it from the host); elsewhere LLVM makes
    #: it a C library call per element
    native_ldexp: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        externals = frozenset(
            f.sym_name.data
            for f in op.body.block.ops
            if isinstance(f, func.FuncOp) and f.is_declaration
        )
        expanded: set[str] = set()
        PatternRewriteWalker(
            _ExpandMath(self.mask_selects, self.native_ldexp, externals, expanded, {}),
            apply_recursively=False,
        ).rewrite_module(op)
        if not expanded:
            return
        # Drop the declarations of C functions no longer called.
        called = {
            c.callee.string_value() for c in op.walk() if isinstance(c, func.CallOp)
        }
        for f in list(op.body.block.ops):
            if (
                isinstance(f, func.FuncOp)
                and f.sym_name.data in expanded
                and f.sym_name.data not in called
            ):
                op.body.block.erase_op(f)
