// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// nvvm.shfl.sync shuffles an f32 or i32; with `return_value_and_is_valid` it
// returns the value and a validity bit as a struct, else the value alone.

llvm.func @f64(%mask: i32, %v: f64, %off: i32, %clamp: i32) {
  %a = nvvm.shfl.sync bfly %mask, %v, %off, %clamp : f64 -> f64
  llvm.return
}

// CHECK: Operation does not verify: nvvm.shfl.sync shuffles an f32 or i32, not f64

// -----

llvm.func @missing_valid(%mask: i32, %v: f32, %off: i32, %clamp: i32) {
  %a = nvvm.shfl.sync bfly %mask, %v, %off, %clamp : f32 -> !llvm.struct<(f32, i1)>
  llvm.return
}

// CHECK: Operation does not verify: nvvm.shfl.sync of f32 must return f32, not !llvm.struct<(f32, i1)>

// -----

llvm.func @missing_struct(%mask: i32, %v: f32, %off: i32, %clamp: i32) {
  %a = nvvm.shfl.sync bfly %mask, %v, %off, %clamp {return_value_and_is_valid} : f32 -> f32
  llvm.return
}

// CHECK: Operation does not verify: nvvm.shfl.sync of f32 must return !llvm.struct<(f32, i1)>, not f32

// -----

llvm.func @kind(%mask: i32, %v: f32, %off: i32, %clamp: i32) {
  %a = nvvm.shfl.sync xor %mask, %v, %off, %clamp : f32 -> f32
  llvm.return
}

// CHECK: Expected `bfly`, `up`, `down`, or `idx`.

// -----

llvm.func @sreg() {
  %0 = nvvm.read.ptx.sreg.tid.x : i64
  llvm.return
}

// CHECK: invalid IR: Expected attribute i32 but got i64
