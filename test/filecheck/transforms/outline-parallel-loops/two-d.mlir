// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// A 2-D scf.parallel with a symbolic lower bound and step in dimension 0:
// n = max(0, (M - lb + s - 1) divsi s); %lb and %s are captured, iv0 =
// lb + it * s; dimension 1 becomes an scf.for whose constant bounds are cloned
// into the outlined function and whose symbolic bound %N is captured.

func.func @two(%A: memref<?x?xf32>, %M: index, %N: index, %lb: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %f = arith.constant 1.0 : f32
  "scf.parallel"(%lb, %c0, %M, %N, %s, %c2) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    memref.store %f, %A[%i, %j] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @two(%A: memref<?x?xf32>, %M: index, %N: index, %lb: index, %s: index) {
// CHECK:         %f = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[EXT:.*]] = arith.subi %M, %lb : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[SM1:.*]] = arith.subi %s, %[[ONE]] : index
// CHECK-NEXT:    %[[B:.*]] = arith.addi %[[EXT]], %[[SM1]] : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[B]], %s : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %n = arith.maxsi %[[Q]], %[[Z]] : index
// CHECK-NEXT:    tcrt.parallel_for @two_par0(%n) (%lb, %s, %N, %A) : (index, index, index, memref<?x?xf32>)
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @two_par0(%begin: index, %end: index, %lb: index, %s: index, %N: index, %A: memref<?x?xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %f = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %it = %begin to %end step %[[C1]] {
// CHECK-NEXT:      %[[T:.*]] = arith.muli %it, %s : index
// CHECK-NEXT:      %i = arith.addi %lb, %[[T]] : index
// CHECK-NEXT:      scf.for %j = %c0 to %N step %c2 {
// CHECK-NEXT:        memref.store %f, %A[%i, %j] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
