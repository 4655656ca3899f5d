// RUN: tc-opt %s -p 'register-tile{vector-width=16 rows=4 vectors=2}' | filecheck %s

// O(m, w) +=! A(r, m, w) * B(r, w): each reduction step moves A's vectors
// to another plane (32 KiB on) of an array of 1 MiB, so the kernel
// prefetches A two steps ahead, for the first vector of each row. B (4 KiB
// in all, rows 128 bytes apart) stays in cache and is left alone.

func.func @planes(%A: memref<32x256x32xf32>, %B: memref<32x32xf32>, %O: memref<256x32xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (256, 32)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%m: index, %w: index):
    affine.for %r = 0 to 32 {
      %a = affine.load %A[%r, %m, %w] : memref<32x256x32xf32>
      %b = affine.load %B[%r, %w] : memref<32x32xf32>
      %p = arith.mulf %a, %b : f32
      %o = affine.load %O[%m, %w] : memref<256x32xf32>
      %s = arith.addf %o, %p fastmath<reassoc> : f32
      affine.store %s, %O[%m, %w] : memref<256x32xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @planes
// CHECK:       affine.for %[[R:.*]] = 0 to 32 iter_args(
// CHECK:         %{{.*}} = vector.load %A[%[[R]], %[[M0:.*]], %[[W:.*]]] : memref<32x256x32xf32>, vector<16xf32>
// CHECK-NEXT:    %[[AHEAD:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 2))> ()[%[[R]]]
// CHECK-NEXT:    memref.prefetch %A[%[[AHEAD]], %[[M0]], %[[W]]], read, locality<3>, data : memref<32x256x32xf32>
// CHECK-NOT:     memref.prefetch %B
// CHECK-NOT:     memref.prefetch %A[%[[AHEAD]], %[[M0]], %{{.*}}]
// CHECK:         %{{.*}} = vector.load %A[%[[R]], %[[M1:.*]], %[[W]]] : memref<32x256x32xf32>, vector<16xf32>
// CHECK-NEXT:    memref.prefetch %A[%[[AHEAD]], %[[M1]], %[[W]]], read, locality<3>, data : memref<32x256x32xf32>
// CHECK-NOT:     memref.prefetch %B
// CHECK:         affine.yield

// A is as large, but each step moves it by one 512-byte row: one stream the
// hardware prefetcher follows. No prefetch.

func.func @rows(%A: memref<256x8x128xf32>, %B: memref<8x128xf32>, %O: memref<256x128xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (256, 128)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%m: index, %w: index):
    affine.for %r = 0 to 8 {
      %a = affine.load %A[%m, %r, %w] : memref<256x8x128xf32>
      %b = affine.load %B[%r, %w] : memref<8x128xf32>
      %p = arith.mulf %a, %b : f32
      %o = affine.load %O[%m, %w] : memref<256x128xf32>
      %s = arith.addf %o, %p fastmath<reassoc> : f32
      affine.store %s, %O[%m, %w] : memref<256x128xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @rows
// CHECK:       affine.for %{{.*}} = 0 to 8 iter_args(
// CHECK-NOT:   memref.prefetch
// CHECK:       func.return
