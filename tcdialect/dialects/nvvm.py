"""The `nvvm` dialect: the NVIDIA-specific ops of MLIR 22's NVVM dialect that
tcdialect uses, with MLIR's names, operands, properties and syntax.

`convert-gpu-to-nvvm` produces them from the `gpu` ops of a kernel;
`convert-to-llvm{target=cuda}` keeps them inside the `llvm.func`s, and the
backend (`tcdialect.backend.llvm`) translates each to its LLVM 22 intrinsic
(`llvm.nvvm.*`, from an allowlist: a misspelt NVVM intrinsic can abort the
process). The ops::

    %t = nvvm.read.ptx.sreg.tid.x : i32       // llvm.nvvm.read.ptx.sreg.tid.x
    // tid, ntid, ctaid, nctaid along .x .y .z; laneid; warpsize
    nvvm.barrier0                             // llvm.nvvm.barrier.cta.sync.aligned.all(0)
    %r = nvvm.shfl.sync bfly %mask, %v, %offset, %clamp : f32 -> f32
    %p = nvvm.shfl.sync idx %mask, %v, %offset, %clamp {return_value_and_is_valid}
        : f32 -> !llvm.struct<(f32, i1)>      // llvm.nvvm.shfl.sync.idx.f32p

    nvvm.cp.async.shared.global %dst, %src, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    nvvm.cp.async.commit.group                // llvm.nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0                // llvm.nvvm.cp.async.wait.group(0)

`nvvm.shfl.sync` (kinds `bfly`, `up`, `down`, `idx`) shuffles an `f32` or
`i32` among the lanes of `%mask`; `%clamp` is PTX's packed clamp/segment
operand (31 for a whole warp, 0 for `up`). With `return_value_and_is_valid`
it also returns whether the source lane was in range.

MLIR 22's optional `range` of the special registers and its `nvvm.barrier`
(which replaces `nvvm.barrier0` after MLIR 22) are not modelled.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, IntegerAttr, UnitAttr, f32, i1, i32
from xdsl.dialects.llvm import LLVMPointerType, LLVMStructType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# -- special registers ----------------------------------------------------------


class SpecialRegisterOp(IRDLOperation):
    """`%r = nvvm.read.ptx.sreg.<register> : i32`: a PTX special register
    (the intrinsic `llvm.<op name>`)."""

    res = result_def(i32)
    assembly_format = "attr-dict `:` type($res)"

    def __init__(self):
        super().__init__(result_types=[i32])


@irdl_op_definition
class ThreadIdXOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.tid.x"


@irdl_op_definition
class ThreadIdYOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.tid.y"


@irdl_op_definition
class ThreadIdZOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.tid.z"


@irdl_op_definition
class BlockDimXOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ntid.x"


@irdl_op_definition
class BlockDimYOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ntid.y"


@irdl_op_definition
class BlockDimZOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ntid.z"


@irdl_op_definition
class BlockIdXOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ctaid.x"


@irdl_op_definition
class BlockIdYOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ctaid.y"


@irdl_op_definition
class BlockIdZOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.ctaid.z"


@irdl_op_definition
class GridDimXOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.nctaid.x"


@irdl_op_definition
class GridDimYOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.nctaid.y"


@irdl_op_definition
class GridDimZOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.nctaid.z"


@irdl_op_definition
class LaneIdOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.laneid"


@irdl_op_definition
class WarpSizeOp(SpecialRegisterOp):
    name = "nvvm.read.ptx.sreg.warpsize"


SPECIAL_REGISTERS: tuple[type[SpecialRegisterOp], ...] = (
    ThreadIdXOp,
    ThreadIdYOp,
    ThreadIdZOp,
    BlockDimXOp,
    BlockDimYOp,
    BlockDimZOp,
    BlockIdXOp,
    BlockIdYOp,
    BlockIdZOp,
    GridDimXOp,
    GridDimYOp,
    GridDimZOp,
    LaneIdOp,
    WarpSizeOp,
)


# -- synchronisation and shuffles ---------------------------------------------------


@irdl_op_definition
class Barrier0Op(IRDLOperation):
    """`nvvm.barrier0`: every thread of the block waits (`bar.sync 0`)."""

    name = "nvvm.barrier0"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class BarWarpSyncOp(IRDLOperation):
    """`nvvm.bar.warp.sync %mask : i32`: the threads of the warp named in
    `mask` wait for each other, and their memory accesses before it are
    visible to each other after it (`bar.warp.sync`, CUDA's `__syncwarp`)."""

    name = "nvvm.bar.warp.sync"
    mask = operand_def(i32)
    assembly_format = "$mask attr-dict `:` type($mask)"

    def __init__(self, mask: SSAValue | Operation):
        super().__init__(operands=[mask])


class ShflKind(StrEnum):
    BFLY = "bfly"
    UP = "up"
    DOWN = "down"
    IDX = "idx"


@irdl_attr_definition
class ShflKindAttr(EnumAttribute[ShflKind], SpacedOpaqueSyntaxAttribute):
    """`#nvvm<shfl_kind bfly>`."""

    name = "nvvm.shfl_kind"


@irdl_op_definition
class ShflSyncOp(IRDLOperation):
    """`%r = nvvm.shfl.sync <kind> %mask, %v, %offset, %clamp : f32 -> f32`.

    The value is an `f32` or `i32`; with `return_value_and_is_valid` the
    result is `!llvm.struct<(T, i1)>` (the value and whether the source lane
    was in range), else `T`.
    """

    name = "nvvm.shfl.sync"
    thread_mask = operand_def(i32)
    val = operand_def()
    offset = operand_def(i32)
    mask_and_clamp = operand_def(i32)
    kind = prop_def(ShflKindAttr)
    return_value_and_is_valid = opt_prop_def(UnitAttr)
    res = result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$kind $thread_mask `,` $val `,` $offset `,` $mask_and_clamp attr-dict "
        "`:` type($val) `->` type($res)"
    )

    def __init__(
        self,
        kind: ShflKind,
        thread_mask: SSAValue | Operation,
        val: SSAValue | Operation,
        offset: SSAValue | Operation,
        mask_and_clamp: SSAValue | Operation,
        *,
        with_valid: bool = False,
    ):
        t = SSAValue.get(val).type
        props: dict[str, Attribute] = {"kind": ShflKindAttr(kind)}
        if with_valid:
            props["return_value_and_is_valid"] = UnitAttr()
        super().__init__(
            operands=[thread_mask, val, offset, mask_and_clamp],
            properties=props,
            result_types=[LLVMStructType.from_type_list([t, i1]) if with_valid else t],
        )

    def verify_(self) -> None:
        t = self.val.type
        if t not in (f32, i32):
            raise VerifyException(f"nvvm.shfl.sync shuffles an f32 or i32, not {t}")
        expected = (
            LLVMStructType.from_type_list([t, i1])
            if self.return_value_and_is_valid is not None
            else t
        )
        if self.res.type != expected:
            raise VerifyException(
                f"nvvm.shfl.sync of {t} must return {expected}, not {self.res.type}"
            )


