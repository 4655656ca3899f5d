"""The CPU runtime part of `convert-to-llvm`: `tcrt`, heap allocation, libm.

`populate_cpu_runtime_to_llvm(handlers)` adds the handlers whose output calls
into the host process: the CPU backend links the `tcrt` runtime
(`tcdialect.dialects.tcrt` names its symbols) and resolves the C library.
A device lowering leaves this module out and supplies its own entries for
these ops (or none).

- `tcrt.parallel_for @body(%n) (captures)` stores the (expanded) captures
  into a stack context, one 8-byte slot each (an `llvm.alloca` of
  `!llvm.ptr`s in the entry block; a null pointer without captures), and
  calls `__tc_parallel_for(@body__thunk, ctx, n)`; the generated internal
  thunk `void @body__thunk(ptr ctx, i64 begin, i64 end)` loads them and calls
  `@body(begin, end, captures...)`. Slots rather than a struct keep every GEP
  typed by the value it addresses, which xDSL's llvmlite translator needs::

      tcrt.parallel_for @f_par0(%n) (%A) : (memref<?xf32>)

  becomes (`%A` expanded to `%A, %A_d0`; the first two ops in the entry block)::

      %0 = llvm.mlir.constant(2) : i64
      %1 = llvm.alloca %0 x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
      %2 = llvm.mlir.addressof @f_par0__thunk : !llvm.ptr
      %3 = llvm.getelementptr inbounds %1[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      llvm.store %A, %3 : !llvm.ptr, !llvm.ptr
      %4 = llvm.getelementptr inbounds %1[1] : (!llvm.ptr) -> !llvm.ptr, i64
      llvm.store %A_d0, %4 : i64, !llvm.ptr
      llvm.call @__tc_parallel_for(%2, %1, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()

- `memref.alloc` calls `malloc(size in bytes)` (an `i1` element takes a
  byte), `memref.dealloc` calls `free`.
- `math.expm1`, `log1p`, `cbrt`, `erf`, `erfc`, `asinh`, `acosh`, `atanh` on
  scalars call the C math library (`expm1f`/`expm1`: `f` suffix for `f32`).
`malloc`, `free`, `__tc_parallel_for` and the C math functions are declared
once (an existing declaration of the same type is reused).
"""

from __future__ import annotations

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tcdialect.conversion.convert_to_llvm.lowering import FunctionLowering, Handler
from tcdialect.conversion.convert_to_llvm.memref_abi import (
    MemRef,
    alloc_shape,
    inbounds_gep,
)
from tcdialect.conversion.convert_to_llvm.type_converter import (
    PTR,
    element_size,
    err,
    scalar_type,
)
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tcrt import ParallelForOp
from tcdialect.runtime.abi import PARALLEL_FOR_SYMBOL

THUNK_SUFFIX = "__thunk"
"""`@<body>__thunk` adapts `@<body>` to `__tc_parallel_for`'s callback type."""

# C math library functions (name for f64; `f` suffix for f32).
_MATH_LIBM: dict[str, str] = {
    "math.expm1": "expm1",
    "math.log1p": "log1p",
    "math.cbrt": "cbrt",
    "math.erf": "erf",
    "math.erfc": "erfc",
    "math.asinh": "asinh",
    "math.acosh": "acosh",
    "math.atanh": "atanh",
}


# -- tcrt ---------------------------------------------------------------------


