// What affine-isl-schedule leaves alone: declarations, functions outside the
// polyhedral model (scf loops, iteration arguments, semi-affine maps), and
// functions without loops keep their ops and order.
// RUN: tc-opt %s -p 'affine-isl-schedule' | filecheck %s

// CHECK-LABEL: func.func private @hypotf(f32, f32) -> f32
func.func private @hypotf(f32, f32) -> f32

// CHECK-LABEL: func.func @with_scf
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      memref.store %x, %A[%i] : memref<?xf32>
func.func @with_scf(%A: memref<?xf32>, %x: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %A[%i] : memref<?xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @iter_args
// CHECK:         affine.for %i = 0 to 8 iter_args
func.func @iter_args(%A: memref<8xf32>, %O: memref<f32>) {
  %z = arith.constant 0.0 : f32
  %r = affine.for %i = 0 to 8 iter_args(%acc = %z) -> (f32) {
    %a = affine.load %A[%i] : memref<8xf32>
    %s = arith.addf %acc, %a : f32
    affine.yield %s : f32
  }
  affine.store %r, %O[] : memref<f32>
  func.return
}

// A lone store: nothing to reorder, nothing parallel.
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT:    %z = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    affine.store %z, %O[] : memref<f32>
// CHECK-NEXT:    func.return
func.func @scalar(%O: memref<f32>) {
  %z = arith.constant 1.0 : f32
  affine.store %z, %O[] : memref<f32>
  func.return
}
