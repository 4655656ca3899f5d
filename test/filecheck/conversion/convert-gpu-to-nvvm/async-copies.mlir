// RUN: tc-opt %s -p convert-gpu-to-nvvm | filecheck %s
// RUN: tc-opt %s -p 'convert-gpu-to-nvvm,convert-gpu-scf-to-cf,convert-to-llvm{target=cuda}' | filecheck %s --check-prefix=LLVM

// Copies marked tc.async_copy (gpu-async-copies): each barrier of their
// kernel waits for the thread's copies first (commit, then wait until no
// group is pending); a kernel without such copies keeps bare barriers. The
// LLVM lowering turns each marked store into cp.async from its load's
// address (4 bytes for f32, 8 for f64); the load is left to LLVM's
// dead-code elimination.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @copies(%A: memref<64xf32>, %D: memref<64xf64>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<64xf32, 3 : i32>
      %T = memref.alloca() : memref<64xf64, 3 : i32>
      %a = memref.load %A[%tx] : memref<64xf32>
      memref.store %a, %S[%tx] {tc.async_copy} : memref<64xf32, 3 : i32>
      %d = memref.load %D[%tx] : memref<64xf64>
      memref.store %d, %T[%tx] {tc.async_copy} : memref<64xf64, 3 : i32>
      gpu.barrier
      gpu.barrier
      gpu.return
    }
    gpu.func @plain(%A: memref<64xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %tx = gpu.thread_id x
      %S = memref.alloca() : memref<64xf32, 3 : i32>
      %a = memref.load %A[%tx] : memref<64xf32>
      memref.store %a, %S[%tx] : memref<64xf32, 3 : i32>
      gpu.barrier
      gpu.return
    }
  }
}

// CHECK:      gpu.func @copies(
// CHECK:        memref.store %d, %T[%tx] {tc.async_copy}
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.barrier0
// CHECK-NEXT:   nvvm.cp.async.commit.group
// CHECK-NEXT:   nvvm.cp.async.wait.group 0
// CHECK-NEXT:   nvvm.barrier0
// CHECK:      gpu.func @plain(
// CHECK-NOT:    nvvm.cp.async
// CHECK:        nvvm.barrier0
// CHECK-NEXT:   gpu.return

// LLVM:       llvm.func @copies(
// LLVM:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// LLVM:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// LLVM:         nvvm.cp.async.wait.group 0
// LLVM:       llvm.func @plain(
// LLVM-NOT:     nvvm.cp.async
// LLVM:         llvm.store
