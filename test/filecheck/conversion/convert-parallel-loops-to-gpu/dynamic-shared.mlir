// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// Dynamic shared memory: a shared buffer (memory space 3) with dynamic
// extents, from affine-gpu-promote{dynamic-shared}. The host computes the
// bytes of the kernel's dynamic buffers from the sizes (each rounded up to
// 16, summed, as i32) and launches with them; in the kernel the buffers move
// to the entry block, in order, their extents recomputed there. A static
// shared buffer stays where it is, and a kernel with no dynamic one is
// launched without dynamic_shared_memory_size.

// CHECK-LABEL:  func.func @dyn(%A: memref<?x?xf32>, %O: memref<?x?xf32>, %M: index, %K: index) {
// CHECK:          %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT:     %[[E:.*]] = arith.addi %K, %c1 : index
// CHECK-NEXT:     %[[S0:.*]] = arith.muli %[[C128]], %[[E]] : index
// CHECK-NEXT:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[D0:.*]] = arith.ceildivui %[[S0]], %[[C16]] : index
// CHECK-NEXT:     %[[C16A:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[A0:.*]] = arith.muli %[[D0]], %[[C16A]] : index
// CHECK-NEXT:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:     %[[S1:.*]] = arith.muli %[[C2]], %K : index
// CHECK-NEXT:     %[[C16B:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[D1:.*]] = arith.ceildivui %[[S1]], %[[C16B]] : index
// CHECK-NEXT:     %[[C16C:.*]] = arith.constant 16 : index
// CHECK-NEXT:     %[[A1:.*]] = arith.muli %[[D1]], %[[C16C]] : index
// CHECK-NEXT:     %[[SUM:.*]] = arith.addi %[[A0]], %[[A1]] : index
// CHECK-NEXT:     %[[MAX:.*]] = arith.constant 2147483647 : index
// CHECK-NEXT:     %[[CAP:.*]] = arith.minui %[[SUM]], %[[MAX]] : index
// CHECK-NEXT:     %[[BYTES:.*]] = arith.index_cast %[[CAP]] : index to i32
// CHECK-NEXT:     gpu.launch_func @dyn_kernels::@dyn_k0 blocks in ({{.*}}) threads in ({{.*}}) dynamic_shared_memory_size %[[BYTES]] args(%A : memref<?x?xf32>, %O : memref<?x?xf32>, %M : index, %K : index)
// CHECK:        gpu.func @dyn_k0(%A: memref<?x?xf32>, %O: memref<?x?xf32>, %M: index, %K: index) kernel
// CHECK:          gpu.block_id x
// CHECK:          %[[KE:.*]] = arith.addi %K, %{{.*}} : index
// CHECK-NEXT:     %s = memref.alloca(%[[KE]]) : memref<32x?xf32, 3 : i32>
// CHECK-NEXT:     %h = memref.alloca(%K) : memref<?xf16, 3 : i32>
// CHECK-NEXT:     scf.for
// CHECK-NEXT:       %t = memref.alloca() : memref<32xf32, 3 : i32>
// CHECK-NOT:        memref.alloca
// CHECK:            gpu.barrier
// CHECK:            memref.load %s
// CHECK:            gpu.barrier
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.return
func.func @dyn(%A: memref<?x?xf32>, %O: memref<?x?xf32>, %M: index, %K: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %M, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%b: index):
    %t = memref.alloca() : memref<32xf32, 3 : i32>
    %n = arith.addi %K, %c1 : index
    %s = memref.alloca(%n) : memref<32x?xf32, 3 : i32>
    %h = memref.alloca(%K) : memref<?xf16, 3 : i32>
    "scf.parallel"(%c0, %K, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %A[%b, %i] : memref<?x?xf32>
      memref.store %x, %s[%c0, %i] : memref<32x?xf32, 3 : i32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index, index) -> ()
    "scf.parallel"(%c0, %K, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %y = memref.load %s[%c0, %i] : memref<32x?xf32, 3 : i32>
      memref.store %y, %O[%b, %i] : memref<?x?xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 4096 : i64} : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL:  func.func @static(%A: memref<?xf32>, %N: index) {
// CHECK:          gpu.launch_func @static_kernels::@static_k0 blocks in (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) threads in (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) args(
// CHECK:        gpu.func @static_k0(
// CHECK:          scf.for
// CHECK-NEXT:       %t = memref.alloca() : memref<32xf32, 3 : i32>
func.func @static(%A: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%b: index):
    %t = memref.alloca() : memref<32xf32, 3 : i32>
    "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %A[%b] : memref<?xf32>
      memref.store %x, %t[%i] : memref<32xf32, 3 : i32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 4096 : i64} : (index, index, index) -> ()
  func.return
}
