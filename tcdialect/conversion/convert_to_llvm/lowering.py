"""The translation driver of `convert-to-llvm`: functions, blocks, a value map.

`ModuleLowering(module, handlers).run()` translates each `func.func` of
`module` directly, block by block, into an `llvm.func` of the same name, with
a value map from the old SSA values to the new ones (no piecemeal rewrites, no
unrealized casts left behind). `handlers` maps an op name to the function
that lowers it (`Handler`); the dialect modules of this package fill such a
table (`populate_*_to_llvm`), and a pass picks the ones it needs. The driver
itself lowers `builtin.unrealized_conversion_cast` (which disappears when its
types agree after conversion) and keeps any other `llvm.*` op without regions
or successors, with its operands remapped.

The translation is a walk rather than xDSL's pattern rewriter because one
memref value becomes several values (`memref_abi.MemRef`), which a 1:1
rewrite of results cannot express without unrealized casts; constants are
shared within a block, blocks are emitted in reverse post-order (definitions
before uses) and unreachable blocks are dropped.

Functions: `func.func private` definitions become `internal`; declarations
and public functions `external`. A function may return at most one value, and
not a memref. At the top level only `func.func`, `llvm.func` and
`llvm.mlir.global` are accepted. Functions a handler calls are declared once
(`ModuleLowering.declare`; an existing declaration of the same type is
reused), functions a handler generates (`ModuleLowering.generate`) are
defined once, after the translated ones, and globals a handler adds
(`ModuleLowering.add_global`) come before the functions.

The module may also be a `gpu.module` (the `cuda` target lowers each one of
a module separately, with `type_converter.CUDA_SPACES`): its `gpu.func`s
become `llvm.func`s too (`external`), keeping their discardable attributes
(`gpu.kernel`, `nvvm.kernel`, `nvvm.maxntid`); workgroup and private
attributions are not supported (shared memory is a `memref.alloca` in
memory space 3).

Unsupported input raises `TCError` naming the operation.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tcdialect.conversion.convert_to_llvm.memref_abi import Lowered, MemRef, pack
from tcdialect.conversion.convert_to_llvm.type_converter import (
    CPU_SPACES,
    AddressSpaces,
    err,
    fastmath,
    float_suffix,
    func_type,
    int_width,
    is_vector,
    lowered_types,
    scalar_type,
)
from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu

Handler = Callable[["FunctionLowering", Operation], None]
"""Lowers one op: reads its operands' lowered values from the `FunctionLowering`,
emits llvm ops into it and records its results' lowered values (`set`)."""


def scalar_only(handler: Handler) -> Handler:
    """`handler`, rejecting ops with vector operands or results first."""

    def lower(lw: FunctionLowering, op: Operation) -> None:
        if any(is_vector(v.type) for v in (*op.operands, *op.results)):
            raise err(op, "unsupported vector operands")
        handler(lw, op)

    return lower


def int_constant_of(value: SSAValue) -> int | None:
    """The value of an `arith.constant` integer/index, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def wrap_int(value: int, width: int) -> int:
    """`value` as a signed `width`-bit integer (IntegerAttr accepts that range)."""
    value &= (1 << width) - 1
    if width > 1 and value >= 1 << (width - 1):
        value -= 1 << width
    return value


def _copy_name(old: SSAValue, new: Lowered) -> None:
    """Carry `old`'s name hint over (`%A` → `%A`, `%A_d0`, ... for a memref)."""
    hint = old.name_hint
    if hint is None:
        return
    if isinstance(new, MemRef):
        if new.ptr.name_hint is None:
            new.ptr.name_hint = hint
        dims = [i for i, d in enumerate(new.type.get_shape()) if d < 0]
        for dim, size in zip(dims, new.dyn_sizes, strict=True):
            if size.name_hint is None:
                size.name_hint = f"{hint}_d{dim}"
    elif new.name_hint is None:
        # A shared constant is named only after a constant.
        if isinstance(new.owner, llvm.ConstantOp) and not isinstance(
            old.owner, arith.ConstantOp
        ):
            return
        new.name_hint = hint


