// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// memref.prefetch takes one index per dimension and a locality in 0..3.

func.func @rank(%A: memref<64x32xf32>, %i: index) {
  memref.prefetch %A[%i], read, locality<3>, data : memref<64x32xf32>
  func.return
}

// CHECK: Operation does not verify: memref.prefetch: 1 indices for a memref of rank 2

// -----

func.func @locality(%A: memref<64xf32>, %i: index) {
  memref.prefetch %A[%i], read, locality<4>, data : memref<64xf32>
  func.return
}

// CHECK: Operation does not verify: memref.prefetch: locality hint 4 is not in 0..3

// -----

func.func @keyword(%A: memref<64xf32>, %i: index) {
  memref.prefetch %A[%i], load, locality<3>, data : memref<64xf32>
  func.return
}

// CHECK: Expected one of 'read', 'write'
