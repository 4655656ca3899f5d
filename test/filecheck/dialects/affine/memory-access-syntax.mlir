// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// tc-opt's affine dialect reads and writes memory accesses in MLIR's syntax:
// a bare SSA id is a dimension, `symbol(%x)` a symbol (xDSL itself reads every
// id as a symbol). Printing and reparsing gives the same maps and operands.

func.func @access(%A: memref<?x?xf32>, %N: index, %i: index, %j: index) {
  %x = affine.load %A[%i + 1, %j] : memref<?x?xf32>
  %y = affine.load %A[%i + symbol(%N) - 1, (%j floordiv 4) * -2 + %i mod 3] : memref<?x?xf32>
  %z = affine.load %A[-%i, %j - symbol(%N) ceildiv 2] : memref<?x?xf32>
  affine.store %x, %A[%j, symbol(%N) - (%i - 1)] : memref<?x?xf32>
  %w = affine.load %A[3, -1] : memref<?x?xf32>
  %v = affine.vector_load %A[%i, %j * 4] : memref<?x?xf32>, vector<4xf32>
  affine.vector_store %v, %A[%i, symbol(%N)] : memref<?x?xf32>, vector<4xf32>
  func.return
}

// CHECK:      %x = affine.load %A[%i + 1, %j] : memref<?x?xf32>
// CHECK-NEXT: %y = affine.load %A[%i + symbol(%N) + -1, %j floordiv 4 * -2 + %i mod 3] : memref<?x?xf32>
// CHECK-NEXT: %z = affine.load %A[%i * -1, %j + symbol(%N) ceildiv 2 * -1] : memref<?x?xf32>
// CHECK-NEXT: affine.store %x, %A[%j, symbol(%N) + (%i * -1 + 1)] : memref<?x?xf32>
// CHECK-NEXT: %w = affine.load %A[3, -1] : memref<?x?xf32>
// CHECK-NEXT: %v = affine.vector_load %A[%i, %j * 4] : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT: affine.vector_store %v, %A[%i, symbol(%N)] : memref<?x?xf32>, vector<4xf32>

// CHECK-GENERIC:      "affine.load"(%A, %i, %j) <{map = affine_map<(d0, d1) -> ((d0 + 1), d1)>}>
// CHECK-GENERIC-NEXT: "affine.load"(%A, %i, %j, %N) <{map = affine_map<(d0, d1)[s0] -> (((d0 + s0) + -1), (((d1 floordiv 4) * -2) + (d0 mod 3)))>}>
// CHECK-GENERIC-NEXT: "affine.load"(%A, %i, %j, %N) <{map = affine_map<(d0, d1)[s0] -> ((d0 * -1), (d1 + ((s0 ceildiv 2) * -1)))>}>
// CHECK-GENERIC-NEXT: "affine.store"(%x, %A, %j, %i, %N) <{map = affine_map<(d0, d1)[s0] -> (d0, (s0 + ((d1 * -1) + 1)))>}>
// CHECK-GENERIC-NEXT: "affine.load"(%A) <{map = affine_map<() -> (3, -1)>}>
// CHECK-GENERIC-NEXT: "affine.vector_load"(%A, %i, %j) <{map = affine_map<(d0, d1) -> (d0, (d1 * 4))>}>
// CHECK-GENERIC-NEXT: "affine.vector_store"(%v, %A, %i, %N) <{map = affine_map<(d0)[s0] -> (d0, s0)>}>
