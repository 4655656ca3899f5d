// RUN: tc-opt %s --verify-diagnostics --split-input-file | filecheck %s

// One subscript per memref dimension: xDSL checked only the map's operands,
// and `convert-affine-to-scf` then built `memref.load`s that failed.

func.func @rank(%A: memref<f32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %A[%i] : memref<f32>
  }
  func.return
}

// CHECK: 'affine.load' has 1 subscript for a memref of rank 0

// -----

func.func @store_rank(%A: memref<4x4xf32>, %v: f32) {
  affine.for %i = 0 to 4 {
    affine.store %v, %A[%i] : memref<4x4xf32>
  }
  func.return
}

// CHECK: 'affine.store' has 1 subscript for a memref of rank 2

// -----

// An `affine.parallel` needs as many steps (and bound groups) as IVs: a
// short `steps` passed and crashed `affine-isl-schedule` and `collapse-dims`.

func.func @steps(%A: memref<4x4xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (4, 4)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index, %j: index):
    %c = arith.constant 0.000000e+00 : f32
    affine.store %c, %A[%i, %j] : memref<4x4xf32>
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK: 'affine.parallel' needs one of each per loop: 2 lower bound groups, 2 upper bound groups, 1 steps, 2 induction variables
