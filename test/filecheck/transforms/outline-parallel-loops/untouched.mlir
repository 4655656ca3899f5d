// RUN: tc-opt %s -p outline-parallel-loops | filecheck %s

// Functions without scf.parallel, scf.for loops and declarations stay as they
// are.

func.func private @hypotf(f32, f32) -> f32

func.func @seq(%A: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %x = memref.load %A[%i] : memref<?xf32>
    %y = func.call @hypotf(%x, %x) : (f32, f32) -> f32
    memref.store %y, %A[%i] : memref<?xf32>
  }
  func.return
}

// CHECK:       builtin.module {
// CHECK-NEXT:    func.func private @hypotf(f32, f32) -> f32
// CHECK-NEXT:    func.func @seq(%A: memref<?xf32>, %N: index) {
// CHECK-NEXT:      %c0 = arith.constant 0 : index
// CHECK-NEXT:      %c1 = arith.constant 1 : index
// CHECK-NEXT:      scf.for %i = %c0 to %N step %c1 {
// CHECK-NEXT:        %x = memref.load %A[%i] : memref<?xf32>
// CHECK-NEXT:        %y = func.call @hypotf(%x, %x) : (f32, f32) -> f32
// CHECK-NEXT:        memref.store %y, %A[%i] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      func.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