# -- asynchronous copies (sm_80 and later) --------------------------------------------


@irdl_op_definition
class CpAsyncSharedGlobalOp(IRDLOperation):
    """`nvvm.cp.async.shared.global %dst, %src, 4, cache = ca : !llvm.ptr<3>,
    !llvm.ptr<1>`: copy `size` bytes (4, 8 or 16) from global memory to
    shared memory without waiting (`cp.async.ca.shared.global`, through L1);
    the data are there after `nvvm.cp.async.commit.group` and
    `nvvm.cp.async.wait.group` (`llvm.nvvm.cp.async.ca.shared.global.<size>`)."""

    name = "nvvm.cp.async.shared.global"
    dst = operand_def(LLVMPointerType)
    src = operand_def(LLVMPointerType)
    size = prop_def(IntegerAttr[I32])
    assembly_format = (
        "$dst `,` $src `,` $size `,` `cache` `=` `ca` attr-dict `:` type($dst) `,` "
        "type($src)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, dst: SSAValue | Operation, src: SSAValue | Operation, size: int):
        super().__init__(
            operands=[dst, src], properties={"size": IntegerAttr(size, i32)}
        )

    def verify_(self) -> None:
        if self.size.value.data not in (4, 8, 16):
            raise VerifyException(
                f"nvvm.cp.async.shared.global copies 4, 8 or 16 bytes, not "
                f"{self.size.value.data}"
            )


@irdl_op_definition
class CpAsyncCommitGroupOp(IRDLOperation):
    """`nvvm.cp.async.commit.group`: the thread's copies issued since the last
    commit form a group (`cp.async.commit_group`)."""

    name = "nvvm.cp.async.commit.group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class CpAsyncWaitGroupOp(IRDLOperation):
    """`nvvm.cp.async.wait.group 0`: wait until at most `n` of the thread's
    committed groups are pending (`cp.async.wait_group n`)."""

    name = "nvvm.cp.async.wait.group"
    n = prop_def(IntegerAttr[I32])
    assembly_format = "$n attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, n: int):
        super().__init__(properties={"n": IntegerAttr(n, i32)})


NVVM = Dialect(
    "nvvm",
    [
        *SPECIAL_REGISTERS,
        Barrier0Op,
        BarWarpSyncOp,
        ShflSyncOp,
        CpAsyncSharedGlobalOp,
        CpAsyncCommitGroupOp,
        CpAsyncWaitGroupOp,
    ],
    [ShflKindAttr],
)
