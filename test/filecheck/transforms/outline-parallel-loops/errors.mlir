// RUN: tc-opt %s --split-input-file --verify-diagnostics -p outline-parallel-loops | filecheck %s

// scf.parallel with reductions is rejected.

func.func @sum(%A: memref<?xf32>, %N: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = "scf.parallel"(%c0, %N, %c1, %zero) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %x = memref.load %A[%i] : memref<?xf32>
    scf.reduce(%x : f32) {
    ^bb1(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }) : (index, index, index, f32) -> f32
  func.return %r : f32
}

// CHECK: outline-parallel-loops: scf.parallel with reductions is not supported