def _reverse_post_order(entry: Block) -> list[Block]:
    """The blocks reachable from `entry`, in reverse post-order (defs before uses)."""
    seen: set[Block] = {entry}
    post: list[Block] = []
    stack: list[tuple[Block, int]] = [(entry, 0)]
    while stack:
        block, i = stack.pop()
        term = block.last_op
        # Visit the last successor first, so that the first one (a branch's
        # "then" block, a loop body) directly follows its predecessor.
        succs = list(term.successors)[::-1] if term is not None else []
        if i < len(succs):
            stack.append((block, i + 1))
            nxt = succs[i]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            post.append(block)
    return post[::-1]


# --------------------------------------------------------------------------
# Module-level state: symbols, declarations, generated functions
# --------------------------------------------------------------------------


Function = func.FuncOp | gpu.FuncOp
"""What `ModuleLowering` translates into an `llvm.func`."""


class ModuleLowering:
    """Translates the functions of one module with a table of handlers.

    `spaces` maps memref memory spaces to LLVM address spaces (the CPU's by
    default: see `type_converter.AddressSpaces`).
    """

    def __init__(
        self,
        module: ModuleOp | gpu.ModuleOp,
        handlers: Mapping[str, Handler],
        spaces: AddressSpaces = CPU_SPACES,
    ):
        self.module = module
        self.handlers: dict[str, Handler] = {
            "builtin.unrealized_conversion_cast": lower_unrealized_cast,
            **handlers,
        }
        self.spaces = spaces
        # symbol → llvm function type, for every function of the output
        self.signatures: dict[str, llvm.LLVMFunctionType] = {}
        self.declarations: list[llvm.FuncOp] = []
        self.generated: list[llvm.FuncOp] = []
        self.generated_keys: dict[str, Hashable] = {}
        self.globals: list[llvm.GlobalOp] = []
        self.symbols: set[str] = set()

    def lowered_types(self, t: Attribute, where: Operation) -> list[Attribute]:
        """The llvm types a value of type `t` expands to (`spaces` applied)."""
        return lowered_types(t, where, self.spaces)

    def declare(
        self, name: str, ftype: llvm.LLVMFunctionType, where: Operation
    ) -> None:
        """Make sure `@name` exists with type `ftype` (declare it if needed)."""
        known = self.signatures.get(name)
        if known is not None:
            if known != ftype:
                raise err(where, f"'@{name}' has type {known}, needed {ftype}")
            return
        self.signatures[name] = ftype
        self.declarations.append(
            llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
        )

    def generate(
        self,
        name: str,
        key: Hashable,
        ftype: llvm.LLVMFunctionType,
        build: Callable[[], llvm.FuncOp],
        where: Operation,
    ) -> str:
        """Define `@name` (of type `ftype`, built by `build`) once per `key`.

        A second request for `name` must come with the same `key`; a name
        that the module already defines or declares is an error.
        """
        if name in self.generated_keys:
            assert self.generated_keys[name] == key
            return name
        if name in self.signatures or name in self.symbols:
            raise err(where, f"'@{name}' is already defined")
        self.generated_keys[name] = key
        self.signatures[name] = ftype
        self.generated.append(build())
        return name

    def add_global(self, op: llvm.GlobalOp, where: Operation) -> str:
        """Add global `op` to the module; its name must be new."""
        name = op.sym_name.data
        if name in self.signatures or name in self.symbols:
            raise err(where, f"'@{name}' is already defined")
        self.symbols.add(name)
        self.globals.append(op)
        return name

    def run(self) -> None:
        block = self.module.body.block
        funcs: list[Function] = []
        for op in block.ops:
            if isinstance(op, func.FuncOp | gpu.FuncOp):
                funcs.append(op)
            elif isinstance(op, llvm.FuncOp):
                self.signatures[op.sym_name.data] = op.function_type
            elif isinstance(op, llvm.GlobalOp):
                self.symbols.add(op.sym_name.data)
            else:
                raise err(op, "unsupported top-level operation")
        for f in funcs:
            inputs = [
                t for a in f.function_type.inputs.data for t in self.lowered_types(a, f)
            ]
            outputs = f.function_type.outputs.data
            if len(outputs) > 1 or any(isinstance(o, MemRefType) for o in outputs):
                shown = ", ".join(str(o) for o in outputs)
                raise err(
                    f,
                    f"unsupported results ({shown}) of @{f.sym_name.data}: a "
                    "function returns at most one value, and not a memref",
                )
            lowered_outputs = [scalar_type(o, f) for o in outputs]
            self.signatures[f.sym_name.data] = func_type(inputs, lowered_outputs)

        for f in funcs:
            new = FunctionLowering(self, f).run()
            block.insert_op_before(new, f)
            f.detach()
            f.erase()
        if self.globals and (first := block.first_op) is not None:
            block.insert_ops_before(self.globals, first)
        block.add_ops([*self.generated, *self.declarations])