def _slot_gep(ctx: SSAValue, slot: int, t: Attribute) -> llvm.GEPOp:
    """The address of 8-byte slot `slot` of a parallel_for context, as a `t`.

    The context is an array of 8-byte slots, one per (expanded) capture; the
    GEP is typed by the capture so that no struct type is needed.
    """
    size = element_size(t)
    if size > 8 or 8 % size:
        raise TCError(f"convert-to-llvm: cannot capture a value of type {t}")
    return inbounds_gep(ctx, slot * (8 // size), t)


def _build_thunk(
    name: str, callee: str, capture_types: tuple[Attribute, ...]
) -> llvm.FuncOp:
    """`void @name(ptr ctx, i64 begin, i64 end)` calling `@callee(begin, end,
    captures...)` with the captures loaded from the slots of `ctx`."""
    block = Block(arg_types=[PTR, i64, i64])
    ctx, begin, end = block.args
    ctx.name_hint, begin.name_hint, end.name_hint = "ctx", "begin", "end"
    args: list[SSAValue] = [begin, end]
    for i, t in enumerate(capture_types):
        gep = _slot_gep(ctx, i, t)
        load = llvm.LoadOp(gep, t)
        block.add_ops([gep, load])
        args.append(load.dereferenced_value)
    block.add_ops([llvm.CallOp(callee, *args), llvm.ReturnOp()])
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([PTR, i64, i64]),
        linkage=llvm.LinkageAttr("internal"),
        body=Region(block),
    )


def _entry_alloca(lw: FunctionLowering, slots: int) -> SSAValue:
    """A context of `slots` 8-byte slots, allocated at the start of the entry block."""
    count = llvm.ConstantOp(IntegerAttr(slots, i64), i64)
    # Slots typed `!llvm.ptr` (8 bytes): xDSL's translator then keeps the
    # alloca's pointer opaque, which its typed GEPs need.
    alloca = llvm.AllocaOp(count, PTR, alignment=8)
    lw.at_entry([count, alloca])
    return alloca.res


def lower_parallel_for(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, ParallelForOp)
    callee = op.callee.string_value()
    captures = lw.flat(op.captures, op)
    types = tuple(v.type for v in captures)
    thunk = lw.parent.generate(
        callee + THUNK_SUFFIX,
        types,
        llvm.LLVMFunctionType([PTR, i64, i64]),
        lambda: _build_thunk(callee + THUNK_SUFFIX, callee, types),
        op,
    )
    count = lw.get(op.count, op)
    fn = lw.emit_value(llvm.AddressOfOp(thunk, PTR))
    if captures:
        ctx = _entry_alloca(lw, len(captures))
        for i, v in enumerate(captures):
            lw.emit(llvm.StoreOp(v, lw.emit_value(_slot_gep(ctx, i, v.type))))
    else:
        ctx = lw.emit_value(llvm.ZeroOp(result_types=[PTR]))
    lw.call(PARALLEL_FOR_SYMBOL, [fn, ctx, count], None, op)


# -- heap allocation ------------------------------------------------------------


def lower_alloc(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.AllocOp)
    t, dyn, count = alloc_shape(lw, op)
    elem_size = element_size(scalar_type(t.get_element_type(), op))
    size = lw.emit_value(llvm.MulOp(count, lw.const(elem_size, i64)))
    call = lw.call("malloc", [size], PTR, op)
    lw.set(op.memref, MemRef(t, call.results[0], tuple(dyn)))


def lower_dealloc(lw: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.DeallocOp)
    lw.call("free", [lw.get_memref(op.memref, op).ptr], None, op)


# -- the C math library -----------------------------------------------------------


def _libm(base: str) -> Handler:
    def lower(lw: FunctionLowering, op: Operation) -> None:
        t = scalar_type(op.results[0].type, op)
        if isinstance(t, Float32Type):
            fname = base + "f"
        elif isinstance(t, Float64Type):
            fname = base
        else:
            raise err(op, f"unsupported type {t}")
        args = [lw.get(v, op) for v in op.operands]
        call = lw.call(fname, args, t, op)
        lw.set(op.results[0], call.results[0])

    return lower


def populate_cpu_runtime_to_llvm(handlers: dict[str, Handler]) -> None:
    """Add the handlers of `tcrt.parallel_for`, `memref.alloc`/`dealloc` and the
    C-library math ops to `handlers`."""
    handlers.update({name: _libm(base) for name, base in _MATH_LIBM.items()})
    handlers.update(
        {
            "tcrt.parallel_for": lower_parallel_for,
            "memref.alloc": lower_alloc,
            "memref.dealloc": lower_dealloc,
        }
    )
