// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=2}' | filecheck %s --check-prefix=YMM
// RUN: tc-opt %s -p 'register-tile{vector-width=16 rows=2 vectors=2}' | filecheck %s --check-prefix=ZMM

// C(m, n) +=! A(m, r_k) * B(r_k, n) with symbolic sizes: B's packed panel
// (K x 2 vectors) may exceed the L1, so each reduction step prefetches the
// panel 768 bytes ahead, once per 64-byte line: with 8 lanes the two
// vectors of a step share a line (one prefetch, 12 steps of 64 bytes
// ahead); with 16 lanes each vector is a line (two, 6 steps of 128 bytes).

func.func @mm(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %K: index, %M: index, %N: index) {
  "affine.parallel"(%M, %N) <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<()[s0, s1] -> (s0, s1)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%m: index, %n: index):
    affine.for %k = 0 to %K {
      %a = affine.load %A[%m, %k] : memref<?x?xf32>
      %b = affine.load %B[%k, %n] : memref<?x?xf32>
      %p = arith.mulf %a, %b : f32
      %c = affine.load %C[%m, %n] : memref<?x?xf32>
      %s = arith.addf %c, %p fastmath<reassoc> : f32
      affine.store %s, %C[%m, %n] : memref<?x?xf32>
    }
    affine.yield
  }) : (index, index) -> ()
  func.return
}

// YMM:      %[[PANEL:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// YMM:      affine.for %[[K:.*]] = 0 to %K iter_args(
// YMM:        %{{.*}} = vector.load %[[PANEL]][%[[K]], %[[C0:.*]]] : memref<?x16xf32>, vector<8xf32>
// YMM-NEXT:   %[[AHEAD:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 12))> ()[%[[K]]]
// YMM-NEXT:   memref.prefetch %[[PANEL]][%[[AHEAD]], %[[C0]]], read, locality<3>, data : memref<?x16xf32>
// YMM:        %{{.*}} = vector.load %[[PANEL]][%[[K]], %{{.*}}] : memref<?x16xf32>, vector<8xf32>
// YMM-NOT:    memref.prefetch
// YMM:        affine.yield

// ZMM:      %[[PANEL:.*]] = memref.alloc(%{{.*}}) : memref<?x32xf32>
// ZMM:      affine.for %[[K:.*]] = 0 to %K iter_args(
// ZMM:        %{{.*}} = vector.load %[[PANEL]][%[[K]], %[[C0:.*]]] : memref<?x32xf32>, vector<16xf32>
// ZMM-NEXT:   %[[AHEAD:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 6))> ()[%[[K]]]
// ZMM-NEXT:   memref.prefetch %[[PANEL]][%[[AHEAD]], %[[C0]]], read, locality<3>, data : memref<?x32xf32>
// ZMM:        %{{.*}} = vector.load %[[PANEL]][%[[K]], %[[C16:.*]]] : memref<?x32xf32>, vector<16xf32>
// ZMM-NEXT:   memref.prefetch %[[PANEL]][%[[AHEAD]], %[[C16]]], read, locality<3>, data : memref<?x32xf32>
// ZMM-NOT:    memref.prefetch
// ZMM:        affine.yield
