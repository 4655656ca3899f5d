// RUN: tc-opt %s -p gpu-double-buffer | filecheck %s
// RUN: tc-opt %s -p 'gpu-double-buffer{max-shared-memory=1024}' | filecheck %s --check-prefix=SMALL

// A tile loop that copies a slice into shared memory (cp.async), waits at a
// barrier, uses it and waits again gets two halves of its buffer: the first
// slice is copied before the loop, each iteration starts at the barrier,
// copies the next slice into the other half under `next < ub` and uses its
// own half; the trailing barrier moves after the loop. Values of the copies
// that the work uses (%base) stay in the loop.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @streamed
    // CHECK:         %S = memref.alloca() : memref<2x32x33xf32, 3 : i32>
    // CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
    // CHECK-NEXT:    %[[FIRST:.*]] = arith.muli %c0, %c32 : index
    // CHECK-NEXT:    scf.for %[[I:.*]] = %tx to %c32 step %c32 {
    // CHECK-NEXT:      %[[V:.*]] = memref.load %A[%[[I]], %[[FIRST]]] : memref<256x256xf32>
    // CHECK-NEXT:      memref.store %[[V]], %S[%[[ZERO]], %[[I]], %tx] {tc.async_copy} : memref<2x32x33xf32, 3 : i32>
    // CHECK-NEXT:    }
    // CHECK:         %[[R:.*]] = scf.for %[[K:.*]] = %c0 to %c8 step %c1 iter_args(%[[ACC:.*]] = %zero) -> (f32) {
    // CHECK-NEXT:      gpu.barrier
    // CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[K]], %c32 : index
    // CHECK-NEXT:      %[[CUR:.*]] = arith.remui %[[K]], %{{.*}} : index
    // CHECK-NEXT:      %[[NXT:.*]] = arith.subi %{{.*}}, %[[CUR]] : index
    // CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[K]], %c1 : index
    // CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %c8 : index
    // CHECK-NEXT:      scf.if %[[MORE]] {
    // CHECK-NEXT:        %[[NBASE:.*]] = arith.muli %[[NEXT]], %c32 : index
    // CHECK-NEXT:        scf.for %[[J:.*]] = %tx to %c32 step %c32 {
    // CHECK-NEXT:          %[[W:.*]] = memref.load %A[%[[J]], %[[NBASE]]] : memref<256x256xf32>
    // CHECK-NEXT:          memref.store %[[W]], %S[%[[NXT]], %[[J]], %tx] {tc.async_copy} : memref<2x32x33xf32, 3 : i32>
    // CHECK-NEXT:        }
    // CHECK-NEXT:      }
    // CHECK-NEXT:      %[[S:.*]] = memref.load %S[%[[CUR]], %tx, %c0] : memref<2x32x33xf32, 3 : i32>
    // CHECK-NEXT:      %[[T:.*]] = arith.addf %[[ACC]], %[[S]] : f32
    // CHECK-NEXT:      %[[U:.*]] = arith.addi %[[BASE]], %tx : index
    // CHECK-NEXT:      scf.yield %[[T]] : f32
    // CHECK-NEXT:    }
    // CHECK-NEXT:    gpu.barrier
    // CHECK-NEXT:    memref.store %[[R]], %O[%tx] : memref<256xf32>
    // SMALL-LABEL:  gpu.func @streamed
    // SMALL:          memref.alloca() : memref<32x33xf32, 3 : i32>
    // SMALL-NOT:      memref<2x32x33xf32
    gpu.func @streamed(%A: memref<256x256xf32>, %O: memref<256xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<32x33xf32, 3 : i32>
      %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %base = arith.muli %k, %c32 : index
        scf.for %i = %tx to %c32 step %c32 {
          %v = memref.load %A[%i, %base] : memref<256x256xf32>
          memref.store %v, %S[%i, %tx] {tc.async_copy} : memref<32x33xf32, 3 : i32>
        }
        gpu.barrier
        %s = memref.load %S[%tx, %c0] : memref<32x33xf32, 3 : i32>
        %t = arith.addf %acc, %s : f32
        %u = arith.addi %base, %tx : index
        gpu.barrier
        scf.yield %t : f32
      }
      memref.store %r, %O[%tx] : memref<256xf32>
      gpu.return
    }

    // Run-time bounds: the first slice is copied, and the barrier after the
    // loop waited at, only if the loop runs; the slice index is (k - lb) / step.
    // CHECK-LABEL: gpu.func @runtime_bounds
    // CHECK:         %[[RUNS:.*]] = arith.cmpi slt, %lb, %ub : index
    // CHECK-NEXT:    scf.if %[[RUNS]] {
    // CHECK:         scf.for %[[K2:.*]] = %lb to %ub step %c2 {
    // CHECK-NEXT:      gpu.barrier
    // CHECK-NEXT:      %[[OFF:.*]] = arith.subi %[[K2]], %lb : index
    // CHECK-NEXT:      %[[TRIP:.*]] = arith.divui %[[OFF]], %c2 : index
    // CHECK-NEXT:      arith.remui %[[TRIP]], %{{.*}} : index
    // CHECK:           memref.store %s, %O[%[[K2]]] : memref<256xf32>
    // CHECK-NEXT:    }
    // CHECK-NEXT:    scf.if %[[RUNS]] {
    // CHECK-NEXT:      gpu.barrier
    // CHECK-NEXT:    }
    gpu.func @runtime_bounds(%A: memref<256xf32>, %O: memref<256xf32>, %lb: index, %ub: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c2 = arith.constant 2 : index
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %lb to %ub step %c2 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
      }
      gpu.return
    }

    // A barrier after the loop already (past index arithmetic): the trailing
    // one is dropped, not moved.
    // CHECK-LABEL: gpu.func @barrier_follows
    // CHECK:         memref.store %s, %O[%k] : memref<256xf32>
    // CHECK-NEXT:    }
    // CHECK-NEXT:    %m = arith.addi %n, %n : index
    // CHECK-NEXT:    gpu.barrier
    // CHECK-NEXT:    gpu.return
    gpu.func @barrier_follows(%A: memref<256xf32>, %O: memref<256xf32>, %n: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
      }
      %m = arith.addi %n, %n : index
      gpu.barrier
      gpu.return
    }

    // Left alone: a synchronous copy (not marked), a copy of a value the
    // loop carries, work that writes shared memory, a buffer read after the
    // loop, a loop that runs once, a copy of an array the loop writes, and a
    // loop without a trailing barrier.
    // CHECK-LABEL: gpu.func @left_alone
    // CHECK-NOT:     memref<2x
    // CHECK:         gpu.return
    gpu.func @left_alone(%A: memref<256xf32>, %O: memref<256xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %tx = gpu.thread_id x
      %S1 = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S1[%tx] : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S1[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
      }
      %S2 = memref.alloca() : memref<32xf32, 3 : i32>
      %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%i = %c0) -> (index) {
        %v = memref.load %A[%i] : memref<256xf32>
        memref.store %v, %S2[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S2[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
        %j = arith.addi %i, %c1 : index
        scf.yield %j : index
      }
      %S3 = memref.alloca() : memref<32xf32, 3 : i32>
      %W = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S3[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S3[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %W[%tx] : memref<32xf32, 3 : i32>
        gpu.barrier
      }
      %S4 = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S4[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S4[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
      }
      %after = memref.load %S4[%tx] : memref<32xf32, 3 : i32>
      memref.store %after, %O[%tx] : memref<256xf32>
      %S5 = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c1 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S5[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S5[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
        gpu.barrier
      }
      %S7 = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %O[%k] : memref<256xf32>
        memref.store %v, %S7[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S7[%tx] : memref<32xf32, 3 : i32>
        %next = arith.addi %k, %c1 : index
        memref.store %s, %O[%next] : memref<256xf32>
        gpu.barrier
      }
      %S6 = memref.alloca() : memref<32xf32, 3 : i32>
      scf.for %k = %c0 to %c8 step %c1 {
        %v = memref.load %A[%k] : memref<256xf32>
        memref.store %v, %S6[%tx] {tc.async_copy} : memref<32xf32, 3 : i32>
        gpu.barrier
        %s = memref.load %S6[%tx] : memref<32xf32, 3 : i32>
        memref.store %s, %O[%k] : memref<256xf32>
      }
      gpu.return
    }
  }
}
