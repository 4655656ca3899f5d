// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=1}' | filecheck %s

// C(m, n) +=! A(r_k, m) * B(r_k, n) with symbolic sizes. Packing (the
// default, as the row extent is unknown): A's rows, which k walks with the
// stride of a whole row, are copied once for every full strip of 2 rows into
// buf[strip, k, 0..2) (a parallel loop over the strips; the strip's 2 rows
// are consecutive elements of A: one vector copy per k); B's panel of each
// column strip into a contiguous K x 8 buffer, which makes the column strips
// the outer (parallel) loop; the kernels read both buffers, and prefetch the
// panel 768 bytes (24 steps of 32) ahead, as its size is unknown; the
// remainder row reads A itself.

func.func @atb(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %K: index, %M: index, %N: index) {
  "affine.parallel"(%M, %N) <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<()[s0, s1] -> (s0, s1)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%m: index, %n: index):
    affine.for %k = 0 to %K {
      %a = affine.load %A[%k, %m] : memref<?x?xf32>
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

// CHECK:      %[[K:.*]] = arith.maxsi %K, %{{.*}} : index
// CHECK:      %[[MEND:.*]] = affine.apply affine_map<()[s0] -> (((s0 floordiv 2) * 2))> ()[%{{.*}}]
// CHECK-NEXT: %[[STRIPS:.*]] = affine.apply affine_map<()[s0] -> ((s0 floordiv 2))> ()[%[[MEND]]]
// CHECK-NEXT: %[[AROWS:.*]] = memref.alloc(%[[STRIPS]], %[[K]]) : memref<?x?x2xf32>
// CHECK-NEXT: "affine.parallel"(%[[STRIPS]]) <{{.*}}upperBoundsMap = affine_map<()[s0] -> (s0)>{{.*}}steps = [1 : i64]}> ({
// CHECK-NEXT: ^bb0(%strip: index):
// CHECK-NEXT:   %[[R0:.*]] = affine.apply affine_map<()[s0] -> ((s0 * 2))> ()[%strip]
// CHECK-NEXT:   affine.for %k = 0 to %[[K]] {
// CHECK-NEXT:     %[[X:.*]] = vector.load %A[%k, %[[R0]]] : memref<?x?xf32>, vector<2xf32>
// CHECK-NEXT:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:     vector.store %[[X]], %[[AROWS]][%strip, %k, %[[C0]]] : memref<?x?x2xf32>, vector<2xf32>
// CHECK-NEXT:   }

// CHECK:      ^bb0(%n: index):
// CHECK-NEXT:   %[[PANEL:.*]] = memref.alloc(%[[K]]) : memref<?x8xf32>
// CHECK-NEXT:   affine.for %k_1 = 0 to %[[K]] {
// CHECK-NEXT:     %[[BV:.*]] = vector.load %B[%k_1, %n] : memref<?x?xf32>, vector<8xf32>
// CHECK-NEXT:     %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:     vector.store %[[BV]], %[[PANEL]][%k_1, %[[Z]]] : memref<?x8xf32>, vector<8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   "affine.parallel"(%[[MEND]]) <{{.*}}steps = [2 : i64]}> ({
// CHECK-NEXT:   ^bb0(%m: index):
// CHECK-NEXT:     %[[S:.*]] = affine.apply affine_map<()[s0] -> ((s0 floordiv 2))> ()[%m]
// CHECK:          affine.for %k_2 = 0 to %K iter_args(
// CHECK-NEXT:       %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:       %[[A0:.*]] = affine.load %[[AROWS]][%[[S]], %k_2, %{{.*}}] : memref<?x?x2xf32>
// CHECK-NEXT:       %[[A0B:.*]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK-NEXT:       %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:       %[[B0:.*]] = vector.load %[[PANEL]][%k_2, %[[COL:.*]]] : memref<?x8xf32>, vector<8xf32>
// CHECK-NEXT:       %[[AHEAD:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 24))> ()[%k_2]
// CHECK-NEXT:       memref.prefetch %[[PANEL]][%[[AHEAD]], %[[COL]]], read, locality<3>, data : memref<?x8xf32>
// CHECK-NEXT:       %{{.*}} = math.fma %[[A0B]], %[[B0]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK:        ^bb0(%m_1: index):
// CHECK:            %{{.*}} = affine.load %A[%k_3, %m_1] : memref<?x?xf32>
// CHECK:        memref.dealloc %[[PANEL]] : memref<?x8xf32>
// CHECK:      memref.dealloc %[[AROWS]] : memref<?x?x2xf32>
// CHECK-NEXT: func.return
