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
- `parallel-depth`: which member of each nest's outermost band is the
  parallel loop (default 0, the outermost; see
  `tcdialect.poly.schedule`), e.g. `parallel-depth=1` runs the outermost
  loop in order around a parallel second one.
- `threads`: how many threads share the parallel loops (default 1); automatic
  tile sizes cut the outermost parallel member into a multiple of this many
  equal tiles.
- `print-schedule`: print each function's schedule tree (isl's YAML, as
  `//` comment lines) on stdout before the IR.

Recurrences: an `affine.for` marked `tc.recurrence` (a TC recurrence's step
loop, from `convert-tc-to-affine`) stays the sequential outer loop: its body
is scheduled on its own, the step index a parameter, as are the runs of
nests before and after it (each outlined into a temporary function that is
scheduled like any other, then inlined back). Index and allocation ops
between nests move before the first nest first. So inside a step the
statements are fused and parallel as usual, and the step loop is the only
one that runs in order::

    affine.for %t = 1 to 65 {                         // tc.recurrence
      "affine.parallel"() ... ({ ^bb0(%c0: index):    // the step's nests
        ... affine.load %h[%t + -1, ...] ... affine.store %v, %h[%t, ...]

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

import islpy as isl
from xdsl.context import Context
from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from tcdialect.diagnostics import TCError
from tcdialect.poly.codegen import regenerate
from tcdialect.poly.schedule import (
    ScheduleOptions,
    compute_schedule,
    schedule_context,
    schedule_tree,
)
from tcdialect.poly.scop import Scop, dependences, error_flag_arrays, extract_scop


def scop_and_dependences(fn: func.FuncOp) -> tuple[Scop, isl.UnionMap] | None:
    """The polyhedral model of `fn` and its dependences (writes to the
    `tc.checked` error flag left out: they commute); None when `fn` is
    outside the model."""
    try:
        scop = extract_scop(fn)
    except TCError:
        return None
    return scop, dependences(scop, error_flag_arrays(fn, scop)).all


#: The attribute of a recurrence's step loop (`convert-tc-to-affine`).
RECURRENCE = "tc.recurrence"


def _is_recurrence(op: Operation) -> TypeGuard[affine.ForOp]:
    return isinstance(op, affine.ForOp) and RECURRENCE in op.attributes


def _movable(op: Operation) -> bool:
    """Ops between nests that may move before them: allocations and
    side-effect-free index arithmetic."""
    if op.regions or op.has_trait(IsTerminator):
        return False
    return isinstance(op, memref.AllocOp) or op.dialect_name() in ("arith", "math")


#: Reschedules a function in place: its schedule tree, None if left alone.
Scheduler = Callable[[func.FuncOp], str | None]


def _schedule_segment(ops: list[Operation], schedule: Scheduler) -> list[str]:
    """Schedule the nests `ops` (consecutive in their block) as the body of
    a temporary function whose arguments are the values they use from
    outside; put the result in their place. Their schedule tree, or nothing
    when they stay as they are."""
    inside = {id(o) for op in ops for o in op.walk()}
    outer: list[SSAValue] = []
    for op in ops:
        for o in op.walk():
            for v in o.operands:
                owner = v.owner
                defined_inside = (
                    isinstance(owner, Operation) and id(owner) in inside
                ) or (isinstance(owner, Block) and id(owner.parent_op()) in inside)
                if not defined_inside and v not in outer:
                    outer.append(v)
    block = Block(arg_types=[v.type for v in outer])
    vmap: dict[SSAValue, SSAValue] = {}
    for i, (v, a) in enumerate(zip(outer, block.args)):
        a.name_hint = v.name_hint or f"v{i}"
        vmap[v] = a
    for op in ops:
        block.add_op(op.clone(value_mapper=vmap))
    block.add_op(func.ReturnOp())
    temp = func.FuncOp("__tc_segment", ([v.type for v in outer], []), Region(block))
    tree = schedule(temp)
    if tree is None:
        return []
    new = temp.body.block
    for a, v in zip(new.args, outer):
        a.replace_all_uses_with(v)
    anchor = ops[0]
    parent = anchor.parent_block()
    assert parent is not None
    for op in list(new.ops):
        if isinstance(op, func.ReturnOp):
            break
        op.detach()
        parent.insert_op_before(op, anchor)
    for op in reversed(ops):
        op.detach()
        op.erase()
    return [tree]


def _before(op: Operation) -> list[Operation]:
    """The ops before `op` in its block."""
    out: list[Operation] = []
    prev = op.prev_op
    while prev is not None:
        out.append(prev)
        prev = prev.prev_op
    return out


def has_recurrence(fn: func.FuncOp) -> bool:
    """Whether `fn`'s body holds a recurrence's step loop."""
    body = fn.body.blocks.first
    return body is not None and any(_is_recurrence(op) for op in body.ops)


def schedule_around_recurrences(fn: func.FuncOp, schedule: Scheduler) -> str | None:
    """Apply `schedule` to the pieces of a function with recurrence loops
    (see the module docstring): each loop's body and the runs of nests
    between the loops, each as a function of its own. The pieces' schedule
    trees, None if none changed. (`affine-gpu-map` maps the pieces so.)"""
    body = fn.body.block
    trees: list[str] = []
    for block in [body] + [
        op.body.block for op in list(body.ops) if _is_recurrence(op)
    ]:
        first = next((op for op in block.ops if op.regions), None)
        if first is None:
            continue
        # (only ops whose operands are all available before the first nest)
        ready: set[SSAValue] = set(block.args)
        for op in _before(first):
            ready.update(op.results)
        op = first.next_op
        while op is not None:
            after = op.next_op
            if _movable(op) and all(v in ready for v in op.operands):
                op.detach()
                block.insert_op_before(op, first)
                ready.update(op.results)
            op = after
        run: list[Operation] = []
        for op in [*block.ops, None]:
            if op is not None and op.regions and not _is_recurrence(op):
                run.append(op)
                continue
            if run:
                trees += _schedule_segment(run, schedule)
            run = []
    return "\n".join(trees) if trees else None


def schedule_function(
    fn: func.FuncOp, options: ScheduleOptions, *, print_schedule: bool = False
) -> str | None:
    """Reschedule `fn` in place; returns its schedule tree, None if left alone."""
    if has_recurrence(fn):
        return schedule_around_recurrences(
            fn, lambda f: schedule_function(f, options, print_schedule=print_schedule)
        )
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
    parallel_depth: int = 0

    @classmethod
    def from_options(cls, options: ScheduleOptions) -> AffineIslSchedulePass:
        return cls(
            options.fusion,
            options.tile,
            options.parallel,
            threads=options.threads,
            parallel_depth=options.parallel_depth,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tile = None if self.tile is None else tuple(self.tile)
        options = ScheduleOptions(
            self.fusion,
            tile,
            self.parallel,
            parallel_depth=self.parallel_depth,
            threads=self.threads,
        )
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                schedule_function(fn, options, print_schedule=self.print_schedule)
