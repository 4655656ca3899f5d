// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// llvm.atomicrmw: the result has the value's type, the operation and the
// ordering are LLVM's.

llvm.func @result(%p: !llvm.ptr, %v: f32) {
  %0 = "llvm.atomicrmw"(%p, %v) <{bin_op = 11 : i64, ordering = 2 : i64}> : (!llvm.ptr, f32) -> f64
  llvm.return
}

// CHECK: llvm.atomicrmw: the result type f64 is not the value's, f32

// -----

llvm.func @operation(%p: !llvm.ptr, %v: f32) {
  %0 = "llvm.atomicrmw"(%p, %v) <{bin_op = 99 : i64, ordering = 2 : i64}> : (!llvm.ptr, f32) -> f32
  llvm.return
}

// CHECK: llvm.atomicrmw: unknown operation 99

// -----

llvm.func @ordering(%p: !llvm.ptr, %v: f32) {
  %0 = llvm.atomicrmw fadd %p, %v relaxed : !llvm.ptr, f32
  llvm.return
}

// CHECK: Expected one of 'acq_rel', 'acquire', 'monotonic', 'release', 'seq_cst', 'unordered'
