// RUN: tc-opt %s -p fuse-sibling-loops | filecheck %s

// moments2 on the GPU after convert-parallel-loops-to-gpu: each thread of a
// row's block accumulates its part of the row sum, then of the sum of
// squares, each in an scf.for of its own; between them the first total is
// combined across the block (shuffles, shared memory, a barrier) and stored,
// and the second result is initialised. The input is written nowhere in the
// kernel, so the second loop may move above the barrier: one loop reads the
// row once, the combining code stays where it was.

builtin.module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @moments(%I: memref<4x64xf32>, %mean: memref<4xf32>, %var: memref<4xf32>) kernel {
      %z = arith.constant 0.0 : f32
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %w = arith.constant 32 : i32
      %o = arith.constant 16 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %grid = gpu.grid_dim x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.for %n = %bid to %c4 step %grid {
        scf.if %first {
          memref.store %z, %mean[%n] : memref<4xf32>
        }
        %bdim = gpu.block_dim x
        %s = scf.for %k = %tid to %c64 step %bdim iter_args(%a = %z) -> (f32) {
          %x = memref.load %I[%n, %k] : memref<4x64xf32>
          %a1 = arith.addf %a, %x fastmath<reassoc> : f32
          scf.yield %a1 : f32
        }
        %sh, %ok = gpu.shuffle xor %s, %o, %w : f32
        %t = arith.addf %s, %sh fastmath<reassoc> : f32
        %buf = memref.alloca() : memref<2xf32, 3 : i32>
        %warp = arith.divui %tid, %c32 : index
        scf.if %first {
          memref.store %t, %buf[%warp] : memref<2xf32, 3 : i32>
        }
        gpu.barrier
        %p = memref.load %buf[%c0] : memref<2xf32, 3 : i32>
        scf.if %first {
          %old = memref.load %mean[%n] : memref<4xf32>
          %new = arith.addf %old, %p fastmath<reassoc> : f32
          memref.store %new, %mean[%n] : memref<4xf32>
        }
        scf.if %first {
          memref.store %z, %var[%n] : memref<4xf32>
        }
        %q = scf.for %k = %tid to %c64 step %bdim iter_args(%b = %z) -> (f32) {
          %y = memref.load %I[%n, %k] : memref<4x64xf32>
          %b1 = math.fma %y, %y, %b fastmath<reassoc> : f32
          scf.yield %b1 : f32
        }
        scf.if %first {
          %old2 = memref.load %var[%n] : memref<4xf32>
          %new2 = arith.addf %old2, %q fastmath<reassoc> : f32
          memref.store %new2, %var[%n] : memref<4xf32>
        }
        gpu.barrier
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @moments
// CHECK:         %bdim = gpu.block_dim x
// CHECK-NEXT:    %s, %q = scf.for %k = %tid to %c64 step %bdim iter_args(%[[A:.*]] = %z, %[[B:.*]] = %z) -> (f32, f32) {
// CHECK-NEXT:      %x = memref.load %I[%n, %k] : memref<4x64xf32>
// CHECK-NEXT:      %a1 = arith.addf %[[A]], %x fastmath<reassoc> : f32
// CHECK-NEXT:      %y = memref.load %I[%n, %k] : memref<4x64xf32>
// CHECK-NEXT:      %b1 = math.fma %y, %y, %[[B]] fastmath<reassoc> : f32
// CHECK-NEXT:      scf.yield %a1, %b1 : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %sh, %ok = gpu.shuffle xor %s, %o, %w : f32
// CHECK:         gpu.barrier
// CHECK:         memref.store %z, %var[%n] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %first {
// CHECK-NEXT:      %old2 = memref.load %var[%n] : memref<4xf32>
// CHECK-NOT:     scf.for

// Left alone, each for one reason: across a barrier, the second loop reads
// an array the kernel writes (another thread's element of T may be visible
// only after the barrier); the second loop reads an array written between
// them (layer normalisation's variance reads the mean); the bounds are other
// values.

builtin.module attributes {gpu.container_module} {
  gpu.module @k2 {
    gpu.func @leaves_alone(%I: memref<4x64xf32>, %T: memref<64xf32>, %M: memref<4xf32>) kernel {
      %z = arith.constant 0.0 : f32
      %c64 = arith.constant 64 : index
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %bid = gpu.block_id x
      %x0 = memref.load %I[%bid, %tid] : memref<4x64xf32>
      memref.store %x0, %T[%tid] : memref<64xf32>
      // across a barrier, T is written in the kernel
      %s1 = scf.for %k = %tid to %c64 step %bdim iter_args(%a = %z) -> (f32) {
        %x = memref.load %T[%k] : memref<64xf32>
        %a1 = arith.addf %a, %x fastmath<reassoc> : f32
        scf.yield %a1 : f32
      }
      gpu.barrier
      %s2 = scf.for %k = %tid to %c64 step %bdim iter_args(%a = %z) -> (f32) {
        %x = memref.load %T[%k] : memref<64xf32>
        %x2 = memref.load %I[%bid, %k] : memref<4x64xf32>
        %a1 = arith.addf %a, %x fastmath<reassoc> : f32
        %a2 = arith.addf %a1, %x2 fastmath<reassoc> : f32
        scf.yield %a2 : f32
      }
      // M written between, the next loop reads it
      memref.store %s2, %M[%bid] : memref<4xf32>
      %s3 = scf.for %k = %tid to %c64 step %bdim iter_args(%a = %z) -> (f32) {
        %x = memref.load %I[%bid, %k] : memref<4x64xf32>
        %m = memref.load %M[%bid] : memref<4xf32>
        %d = arith.subf %x, %m : f32
        %a1 = arith.addf %a, %d fastmath<reassoc> : f32
        scf.yield %a1 : f32
      }
      // other bounds (another step value)
      %two = arith.constant 2 : index
      %s4 = scf.for %k = %tid to %c64 step %two iter_args(%a = %z) -> (f32) {
        %x = memref.load %I[%bid, %k] : memref<4x64xf32>
        %a1 = arith.addf %a, %x fastmath<reassoc> : f32
        scf.yield %a1 : f32
      }
      %r = arith.addf %s1, %s3 : f32
      %r2 = arith.addf %r, %s4 : f32
      memref.store %r2, %M[%bid] : memref<4xf32>
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @leaves_alone
// CHECK:         %s1 = scf.for %k = %tid to %c64 step %bdim iter_args(%{{.*}} = %z) -> (f32) {
// CHECK:         gpu.barrier
// CHECK-NEXT:    %s2 = scf.for %k{{.*}} = %tid to %c64 step %bdim iter_args(%{{.*}} = %z) -> (f32) {
// CHECK:         memref.store %s2, %M[%bid] : memref<4xf32>
// CHECK-NEXT:    %s3 = scf.for %k{{.*}} = %tid to %c64 step %bdim iter_args(%{{.*}} = %z) -> (f32) {
// CHECK:         %s4 = scf.for %k{{.*}} = %tid to %c64 step %two iter_args(%{{.*}} = %z) -> (f32) {
