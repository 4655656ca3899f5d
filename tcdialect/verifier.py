"""`verify(op)`: xDSL's verifier, made total, plus SSA dominance.

tc-opt, the pipeline (after every pass) and the frontend verify IR with this
instead of calling `Operation.verify()` directly. It adds what xDSL 0.74's
verifier leaves out:

- **Every failure is a located diagnostic.** Some of xDSL's own verifiers
  raise a plain `Exception` or an `AssertionError` rather than a
  `VerifyException` (`memref.load` with fewer indices than the memref's
  rank; `llvm.trunc` to a float type), which reached users as "internal
  error". Such a failure is re-raised as a `VerifyException` on the first
  op (outermost first, in program order) whose own verifier, without its
  nested ops, fails, printed like any other verifier error (the module, the
  op underlined).
- **Comparison predicates in range.** `arith.cmpi`, `arith.cmpf`,
  `llvm.icmp` and `llvm.fcmp` hold their predicate as an integer that xDSL
  does not check: one past the last (`<{predicate = 99 : i64}>` in the
  generic form) crashed the printer, and a negative one printed as another
  predicate (`-1` as the last).
- **GEP indices that the printer can print.** `llvm.getelementptr` keeps
  its constant indices as integers and marks each SSA index with
  -2147483648 (`GEP_USE_SSA_VAL`); a constant index of that value without
  its SSA operand crashed the printer ("internal error: IndexError").
- **Dominance** (MLIR's rule for SSA regions): every operand of an op is
  defined by an op or block argument that dominates the use. A block
  argument of block `B` dominates the ops of `B` and of the blocks `B`
  dominates, nested regions included; an op result dominates the ops after
  the op in its block, their nested regions, and the blocks the op's block
  properly dominates. Block dominance within a region follows the region's
  control flow (terminator successors; the first block is the entry, and a
  block the entry cannot reach is dominated by every block, as in MLIR).
  xDSL 0.74 parses and prints IR that uses a value before its definition
  (`%y = arith.addf %z, %x` in a loop, `%z` defined after the loop); the
  passes then crash or compute with the wrong value. The blocks of a
  `builtin.module` are graph regions (its symbols) and are not checked.

The check visits each use once and walks up from the use to the block of
the definition, so it costs O(uses x nesting depth).

    func.func @f(%x: f32) -> f32 {
      scf.for %i = %c0 to %c4 step %c1 {
        %y = arith.addf %z, %x : f32   // error: operand #0 (%z) does not
      }                                //        dominate this use
      %z = arith.addf %x, %x : f32
      ...
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

__all__ = ["verify"]


def verify(op: Operation) -> None:
    """Verify `op` and everything nested in it (module docstring); failures
    raise `VerifyException` (xDSL's located diagnostic)."""
    try:
        op.verify()
    except DiagnosticException:
        raise
    except Exception as err:
        _locate(op, err)
    _check_predicates(op)
    _check_gep_indices(op)
    _Dominance().check(op)


def _predicate_count(name: str) -> int:
    """How many predicates the comparison op `name` has (numbered from 0);
    its dialect is imported only when such an op is met (not at start-up)."""
    if name.startswith("arith."):
        from xdsl.dialects import arith

        if name == "arith.cmpi":
            return len(arith.CMPI_COMPARISON_OPERATIONS)
        return len(arith.CMPF_COMPARISON_OPERATIONS)
    from xdsl.dialects import llvm

    if name == "llvm.icmp":
        return len(llvm.ALL_ICMP_FLAGS)
    return len(llvm.ALL_FCMP_FLAGS)


_COMPARISONS = frozenset(("arith.cmpi", "arith.cmpf", "llvm.icmp", "llvm.fcmp"))


def _check_predicates(top: Operation) -> None:
    for op in top.walk():
        if op.name not in _COMPARISONS:
            continue
        count = _predicate_count(op.name)
        predicate = op.properties.get("predicate")
        if isinstance(predicate, IntegerAttr):
            value = predicate.value.data
            if not 0 <= value < count:
                message = f"predicate {value} is not one of 0..{count - 1}"
                op.emit_error(
                    f"Operation does not verify: {message}", VerifyException(message)
                )


def _check_gep_indices(top: Operation) -> None:
    for op in top.walk():
        if op.name != "llvm.getelementptr":
            continue
        from xdsl.dialects import llvm

        if not isinstance(op, llvm.GEPOp):
            continue  # an unregistered op of that name
        raw = list(op.rawConstantIndices.iter_values())
        if raw.count(llvm.GEP_USE_SSA_VAL) != len(op.ssa_indices):
            message = (
                f"constant index {llvm.GEP_USE_SSA_VAL} is reserved (xDSL marks "
                "SSA indices with it)"
            )
            op.emit_error(
                f"Operation does not verify: {message}", VerifyException(message)
            )


def _locate(top: Operation, err: Exception) -> None:
    """Raise `err`, a non-diagnostic failure of `top.verify()`, on the first
    op of `top.walk()` whose own verifier (nested ops left out) raises."""
    culprit = top
    for op in top.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException:
            continue  # a located failure: not the one being looked for
        except Exception as e:
            culprit, err = op, e
            break
    message = str(err) or f"its verifier failed ({type(err).__name__})"
    culprit.emit_error(
        f"Operation does not verify: {message}", VerifyException(message)
    )


class _Dominance:
    """Dominance of uses by definitions (module docstring); caches each
    block's op order and each region's block dominators."""

    def __init__(self) -> None:
        self._order: dict[Block, dict[Operation, int]] = {}
        self._doms: dict[Region, dict[Block, set[Block]]] = {}

    def check(self, top: Operation) -> None:
        for op in top.walk():
            for i, value in enumerate(op.operands):
                if not self._dominates(value, op):
                    name = f"%{value.name_hint}" if value.name_hint else "a value"
                    op.emit_error(
                        f"operand #{i} ({name}) does not dominate this use",
                        VerifyException(f"operand #{i} does not dominate its use"),
                    )

    def _dominates(self, value: SSAValue, user: Operation) -> bool:
        if isinstance(value, BlockArgument):
            block = value.block
            defining: Operation | None = None
        else:
            assert isinstance(value, OpResult)
            defining = value.op
            block = defining.parent_block()
            if block is None:
                return False
        if isinstance(block.parent_op(), ModuleOp):
            return True  # a graph region
        # Walk up from the use to an op (or block) of the defining region.
        region = block.parent
        op: Operation | None = user
        while op is not None:
            parent = op.parent_block()
            if parent is None:
                return False  # the definition's region does not enclose the use
            if parent.parent is region:
                if parent is block:
                    if defining is None:
                        return True
                    order = self._order_of(block)
                    return order[defining] < order[op]
                return self._block_dominates(block, parent)
            op = parent.parent_op()
        return False

    def _order_of(self, block: Block) -> dict[Operation, int]:
        order = self._order.get(block)
        if order is None:
            order = {o: i for i, o in enumerate(block.ops)}
            self._order[block] = order
        return order

    def _block_dominates(self, a: Block, b: Block) -> bool:
        region = a.parent
        assert region is not None
        doms = self._doms.get(region)
        if doms is None:
            doms = _dominators(region)
            self._doms[region] = doms
        # unreachable blocks are dominated by every block
        return b not in doms or a in doms[b]


def _dominators(region: Region) -> dict[Block, set[Block]]:
    """Each block reachable from the entry -> the blocks that dominate it
    (itself included); the iterative data-flow algorithm."""
    blocks = list(region.blocks)
    succs: dict[Block, list[Block]] = {}
    for b in blocks:
        last = b.last_op
        succs[b] = list(last.successors) if last is not None else []
    entry = blocks[0]
    reachable = [entry]
    seen = {entry}
    for b in reachable:
        for s in succs[b]:
            if s not in seen:
                seen.add(s)
                reachable.append(s)
    preds: dict[Block, list[Block]] = {b: [] for b in reachable}
    for b in reachable:
        for s in succs[b]:
            preds[s].append(b)
    everything = set(reachable)
    doms: dict[Block, set[Block]] = {b: set(everything) for b in reachable}
    doms[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in reachable[1:]:
            new = set.intersection(*(doms[p] for p in preds[b])) | {b}
            if new != doms[b]:
                doms[b] = new
                changed = True
    return doms
