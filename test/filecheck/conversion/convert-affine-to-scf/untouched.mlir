// RUN: tc-opt %s -p convert-affine-to-scf | filecheck %s

// Non-affine ops are left as they are: no DCE of unused ops, existing scf
// loops, memref accesses and floordivsi written by hand stay.

func.func @untouched(%A: memref<?xf32>, %N: index, %a: index, %b: index) -> index {
  %unused = arith.constant 42 : index
  %q = arith.floordivsi %a, %b : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    memref.store %x, %A[%q] : memref<?xf32>
  }
  func.return %q : index
}

// CHECK-LABEL: func.func @untouched(%A: memref<?xf32>, %N: index, %a: index, %b: index) -> index {
// CHECK-NEXT:    %unused = arith.constant 42 : index
// CHECK-NEXT:    %q = arith.floordivsi %a, %b : index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %N step %c1 {
// CHECK-NEXT:      %x = memref.load %A[%i] : memref<?xf32>
// CHECK-NEXT:      memref.store %x, %A[%q] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %q : index
// CHECK-NEXT:  }