# --------------------------------------------------------------------------
# Function translation
# --------------------------------------------------------------------------


class FunctionLowering:
    """The translation of one `func.func` or `gpu.func`: value map, current
    block, builders."""

    def __init__(self, parent: ModuleLowering, f: Function):
        self.parent = parent
        self.func = f
        self.values: dict[SSAValue, Lowered] = {}
        self.blocks: dict[Block, Block] = {}
        self.block: Block = Block()
        self.entry: Block = Block()
        self.constants: dict[tuple[Attribute, Attribute], SSAValue] = {}

    # -- helpers -----------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def emit_value(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """An `llvm.mlir.constant` of type `t`, shared within the current block.

        For a vector type `t`, a splat of `value`.
        """
        attr: Attribute
        if isinstance(t, VectorType):
            elem = t.get_element_type()
            n = t.get_shape()[0]
            if isinstance(elem, AnyFloat):
                attr = DenseIntOrFPElementsAttr.from_list(t, [float(value)] * n)
            else:
                v = wrap_int(int(value), int_width(elem))
                attr = DenseIntOrFPElementsAttr.from_list(t, [v] * n)
        elif isinstance(t, AnyFloat):
            attr = FloatAttr(float(value), t)
        else:
            assert isinstance(t, IntegerType)
            attr = IntegerAttr(wrap_int(int(value), int_width(t)), t)
        key = (attr, t)
        if (found := self.constants.get(key)) is not None:
            return found
        result = self.emit_value(llvm.ConstantOp(attr, t))
        self.constants[key] = result
        return result

    def get(self, v: SSAValue, where: Operation) -> SSAValue:
        lowered = self.values.get(v)
        if lowered is None:
            raise err(
                where, f"operand {v.name_hint or ''} defined by an unsupported op"
            )
        if isinstance(lowered, MemRef):
            raise err(where, "unexpected memref operand")
        return lowered

    def get_memref(self, v: SSAValue, where: Operation) -> MemRef:
        lowered = self.values.get(v)
        if not isinstance(lowered, MemRef):
            raise err(where, "expected a lowered memref operand")
        return lowered

    def flat(self, values: Sequence[SSAValue], where: Operation) -> list[SSAValue]:
        out: list[SSAValue] = []
        for v in values:
            lowered = self.values.get(v)
            if lowered is None:
                raise err(where, "operand defined by an unsupported op")
            out.extend(lowered.flat() if isinstance(lowered, MemRef) else [lowered])
        return out

    def set(self, result: SSAValue, value: Lowered) -> None:
        self.values[result] = value
        _copy_name(result, value)

    def icmp(self, pred: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(pred)
        return self.emit_value(llvm.ICmpOp(lhs, rhs, IntegerAttr(flag.to_int(), i64)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit_value(llvm.SelectOp(cond, a, b))

    def call_intrinsic(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute,
        flags: llvm.FastMathAttr | None = None,
    ) -> SSAValue:
        call = llvm.CallIntrinsicOp(name, args, [result])
        if flags is not None and flags.data:
            call.fastmathFlags = flags  # no constructor argument in xDSL 0.74
        return self.emit_value(call)

    def call(
        self,
        name: str,
        args: Sequence[SSAValue],
        result: Attribute | None,
        where: Operation,
    ) -> Operation:
        """Call `@name`, declaring it with the types of `args` and `result`."""
        ftype = func_type([a.type for a in args], [result] if result else [])
        self.parent.declare(name, ftype, where)
        return self.emit(llvm.CallOp(name, *args, return_type=result))

    def at_entry(self, ops: list[Operation]) -> None:
        """Insert `ops` at the start of the function's entry block."""
        first = self.entry.first_op
        if first is None:
            self.entry.add_ops(ops)
        else:
            self.entry.insert_ops_before(ops, first)

    # -- driver ------------------------------------------------------------

    def run(self) -> llvm.FuncOp:
        f = self.func
        name = f.sym_name.data
        ftype = self.parent.signatures[name]
        if not f.body.blocks:
            return llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
        attrs: dict[str, Attribute] = {}
        if isinstance(f, gpu.FuncOp):
            if len(f.body.blocks[0].args) != len(f.function_type.inputs):
                raise err(f, "unsupported workgroup or private attributions")
            private = False
            # the dialect attributes (`gpu.kernel`, `nvvm.*`), not `sym_name`
            attrs = {k: v for k, v in f.attributes.items() if "." in k}
        else:
            private = (
                f.sym_visibility is not None and f.sym_visibility.data == "private"
            )

        order = _reverse_post_order(f.body.blocks[0])
        for old in order:
            arg_types = [
                t for a in old.args for t in self.parent.lowered_types(a.type, f)
            ]
            new = Block(arg_types=arg_types)
            self.blocks[old] = new
            it = iter(new.args)
            for a in old.args:
                n = len(self.parent.lowered_types(a.type, f))
                self.set(a, pack(a.type, [next(it) for _ in range(n)]))
        self.entry = self.blocks[order[0]]

        for old in order:
            self.block = self.blocks[old]
            self.constants = {}
            for op in old.ops:
                self.lower(op)

        return llvm.FuncOp(
            name,
            ftype,
            linkage=llvm.LinkageAttr("internal" if private else "external"),
            body=Region([self.blocks[b] for b in order]),
            extra_attrs=attrs,
        )

    def lower(self, op: Operation) -> None:
        name = op.name
        if (handler := self.parent.handlers.get(name)) is not None:
            handler(self, op)
        elif name.startswith("llvm.") and not op.regions and not op.successors:
            lower_llvm_passthrough(self, op)
        else:
            raise TCError(f"convert-to-llvm: unsupported operation '{name}'")


