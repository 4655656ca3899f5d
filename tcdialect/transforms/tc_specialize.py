"""`tc-specialize{sizes="M=64,N=32"}`: bind size parameters of `tc.def`s to constants.

A tc → tc pass (docs/pipeline.md). For every `tc.def` that has a size named in
`sizes`:

* `tc.size "M"` becomes `arith.constant 64 : index`;
* tensor types (inputs, comprehension results) and comprehension bounds get
  the numbers substituted, re-canonicalised through `SizeExpr.substitute`
  (``H - KH + 1`` with ``KH=3`` is ``H - 2``). A tensor extent or an
  output-index upper bound that becomes a negative constant is clamped to 0
  (an empty dimension, as the runtime does for negative extents);
* the bound names leave the def's ``sizes`` list.

Sizes that are not named stay parameters. A name that is not a size of any
`tc.def` of the module, a malformed option or a negative value is a `TCError`.
A module with several defs binds each name in every def that has it. Example::

    tc.def @matmul<M, K, N>(A, B) -> (C) {
    ^bb0(%A : !tc.tensor<[M, K], f32>, %B : !tc.tensor<[K, N], f32>):
      %C = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%r_k in [0, K)) ...

with ``sizes="M=4,K=8"`` becomes::

    tc.def @matmul<N>(A, B) -> (C) {
    ^bb0(%A : !tc.tensor<[4, 8], f32>, %B : !tc.tensor<[8, N], f32>):
      %C = tc.comprehension @C(%m in [0, 4), %n in [0, N)) "+=!" (%r_k in [0, 8)) ...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tcdialect import symbolic
from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.symbolic import SizeExpr

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_sizes(text: str) -> dict[str, int]:
    """Parse ``"M=64, N=32"`` into ``{"M": 64, "N": 32}``; raise `TCError` if malformed."""
    out: dict[str, int] = {}
    if not text.strip():
        return out
    for item in text.split(","):
        item = item.strip()
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not _NAME.fullmatch(name):
            raise TCError(
                f"tc-specialize: malformed size binding '{item}' in sizes=\"{text}\"; "
                f'expected NAME=VALUE, e.g. sizes="M=64,N=32"'
            )
        try:
            v = int(value)
        except ValueError:
            raise TCError(
                f"tc-specialize: value of size '{name}' must be an integer, "
                f"got '{value}'"
            ) from None
        if v < 0:
            raise TCError(
                f"tc-specialize: size '{name}' cannot be negative (got {v}); "
                f"sizes are tensor extents"
            )
        if name in out:
            raise TCError(f"tc-specialize: size '{name}' is bound twice")
        out[name] = v
    return out


def _subst(text: str, env: Mapping[str, SizeExpr], clamp: bool = False) -> str:
    e = symbolic.parse(text).substitute(env)
    if clamp and e.is_constant and e.const < 0:
        e = SizeExpr.lit(0)
    return str(e)


def _tensor_type(t: Attribute, env: Mapping[str, SizeExpr]) -> Attribute:
    if not isinstance(t, tc.TensorType):
        return t
    dims = [_subst(d.data, env, clamp=True) for d in t.shape.data]
    return tc.TensorType(dims, t.element_type)


def _retype(value: SSAValue, env: Mapping[str, SizeExpr]) -> None:
    new = _tensor_type(value.type, env)
    if new != value.type:
        Rewriter.replace_value_with_new_type(value, new)


def specialize_def(d: tc.DefOp, values: Mapping[str, int]) -> None:
    """Bind the sizes of `d` named in `values` (names it lacks are ignored)."""
    bound = {n: v for n, v in values.items() if n in d.size_names}
    if not bound:
        return
    env = {n: SizeExpr.lit(v) for n, v in bound.items()}
    for arg in list(d.body.block.args):
        _retype(arg, env)
    for op in list(d.walk()):
        if isinstance(op, tc.SizeOp):
            name = op.size.data
            if name in bound:
                const = arith.ConstantOp(IntegerAttr(bound[name], IndexType()))
                const.result.name_hint = op.result.name_hint
                Rewriter.replace_op(op, const)
        elif isinstance(op, tc.ComprehensionOp):
            rank = op.num_output_indices
            op.lower_bounds = ArrayAttr(
                [StringAttr(_subst(b.data, env)) for b in op.lower_bounds.data]
            )
            op.upper_bounds = ArrayAttr(
                [
                    StringAttr(_subst(b.data, env, clamp=i < rank))
                    for i, b in enumerate(op.upper_bounds.data)
                ]
            )
            _retype(op.result, env)
        elif isinstance(op, tc.RecurrenceOp):
            op.lower = StringAttr(_subst(op.lower.data, env))
            op.upper = StringAttr(_subst(op.upper.data, env))
            for v in [*op.body.block.args[1:], *op.res]:
                _retype(v, env)
        elif isinstance(op, tc.InsertStepOp):
            _retype(op.result, env)
    d.sizes = ArrayAttr([StringAttr(n) for n in d.size_names if n not in bound])


@dataclass(frozen=True)
class TcSpecializePass(ModulePass):
    """Bind size parameters to constants (see the module docstring)."""

    name = "tc-specialize"

    sizes: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        values = parse_sizes(self.sizes)
        if not values:
            return
        defs = [d for d in op.walk() if isinstance(d, tc.DefOp)]
        known: set[str] = set()
        for d in defs:
            known |= set(d.size_names)
        unknown = [n for n in values if n not in known]
        if unknown:
            available = ", ".join(sorted(known)) or "none"
            raise TCError(
                f"tc-specialize: unknown size{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(n) for n in unknown)}; the module's sizes are: "
                f"{available}"
            )
        for d in defs:
            specialize_def(d, values)
