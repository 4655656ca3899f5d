// RUN: tc-opt %s -p gpu-async-copies | filecheck %s

// A global load's value stored into shared memory, of a 32- or 64-bit
// element, with a barrier after it before any read of the buffer, is marked
// tc.async_copy (cp.async in the LLVM lowering). Left alone: a computed
// value, a 16-bit element, a copy read before the barrier, a copy with no
// barrier after it, a copy with a store between its load and its store, a
// copy of an array the kernel writes, and a function that is not a kernel.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<64xf32>, %D: memref<64xf64>, %H: memref<64xf16>, %O: memref<64xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<64xf32, 3 : i32>
      %T = memref.alloca() : memref<64xf64, 3 : i32>
      %U = memref.alloca() : memref<64xf16, 3 : i32>
      scf.for %i = %tx to %c64 step %c32 {
        %a = memref.load %A[%i] : memref<64xf32>
        memref.store %a, %S[%i] : memref<64xf32, 3 : i32>
        %d = memref.load %D[%i] : memref<64xf64>
        memref.store %d, %T[%i] : memref<64xf64, 3 : i32>
        %h = memref.load %H[%i] : memref<64xf16>
        memref.store %h, %U[%i] : memref<64xf16, 3 : i32>
      }
      gpu.barrier
      %s = memref.load %S[%tx] : memref<64xf32, 3 : i32>
      %two = arith.addf %s, %s : f32
      memref.store %two, %S[%tx] : memref<64xf32, 3 : i32>
      gpu.barrier
      // read before the barrier
      %b = memref.load %A[%tx] : memref<64xf32>
      memref.store %b, %S[%tx] : memref<64xf32, 3 : i32>
      %early = memref.load %S[%tx] : memref<64xf32, 3 : i32>
      memref.store %early, %O[%tx] : memref<64xf32>
      gpu.barrier
      // a store between the load and the copy
      %c = memref.load %A[%tx] : memref<64xf32>
      memref.store %c, %O[%tx] : memref<64xf32>
      memref.store %c, %S[%tx] : memref<64xf32, 3 : i32>
      gpu.barrier
      // a copy of an array the kernel writes
      %o = memref.load %O[%tx] : memref<64xf32>
      memref.store %o, %S[%tx] : memref<64xf32, 3 : i32>
      gpu.barrier
      // no barrier after it
      %e = memref.load %A[%tx] : memref<64xf32>
      memref.store %e, %S[%tx] : memref<64xf32, 3 : i32>
      gpu.return
    }
    gpu.func @device(%A: memref<64xf32>, %i: index) {
      %S = memref.alloca() : memref<64xf32, 3 : i32>
      %a = memref.load %A[%i] : memref<64xf32>
      memref.store %a, %S[%i] : memref<64xf32, 3 : i32>
      gpu.barrier
      gpu.return
    }
  }
}

// CHECK:      gpu.func @k(
// CHECK:        scf.for
// CHECK:          memref.store %a, %S[%i] {tc.async_copy} : memref<64xf32, 3 : i32>
// CHECK:          memref.store %d, %T[%i] {tc.async_copy} : memref<64xf64, 3 : i32>
// CHECK:          memref.store %h, %U[%i] : memref<64xf16, 3 : i32>
// CHECK:        gpu.barrier
// CHECK:        memref.store %two, %S[%tx] : memref<64xf32, 3 : i32>
// CHECK:        memref.store %b, %S[%tx] : memref<64xf32, 3 : i32>
// CHECK:        memref.store %c, %S[%tx] : memref<64xf32, 3 : i32>
// CHECK:        memref.store %o, %S[%tx] : memref<64xf32, 3 : i32>
// CHECK:        memref.store %e, %S[%tx] : memref<64xf32, 3 : i32>
// CHECK:      gpu.func @device(
// CHECK:        memref.store %a, %S[%i] : memref<64xf32, 3 : i32>
