"""`reduce(program, still_fails)`: shrink a failing program while it still fails.

Greedy delta debugging over `Program`s: candidates drop statements (chunks
first), outputs and ``where`` clauses, inline lets, shrink sizes, replace
sub-expressions by an operand or a constant and turn reductions into ``+``;
the first smaller candidate that still fails is kept and the search restarts
from it. `failure_predicate` is the usual `still_fails`: the same `Failure`
kind under the same options. Loaded reproducers (verbatim source) are
returned unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from tcdialect.testing.tcgen.checker import Failure, check
from tcdialect.testing.tcgen.model import (
    Acc,
    Clause,
    Let,
    Lit,
    Node,
    Program,
    Stmt,
    replace_node,
    value_nodes,
)


def _stmt_nodes(s: Stmt) -> list[tuple[int, Node]]:
    """(slot, node) pairs: slot -1 is the rhs, k >= 0 the k-th where clause."""
    out: list[tuple[int, Node]] = [(-1, s.rhs)]
    for k, c in enumerate(s.where):
        if isinstance(c, Let):
            out.append((k, c.value))
    return out


def _with_slot(s: Stmt, slot: int, node: Node) -> Stmt:
    if slot < 0:
        return dataclasses.replace(s, rhs=node)
    where = list(s.where)
    c = where[slot]
    assert isinstance(c, Let)
    where[slot] = Let(c.name, node)
    return dataclasses.replace(s, where=tuple(where))


def _fixup(p: Program) -> Program:
    """Drop outputs nobody writes and inputs nobody needs."""
    written = {s.target for s in p.stmts}
    outputs = tuple(o for o in p.outputs if o[0] in written)
    used: set[str] = set()
    for s in p.stmts:
        used |= s.reads()
    inputs = tuple(i for i in p.inputs if i.name in used)
    bound = {d for i in inputs for d in i.dims if isinstance(d, str)}
    # keep an input that binds a size something still uses
    for i in p.inputs:
        if i not in inputs and any(
            isinstance(d, str) and d in used and d not in bound for d in i.dims
        ):
            inputs = (*inputs, i)
            bound |= {d for d in i.dims if isinstance(d, str)}
    inputs = tuple(i for i in p.inputs if i in inputs)  # declared order
    sizes = {k: v for k, v in p.sizes.items() if k in bound}
    return dataclasses.replace(
        p,
        outputs=outputs,
        inputs=inputs,
        sizes=sizes,
        red={k: v for k, v in p.red.items() if any(o[0] == k for o in outputs)},
        shapes=None
        if p.shapes is None
        else {k: v for k, v in p.shapes.items() if any(o[0] == k for o in outputs)},
    )


def _first_writes_init(stmts: Sequence[Stmt]) -> tuple[Stmt, ...]:
    """Make the first statement writing each tensor start from scratch (`op=!`)."""
    seen: set[str] = set()
    out = []
    for s in stmts:
        if s.target not in seen and s.op in ("+=", "*=", "max=", "min="):
            s = dataclasses.replace(s, op=s.op + "!")
        seen.add(s.target)
        out.append(s)
    return tuple(out)


def _candidates(p: Program) -> Iterator[Program]:
    """Smaller variants of `p`, coarse first."""
    n = len(p.stmts)
    # 1. drop chunks of statements (ddmin-style: halves, quarters, ..., single)
    chunk = max(1, n // 2)
    while chunk >= 1:
        for start in range(0, n, chunk):
            rest = p.stmts[:start] + p.stmts[start + chunk :]
            if not rest:
                continue
            q = _fixup(dataclasses.replace(p, stmts=rest))
            if q.outputs:
                yield q
            q2 = _fixup(dataclasses.replace(p, stmts=_first_writes_init(rest)))
            if q2.outputs and q2.stmts != q.stmts:
                yield q2
        if chunk == 1:
            break
        chunk //= 2
    # 2. fewer outputs (the others become temporaries)
    if len(p.outputs) > 1:
        for k in range(len(p.outputs)):
            yield _fixup(
                dataclasses.replace(p, outputs=p.outputs[:k] + p.outputs[k + 1 :])
            )
    # 3. smaller sizes
    for name, v in p.sizes.items():
        lo = p.size_min.get(name, 0)
        for nv in sorted({lo, 1, 2, v // 2, v - 1}):
            if lo <= nv < v:
                yield dataclasses.replace(p, sizes={**p.sizes, name: nv})
    # 4. fewer where clauses (ranges, lets inlined, exists)
    for si, s in enumerate(p.stmts):
        for k, c in enumerate(s.where):
            others = s.where[:k] + s.where[k + 1 :]
            if isinstance(c, Let):
                ns = dataclasses.replace(
                    s,
                    rhs=_subst(s.rhs, c.name, c.value),
                    where=tuple(_subst_clause(x, c.name, c.value) for x in others),
                )
            else:
                ns = dataclasses.replace(s, where=others)
            yield dataclasses.replace(p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :])
    # 5. simpler expressions: a node replaced by one of its operands or a constant
    for si, s in enumerate(p.stmts):
        for slot, root in _stmt_nodes(s):
            for node in list(value_nodes(root)):
                repl: list[Node] = []
                if not getattr(node, "guard", False):
                    repl.extend(k for k in node.kids() if not isinstance(node, Acc))
                if not (
                    isinstance(node, Lit) and node.text in ("0", "1", "0.0", "1.0")
                ):
                    repl.extend([Lit("1.0"), Lit("0.0"), Lit("1"), Lit("0")])
                for r in repl:
                    ns = _with_slot(s, slot, replace_node(root, node, r))
                    yield _fixup(
                        dataclasses.replace(
                            p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :]
                        )
                    )
    # 6. reductions as other reductions (+ is the simplest to read)
    for si, s in enumerate(p.stmts):
        if s.op not in ("=", "+=!", "+="):
            ns = dataclasses.replace(s, op="+=!" if s.op.endswith("!") else "+=")
            yield dataclasses.replace(p, stmts=p.stmts[:si] + (ns,) + p.stmts[si + 1 :])


def _subst(n: Node, name: str, value: Node) -> Node:
    if isinstance(n, Lit) and n.text == name:
        return value
    kids = n.kids()
    if not kids:
        return n
    return n.with_kids([_subst(k, name, value) for k in kids])


def _subst_clause(c: Clause, name: str, value: Node) -> Clause:
    if isinstance(c, Let):
        return Let(c.name, _subst(c.value, name, value))
    return c


def _size(p: Program) -> tuple[int, int, int]:
    return (len(p.stmts), len(p.source), sum(p.sizes.values()))


def reduce(
    program: Program,
    still_fails: Callable[[Program], bool],
    time_limit: float = 30.0,
    log: Callable[[str], None] | None = None,
) -> Program:
    """Shrink `program` while `still_fails` holds (greedy, delta-debugging style).

    Tries dropping statements (chunks first), outputs, where clauses and
    lets, shrinking sizes, replacing sub-expressions by operands or
    constants, and simplifying reduction operators; keeps any variant that
    is smaller and still fails, and restarts from it. Stops at a fixpoint
    or after `time_limit` seconds (returning the smallest failing program).
    """
    if program.text is not None:
        return program
    deadline = time.monotonic() + time_limit
    best = program
    tried: set[str] = set()
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for cand in _candidates(best):
            if time.monotonic() >= deadline:
                break
            key = cand.source + json.dumps(cand.sizes, sort_keys=True)
            if key in tried or _size(cand) >= _size(best):
                continue
            tried.add(key)
            if still_fails(cand):
                best = cand
                progress = True
                if log is not None:
                    log(f"reduced to {_size(best)}")
                break
    return best


def failure_predicate(
    failure: Failure, options: Mapping[str, object], target: str = "cpu"
) -> Callable[[Program], bool]:
    """`still_fails` for `reduce`: the same kind of failure under the same
    options and target."""

    def still_fails(p: Program) -> bool:
        f = check(p, options, target)
        return f is not None and f.kind == failure.kind

    return still_fails
