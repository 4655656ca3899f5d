"""`convert-gpu-to-nvvm`: the `gpu` ops inside kernels → `nvvm` ops.

The first pass of the `cuda` target's `llvm` stage (docs/gpu.md), MLIR's
`convert-gpu-to-nvvm` without the function conversion, which
`convert-to-llvm{target=cuda}` does after `convert-gpu-scf-to-cf`. In every
`gpu.func` of every `gpu.module`:

- `gpu.thread_id`, `block_id`, `block_dim`, `grid_dim` (x, y, z) and
  `gpu.lane_id` read the PTX special registers `tid`, `ctaid`, `ntid`,
  `nctaid` and `laneid` (`nvvm.read.ptx.sreg.*`, an `i32`) and cast them to
  `index` (`arith.index_cast`). `gpu.block_dim` is the constant of
  `known_block_size` when the function has one (the block it is launched
  with), `gpu.grid_dim` that of `known_grid_size`;
- `gpu.barrier` is `nvvm.barrier0`; in a kernel with copies marked
  `tc.async_copy` (`gpu-async-copies`: `cp.async` in the LLVM lowering),
  preceded by `nvvm.cp.async.commit.group` and `nvvm.cp.async.wait.group 0`,
  so that the thread's copies have landed when the barrier lets the
  others read them;
- `gpu.shuffle <mode> %v, %offset, %width` is `nvvm.shfl.sync` (`xor` →
  `bfly`; `up`, `down`, `idx`) on the first `%width` lanes, as in MLIR: mask
  `-1 >> (32 - width)`, clamp `width - 1` (`32 - width` for `up`). An `f32`
  or `i32` is shuffled as it is; a narrower value is widened to an `i32`
  and back, a wider one (up to 64 bits: `i64`, `f64`) shuffled as two
  `i32` halves. When the validity result is used, the shuffle (of the low half)
  returns it too (`return_value_and_is_valid`, read with `llvm.extractvalue`);
- a kernel (`gpu.kernel`) gets `nvvm.kernel` and, from `known_block_size`,
  `nvvm.maxntid` (PTX's `.maxntid`); with the option `min-blocks-per-sm`
  above 0, also `nvvm.minctasm` (PTX's `.minnctapersm`, CUDA's
  `__launch_bounds__` second argument).

Example::

    gpu.func @k(%A: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %t = gpu.thread_id x
      %d = gpu.block_dim x
      gpu.barrier

becomes::

    gpu.func @k(%A: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>,
        nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %0 = nvvm.read.ptx.sreg.tid.x : i32
      %t = arith.index_cast %0 : i32 to index
      %d = arith.constant 128 : index
      nvvm.barrier0

Everything outside the `gpu.module`s (the host function, its
`gpu.launch_func`s) is left alone. A shuffle width that is a constant
outside 1..32 or a value of another type (a vector, a wider integer) is a
`TCError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tcdialect.diagnostics import TCError
from tcdialect.dialects import gpu, nvvm
from tcdialect.transforms.gpu_async_copies import ASYNC_COPY
from tcdialect.transforms.ir_values import constant_index

#: Unit attribute of a function that is a PTX kernel (`define ptx_kernel`).
NVVM_KERNEL = "nvvm.kernel"
#: The most threads a kernel is launched with along x, y, z (`.maxntid`).
NVVM_MAXNTID = "nvvm.maxntid"
#: The blocks of a kernel that should fit on an SM at once (`.minnctapersm`).
NVVM_MINCTASM = "nvvm.minctasm"

_REGISTERS: dict[type[Operation], tuple[type[nvvm.SpecialRegisterOp], ...]] = {
    gpu.ThreadIdOp: (nvvm.ThreadIdXOp, nvvm.ThreadIdYOp, nvvm.ThreadIdZOp),
    gpu.BlockIdOp: (nvvm.BlockIdXOp, nvvm.BlockIdYOp, nvvm.BlockIdZOp),
    gpu.BlockDimOp: (nvvm.BlockDimXOp, nvvm.BlockDimYOp, nvvm.BlockDimZOp),
    gpu.GridDimOp: (nvvm.GridDimXOp, nvvm.GridDimYOp, nvvm.GridDimZOp),
}
_SHFL_KIND = {
    gpu.ShuffleMode.XOR: nvvm.ShflKind.BFLY,
    gpu.ShuffleMode.UP: nvvm.ShflKind.UP,
    gpu.ShuffleMode.DOWN: nvvm.ShflKind.DOWN,
    gpu.ShuffleMode.IDX: nvvm.ShflKind.IDX,
}
_AXES = ("x", "y", "z")

_DimOp = gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp


def _err(op: Operation, what: str) -> TCError:
    return TCError(f"convert-gpu-to-nvvm: {what} in '{op.name}'")


class _Emitter:
    """Inserts ops before one op and returns their results."""

    def __init__(self, before: Operation):
        self.before = before

    def __call__(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(self.before))
        return op.results[0]

    def const(self, value: int, t: IntegerType | IndexType) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, t)))


def _known_size(f: gpu.FuncOp, op: _DimOp, axis: int) -> int | None:
    """The block or grid size along `axis` that `op` reads, when `f` knows it."""
    if isinstance(op, gpu.BlockDimOp):
        sizes = f.known_block_size
    elif isinstance(op, gpu.GridDimOp):
        sizes = f.known_grid_size
    else:
        return None
    if sizes is None:
        return None
    return [int(a.value.data) for a in sizes.iter_attrs()][axis]


def _lower_dim(f: gpu.FuncOp, op: _DimOp) -> None:
    axis = _AXES.index(op.dimension.data.value)
    emit = _Emitter(op)
    if (size := _known_size(f, op, axis)) is not None:
        value = emit.const(size, IndexType())
    else:
        reg = emit(_REGISTERS[type(op)][axis]())
        value = emit(arith.IndexCastOp(reg, IndexType()))
    Rewriter.replace_op(op, [], [value])


def _lower_lane_id(op: gpu.LaneIdOp) -> None:
    emit = _Emitter(op)
    value = emit(arith.IndexCastOp(emit(nvvm.LaneIdOp()), IndexType()))
    Rewriter.replace_op(op, [], [value])


def _mask_and_clamp(emit: _Emitter, op: gpu.ShuffleOp) -> tuple[SSAValue, SSAValue]:
    """The lane mask and PTX clamp of a shuffle among the first `width` lanes."""
    up = op.mode.data == gpu.ShuffleMode.UP
    width = constant_index(op.width)
    if width is not None:
        if not 1 <= width <= 32:
            raise _err(op, f"shuffle width {width} is not in 1..32")
        mask = (0xFFFFFFFF >> (32 - width)) - (1 << 32 if width == 32 else 0)
        return emit.const(mask, i32), emit.const(32 - width if up else width - 1, i32)
    inactive = emit(arith.SubiOp(emit.const(32, i32), op.width))
    mask = emit(arith.ShRUIOp(emit.const(-1, i32), inactive))
    clamp = inactive if up else emit(arith.SubiOp(op.width, emit.const(1, i32)))
    return mask, clamp


def _shuffle_word(
    emit: _Emitter,
    op: gpu.ShuffleOp,
    word: SSAValue,
    mask: SSAValue,
    clamp: SSAValue,
    with_valid: bool,
) -> tuple[SSAValue, SSAValue | None]:
    """Shuffle one `f32`/`i32`: the value, and the validity bit if asked."""
    kind = _SHFL_KIND[op.mode.data]
    shfl = nvvm.ShflSyncOp(kind, mask, word, op.offset, clamp, with_valid=with_valid)
    res = emit(shfl)
    if not with_valid:
        return res, None
    pos = (DenseArrayBase.from_list(i64, [i]) for i in (0, 1))
    value = emit(llvm.ExtractValueOp(next(pos), res, word.type))
    valid = emit(llvm.ExtractValueOp(next(pos), res, i1))
    return value, valid


def _shuffle_words(
    emit: _Emitter, op: gpu.ShuffleOp, value: SSAValue, with_valid: bool
) -> tuple[SSAValue, SSAValue | None]:
    """Shuffle `value` (an integer of at most 64 bits or an `f32`) as `f32`/
    `i32` words; the validity bit (of the first word) when asked."""
    t = value.type
    mask, clamp = _mask_and_clamp(emit, op)
    if t in (i32, f32):
        return _shuffle_word(emit, op, value, mask, clamp, with_valid)
    if not isinstance(t, IntegerType) or t.width.data > 64:
        raise _err(op, f"cannot shuffle a value of type {op.value.type}")
    width = t.width.data
    if width < 32:
        word = emit(arith.ExtUIOp(value, i32))
        res, valid = _shuffle_word(emit, op, word, mask, clamp, with_valid)
        return emit(arith.TruncIOp(res, t)), valid
    # 33 to 64 bits: the low and the high half
    wide = value if width == 64 else emit(arith.ExtUIOp(value, i64))
    shift = emit.const(32, i64)
    lo = emit(arith.TruncIOp(wide, i32))
    hi = emit(arith.TruncIOp(emit(arith.ShRUIOp(wide, shift)), i32))
    lo, valid = _shuffle_word(emit, op, lo, mask, clamp, with_valid)
    hi, _ = _shuffle_word(emit, op, hi, mask, clamp, False)
    low = emit(arith.ExtUIOp(lo, i64))
    high = emit(arith.ShLIOp(emit(arith.ExtUIOp(hi, i64)), shift))
    joined = emit(arith.OrIOp(low, high))
    return (joined if width == 64 else emit(arith.TruncIOp(joined, t))), valid


def _lower_shuffle(op: gpu.ShuffleOp) -> None:
    emit = _Emitter(op)
    t = op.value.type
    with_valid = bool(op.valid.uses)
    # a float other than f32 as an integer of the same bits
    value = op.value
    if isinstance(t, AnyFloat) and t != f32:
        value = emit(arith.BitcastOp(value, IntegerType(t.bitwidth)))
    res, valid = _shuffle_words(emit, op, value, with_valid)
    if res.type != t:
        res = emit(arith.BitcastOp(res, t))
    if valid is None:  # unused
        valid = emit.const(1, i1)
    Rewriter.replace_op(op, [], [res, valid])


def _lower_function(f: gpu.FuncOp, min_blocks_per_sm: int) -> None:
    copies = any(ASYNC_COPY in op.attributes for op in f.walk())
    for op in list(f.walk()):
        if isinstance(op, _DimOp):
            _lower_dim(f, op)
        elif isinstance(op, gpu.LaneIdOp):
            _lower_lane_id(op)
        elif isinstance(op, gpu.BarrierOp):
            if copies:  # the thread's cp.async copies land before the barrier
                wait = [nvvm.CpAsyncCommitGroupOp(), nvvm.CpAsyncWaitGroupOp(0)]
                Rewriter.insert_op(wait, InsertPoint.before(op))
            Rewriter.replace_op(op, nvvm.Barrier0Op())
        elif isinstance(op, gpu.ShuffleOp):
            _lower_shuffle(op)
    if f.is_kernel:
        f.attributes[NVVM_KERNEL] = UnitAttr()
        if f.known_block_size is not None:
            f.attributes[NVVM_MAXNTID] = f.known_block_size
        if min_blocks_per_sm:
            f.attributes[NVVM_MINCTASM] = IntegerAttr(min_blocks_per_sm, i32)


@dataclass(frozen=True)
class ConvertGpuToNvvmPass(ModulePass):
    """The `gpu` ops of kernels → `nvvm` ops (see the module docstring)."""

    name = "convert-gpu-to-nvvm"

    #: `nvvm.minctasm` of every kernel (`CudaOptions.min_blocks_per_sm`);
    #: 0: none.
    min_blocks_per_sm: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for module in op.body.block.ops:
            if not isinstance(module, gpu.ModuleOp):
                continue
            for f in module.body.block.ops:
                if isinstance(f, gpu.FuncOp):
                    _lower_function(f, self.min_blocks_per_sm)
