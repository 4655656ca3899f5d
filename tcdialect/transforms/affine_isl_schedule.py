"""`affine-isl-schedule`: reschedule affine loop nests with isl.

Contract: for every `func.func` with a body, the polyhedral model is extracted
(`tcdialect.poly.scop.extract_scop`: domains over the size arguments, tagged
accesses, the textual order), dependences are computed (flow, anti, output;
writes to the `tc.checked` error flag commute and are left out), isl computes
a new schedule (`tcdialect.poly.schedule.compute_schedule`: fusion strategy,
tiling with per-member sizes, an intra-tile order with a stride-1 innermost
loop and, inside it, reductions over windows of at most 4 values, coincident
outer loops marked parallel), and the body is regenerated
from isl's AST as `affine.for` / `affine.parallel` / `affine.if` nests
(`tcdialect.poly.codegen.regenerate`). The result is again `affine` IR (stage
`scheduled`) and computes what the input computed: the schedule only
reorders whole statement instances and respects every dependence, including
the chain of a reduction's own updates.

Options:
- `fusion`: `max` (default), `preserve3coincident` or `min`.
- `tile`: tile sizes of the outermost band of each nest, e.g. `tile=32,32,64`
  (0 = do not tile that member, so `tile=0` turns tiling off); without it the
  sizes are chosen from the problem (`tcdialect.poly.schedule.auto_tile`).
- `parallel`: mark the outermost coincident loop of each nest parallel
  (`affine.parallel`), default true.
- `threads`: how many threads share the parallel loops (default 1); automatic
  tile sizes cut the outermost parallel member into a multiple of this many
  equal tiles.
- `print-schedule`: print each function's schedule tree (isl's YAML, as
  `//` comment lines) on stdout before the IR.

Left alone: declarations, and functions outside the model (`scf` loops,
`affine.for` with iteration arguments, `affine.parallel` with reductions,
semi-affine maps, calls other than to body-less math declarations) or whose
AST has no affine form; nothing else is changed in them.

Example: `C(m, n) +=! A(m, r_k) * B(r_k, n)` with `fusion=min tile=32,32,64`
becomes a parallel loop over row tiles, column tiles, then the init nest and
the reduction tiles, with point loops ordered `m, r_k, n` (stride-1 in `n`)::

    "affine.parallel"() ... ({ ^bb0(%c0: index):
      affine.for %c1 = 0 to ... {
        affine.for %c3 = ... { affine.for %c4 = ... { affine.store %cst, %C[...] } }
        affine.for %c2 = 0 to ... {
          affine.for %c3 = ... { affine.for %c4 = ... { affine.for %c5 = ... {
            ... affine.load %A[%c3, %c4] ... affine.load %B[%c4, %c5] ...
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.passes import ModulePass

from tcdialect.diagnostics import TCError
from tcdialect.poly.codegen import regenerate
from tcdialect.poly.schedule import (
    ScheduleOptions,
    compute_schedule,
    schedule_context,
    schedule_tree,
)
from tcdialect.poly.scop import Scop, dependences, extract_scop


def _error_flag(fn: func.FuncOp) -> int | None:
    """Position of the error flag argument (see the affine-stage contract)."""
    attrs = fn.attributes
    if "tc.checked" not in attrs:
        return None
    ins, outs = attrs.get("tc.inputs"), attrs.get("tc.outputs")
    if not isinstance(ins, ArrayAttr) or not isinstance(outs, ArrayAttr):
        return None
    return len(ins.data) + len(outs.data)


def scop_and_dependences(fn: func.FuncOp) -> tuple[Scop, isl.UnionMap] | None:
    """The polyhedral model of `fn` and its dependences (writes to the
    `tc.checked` error flag left out: they commute); None when `fn` is
    outside the model."""
    try:
        scop = extract_scop(fn)
    except TCError:
        return None
    ignore: list[str] = []
    flag = _error_flag(fn)
    body = fn.body.blocks.first
    if flag is not None and body is not None and flag < len(body.args):
        arg = body.args[flag]
        ignore = [n for n, v in scop.arrays.items() if v is arg]
    return scop, dependences(scop, ignore).all


def schedule_function(
    fn: func.FuncOp, options: ScheduleOptions, *, print_schedule: bool = False
) -> str | None:
    """Reschedule `fn` in place; returns its schedule tree, None if left alone."""
    model = scop_and_dependences(fn)
    if model is None:
        return None
    scop, deps = model
    schedule = compute_schedule(scop, deps, options)
    tree = schedule_tree(schedule)
    if print_schedule:
        print(f"// schedule of @{fn.sym_name.data}:")
        for line in tree.splitlines():
            print(f"//   {line}")
    try:
        # Builds the new body completely before touching `fn`.
        regenerate(fn, scop, schedule, schedule_context(scop))
    except TCError:
        return None
    return tree


@dataclass(frozen=True)
class AffineIslSchedulePass(ModulePass):
    name = "affine-isl-schedule"

    fusion: str = "max"
    tile: tuple[int, ...] | None = None
    parallel: bool = True
    print_schedule: bool = False
    threads: int = 1

    @classmethod
    def from_options(cls, options: ScheduleOptions) -> AffineIslSchedulePass:
        return cls(
            options.fusion, options.tile, options.parallel, threads=options.threads
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tile = None if self.tile is None else tuple(self.tile)
        options = ScheduleOptions(self.fusion, tile, self.parallel, self.threads)
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                schedule_function(fn, options, print_schedule=self.print_schedule)
