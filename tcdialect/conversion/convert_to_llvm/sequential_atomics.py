"""The CPU's atomic updates outside parallel code: plain read-modify-writes.

`plain_atomics(module)` rewrites every `memref.atomic_rmw` of a `func.func`
that no other thread runs at the same time into `memref.load` + the `arith`
op of its kind + `memref.store` (the old value is the load's). A function
runs concurrently when `tcrt.parallel_for` calls it (an outlined parallel
loop body), or a function that does calls it (`func.call`); there the
update stays atomic (`llvm.atomicrmw`). `convert-to-llvm` runs this on the
CPU before lowering, so that the sequential scatter nests of
`convert-tc-to-affine` (which `affine-isl-schedule` keeps in one thread:
their atomic updates are ordered in its model) compile to the loads and
stores LLVM vectorises instead of x86's `lock cmpxchg` loop for
`atomicrmw fadd` (docs/autodiff.md, "Scatter-accumulate fallback": about
20 times slower, measured). For ``%old = memref.atomic_rmw addf %v, %A[%i]``::

    %old = memref.load %A[%i] : memref<?xf32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %A[%i] : memref<?xf32>

Kinds without an `arith` op (none of those `convert-tc-to-affine` emits)
are left atomic.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tcdialect.dialects.memref import ATOMIC_RMW_KINDS
from tcdialect.dialects.tcrt import ParallelForOp

#: `memref.atomic_rmw` kinds → the op combining the old value with the operand.
_COMBINE: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "addf": arith.AddfOp,
    "addi": arith.AddiOp,
    "andi": arith.AndIOp,
    "maximumf": arith.MaximumfOp,
    "maxnumf": arith.MaxnumfOp,
    "maxs": arith.MaxSIOp,
    "maxu": arith.MaxUIOp,
    "minimumf": arith.MinimumfOp,
    "minnumf": arith.MinnumfOp,
    "mins": arith.MinSIOp,
    "minu": arith.MinUIOp,
    "mulf": arith.MulfOp,
    "muli": arith.MuliOp,
    "ori": arith.OrIOp,
    "xori": arith.XOrIOp,
}


def _concurrent(module: ModuleOp) -> set[str]:
    """The functions that several threads may run at once (module docstring)."""
    found = {
        op.callee.root_reference.data
        for op in module.walk()
        if isinstance(op, ParallelForOp)
    }
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    todo = list(found)
    while todo:
        f = funcs.get(todo.pop())
        if f is None:
            continue
        for op in f.walk():
            if isinstance(op, func.CallOp):
                callee = op.callee.root_reference.data
                if callee not in found:
                    found.add(callee)
                    todo.append(callee)
    return found


def _plain(op: memref.AtomicRMWOp) -> None:
    k = op.kind.value.data
    kind = ATOMIC_RMW_KINDS[k] if 0 <= k < len(ATOMIC_RMW_KINDS) else None
    if kind != "assign" and kind not in _COMBINE:
        return
    indices = list(op.indices)
    old = memref.LoadOp.get(op.memref, indices)
    new: list[Operation] = []
    value = op.value
    if kind != "assign":
        combine = _COMBINE[kind](old.res, op.value)
        new.append(combine)
        value = combine.results[0]
    store = memref.StoreOp.get(value, op.memref, indices)
    Rewriter.replace_op(op, [old, *new, store], [old.res])


def plain_atomics(module: ModuleOp) -> None:
    """Rewrite the atomic updates that no other thread races with (module
    docstring)."""
    concurrent = _concurrent(module)
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or f.sym_name.data in concurrent:
            continue
        for op in list(f.walk()):
            if isinstance(op, memref.AtomicRMWOp):
                _plain(op)
