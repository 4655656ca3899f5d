// RUN: not tc-opt %s -p convert-to-llvm 2>&1 | filecheck %s

// A layout other than the identity map is rejected, not lowered as if it
// were row-major (the identity map is: memref.mlir, @identity_layout).
func.func @permuted(%A: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %A[%c0, %c0] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  func.return
}

// CHECK: convert-to-llvm: unsupported memref layout memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>> in 'func.func'
