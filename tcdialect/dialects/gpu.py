"""The `gpu` dialect, shaped like MLIR 22's for the ops tcdialect uses.

It replaces xDSL's `gpu` (see `tcdialect.dialects.get_all_dialects`), whose
`gpu.func` keeps `kernel` as a property (mlir-opt drops it) and names
`known_block_size` differently. Here every op has MLIR 22's name, operands,
properties and attributes, and prints and parses MLIR 22's custom syntax, so
that mlir-opt accepts the `gpu` stage in either form and we read what
mlir-opt prints::

    builtin.module attributes {gpu.container_module} {
      func.func @host(%A: memref<?xf32>, %n: index) {
        gpu.launch_func @kernels::@f blocks in (%gx, %c1, %c1)
            threads in (%c128, %c1, %c1) dynamic_shared_memory_size %s
            args(%A : memref<?xf32>, %n : index)
        func.return
      }
      gpu.module @kernels {
        gpu.func @f(%A: memref<?xf32>, %n: index)
            workgroup(%w : memref<32xf32, 3>) private(%p : memref<4xf32>)
            kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
          %t = gpu.thread_id x          // block_id, block_dim, grid_dim
          %l = gpu.lane_id
          gpu.barrier
          %r, %ok = gpu.shuffle xor %v, %offset, %width : f32
          gpu.return
        }
      }
    }

(MLIR prints two spaces after `gpu.thread_id`, `gpu.shuffle` and
`gpu.launch_func`, an artefact of its format; we print one. Both parse.)

Generic form, as MLIR 22's: `gpu.module`'s `sym_name` is a property;
`gpu.func` has the properties `function_type`, `known_block_size` and
`known_grid_size` and the attributes `sym_name`, `workgroup_attributions`
(how many entry block arguments after the function's own are workgroup
buffers, the rest being private buffers; always set when built or parsed
from the custom form, as by MLIR, but read as 0 when absent) and `gpu.kernel`
(the unit attribute that makes it a kernel); `gpu.launch_func` has MLIR's 13
operand segments (async dependencies, grid x/y/z, block x/y/z, cluster x/y/z,
dynamic shared memory size, kernel operands, async object), of which the
async ones stay empty here.

The verifiers are MLIR's, with its messages: a kernel returns nothing,
attributions are memrefs, `gpu.return` matches the function's results, and a
`gpu.launch_func` sits in a module with `gpu.container_module` and names an
existing kernel whose argument types are those of its operands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    AnyFloatConstr,
    DenseArrayBase,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.gpu import DimensionAttr, DimensionEnum
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

#: The unit attribute that marks a `gpu.func` as a kernel (MLIR's name).
KERNEL_ATTR = "gpu.kernel"
#: Unit attribute of the builtin module that holds `gpu.module`s.
CONTAINER_ATTR = "gpu.container_module"


class ShuffleMode(StrEnum):
    XOR = "xor"
    UP = "up"
    DOWN = "down"
    IDX = "idx"


@irdl_attr_definition
class ShuffleModeAttr(EnumAttribute[ShuffleMode], SpacedOpaqueSyntaxAttribute):
    """`#gpu<shuffle_mode xor>`."""

    name = "gpu.shuffle_mode"


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """`gpu.module @name { ... }`: the device code, a symbol table."""

    name = "gpu.module"
    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    traits = traits_def(
        IsolatedFromAbove(), SymbolOpInterface(), SymbolTable(), NoTerminator()
    )

    def __init__(self, name: str, ops: Sequence[Operation] = ()):
        super().__init__(
            properties={"sym_name": StringAttr(name)},
            regions=[Region(Block(ops))],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        name = parser.parse_symbol_name().data
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        return cls.create(
            properties={"sym_name": StringAttr(name)},
            attributes=attrs.data if attrs is not None else {},
            regions=[region],
        )


def _print_arguments(printer: Printer, args: Sequence[BlockArgument], sep: str) -> None:
    """`(%a<sep>T, ...)`: MLIR prints `%a: T` for a function's arguments and
    `%a : T` for attributions."""

    def print_one(arg: BlockArgument) -> None:
        printer.print_ssa_value(arg)
        printer.print_string(sep)
        printer.print_attribute(arg.type)

    with printer.in_parens():
        printer.print_list(args, print_one)


@irdl_op_definition
class FuncOp(IRDLOperation):
    """`gpu.func`: a device function, a kernel when it has `gpu.kernel`.

    As in MLIR 22: `function_type` and the launch bounds `known_block_size` /
    `known_grid_size` are properties; `sym_name`, `workgroup_attributions`
    (how many block arguments after the function's own are workgroup
    buffers) and `gpu.kernel` are attributes. Custom form::

        gpu.func @f(%a: memref<?xf32>) [-> results] [workgroup(%w : T, ...)]
            [private(%p : T, ...)] [kernel] [attributes {...}] { ... }

    where the attribute dictionary also shows the launch bounds.
    """

    name = "gpu.func"
    body = region_def()
    sym_name = attr_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    known_block_size = opt_prop_def(DenseArrayBase.constr(i32))
    known_grid_size = opt_prop_def(DenseArrayBase.constr(i32))
    workgroup_attributions = opt_attr_def(IntegerAttr)
    traits = traits_def(IsolatedFromAbove(), HasParent(ModuleOp), SymbolOpInterface())

    #: The attributes of the generic form that the custom form spells otherwise.
    _RESERVED: ClassVar[tuple[str, ...]] = (
        "sym_name",
        "function_type",
        "workgroup_attributions",
        KERNEL_ATTR,
    )
    _BOUNDS: ClassVar[tuple[str, ...]] = ("known_block_size", "known_grid_size")

    def __init__(
        self,
        name: str,
        function_type: FunctionType,
        region: Region,
        kernel: bool = True,
        known_block_size: Sequence[int] | None = None,
        known_grid_size: Sequence[int] | None = None,
        workgroup_attributions: int = 0,
    ):
        props: dict[str, Attribute] = {"function_type": function_type}
        if known_block_size is not None:
            props["known_block_size"] = DenseArrayBase.from_list(i32, known_block_size)
        if known_grid_size is not None:
            props["known_grid_size"] = DenseArrayBase.from_list(i32, known_grid_size)
        # in the order mlir-opt prints them (sorted), and always the count of
        # workgroup attributions, as MLIR's builder and parser do
        attrs: dict[str, Attribute] = {KERNEL_ATTR: UnitAttr()} if kernel else {}
        attrs["sym_name"] = StringAttr(name)
        attrs["workgroup_attributions"] = IntegerAttr(workgroup_attributions, i64)
        super().__init__(properties=props, attributes=attrs, regions=[region])

    @property
    def is_kernel(self) -> bool:
        return KERNEL_ATTR in self.attributes

    @property
    def num_workgroup_attributions(self) -> int:
        if self.workgroup_attributions is None:
            return 0
        return self.workgroup_attributions.value.data

    @property
    def args(self) -> Sequence[BlockArgument]:
        """The entry block's arguments: the function's, then the attributions."""
        entry = self.body.blocks.first
        return entry.args if entry is not None else ()

    def _attributions(self) -> tuple[Sequence[BlockArgument], Sequence[BlockArgument]]:
        """The workgroup and the private attributions (entry block arguments)."""
        args = self.args
        first = len(self.function_type.inputs)
        last = first + self.num_workgroup_attributions
        return args[first:last], args[last:]

    def verify_(self) -> None:
        fn = self.function_type
        if self.is_kernel and fn.outputs.data:
            raise VerifyException("expected void return type for kernel function")
        for bound in (self.known_block_size, self.known_grid_size):
            if bound is not None and len(bound) != 3:
                raise VerifyException(
                    "known_block_size and known_grid_size must be i32 dense "
                    f"arrays with 3 elements, got {bound}"
                )
        if not self.body.blocks:
            raise VerifyException("expected body with at least one block")
        args = self.args
        n = len(fn.inputs)
        if len(args) < n + self.num_workgroup_attributions:
            raise VerifyException(
                f"expected at least {n + self.num_workgroup_attributions} entry "
                f"block arguments, got {len(args)}"
            )
        if tuple(a.type for a in args[:n]) != fn.inputs.data:
            raise VerifyException(
                "entry block argument types do not match the function type"
            )
        workgroup, private = self._attributions()
        for arg in (*workgroup, *private):
            if not isinstance(arg.type, MemRefType):
                raise VerifyException("expected memref type in attribution")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        n = len(self.function_type.inputs)
        _print_arguments(printer, self.args[:n], ": ")
        outputs = self.function_type.outputs.data
        if len(outputs) == 1 and not isinstance(outputs[0], FunctionType):
            printer.print_string(" -> ")
            printer.print_attribute(outputs[0])
        elif outputs:
            printer.print_string(" -> ")
            with printer.in_parens():
                printer.print_list(outputs, printer.print_attribute)
        workgroup, private = self._attributions()
        for keyword, buffers in (("workgroup", workgroup), ("private", private)):
            if buffers:
                printer.print_string(f" {keyword}")
                _print_arguments(printer, buffers, " : ")
        if self.is_kernel:
            printer.print_string(" kernel")
        shown = {k: v for k, v in self.attributes.items() if k not in self._RESERVED}
        shown.update({k: v for k, v in self.properties.items() if k in self._BOUNDS})
        printer.print_op_attributes(dict(sorted(shown.items())), print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        outputs: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            parens = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            )
            outputs = [parser.parse_type()] if parens is None else list(parens)
        attributions: dict[str, list[Parser.Argument]] = {}
        for keyword in ("workgroup", "private"):
            if parser.parse_optional_keyword(keyword) is not None:
                attributions[keyword] = parser.parse_comma_separated_list(
                    parser.Delimiter.PAREN, parser.parse_argument
                )
        kernel = parser.parse_optional_keyword("kernel") is not None
        extra = parser.parse_optional_attr_dict_with_keyword(cls._RESERVED)
        attrs = dict(extra.data) if extra is not None else {}
        bounds = {k: attrs.pop(k) for k in cls._BOUNDS if k in attrs}
        workgroup = attributions.get("workgroup", [])
        region = parser.parse_region(
            [*args, *workgroup, *attributions.get("private", [])]
        )
        op = cls(
            name,
            FunctionType.from_lists([a.type for a in args], outputs),
            region,
            kernel=kernel,
            workgroup_attributions=len(workgroup),
        )
        op.properties.update(bounds)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """`gpu.return [%v : T]`: returns from a `gpu.func`."""

    name = "gpu.return"
    args = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FuncOp))
    assembly_format = "attr-dict ($args^ `:` type($args))?"

    def __init__(self, args: Sequence[SSAValue | Operation] = ()):
        super().__init__(operands=[args])

    def verify_(self) -> None:
        func = self.parent_op()
        assert isinstance(func, FuncOp)  # HasParent(FuncOp), verified first
        expected = func.function_type.outputs.data
        if len(self.args) != len(expected):
            raise VerifyException(f"expected {len(expected)} result operands")
        for i, (arg, want) in enumerate(zip(self.args, expected)):
            if arg.type != want:
                raise VerifyException(f"unexpected type `{arg.type}` for operand #{i}")


def _parse_triple(parser: Parser, keyword: str) -> list[UnresolvedOperand]:
    """`<keyword> in (%x, %y, %z)`, the keyword already consumed."""
    parser.parse_keyword("in")
    triple = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    if len(triple) != 3:
        parser.raise_error(f"expected three {keyword} sizes")
    return triple


@irdl_op_definition
class LaunchFuncOp(IRDLOperation):
    """`gpu.launch_func`: launch a kernel from the host (MLIR 22's 13 operand
    segments: async dependencies, grid x/y/z, block x/y/z, cluster x/y/z,
    dynamic shared memory size, kernel operands, async object). Custom form::

        gpu.launch_func @module::@kernel [clusters in (%cx, %cy, %cz)]
            blocks in (%gx, %gy, %gz) threads in (%bx, %by, %bz)
            [dynamic_shared_memory_size %s] [args(%a : T, ...)] [attr-dict]
    """

    name = "gpu.launch_func"
    asyncDependencies = var_operand_def()
    gridSizeX = operand_def(IndexType)
    gridSizeY = operand_def(IndexType)
    gridSizeZ = operand_def(IndexType)
    blockSizeX = operand_def(IndexType)
    blockSizeY = operand_def(IndexType)
    blockSizeZ = operand_def(IndexType)
    clusterSizeX = opt_operand_def(IndexType)
    clusterSizeY = opt_operand_def(IndexType)
    clusterSizeZ = opt_operand_def(IndexType)
    dynamicSharedMemorySize = opt_operand_def(i32)
    kernelOperands = var_operand_def()
    asyncObject = opt_operand_def()
    kernel = prop_def(SymbolRefAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kernel: SymbolRefAttr,
        grid: Sequence[SSAValue | Operation],
        block: Sequence[SSAValue | Operation],
        args: Sequence[SSAValue | Operation],
        dynamic_shared_memory_size: SSAValue | Operation | None = None,
        cluster: Sequence[SSAValue | Operation] = (),
    ):
        if len(grid) != 3 or len(block) != 3 or len(cluster) not in (0, 3):
            raise ValueError(
                "gpu.launch_func needs three grid, three block and no or three "
                "cluster sizes"
            )
        super().__init__(
            operands=[
                [],
                *grid,
                *block,
                *(([c] for c in cluster) if cluster else ([], [], [])),
                []
                if dynamic_shared_memory_size is None
                else [dynamic_shared_memory_size],
                args,
                [],
            ],
            properties={"kernel": kernel},
        )

    @property
    def grid(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        return (self.gridSizeX, self.gridSizeY, self.gridSizeZ)

    @property
    def block(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        return (self.blockSizeX, self.blockSizeY, self.blockSizeZ)

    @property
    def cluster(self) -> tuple[SSAValue, ...]:
        sizes = (self.clusterSizeX, self.clusterSizeY, self.clusterSizeZ)
        return tuple(s for s in sizes if s is not None)

    def verify_(self) -> None:
        if self.asyncDependencies or self.asyncObject is not None:
            raise VerifyException("async launches are not supported")
        if len(self.cluster) not in (0, 3):
            raise VerifyException("expected three cluster sizes or none")
        module = self.parent_op()
        while module is not None and not isinstance(module, builtin.ModuleOp):
            module = module.parent_op()
        if module is None:
            raise VerifyException("expected to belong to a module")
        if CONTAINER_ATTR not in module.attributes:
            raise VerifyException(
                "expected the closest surrounding module to have the "
                f"'{CONTAINER_ATTR}' attribute"
            )
        container = SymbolTable.lookup_symbol(module, self.kernel.root_reference)
        if not isinstance(container, ModuleOp):
            raise VerifyException(
                f"kernel container '{self.kernel.root_reference.data}' is undefined"
            )
        func = SymbolTable.lookup_symbol(module, self.kernel)
        if func is None:
            raise VerifyException(f"kernel function '{self.kernel}' is undefined")
        # after the device side is lowered, the kernel is an llvm.func
        if not isinstance(func, FuncOp | llvm.FuncOp):
            raise VerifyException(
                f"referenced kernel '{self.kernel}' is not a function"
            )
        if KERNEL_ATTR not in func.attributes:
            raise VerifyException(
                f"kernel function is missing the '{KERNEL_ATTR}' attribute"
            )
        if isinstance(func, llvm.FuncOp):
            return  # as MLIR: the types are those of the lowered arguments
        inputs = func.function_type.inputs.data
        if len(self.kernelOperands) != len(inputs):
            raise VerifyException(
                f"got {len(self.kernelOperands)} kernel operands but expected "
                f"{len(inputs)}"
            )
        for i, (arg, want) in enumerate(zip(self.kernelOperands, inputs)):
            if arg.type != want:
                raise VerifyException(f"type of function argument {i} does not match")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.kernel)
        for keyword, sizes in (
            ("clusters", self.cluster),
            ("blocks", self.grid),
            ("threads", self.block),
        ):
            if sizes:
                printer.print_string(f" {keyword} in ")
                printer.print_operands(sizes)
        if self.dynamicSharedMemorySize is not None:
            printer.print_string(" dynamic_shared_memory_size ")
            printer.print_operand(self.dynamicSharedMemorySize)
        if self.kernelOperands:

            def print_arg(arg: SSAValue) -> None:
                printer.print_operand(arg)
                printer.print_string(" : ")
                printer.print_attribute(arg.type)

            printer.print_string(" args")
            with printer.in_parens():
                printer.print_list(self.kernelOperands, print_arg)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchFuncOp:
        kernel = parser.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("expected a kernel symbol such as @module::@kernel")
        index = IndexType()
        cluster: list[SSAValue] = []
        if parser.parse_optional_keyword("clusters") is not None:
            cluster = [
                parser.resolve_operand(o, index)
                for o in _parse_triple(parser, "cluster")
            ]
        parser.parse_keyword("blocks")
        grid = [parser.resolve_operand(o, index) for o in _parse_triple(parser, "grid")]
        parser.parse_keyword("threads")
        block = [
            parser.resolve_operand(o, index) for o in _parse_triple(parser, "block")
        ]
        smem = None
        if parser.parse_optional_keyword("dynamic_shared_memory_size") is not None:
            smem = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
        args: list[SSAValue] = []
        if parser.parse_optional_keyword("args") is not None:

            def parse_arg() -> SSAValue:
                operand = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                return parser.resolve_operand(operand, parser.parse_type())

            args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_arg)
        attrs = parser.parse_optional_attr_dict()
        op = cls(kernel, grid, block, args, smem, cluster)
        op.attributes.update(attrs)
        return op


class _DimOp(IRDLOperation):
    dimension = prop_def(DimensionAttr)
    result = result_def(IndexType)
    assembly_format = "$dimension attr-dict"
    traits = traits_def(Pure())  # as in MLIR: CSE merges repeated queries

    def __init__(self, dim: str):
        super().__init__(
            properties={"dimension": DimensionAttr(DimensionEnum(dim))},
            result_types=[IndexType()],
        )


@irdl_op_definition
class ThreadIdOp(_DimOp):
    """`gpu.thread_id x`: threadIdx."""

    name = "gpu.thread_id"


@irdl_op_definition
class BlockIdOp(_DimOp):
    """`gpu.block_id x`: blockIdx."""

    name = "gpu.block_id"


@irdl_op_definition
class BlockDimOp(_DimOp):
    """`gpu.block_dim x`: blockDim."""

    name = "gpu.block_dim"


@irdl_op_definition
class GridDimOp(_DimOp):
    """`gpu.grid_dim x`: gridDim."""

    name = "gpu.grid_dim"


@irdl_op_definition
class LaneIdOp(IRDLOperation):
    """`gpu.lane_id`: the thread's lane in its warp."""

    name = "gpu.lane_id"
    result = result_def(IndexType)
    assembly_format = "attr-dict"
    traits = traits_def(Pure())

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """`gpu.barrier`: every thread of the block waits here (`__syncthreads`)."""

    name = "gpu.barrier"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """`%r, %valid = gpu.shuffle xor %v, %offset, %width : f32`."""

    name = "gpu.shuffle"
    T: ClassVar = VarConstraint(
        "T", BaseAttr(IntegerType) | AnyFloatConstr | BaseAttr(VectorType)
    )
    mode = prop_def(ShuffleModeAttr)
    value = operand_def(T)
    offset = operand_def(i32)
    width = operand_def(i32)
    shuffleResult = result_def(T)
    valid = result_def(i1)
    assembly_format = "$mode $value `,` $offset `,` $width attr-dict `:` type($value)"

    def __init__(
        self,
        mode: str,
        value: SSAValue | Operation,
        offset: SSAValue | Operation,
        width: SSAValue | Operation,
    ):
        v = SSAValue.get(value)
        super().__init__(
            operands=[v, offset, width],
            properties={"mode": ShuffleModeAttr(ShuffleMode(mode))},
            result_types=[v.type, i1],
        )


GPU = Dialect(
    "gpu",
    [
        ModuleOp,
        FuncOp,
        ReturnOp,
        LaunchFuncOp,
        ThreadIdOp,
        BlockIdOp,
        BlockDimOp,
        GridDimOp,
        LaneIdOp,
        BarrierOp,
        ShuffleOp,
    ],
    [DimensionAttr, ShuffleModeAttr],
)
