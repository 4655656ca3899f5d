// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// Captures: values defined above the loop (function arguments, results of
// non-constant ops, values of an enclosing scf.for) in order of first use,
// each once; arith.constant results are cloned instead; values defined inside
// the loop stay inside.

func.func @caps(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %N: index, %K: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %two = arith.constant 2.0 : f32
  %N2 = arith.addi %N, %c1 : index
  scf.for %t = %c0 to %K step %c1 {
    "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %A[%i, %t] : memref<?x?xf32>
      %y = memref.load %B[%t, %i] : memref<?x?xf32>
      %s = arith.addf %x, %y : f32
      %p = arith.mulf %s, %two : f32
      %j = arith.addi %i, %c3 : index
      memref.store %p, %A[%j, %N2] : memref<?x?xf32>
      memref.store %p, %B[%N2, %t] : memref<?x?xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}

// CHECK-LABEL: func.func @caps
// CHECK:         scf.for %t = %c0 to %K step %c1 {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %n = arith.maxsi %N, %[[Z]] : index
// CHECK-NEXT:      tcrt.parallel_for @caps_par0(%n) (%A, %t, %B, %N2) : (memref<?x?xf32>, index, memref<?x?xf32>, index)
// CHECK-NEXT:    }
// CHECK:       func.func private @caps_par0(%begin: index, %end: index, %A: memref<?x?xf32>, %t: index, %B: memref<?x?xf32>, %N2: index) {
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %c3 = arith.constant 3 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %begin to %end step %[[C1]] {
// CHECK-NEXT:      %x = memref.load %A[%i, %t] : memref<?x?xf32>
// CHECK-NEXT:      %y = memref.load %B[%t, %i] : memref<?x?xf32>
// CHECK-NEXT:      %s = arith.addf %x, %y : f32
// CHECK-NEXT:      %p = arith.mulf %s, %two : f32
// CHECK-NEXT:      %j = arith.addi %i, %c3 : index
// CHECK-NEXT:      memref.store %p, %A[%j, %N2] : memref<?x?xf32>
// CHECK-NEXT:      memref.store %p, %B[%N2, %t] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
