// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// Two nests in one function give @f_par0 and @f_par1, placed after @f in
// order; a name already taken in the module is skipped (@g_par0 exists, so
// @g's loop becomes @g_par1). A lower bound 1 with step 2: n = max(0, N divsi 2).

func.func @f(%A: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %f, %A[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c1, %N, %c2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %A[%i] : memref<?xf32>
    memref.store %x, %A[%c0] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

func.func @g_par0() {
  func.return
}

func.func @g(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    memref.store %f, %A[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @f(%A: memref<?xf32>, %N: index) {
// CHECK:         tcrt.parallel_for @f_par0(%n) (%A) : (memref<?xf32>)
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %N, %[[C2]] : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N1:.*]] = arith.maxsi %[[Q]], %[[Z]] : index
// CHECK-NEXT:    tcrt.parallel_for @f_par1(%[[N1]]) (%A) : (memref<?xf32>)
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @f_par0(%begin: index, %end: index, %A: memref<?xf32>) {
// CHECK:         memref.store %f, %A[%i] : memref<?xf32>
// CHECK:       func.func private @f_par1(%begin: index, %end: index, %A: memref<?xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %it = %begin to %end step %[[ONE]] {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[T:.*]] = arith.muli %it, %[[TWO]] : index
// CHECK-NEXT:      %i = arith.addi %[[T]], %[[ONE]] : index
// CHECK-NEXT:      %x = memref.load %A[%i] : memref<?xf32>
// CHECK-NEXT:      memref.store %x, %A[%c0] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK:       func.func @g_par0() {
// CHECK:       func.func @g(%A: memref<?xf32>) {
// Constant bounds: the count is a constant.
// CHECK:         %f = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    tcrt.parallel_for @g_par1(%[[C8]]) (%A) : (memref<?xf32>)
// CHECK:       func.func private @g_par1(
