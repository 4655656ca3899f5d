// RUN: tc-opt %s -p 'affine-gpu-promote{shared=false}' | filecheck %s

// Register promotion needs the element to be the thread's own: the kernel
// of @uncovered runs 8 threads along y, but its reduction over r is inside a
// thread loop along x only, so 8 threads update S[m] (the outliner lets the
// one at y = 0 store): it stays in memory. In @covered every axis of the
// kernel maps a loop around it: one load, iter_args, one store.

func.func @uncovered(%B: memref<64x64xf32>, %O: memref<64x64xf32>, %S: memref<64xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (2)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%c0: index):
    "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (32)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
    ^bb0(%i: index):
      "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (64)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
      ^bb0(%j: index):
        %z = arith.constant 0.000000e+00 : f32
        affine.store %z, %O[%c0 * 32 + %i, %j] : memref<64x64xf32>
        affine.yield
      }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : () -> ()
      affine.yield
    }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64} : () -> ()
    "affine.parallel"(%c0, %c0) <{reductions = [], lowerBoundsMap = affine_map<(d0) -> ((d0 * 32))>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<(d0) -> (((d0 * 32) + 32))>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
    ^bb0(%m: index):
      affine.for %r = 0 to 64 {
        %b = affine.load %B[%m, %r] : memref<64x64xf32>
        %s = affine.load %S[%m] : memref<64xf32>
        %t = arith.addf %s, %b : f32
        affine.store %t, %S[%m] : memref<64xf32>
      }
      affine.yield
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index) -> ()
    affine.yield
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 256 : i64} : () -> ()
  func.return
}

// CHECK-LABEL: func.func @uncovered
// CHECK-NOT:     iter_args
// CHECK:         affine.for %r = 0 to 64 {
// CHECK-NEXT:      affine.load %B[%m, %r]
// CHECK-NEXT:      affine.load %S[%m]

func.func @covered(%B: memref<64x64xf32>, %S: memref<64xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (2)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%c0: index):
    "affine.parallel"(%c0, %c0) <{reductions = [], lowerBoundsMap = affine_map<(d0) -> ((d0 * 32))>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<(d0) -> (((d0 * 32) + 32))>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
    ^bb0(%m: index):
      affine.for %r = 0 to 64 {
        %b = affine.load %B[%m, %r] : memref<64x64xf32>
        %s = affine.load %S[%m] : memref<64xf32>
        %t = arith.addf %s, %b : f32
        affine.store %t, %S[%m] : memref<64xf32>
      }
      affine.yield
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index) -> ()
    affine.yield
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 256 : i64} : () -> ()
  func.return
}

// CHECK-LABEL: func.func @covered
// CHECK:         %[[INIT:.*]] = affine.load %S[%m] : memref<64xf32>
// CHECK-NEXT:    %[[R:.*]] = affine.for %r = 0 to 64 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:      %[[B:.*]] = affine.load %B[%m, %r] : memref<64x64xf32>
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[ACC]], %[[B]] : f32
// CHECK-NEXT:      affine.yield %[[T]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    affine.store %[[R]], %S[%m] : memref<64xf32>
