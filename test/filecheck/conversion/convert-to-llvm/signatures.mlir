// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// A memref is a pointer plus one i64 per dynamic dimension; index is i64.
func.func @abi(%A: memref<?x4x?xf32>, %B: memref<8xi1>, %S: memref<f64>, %n: index, %x: i32) -> index {
  func.return %n : index
}

// CHECK:      llvm.func @abi(%A: !llvm.ptr, %A_d0: i64, %A_d2: i64, %B: !llvm.ptr, %S: !llvm.ptr, %n: i64, %x: i32) -> i64 {
// CHECK-NEXT:   llvm.return %n : i64
// CHECK-NEXT: }

// -----

// Private definitions become internal, declarations external; calls expand
// memref operands the same way.
func.func private @hypotf(f32, f32) -> f32
func.func private @helper(%A: memref<?xf32>, %i: index) -> f32 {
  %v = memref.load %A[%i] : memref<?xf32>
  func.return %v : f32
}
func.func @caller(%B: memref<?xf32>, %y: f32) {
  %c1 = arith.constant 1 : index
  %x = func.call @helper(%B, %c1) : (memref<?xf32>, index) -> f32
  %h = func.call @hypotf(%x, %y) : (f32, f32) -> f32
  func.return
}

// CHECK:      llvm.func @hypotf(f32, f32) -> f32
// CHECK-NEXT: llvm.func internal @helper(%A: !llvm.ptr, %A_d0: i64, %i: i64) -> f32 {
// CHECK:      llvm.func @caller(%B: !llvm.ptr, %B_d0: i64, %y: f32) {
// CHECK-NEXT:   %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %x = llvm.call @helper(%B, %B_d0, %c1) : (!llvm.ptr, i64, i64) -> f32
// CHECK-NEXT:   %h = llvm.call @hypotf(%x, %y) : (f32, f32) -> f32
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// -----

// Memref block arguments expand too; cf branches become llvm branches.
func.func @blocks(%A: memref<?xf32>, %B: memref<?xf32>, %c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  cf.cond_br %c, ^bb1(%A : memref<?xf32>), ^bb1(%B : memref<?xf32>)
^bb1(%M: memref<?xf32>):
  cf.br ^bb2(%c0 : index)
^bb2(%i: index):
  %v = memref.load %M[%i] : memref<?xf32>
  func.return %v : f32
}

// CHECK:      llvm.func @blocks(%A: !llvm.ptr, %A_d0: i64, %B: !llvm.ptr, %B_d0: i64, %c: i1) -> f32 {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   llvm.cond_br %c, ^bb1(%A, %A_d0 : !llvm.ptr, i64), ^bb1(%B, %B_d0 : !llvm.ptr, i64)
// CHECK-NEXT: ^bb1(%M: !llvm.ptr, %M_d0: i64):
// CHECK-NEXT:   llvm.br ^bb2(%c0 : i64)
// CHECK-NEXT: ^bb2(%i: i64):
// CHECK-NEXT:   %0 = llvm.getelementptr inbounds %M[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %v = llvm.load %0 : !llvm.ptr -> f32
// CHECK-NEXT:   llvm.return %v : f32
// CHECK-NEXT: }

// -----

// Unreachable blocks are dropped; blocks come in reverse post-order, a
// branch's first successor right after it.
func.func @order(%c: i1, %x: i32) -> i32 {
  cf.cond_br %c, ^then, ^else
^dead:
  cf.br ^join(%x : i32)
^else:
  %y = arith.addi %x, %x : i32
  cf.br ^join(%y : i32)
^then:
  cf.br ^join(%x : i32)
^join(%r: i32):
  func.return %r : i32
}

// CHECK:      llvm.func @order(%c: i1, %x: i32) -> i32 {
// CHECK-NEXT:   llvm.cond_br %c, ^bb1, ^bb2
// CHECK-NEXT: ^bb1:
// CHECK-NEXT:   llvm.br ^bb3(%x : i32)
// CHECK-NEXT: ^bb2:
// CHECK-NEXT:   %y = llvm.add %x, %x : i32
// CHECK-NEXT:   llvm.br ^bb3(%y : i32)
// CHECK-NEXT: ^bb3(%r: i32):
// CHECK-NEXT:   llvm.return %r : i32
// CHECK-NEXT: }
