// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// A 1-D scf.parallel with constant lower bound 0 and step 1: the count is
// max(N, 0), iv0 is the chunk loop's variable itself, captures are %A, %B.

func.func @relu(%A: memref<?xf32>, %B: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %A[%i] : memref<?xf32>
    memref.store %x, %B[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @relu(%A: memref<?xf32>, %B: memref<?xf32>, %N: index) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %n = arith.maxsi %N, %[[Z]] : index
// CHECK-NEXT:    tcrt.parallel_for @relu_par0(%n) (%A, %B) : (memref<?xf32>, memref<?xf32>)
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @relu_par0(%begin: index, %end: index, %A: memref<?xf32>, %B: memref<?xf32>) {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %begin to %end step %[[ONE]] {
// CHECK-NEXT:      %x = memref.load %A[%i] : memref<?xf32>
// CHECK-NEXT:      memref.store %x, %B[%i] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NOT:   scf.parallel