# --------------------------------------------------------------------------
# Handlers for ops that map to one llvm op or intrinsic (shared by the
# dialect modules)
# --------------------------------------------------------------------------


def unary(cls: Callable[..., Operation]) -> Handler:
    """Lower `%r = op %x` to `%r = cls(%x)` (an `llvm.intr.*` op)."""

    def lower(lw: FunctionLowering, op: Operation) -> None:
        lw.set(op.results[0], lw.emit_value(cls(lw.get(op.operands[0], op))))

    return lower


def binary(cls: Callable[..., Operation]) -> Handler:
    """Lower `%r = op %a, %b` to `%r = cls(%a, %b)`."""

    def lower(lw: FunctionLowering, op: Operation) -> None:
        lhs, rhs = (lw.get(v, op) for v in op.operands)
        lw.set(op.results[0], lw.emit_value(cls(lhs, rhs)))

    return lower


def float_intrinsic(intrinsic: str) -> Handler:
    """Lower a float op to `llvm.call_intrinsic "<intrinsic>.<type>"` (`f32`,
    `v8f32`, ...) of its operands, carrying its fast-math flags."""

    def lower(lw: FunctionLowering, op: Operation) -> None:
        t = scalar_type(op.results[0].type, op)
        args = [lw.get(v, op) for v in op.operands]
        name = f"{intrinsic}.{float_suffix(t, op)}"
        lw.set(op.results[0], lw.call_intrinsic(name, args, t, fastmath(op)))

    return lower


# --------------------------------------------------------------------------
# The ops every table has: casts between lowered types, llvm ops
# --------------------------------------------------------------------------


def lower_unrealized_cast(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, UnrealizedConversionCastOp)
    inputs = lw.flat(op.inputs, op)
    out_types = [t for r in op.results for t in lw.parent.lowered_types(r.type, op)]
    if [v.type for v in inputs] != out_types:
        raise err(
            op,
            f"cannot reconcile {[str(v.type) for v in op.inputs]} with "
            f"{[str(r.type) for r in op.results]}",
        )
    it = iter(inputs)
    for r in op.results:
        n = len(lw.parent.lowered_types(r.type, op))
        lw.set(r, pack(r.type, [next(it) for _ in range(n)]))


def lower_llvm_passthrough(lw: FunctionLowering, op: Operation) -> None:
    operands = [lw.get(v, op) for v in op.operands]
    new = op.clone_without_regions()
    for i, v in enumerate(operands):
        new.operands[i] = v
    lw.emit(new)
    for old, res in zip(op.results, new.results, strict=True):
        lw.set(old, res)
