// RUN: tc-opt %s -p 'convert-gpu-to-nvvm,convert-gpu-scf-to-cf,convert-to-llvm{target=cuda}' | filecheck %s

// Dynamic shared memory at the llvm stage: the shared buffers with dynamic
// extents of a kernel's entry block are parts of the extern array
// @__dynamic_shmem (one per gpu.module, sized by the launch), each at the
// offset where the ones before it end (their bytes rounded up to 16). A
// static shared buffer is still a global of its own, and the host's launch
// keeps its dynamic_shared_memory_size.

builtin.module attributes {gpu.container_module} {
  func.func @host(%A: memref<?xf32>, %n: index, %bytes: i32) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %bytes args(%A : memref<?xf32>, %n : index)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %t = memref.alloca() : memref<32xf32, 3 : i32>
      %a = memref.alloca(%n) : memref<?x3xf16, 3 : i32>
      %b = memref.alloca(%n) : memref<2x?xf32, 3 : i32>
      %c0 = arith.constant 0 : index
      %tx = gpu.thread_id x
      %x = memref.load %A[%tx] : memref<?xf32>
      memref.store %x, %b[%c0, %tx] : memref<2x?xf32, 3 : i32>
      memref.store %x, %t[%tx] : memref<32xf32, 3 : i32>
      gpu.return
    }
  }
}

// CHECK:      gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %bytes args(%A : memref<?xf32>, %n : index)
// CHECK:      gpu.module @kernels {
// CHECK-NEXT:   llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
// CHECK-NEXT:   llvm.mlir.global external @__dynamic_shmem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-NEXT:   llvm.func @k(%A: !llvm.ptr<1>, %A_d0: i64, %n: i64)
// CHECK-NEXT:     %t = llvm.mlir.addressof @__wg_k_0 : !llvm.ptr<3>
// CHECK-NEXT:     %a = llvm.mlir.addressof @__dynamic_shmem : !llvm.ptr<3>
// CHECK-NEXT:     %[[BASE:.*]] = llvm.mlir.addressof @__dynamic_shmem : !llvm.ptr<3>
// CHECK-NEXT:     %[[SIX:.*]] = llvm.mlir.constant(6) : i64
// CHECK-NEXT:     %[[BYTES:.*]] = llvm.mul %[[SIX]], %n : i64
// CHECK-NEXT:     %[[C15:.*]] = llvm.mlir.constant(15) : i64
// CHECK-NEXT:     %[[UP:.*]] = llvm.add %[[BYTES]], %[[C15]] : i64
// CHECK-NEXT:     %[[MASK:.*]] = llvm.mlir.constant(-16) : i64
// CHECK-NEXT:     %[[OFF:.*]] = llvm.and %[[UP]], %[[MASK]] : i64
// CHECK-NEXT:     %b = llvm.getelementptr %[[BASE]][%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK:          %[[P:.*]] = llvm.getelementptr inbounds %b[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-NEXT:     llvm.store %x, %[[P]] : f32, !llvm.ptr<3>
