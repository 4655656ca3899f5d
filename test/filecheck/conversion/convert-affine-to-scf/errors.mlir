// RUN: tc-opt %s --split-input-file --verify-diagnostics -p convert-affine-to-scf | filecheck %s

// Unsupported input is rejected with a message.

// (affine.parallel with reductions is also rejected, but xDSL's verifier
// refuses every affine.parallel with results before the pass runs.)

func.func @if_results_without_else(%i: index) -> index {
  %r = "affine.if"(%i) <{condition = affine_set<(d0) : (d0 >= 0)>}> ({
    "affine.yield"(%i) : (index) -> ()
  }, {
  }) : (index) -> index
  func.return %r : index
}

// CHECK: affine.if with results needs an else region
// CHECK: -----

// -----

func.func @vector(%A: memref<?xf32>, %i: index) -> vector<4xf32> {
  %v = affine.vector_load %A[%i] : memref<?xf32>, vector<4xf32>
  func.return %v : vector<4xf32>
}

// CHECK: 'affine.vector_load' is not supported
