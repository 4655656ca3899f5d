// RUN: tc-opt %s --split-input-file -p convert-affine-to-scf | filecheck %s

// affine.for bounds: constants, symbols, max lower / min upper bounds, steps,
// iter_args, and floordiv/ceildiv/mod in bounds (plain arith, floor semantics).

func.func @constant(%A: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %A[%i] : memref<8xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @constant
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:      %{{.*}} = memref.load %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

func.func @symbolic(%A: memref<?xf32>, %N: index) {
  affine.for %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N] step 4 {
    %x = affine.load %A[%i] : memref<?xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @symbolic(%A: memref<?xf32>, %N: index)
// One constant per value per lowered op.
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.subi %N, %[[C1]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[C1]] to %[[UB]] step %[[C4]] {

// -----

// A lone symbol bound is used as is.

func.func @bare_symbol(%A: memref<?xf32>, %L: index, %N: index) {
  affine.for %i = %L to %N {
    %x = affine.load %A[%i] : memref<?xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @bare_symbol
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %{{.*}} = %L to %N step %[[C1]] {

// -----

func.func @min_max(%A: memref<?xf32>, %N: index, %T: index) {
  affine.for %i = max affine_map<(d0)[s0] -> (0, d0 - 4, s0)>(%T)[%N] to min affine_map<(d0)[s0] -> (d0 + 32, s0, 100)>(%T)[%N] {
    %x = affine.load %A[%i] : memref<?xf32>
  }
  func.return
}

// Constants are folded into one and combined last.
// CHECK-LABEL: func.func @min_max(%A: memref<?xf32>, %N: index, %T: index)
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[A:.*]] = arith.subi %T, %[[C4]] : index
// CHECK-NEXT:    %[[M1:.*]] = arith.maxsi %[[A]], %N : index
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[LB:.*]] = arith.maxsi %[[M1]], %[[C0]] : index
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[B:.*]] = arith.addi %T, %[[C32]] : index
// CHECK-NEXT:    %[[M2:.*]] = arith.minsi %[[B]], %N : index
// CHECK-NEXT:    %[[C100:.*]] = arith.constant 100 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.minsi %[[M2]], %[[C100]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[C1]] {

// -----

// Tiled loops: the point loop's bounds use the tile loop's induction variable.

func.func @tiled(%A: memref<?xf32>, %N: index) {
  affine.for %t = 0 to %N step 32 {
    affine.for %i = affine_map<(d0) -> (d0)>(%t) to min affine_map<(d0)[s0] -> (d0 + 32, s0)>(%t)[%N] {
      %x = affine.load %A[%i] : memref<?xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @tiled
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %N step %{{.*}} {
// CHECK-NEXT:      %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[E:.*]] = arith.addi %[[T]], %[[C32]] : index
// CHECK-NEXT:      %[[UB:.*]] = arith.minsi %[[E]], %N : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %{{.*}} = %[[T]] to %[[UB]] step %[[C1]] {

// -----

// floordiv / ceildiv / mod by constants in bounds.

func.func @div_bounds(%A: memref<?xf32>, %N: index) {
  affine.for %i = affine_map<()[s0] -> (s0 floordiv 4)>()[%N] to affine_map<()[s0] -> (s0 ceildiv 8)>()[%N] {
    affine.for %j = 0 to affine_map<()[s0] -> (s0 mod 3)>()[%N] {
      %x = affine.load %A[%i] : memref<?xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @div_bounds(%A: memref<?xf32>, %N: index)
// floordiv: (N < 0 ? N - 3 : N) divsi 4
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %N, %[[C0]] : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ADJ:.*]] = arith.subi %N, %[[C3]] : index
// CHECK-NEXT:    %[[SEL:.*]] = arith.select %[[NEG]], %[[ADJ]], %N : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[LB:.*]] = arith.divsi %[[SEL]], %[[C4]] : index
// ceildiv: (N > 0 ? N + 7 : N) divsi 8
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %N, %[[C0]] : index
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:    %[[ADJ2:.*]] = arith.addi %N, %[[C7]] : index
// CHECK-NEXT:    %[[SEL2:.*]] = arith.select %[[POS]], %[[ADJ2]], %N : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.divsi %[[SEL2]], %[[C8]] : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[C1]] {
// mod: r = N remsi 3; r < 0 ? r + 3 : r
// CHECK-NEXT:      %[[C3B:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %N, %[[C3B]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[RNEG:.*]] = arith.cmpi slt, %[[R]], %[[Z]] : index
// CHECK-NEXT:      %[[RADJ:.*]] = arith.addi %[[R]], %[[C3B]] : index
// CHECK-NEXT:      %[[MOD:.*]] = arith.select %[[RNEG]], %[[RADJ]], %[[R]] : index
// CHECK-NEXT:      %[[C1B:.*]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %{{.*}} = %[[Z]] to %[[MOD]] step %[[C1B]] {
// CHECK-NOT:   floordivsi
// CHECK-NOT:   ceildivsi

// -----

// iter_args and results carry over; affine.yield becomes scf.yield.

func.func @iter_args(%A: memref<?xf32>, %N: index) -> f32 {
  %zero = arith.constant 0.0 : f32
  %sum = affine.for %i = 0 to %N iter_args(%acc = %zero) -> (f32) {
    %x = affine.load %A[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    affine.yield %s : f32
  }
  func.return %sum : f32
}

// CHECK-LABEL: func.func @iter_args
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %N step %{{.*}} iter_args(%[[ACC:.*]] = %zero) -> (f32) {
// CHECK:           %[[S:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT:      scf.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[SUM]] : f32
