// RUN: tc-opt %s | tc-opt | filecheck %s

// tc-opt's llvm dialect is xDSL's plus MLIR's `llvm.atomicrmw`, in MLIR's
// syntax: the operation, the pointer and value, the ordering, the types.

llvm.func @atomics(%p: !llvm.ptr<1>, %q: !llvm.ptr, %v: f32, %n: i64) {
  %0 = llvm.atomicrmw fadd %p, %v monotonic : !llvm.ptr<1>, f32
  %1 = llvm.atomicrmw add %q, %n seq_cst : !llvm.ptr, i64
  %2 = llvm.atomicrmw umax %q, %n acq_rel : !llvm.ptr, i64
  %3 = llvm.atomicrmw fmaximum %p, %v monotonic : !llvm.ptr<1>, f32
  llvm.return
}

// CHECK:      %0 = llvm.atomicrmw fadd %p, %v monotonic : !llvm.ptr<1>, f32
// CHECK-NEXT: %1 = llvm.atomicrmw add %q, %n seq_cst : !llvm.ptr, i64
// CHECK-NEXT: %2 = llvm.atomicrmw umax %q, %n acq_rel : !llvm.ptr, i64
// CHECK-NEXT: %3 = llvm.atomicrmw fmaximum %p, %v monotonic : !llvm.ptr<1>, f32

