// A thread_x loop marked tc.gpu_reduce whose body is one reduction becomes a
// per-thread partial reduction (cyclic over the warp, iter_args from the
// identity), a butterfly of five xor shuffles, and S[n] = S[n] + total in the
// thread with x index 0 (the last combine and the load move into that
// thread's scf.if too). A
// marked loop whose body is not one reduction runs in one thread along x.
// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @rowsum_k0
// CHECK:         %[[TX:.*]] = gpu.thread_id x
// CHECK:         scf.for %n =
// CHECK:           %[[ID:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[P:.*]] = scf.for %d = %{{.*}} to %D step %{{.*}} iter_args(%[[ACC:.*]] = %[[ID]]) -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %I[%n, %d]
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[T]] : f32
// CHECK:           gpu.shuffle xor %[[P]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4:   gpu.shuffle xor
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.load %S[%n]
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NOT:     gpu.barrier
func.func @rowsum(%I: memref<?x?xf32>, %S: memref<?xf32>, %N: index, %D: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%n: index):
    "scf.parallel"(%c0, %D, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%d: index):
      %x = memref.load %I[%n, %d] : memref<?x?xf32>
      %s = memref.load %S[%n] : memref<?xf32>
      %t = arith.addf %s, %x fastmath<reassoc> : f32
      memref.store %t, %S[%n] : memref<?xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64, tc.gpu_reduce} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64} : (index, index, index) -> ()
  func.return
}

// Not one reduction (it also writes O): a loop in one thread along x (the
// block has none along x), whose stores need no guard.
// CHECK-LABEL: gpu.func @mixed_k0
// CHECK-SAME:    known_block_size = array<i32: 1, 8, 1>
// CHECK-NOT:     gpu.shuffle
// CHECK:         scf.for %d = %{{.*}} to %D step %{{.*}} {
// CHECK-NEXT:      memref.load %I[%n, %d]
// CHECK-NEXT:      memref.store %{{.*}}, %O[%n, %d]
// CHECK-NOT:       scf.if
// CHECK:           memref.store %{{.*}}, %S[%n]
func.func @mixed(%I: memref<?x?xf32>, %O: memref<?x?xf32>, %S: memref<?xf32>, %N: index, %D: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%n: index):
    "scf.parallel"(%c0, %D, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%d: index):
      %x = memref.load %I[%n, %d] : memref<?x?xf32>
      memref.store %x, %O[%n, %d] : memref<?x?xf32>
      %s = memref.load %S[%n] : memref<?xf32>
      %t = arith.addf %s, %x fastmath<reassoc> : f32
      memref.store %t, %S[%n] : memref<?xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64, tc.gpu_reduce} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64} : (index, index, index) -> ()
  func.return
}
