"""llvm-dialect module → LLVM IR text, through llvmlite's IR builder.

`translate(module)` is xDSL's llvmlite converter (`xdsl.backend.llvm`, pinned
0.74) with our own module/function driver: most ops go to xDSL's `convert_op`,
and the converters that are missing or wrong for our pipeline are replaced:

- pointers stay opaque: `llvm.alloca`, `llvm.getelementptr` and
  `llvm.mlir.addressof` give `ptr` / `ptr addrspace(N)` values. xDSL's give
  llvmlite typed pointers, so a store through a GEP into an alloca'd struct
  fails to build, and a GEP on an `addrspace(1|3)` pointer emits an illegal
  bitcast (the NVPTX issue of DESIGN.md §4);
- `llvm.mlir.addressof` of a function (a `ptr` to it);
- indirect `llvm.call` (no callee: the first operand is the function pointer);
- fast-math flags on `llvm.intr.fma` and `llvm.call_intrinsic`; `llvm.fcmp`
  with `_false` / `_true`; `i1` constants; `llvm.intr.stacksave` /
  `stackrestore`;
- `nontemporal` on `llvm.store` (the `!nontemporal !{i32 1}` metadata);
- `llvm.atomicrmw` (ours, `tcdialect.dialects.llvm`; xDSL has none) →
  ``atomicrmw fadd ptr addrspace(1) %p, float %v monotonic``;
- functions: non-external linkage of definitions (`internal`, `private`, ...),
  calling convention, `no_inline` / `no_unwind`, argument attributes, and the
  `ptx_kernel` calling convention for functions carrying a `gpu.kernel` or
  `nvvm.kernel` attribute (the other NVPTX issue of DESIGN.md §4), whose
  `nvvm.maxntid = array<i32: 32, 8, 1>` becomes the function attribute
  `"nvvm.maxntid"="32,8,1"` (PTX's `.maxntid`) and `nvvm.minctasm = 2 : i32`
  the function attribute `"nvvm.minctasm"="2"` (`.minnctapersm 2`);
- `nvvm` ops, as LLVM 22 intrinsics (as `mlir-translate` does; the names come
  from the ops' enumerations, never from text, because a misspelt
  `llvm.nvvm.*` intrinsic can abort the process):
  `nvvm.read.ptx.sreg.tid.x` → `llvm.nvvm.read.ptx.sreg.tid.x()` (and the
  other special registers), `nvvm.barrier0` →
  `llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)`, `nvvm.bar.warp.sync` →
  `llvm.nvvm.bar.warp.sync`, `nvvm.cp.async.shared.global ..., 4` →
  `llvm.nvvm.cp.async.ca.shared.global.4`, `nvvm.cp.async.commit.group`
  and `nvvm.cp.async.wait.group` → their intrinsics, `nvvm.shfl.sync bfly` on an
  `f32` → `llvm.nvvm.shfl.sync.bfly.f32` (`.f32p` returning `{float, i1}`
  with `return_value_and_is_valid`; `i32` likewise);
- globals: linkage, constness, alignment, address space, declarations (an
  external global without a value), and initialisers under `external` linkage;
- a constant-size `llvm.alloca` outside the entry block is emitted at the start
  of the entry block, so an alloca inside a loop (the `tcrt.parallel_for`
  context struct) does not grow the stack on every iteration;
- `bf16` is LLVM's `bfloat` (`BFloatType`; neither llvmlite 0.50 nor xDSL's
  type converter has it, so importing this module registers it with the
  latter), its constants in LLVM's bfloat hex form (`0xR3F80` for 1.0).

Only `llvm.func` and `llvm.mlir.global` may appear at the top level
(`translate_ops` takes them from several modules: the `gpu.module`s of the
`cuda` target). Anything that cannot be translated raises `TCError` naming
the op.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from llvmlite import ir
from xdsl.backend.llvm import convert_type as xdsl_convert_type
from xdsl.backend.llvm.convert_op import convert_op, create_constant
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import LLVMTranslationException

from tcdialect.bfloat16 import to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.dialects import nvvm
from tcdialect.dialects.llvm import AtomicRMWOp

# The llvmlite stubs that come with xDSL leave out attributes llvmlite has
# (`Value.type`, `align`, `initializer`, ...) and type `call(tail=)` as a bool
# where llvmlite takes the kind; the `pyright: ignore` comments are for those.

KERNEL_ATTRS = ("gpu.kernel", "nvvm.kernel")
"""Unit attributes of an `llvm.func` that make it a PTX kernel (`ptx_kernel`)."""
LAUNCH_BOUNDS = ("nvvm.maxntid",)
"""Attributes of a kernel (`array<i32: x, y, z>`) that become the LLVM function
attribute of the same name (`"nvvm.maxntid"="x,y,z"`)."""
MIN_BLOCKS = "nvvm.minctasm"
"""An integer attribute of a kernel that becomes the LLVM function attribute
of the same name (`"nvvm.minctasm"="2"`: PTX's `.minnctapersm 2`)."""

_ARG_FLAGS = {
    "llvm.noalias": "noalias",
    "llvm.nocapture": "nocapture",
    "llvm.nofree": "nofree",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
    "llvm.readonly": "readonly",
    "llvm.writeonly": "writeonly",
    "llvm.returned": "returned",
    "llvm.signext": "signext",
    "llvm.zeroext": "zeroext",
    "llvm.inreg": "inreg",
    "llvm.nest": "nest",
}
_ARG_INTS = {
    "llvm.align": "align",
    "llvm.dereferenceable": "dereferenceable",
    "llvm.dereferenceable_or_null": "dereferenceable_or_null",
}
_ELEMENTWISE_INTRINSICS = frozenset(
    f"llvm.intr.{name}"
    for name in (
        "fabs ceil floor sqrt exp exp2 log log2 log10 sin cos "
        "pow maxnum minnum maximum minimum copysign fma"
    ).split()
)
"""Typed intrinsic ops whose operands and result share one (float) type; they
become calls to the intrinsic mangled by that type (`llvm.maxnum.v8f32`)."""

ValueMap = dict[SSAValue, ir.Value]


class BFloatType(ir.Type):
    """LLVM's `bfloat` type, which llvmlite 0.50 lacks."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BFloatType)

    def __hash__(self) -> int:
        return hash(BFloatType)

    def format_constant(self, value: float) -> str:
        """LLVM's hex form of a bfloat constant: ``0xR`` and its 16 bits."""
        return f"0xR{int(to_bfloat16(np.float32(value))):04X}"


# xDSL's converter (used by `convert_op` for every op it translates) has no
# bf16: register ours, as its table would list it.
xdsl_convert_type._TYPE_CONVERTERS[BFloat16Type] = lambda _: BFloatType()  # pyright: ignore[reportPrivateUsage]


def translate(module: ModuleOp, *, triple: str | None = None) -> str:
    """LLVM IR text of an llvm-dialect module.

    The target triple is the module's `llvm.target_triple` attribute, else
    `triple`, else the host's default triple; a `llvm.data_layout` string
    attribute becomes the data layout. The text is not verified or optimised
    (see `tcdialect.backend.cpu`).
    """
    return str(to_llvmlite(module, triple=triple))


def to_llvmlite(module: ModuleOp, *, triple: str | None = None) -> ir.Module:
    """The llvmlite IR module of an llvm-dialect module (see `translate`)."""
    layout = module.attributes.get("llvm.data_layout")
    return translate_ops(
        module.ops,
        _module_triple(module, triple),
        layout.data if isinstance(layout, StringAttr) else None,
    )


def translate_ops(
    ops: Iterable[Operation], triple: str, data_layout: str | None = None
) -> ir.Module:
    """One llvmlite IR module of `llvm.func`s and `llvm.mlir.global`s (`ops`,
    which may come from several modules) for `triple`."""
    llvm_module = ir.Module()
    llvm_module.triple = triple
    if data_layout is not None:
        llvm_module.data_layout = data_layout

    globals_: list[llvm.GlobalOp] = []
    funcs: list[llvm.FuncOp] = []
    for op in ops:
        match op:
            case llvm.GlobalOp():
                globals_.append(op)
            case llvm.FuncOp():
                funcs.append(op)
            case _:
                raise TCError(
                    f"cannot translate '{op.name}' to LLVM IR: only 'llvm.func' "
                    "and 'llvm.mlir.global' may appear at the top level"
                )
    try:
        for global_op in globals_:
            _declare_global(global_op, llvm_module)
        declared = [(op, _declare_func(op, llvm_module)) for op in funcs]
        for op, func in declared:
            if op.body.blocks:
                _define_func(op, func)
    except LLVMTranslationException as err:
        raise TCError(f"cannot translate to LLVM IR: {err}") from None
    return llvm_module


def _module_triple(module: ModuleOp, triple: str | None) -> str:
    attr = module.attributes.get("llvm.target_triple")
    if attr is not None:
        if not isinstance(attr, StringAttr):
            raise TCError(f"llvm.target_triple must be a string, got {attr}")
        return attr.data
    if triple is not None:
        return triple
    from llvmlite import binding

    return binding.get_default_triple()


def _declare_global(op: llvm.GlobalOp, llvm_module: ir.Module) -> None:
    gvar = ir.GlobalVariable(
        llvm_module,
        convert_type(op.global_type),
        name=op.sym_name.data,
        addrspace=op.addr_space.value.data,
    )
    linkage = op.linkage.linkage.data
    gvar.global_constant = op.constant is not None
    if op.alignment is not None:
        gvar.align = op.alignment.value.data  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(op.value, StringAttr):
        raw = op.value.data.encode("utf-8")
        gvar.initializer = ir.Constant(  # pyright: ignore[reportAttributeAccessIssue]
            ir.ArrayType(ir.IntType(8), len(raw)), bytearray(raw)
        )
    elif op.value is not None:
        gvar.initializer = _constant(op.global_type, op.value)  # pyright: ignore[reportAttributeAccessIssue]
    # `external` with an initializer is a definition with default linkage.
    gvar.linkage = "" if linkage == "external" and op.value is not None else linkage


def _declare_func(op: llvm.FuncOp, llvm_module: ir.Module) -> ir.Function:
    ftype = op.function_type
    func = ir.Function(
        llvm_module,
        ir.FunctionType(
            convert_type(ftype.output),
            [convert_type(t) for t in ftype.inputs],
            var_arg=ftype.is_variadic,
        ),
        name=op.sym_name.data,
    )
    linkage = op.linkage.linkage.data
    if op.body.blocks and linkage != "external":
        func.linkage = linkage
    elif not op.body.blocks and linkage == "extern_weak":
        func.linkage = linkage
    cconv = op.CConv.cconv_name
    if any(name in op.attributes for name in KERNEL_ATTRS):
        cconv = "ptx_kernel"
        for name in LAUNCH_BOUNDS:
            if (bound := op.attributes.get(name)) is not None:
                _add_launch_bound(func, name, bound)
        if (blocks := op.attributes.get(MIN_BLOCKS)) is not None:
            if not isinstance(blocks, IntegerAttr):
                raise TCError(f"{MIN_BLOCKS} must be an integer, not {blocks}")
            set.add(func.attributes, f'"{MIN_BLOCKS}"="{blocks.value.data}"')
    if cconv != "ccc":
        func.calling_convention = cconv
    if op.no_inline is not None:
        func.attributes.add("noinline")
    if op.no_unwind is not None:
        func.attributes.add("nounwind")
    if op.body.blocks:
        for arg, block_arg in zip(func.args, op.body.blocks[0].args):
            if block_arg.name_hint is not None:
                arg.name = _value_name(block_arg.name_hint)
    if op.arg_attrs is not None:
        for arg, attrs in zip(func.args, op.arg_attrs.data):
            _add_arg_attrs(arg, attrs.data)
    return func


def _add_launch_bound(func: ir.Function, name: str, bound: Attribute) -> None:
    if not isinstance(bound, DenseArrayBase) or bound.elt_type != i32:
        raise TCError(f"{name} must be an array<i32: ...>, not {bound}")
    sizes = ",".join(str(a.value.data) for a in bound.iter_attrs())
    # llvmlite's attribute set accepts only its list of names: add the
    # string attribute to the underlying set.
    set.add(func.attributes, f'"{name}"="{sizes}"')


#: Longest value name given to LLVM. LLVM cuts local names at 1024 characters
#: when it reads IR text, so two long names that differ only later became one
#: ("redefinition of argument"); llvmlite makes cut names unique again.
_MAX_NAME = 64


def _value_name(hint: str) -> str:
    return hint[:_MAX_NAME]


def _add_arg_attrs(arg: ir.Argument, attrs: Mapping[str, Attribute]) -> None:
    for name, value in attrs.items():
        if name in _ARG_FLAGS:
            arg.add_attribute(_ARG_FLAGS[name])
        elif name in _ARG_INTS and isinstance(value, IntegerAttr):
            setattr(arg.attributes, _ARG_INTS[name], value.value.data)


def _define_func(op: llvm.FuncOp, func: ir.Function) -> None:
    blocks = list(op.body.blocks)
    block_map: dict[Block, ir.Block] = {}
    for i, block in enumerate(blocks):
        block_map[block] = func.append_basic_block("entry" if i == 0 else f"bb{i}")
    entry = block_map[blocks[0]]
    val_map: ValueMap = dict(zip(blocks[0].args, func.args))
    # Block arguments are phis; branches add their incoming values.
    for block in blocks[1:]:
        builder = ir.IRBuilder(block_map[block])
        for arg in block.args:
            val_map[arg] = builder.phi(
                convert_type(arg.type), name=_value_name(arg.name_hint or "")
            )
    for block in blocks:
        builder = ir.IRBuilder(block_map[block])
        for op_in_block in block.ops:
            _convert(op_in_block, builder, val_map, block_map, entry)


def _convert(
    op: Operation,
    builder: ir.IRBuilder,
    val_map: ValueMap,
    block_map: dict[Block, ir.Block],
    entry: ir.Block,
) -> None:
    try:
        _convert_op(op, builder, val_map, block_map, entry)
    except KeyError as err:
        value = err.args[0] if err.args else None
        if isinstance(value, SSAValue):
            name = f"%{value.name_hint}" if value.name_hint else "a value"
            raise TCError(
                f"cannot translate '{op.name}' to LLVM IR: it uses {name} "
                f"before its definition"
            ) from None
        raise TCError(f"cannot translate '{op.name}' to LLVM IR: {err}") from None
    except (NotImplementedError, LLVMTranslationException, TypeError) as err:
        raise TCError(f"cannot translate '{op.name}' to LLVM IR: {err}") from None
    for result in op.results:
        value = val_map.get(result)
        if result.name_hint is not None and isinstance(value, ir.Instruction):
            value.name = _value_name(result.name_hint)


def _convert_op(
    op: Operation,
    builder: ir.IRBuilder,
    val_map: ValueMap,
    block_map: dict[Block, ir.Block],
    entry: ir.Block,
) -> None:
    match op:
        case llvm.GEPOp():
            _convert_gep(op, builder, val_map)
        case llvm.ShuffleVectorOp():
            _convert_shuffle(op, builder, val_map)
        case llvm.AllocaOp():
            _convert_alloca(op, builder, val_map, entry)
        case llvm.StoreOp():
            _convert_store(op, builder, val_map)
        case AtomicRMWOp():
            ordering = llvm.ATOMIC_ORDERING_KEYWORDS[op.ordering.value.data]
            val_map[op.res] = builder.atomic_rmw(
                op.operation, val_map[op.ptr], val_map[op.val], ordering
            )
        case llvm.AddressOfOp():
            _convert_addressof(op, builder, val_map)
        case llvm.CallOp():
            _convert_call(op, builder, val_map)
        case llvm.CallIntrinsicOp():
            _convert_call_intrinsic(op, builder, val_map)
        case _ if op.name in _ELEMENTWISE_INTRINSICS:
            result_type = convert_type(op.results[0].type)
            flags = getattr(op, "fastmathFlags", None)
            val_map[op.results[0]] = _call_intrinsic(
                builder,
                f"llvm.{op.name.removeprefix('llvm.intr.')}.{_suffix(result_type)}",
                [val_map[operand] for operand in op.operands],
                result_type,
                _fastmath(flags) if isinstance(flags, llvm.FastMathAttr) else [],
            )
        case llvm.FCmpOp():
            _convert_fcmp(op, builder, val_map)
        case llvm.ConstantOp():
            val_map[op.result] = _constant(op.result.type, op.value)
        case llvm.StackSaveOp():
            val_map[op.res] = _call_intrinsic(
                builder, "llvm.stacksave.p0", [], ir.PointerType(), []
            )
        case llvm.StackRestoreOp():
            _call_intrinsic(
                builder, "llvm.stackrestore.p0", [val_map[op.ptr]], ir.VoidType(), []
            )
        case nvvm.SpecialRegisterOp():
            val_map[op.res] = _call_intrinsic(
                builder, f"llvm.{op.name}", [], ir.IntType(32), []
            )
        case nvvm.Barrier0Op():
            zero = ir.Constant(ir.IntType(32), 0)
            _call_intrinsic(
                builder,
                "llvm.nvvm.barrier.cta.sync.aligned.all",
                [zero],
                ir.VoidType(),
                [],
            )
        case nvvm.BarWarpSyncOp():
            _call_intrinsic(
                builder,
                "llvm.nvvm.bar.warp.sync",
                [val_map[op.mask]],
                ir.VoidType(),
                [],
            )
        case nvvm.ShflSyncOp():
            _convert_shfl_sync(op, builder, val_map)
        case nvvm.CpAsyncSharedGlobalOp():
            _call_intrinsic(
                builder,
                f"llvm.nvvm.cp.async.ca.shared.global.{op.size.value.data}",
                [val_map[op.dst], val_map[op.src]],
                ir.VoidType(),
                [],
            )
        case nvvm.CpAsyncCommitGroupOp():
            _call_intrinsic(
                builder, "llvm.nvvm.cp.async.commit.group", [], ir.VoidType(), []
            )
        case nvvm.CpAsyncWaitGroupOp():
            n = ir.Constant(ir.IntType(32), op.n.value.data)
            _call_intrinsic(
                builder, "llvm.nvvm.cp.async.wait.group", [n], ir.VoidType(), []
            )
        case _:
            convert_op(op, builder, val_map, block_map)


def _convert_shfl_sync(
    op: nvvm.ShflSyncOp, builder: ir.IRBuilder, val_map: ValueMap
) -> None:
    """`llvm.nvvm.shfl.sync.<kind>.<f32|i32>[p]` (the op's verifier allows
    only those two types)."""
    kind = nvvm.ShflKind(op.kind.data).value
    elem = "f32" if op.val.type == f32 else "i32"
    valid = "p" if op.return_value_and_is_valid is not None else ""
    args = [val_map[v] for v in (op.thread_mask, op.val, op.offset, op.mask_and_clamp)]
    val_map[op.res] = _call_intrinsic(
        builder,
        f"llvm.nvvm.shfl.sync.{kind}.{elem}{valid}",
        args,
        convert_type(op.res.type),
        [],
    )


def _convert_shuffle(
    op: llvm.ShuffleVectorOp, builder: ir.IRBuilder, val_map: ValueMap
) -> None:
    """A mask lane of -1 is undefined in LLVM; llvmlite refuses it, so it
    takes lane 0 (one of the values an undefined lane may have)."""
    v1 = val_map[op.v1]
    lanes = 2 * v1.type.count  # pyright: ignore[reportAttributeAccessIssue]
    mask = [int(m) for m in op.mask.get_values()]
    if any(not -1 <= m < lanes for m in mask):
        raise TCError(
            f"llvm.shufflevector: mask {mask} has a lane outside [-1, {lanes})"
        )
    values = [0 if m == -1 else m for m in mask]
    const = ir.Constant(ir.VectorType(ir.IntType(32), len(values)), values)
    val_map[op.res] = builder.shuffle_vector(v1, val_map[op.v2], const)


def _convert_gep(op: llvm.GEPOp, builder: ir.IRBuilder, val_map: ValueMap) -> None:
    raw = list(op.rawConstantIndices.iter_values())
    if raw.count(llvm.GEP_USE_SSA_VAL) != len(op.ssa_indices):
        raise TCError(
            f"llvm.getelementptr: constant index {llvm.GEP_USE_SSA_VAL} is "
            f"reserved (xDSL marks SSA indices with it)"
        )
    ssa_indices = iter(op.ssa_indices)
    indices = [
        val_map[next(ssa_indices)]
        if idx == llvm.GEP_USE_SSA_VAL
        else ir.Constant(ir.IntType(32), idx)
        for idx in op.rawConstantIndices.iter_values()
    ]
    gep = builder.gep(
        val_map[op.ptr],
        indices,
        inbounds=op.inbounds is not None,
        source_etype=convert_type(op.elem_type),
    )
    gep.type = convert_type(op.result.type)
    val_map[op.result] = gep


def _convert_store(op: llvm.StoreOp, builder: ir.IRBuilder, val_map: ValueMap) -> None:
    store = builder.store(val_map[op.value], val_map[op.ptr])
    if op.alignment is not None:
        store.align = op.alignment.value.data  # pyright: ignore[reportAttributeAccessIssue]
    if op.nontemporal is not None:
        one = ir.Constant(ir.IntType(32), 1)
        store.set_metadata("nontemporal", builder.module.add_metadata([one]))


def _convert_alloca(
    op: llvm.AllocaOp, builder: ir.IRBuilder, val_map: ValueMap, entry: ir.Block
) -> None:
    size = val_map[op.size]
    if builder.block is not entry and isinstance(size, ir.Constant):
        builder = ir.IRBuilder(entry)
        builder.position_at_start(entry)
    alloca = builder.alloca(convert_type(op.elem_type), size=size)
    alloca.type = convert_type(op.res.type)
    if op.alignment is not None:
        alloca.align = op.alignment.value.data  # pyright: ignore[reportAttributeAccessIssue]
    val_map[op.res] = alloca


def _convert_addressof(
    op: llvm.AddressOfOp, builder: ir.IRBuilder, val_map: ValueMap
) -> None:
    name = op.global_name.root_reference.data
    try:
        symbol = builder.module.get_global(name)
    except KeyError:
        raise TCError(
            f"cannot translate 'llvm.mlir.addressof': no global or function @{name}"
        ) from None
    val_map[op.result] = ir.FormattedConstant(
        convert_type(op.result.type), symbol.get_reference()
    )


class _IndirectCallee:
    """A function pointer seen by llvmlite's `CallInstr` as a callee."""

    def __init__(self, pointer: ir.Value, function_type: ir.FunctionType):
        self.pointer = pointer
        self.type = pointer.type  # pyright: ignore[reportAttributeAccessIssue]
        self.function_type = function_type

    def get_reference(self) -> str:
        return self.pointer.get_reference()  # pyright: ignore[reportAttributeAccessIssue]


def _convert_call(op: llvm.CallOp, builder: ir.IRBuilder, val_map: ValueMap) -> None:
    if op.op_bundle_operands or op.op_bundle_sizes.get_values():
        raise NotImplementedError("operand bundles are not supported")
    args = [val_map[arg] for arg in op.args]
    result_type = (
        convert_type(op.returned.type) if op.returned is not None else ir.VoidType()
    )
    if op.callee is not None:
        callee = builder.module.get_global(op.callee.string_value())
    else:
        if op.var_callee_type is not None:
            ftype = convert_type(op.var_callee_type)
            assert isinstance(ftype, ir.FunctionType)
        else:
            ftype = ir.FunctionType(result_type, [a.type for a in args[1:]])  # pyright: ignore[reportAttributeAccessIssue]
        callee = _IndirectCallee(args[0], ftype)
        args = args[1:]
    fastmath = _fastmath(op.fastmathFlags) if _is_float(result_type) else []
    tail = op.TailCallKind.data.value
    call = builder.call(
        callee,  # pyright: ignore[reportArgumentType]
        args,
        cconv=op.CConv.cconv_name,
        tail=tail if tail != "none" else None,  # pyright: ignore[reportArgumentType]
        fastmath=fastmath,
    )
    if op.returned is not None:
        val_map[op.returned] = call


def _convert_call_intrinsic(
    op: llvm.CallIntrinsicOp, builder: ir.IRBuilder, val_map: ValueMap
) -> None:
    if op.op_bundle_operands or op.op_bundle_sizes.get_values():
        raise NotImplementedError("operand bundles are not supported")
    result_type = convert_type(op.ress.type) if op.ress is not None else ir.VoidType()
    result = _call_intrinsic(
        builder,
        op.intrin.data,
        [val_map[arg] for arg in op.args],
        result_type,
        _fastmath(op.fastmathFlags) if _is_float(result_type) else [],
    )
    if op.ress is not None:
        val_map[op.ress] = result


def _call_intrinsic(
    builder: ir.IRBuilder,
    name: str,
    args: Sequence[ir.Value],
    result_type: ir.Type,
    fastmath: Sequence[str],
) -> ir.Instruction:
    """Call intrinsic `name` (fully mangled), declaring it on first use."""
    module = builder.module
    if name in module.globals:
        func = module.globals[name]
    else:
        ftype = ir.FunctionType(result_type, [a.type for a in args])  # pyright: ignore[reportAttributeAccessIssue]
        func = ir.Function(module, ftype, name=name)
    return builder.call(func, list(args), fastmath=tuple(fastmath))


def _convert_fcmp(op: llvm.FCmpOp, builder: ir.IRBuilder, val_map: ValueMap) -> None:
    # llvmlite passes predicates it has no alias for (all of LLVM's) through.
    pred = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
    val_map[op.res] = builder.fcmp_ordered(
        pred.removeprefix("_"),
        val_map[op.lhs],
        val_map[op.rhs],
        flags=_fastmath(op.fastmathFlags),
    )


def _constant(result_type: Attribute, value: Attribute) -> ir.Constant:
    if isinstance(result_type, IntegerType) and isinstance(value, IntegerAttr):
        width = result_type.width.data
        raw = value.value.data
        if width == 1:
            return ir.Constant(ir.IntType(1), 1 if raw else 0)
        return ir.Constant(ir.IntType(width), raw)
    return create_constant(result_type, value)


def _fastmath(attr: llvm.FastMathAttr) -> list[str]:
    return [flag.value for flag in attr.data]


def _is_float(t: ir.Type) -> bool:
    if isinstance(t, ir.VectorType):
        t = t.element
    return isinstance(t, ir.HalfType | BFloatType | ir.FloatType | ir.DoubleType)


def _suffix(t: ir.Type) -> str:
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{t.element.intrinsic_name}"
    return t.intrinsic_name  # pyright: ignore[reportAttributeAccessIssue]
