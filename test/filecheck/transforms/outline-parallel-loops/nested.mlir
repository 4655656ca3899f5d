// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// Only the outermost scf.parallel is outlined; a nested one (here 2-D, inside
// an scf.if) becomes an scf.for nest in the outlined function.

func.func @nest(%A: memref<?x?x?xf32>, %N: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.if %c {
      "scf.parallel"(%c0, %c0, %N, %N, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
      ^bb1(%j: index, %k: index):
        memref.store %f, %A[%i, %j, %k] : memref<?x?x?xf32>
        scf.reduce
      }) : (index, index, index, index, index, index) -> ()
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @nest
// CHECK:         tcrt.parallel_for @nest_par0(%n) (%c, %N, %A) : (i1, index, memref<?x?x?xf32>)
// CHECK:       func.func private @nest_par0(%begin: index, %end: index, %c: i1, %N: index, %A: memref<?x?x?xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %f = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    scf.for %i = %begin to %end step %c1 {
// CHECK-NEXT:      scf.if %c {
// CHECK-NEXT:        scf.for %j = %c0 to %N step %c1 {
// CHECK-NEXT:          scf.for %k = %c0 to %N step %c1 {
// CHECK-NEXT:            memref.store %f, %A[%i, %j, %k] : memref<?x?x?xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NOT:   scf.parallel
