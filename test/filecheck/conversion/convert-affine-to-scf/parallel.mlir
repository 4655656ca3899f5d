// RUN: tc-opt %s --split-input-file -p convert-affine-to-scf | filecheck %s

// affine.parallel → scf.parallel: each dimension combines its group of bound
// map results with max (lower) / min (upper); steps become constants;
// affine.yield becomes scf.reduce. A 0-d affine.parallel is inlined.
// (affine.parallel has no custom syntax in xDSL: generic form.)

func.func @one_d(%A: memref<?xf32>, %N: index) {
  %z = arith.constant 0.0 : f32
  "affine.parallel"(%N) <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : vector<1xi32>, upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : vector<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index):
    affine.store %z, %A[%i] : memref<?xf32>
    "affine.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

// CHECK-LABEL: func.func @one_d(%A: memref<?xf32>, %N: index)
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%[[C0]], %N, %[[C1]]) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%i: index):
// CHECK-NEXT:      memref.store %z, %A[%i] : memref<?xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NEXT:    func.return

// -----

func.func @three_d(%A: memref<?x?x?xf32>, %M: index, %N: index, %K: index) {
  %z = arith.constant 0.0 : f32
  "affine.parallel"(%M, %N, %K) <{reductions = [], lowerBoundsMap = affine_map<()[s0] -> (0, 1, s0 floordiv 2)>, lowerBoundsGroups = dense<1> : vector<3xi32>, upperBoundsMap = affine_map<()[s0, s1] -> (s0, s1 - 1, s1)>, upperBoundsGroups = dense<1> : vector<3xi32>, steps = [1 : i64, 2 : i64, 4 : i64]}> ({
  ^bb0(%i: index, %j: index, %k: index):
    affine.store %z, %A[%i, %j, %k] : memref<?x?x?xf32>
    "affine.yield"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}

// Symbolic bounds (M floordiv 2, K - 1) and steps 1, 2, 4.
// CHECK-LABEL: func.func @three_d(%A: memref<?x?x?xf32>, %M: index, %N: index, %K: index)
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %M, %[[C0]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ADJ:.*]] = arith.subi %M, %[[C1]] : index
// CHECK-NEXT:    %[[SEL:.*]] = arith.select %[[NEG]], %[[ADJ]], %M : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[LB2:.*]] = arith.divsi %[[SEL]], %[[C2]] : index
// CHECK-NEXT:    %[[UB1:.*]] = arith.subi %K, %[[C1]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    "scf.parallel"(%[[C0]], %[[C1]], %[[LB2]], %N, %[[UB1]], %K, %[[C1]], %[[C2]], %[[C4]]) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
// CHECK-NEXT:    ^{{.*}}(%i: index, %j: index, %k: index):
// CHECK-NEXT:      memref.store %z, %A[%i, %j, %k] : memref<?x?x?xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    })

// -----

func.func @groups(%A: memref<?x?xf32>, %M: index, %N: index, %T: index) {
  %z = arith.constant 0.0 : f32
  "affine.parallel"(%T, %T, %M, %N) <{reductions = [], lowerBoundsMap = affine_map<(d0) -> (d0, 0, 2)>, lowerBoundsGroups = dense<[2, 1]> : vector<2xi32>, upperBoundsMap = affine_map<(d0)[s0, s1] -> (d0 + 16, s0, s1)>, upperBoundsGroups = dense<[2, 1]> : vector<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%i: index, %j: index):
    affine.store %z, %A[%i, %j] : memref<?x?xf32>
    "affine.yield"() : () -> ()
  }) : (index, index, index, index) -> ()
  func.return
}

// Bound groups: dim 0 runs from max(T, 0) to min(T + 16, M), dim 1 from 2 to N.
// CHECK-LABEL: func.func @groups(%A: memref<?x?xf32>, %M: index, %N: index, %T: index)
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[E:.*]] = arith.addi %T, %[[C16]] : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[LB0:.*]] = arith.maxsi %T, %[[C0]] : index
// CHECK-NEXT:    %[[UB0:.*]] = arith.minsi %[[E]], %M : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%[[LB0]], %[[C2]], %[[UB0]], %N, %[[C1]], %[[C1]]) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({

// -----

func.func @zero_d(%A: memref<f32>) {
  %z = arith.constant 0.0 : f32
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> ()>, lowerBoundsGroups = dense<> : vector<0xi32>, upperBoundsMap = affine_map<() -> ()>, upperBoundsGroups = dense<> : vector<0xi32>, steps = []}> ({
    affine.store %z, %A[] : memref<f32>
    "affine.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @zero_d(%A: memref<f32>)
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    memref.store %z, %A[] : memref<f32>
// CHECK-NEXT:    func.return
