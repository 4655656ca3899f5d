// convert-parallel-loops-to-gpu: each top-level nest becomes a kernel; mapped
// loops become cyclic loops over block/thread indices; sizes and constants
// stay on the host (constants are also cloned into kernels), allocations and
// deallocations stay on the host, and the grid is computed there.
// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-LABEL:  func.func @scale(%A: memref<?xf32>, %N: index) {
// CHECK:          %[[G:.*]] = arith.maxsi
// CHECK:          gpu.launch_func @scale_kernels::@scale_k0 blocks in (%[[G]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%A : memref<?xf32>, %N : index)
// CHECK-NEXT:     func.return
// CHECK:        gpu.module @scale_kernels {
// CHECK:          gpu.func @scale_k0(%A: memref<?xf32>, %N: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// CHECK:            %[[B:.*]] = gpu.block_id x
// CHECK:            %[[GD:.*]] = gpu.grid_dim x
// CHECK:            scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:              gpu.thread_id x
// CHECK:              gpu.block_dim x
// CHECK:              scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:                memref.store
// CHECK-NOT:      gpu.barrier
// CHECK:          gpu.return
func.func @scale(%A: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %t = arith.ceildivsi %N, %c128 : index
  "scf.parallel"(%c0, %t, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%b: index):
    %lo = arith.muli %b, %c128 : index
    %hi0 = arith.addi %lo, %c128 : index
    %hi = arith.minsi %hi0, %N : index
    "scf.parallel"(%lo, %hi, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<?xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %A[%i] : memref<?xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 128 : i64} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 4096 : i64} : (index, index, index) -> ()
  func.return
}

// A store outside the thread loops (in a sequential loop around them) runs
// in thread 0 only; a barrier separates it from the thread loop that reads
// what it wrote (right before that loop), and another ends the iteration (the next store overwrites
// what the thread loop read). The temporary's alloc and dealloc stay on the
// host; a top-level store is a kernel of one thread, as is the unmapped
// last nest (no guard, no barrier).
// CHECK-LABEL:  func.func @serial(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
// CHECK:          %[[T:.*]] = memref.alloc(%N) : memref<?xf32>
// CHECK:          gpu.launch_func @serial_kernels::@serial_k0 {{.*}} args(%[[T]] : memref<?xf32>)
// CHECK:          gpu.launch_func @serial_kernels::@serial_k1 {{.*}} args(%A : memref<?xf32>, %N : index, %[[T]] : memref<?xf32>)
// CHECK:          gpu.launch_func @serial_kernels::@serial_k2 {{.*}} args(%S : memref<f32>, %N : index, %[[T]] : memref<?xf32>)
// CHECK-NEXT:     memref.dealloc %[[T]] : memref<?xf32>
// CHECK:          gpu.func @serial_k0({{.*}}) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
// CHECK-NOT:        gpu.
// CHECK:            memref.store
// CHECK-NEXT:       gpu.return
// CHECK:          gpu.func @serial_k1({{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
// CHECK:            %[[TID:.*]] = gpu.thread_id x
// CHECK:            scf.for
// CHECK-NEXT:         %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK-NEXT:         scf.if %[[FIRST]] {
// CHECK-NEXT:           memref.store
// CHECK-NEXT:         }
// CHECK:              gpu.barrier
// CHECK-NEXT:         scf.for
// CHECK:                memref.store
// CHECK:              }
// CHECK-NEXT:         gpu.barrier
// CHECK-NEXT:       }
// CHECK-NEXT:       gpu.return
// CHECK:          gpu.func @serial_k2({{.*}}) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
// CHECK-NOT:        gpu.thread_id
// CHECK-NOT:        gpu.barrier
// CHECK:            gpu.return
func.func @serial(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %T = memref.alloc(%N) : memref<?xf32>
  %z = arith.constant 0.0 : f32
  memref.store %z, %T[%c0] : memref<?xf32>
  scf.for %r = %c0 to %c4 step %c1 {
    memref.store %z, %T[%c0] : memref<?xf32>
    "scf.parallel"(%c1, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %x = memref.load %T[%c0] : memref<?xf32>
      %a = memref.load %A[%i] : memref<?xf32>
      %y = arith.addf %x, %a : f32
      memref.store %y, %T[%i] : memref<?xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64} : (index, index, index) -> ()
  }
  scf.for %i = %c0 to %N step %c1 {
    %s = memref.load %S[] : memref<f32>
    %t = memref.load %T[%i] : memref<?xf32>
    %u = arith.addf %s, %t : f32
    memref.store %u, %S[] : memref<f32>
  }
  memref.dealloc %T : memref<?xf32>
  func.return
}
