// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// Row-major linearisation: static extents are constants, dynamic ones the
// expanded arguments; the address is an inbounds GEP on the element type.
func.func @load_store(%A: memref<?x4x?xf32>, %R: memref<i8>, %i: index, %j: index, %k: index) {
  %v = memref.load %A[%i, %j, %k] : memref<?x4x?xf32>
  memref.store %v, %A[%k, %j, %i] : memref<?x4x?xf32>
  %b = memref.load %R[] : memref<i8>
  memref.store %b, %R[] : memref<i8>
  func.return
}

// CHECK:      llvm.func @load_store(%A: !llvm.ptr, %A_d0: i64, %A_d2: i64, %R: !llvm.ptr, %i: i64, %j: i64, %k: i64) {
// CHECK-NEXT:   %0 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %1 = llvm.mul %i, %0 overflow<nsw> : i64
// CHECK-NEXT:   %2 = llvm.add %1, %j overflow<nsw> : i64
// CHECK-NEXT:   %3 = llvm.mul %2, %A_d2 overflow<nsw> : i64
// CHECK-NEXT:   %4 = llvm.add %3, %k overflow<nsw> : i64
// CHECK-NEXT:   %5 = llvm.getelementptr inbounds %A[%4] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %v = llvm.load %5 : !llvm.ptr -> f32
// CHECK-NEXT:   %6 = llvm.mul %k, %0 overflow<nsw> : i64
// CHECK-NEXT:   %7 = llvm.add %6, %j overflow<nsw> : i64
// CHECK-NEXT:   %8 = llvm.mul %7, %A_d2 overflow<nsw> : i64
// CHECK-NEXT:   %9 = llvm.add %8, %i overflow<nsw> : i64
// CHECK-NEXT:   %10 = llvm.getelementptr inbounds %A[%9] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %v, %10 : f32, !llvm.ptr
// CHECK-NEXT:   %b = llvm.load %R : !llvm.ptr -> i8
// CHECK-NEXT:   llvm.store %b, %R : i8, !llvm.ptr
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// -----

// alloc: malloc(product of the extents * element size; i1 takes a byte);
// dealloc: free; alloca: llvm.alloca of the element count; dim: a constant
// or the dynamic extent.
func.func @buffers(%n: index, %m: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = memref.alloc(%n, %m) : memref<?x3x?xf64>
  %F = memref.alloc() : memref<16xi1>
  %S = memref.alloca(%n) : memref<?xi32>
  %d0 = memref.dim %T, %c0 : memref<?x3x?xf64>
  %d1 = memref.dim %T, %c1 : memref<?x3x?xf64>
  memref.dealloc %F : memref<16xi1>
  memref.dealloc %T : memref<?x3x?xf64>
  %s = arith.addi %d0, %d1 : index
  func.return %s : index
}

// CHECK:      llvm.func @buffers(%n: i64, %m: i64) -> i64 {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %0 = llvm.mul %n, %m : i64
// CHECK-NEXT:   %1 = llvm.mlir.constant(3) : i64
// CHECK-NEXT:   %2 = llvm.mul %0, %1 : i64
// CHECK-NEXT:   %3 = llvm.mlir.constant(8) : i64
// CHECK-NEXT:   %4 = llvm.mul %2, %3 : i64
// CHECK-NEXT:   %T = llvm.call @malloc(%4) : (i64) -> !llvm.ptr
// CHECK-NEXT:   %5 = llvm.mlir.constant(16) : i64
// CHECK-NEXT:   %6 = llvm.mul %5, %c1 : i64
// CHECK-NEXT:   %F = llvm.call @malloc(%6) : (i64) -> !llvm.ptr
// CHECK-NEXT:   %S = llvm.alloca %n x i32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:   llvm.call @free(%F) : (!llvm.ptr) -> ()
// CHECK-NEXT:   llvm.call @free(%T) : (!llvm.ptr) -> ()
// CHECK-NEXT:   %s = llvm.add %n, %1 : i64
// CHECK-NEXT:   llvm.return %s : i64
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-NEXT: llvm.func @free(!llvm.ptr)

// -----

// A prefetch may point outside the memref: a GEP without `inbounds`, then
// llvm.prefetch(ptr, rw, locality, cache type).
func.func @prefetch(%A: memref<8x?xf32>, %i: index, %j: index) {
  memref.prefetch %A[%i, %j], read, locality<3>, data : memref<8x?xf32>
  memref.prefetch %A[%j, %i], write, locality<1>, instr : memref<8x?xf32>
  func.return
}

// CHECK:      llvm.func @prefetch(%A: !llvm.ptr, %A_d1: i64, %i: i64, %j: i64) {
// CHECK-NEXT:   %0 = llvm.mul %i, %A_d1 overflow<nsw> : i64
// CHECK-NEXT:   %1 = llvm.add %0, %j overflow<nsw> : i64
// CHECK-NEXT:   %2 = llvm.getelementptr %A[%1] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %3 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %4 = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:   %5 = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.call_intrinsic "llvm.prefetch.p0"(%2, %3, %4, %5) : (!llvm.ptr, i32, i32, i32) -> ()
// CHECK-NEXT:   %6 = llvm.mul %j, %A_d1 overflow<nsw> : i64
// CHECK-NEXT:   %7 = llvm.add %6, %i overflow<nsw> : i64
// CHECK-NEXT:   %8 = llvm.getelementptr %A[%7] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.call_intrinsic "llvm.prefetch.p0"(%8, %5, %5, %3) : (!llvm.ptr, i32, i32, i32) -> ()
// CHECK-NEXT:   llvm.return

// -----

// The identity layout map is the default row-major layout.
func.func @identity_layout(%A: memref<4x?xf32, affine_map<(d0, d1) -> (d0, d1)>>, %i: index) {
  %v = memref.load %A[%i, %i] : memref<4x?xf32, affine_map<(d0, d1) -> (d0, d1)>>
  func.return
}

// CHECK:      llvm.func @identity_layout(%A: !llvm.ptr, %A_d1: i64, %i: i64) {
// CHECK-NEXT:   %0 = llvm.mul %i, %A_d1 overflow<nsw> : i64
// CHECK-NEXT:   %1 = llvm.add %0, %i overflow<nsw> : i64
// CHECK-NEXT:   %2 = llvm.getelementptr inbounds %A[%1] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %v = llvm.load %2 : !llvm.ptr -> f32
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
