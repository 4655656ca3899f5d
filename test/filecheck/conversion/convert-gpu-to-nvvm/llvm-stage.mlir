// RUN: tc-opt %s -p 'convert-gpu-to-nvvm,convert-gpu-scf-to-cf,convert-to-llvm{target=cuda}' | filecheck %s

// The `cuda` target's llvm stage: convert-to-llvm{target=cuda} translates the
// functions of each gpu.module and leaves the host function at the gpu stage.
// Kernel memrefs are global memory (!llvm.ptr<1>) plus their dynamic extents,
// index is i64; a memref.alloca in memory space 3 is a shared global of the
// gpu.module, one without a memory space a thread's llvm.alloca; nvvm ops
// stay; math ops call libdevice (`__nv_expf` for f32, `__nv_tanh` for f64).

builtin.module attributes {gpu.container_module} {
  func.func @host(%A: memref<?x4xf32>, %D: memref<?xf64>, %n: index) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c64, %c1, %c1) args(%A : memref<?x4xf32>, %D : memref<?xf64>, %n : index)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%A: memref<?x4xf32>, %D: memref<?xf64>, %n: index) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %s = memref.alloca() : memref<64x4xf32, 3 : i32>
      %p = memref.alloca() : memref<2xf64>
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %tx = gpu.thread_id x
      %x = memref.load %A[%tx, %c3] : memref<?x4xf32>
      %e = math.exp %x : f32
      memref.store %e, %s[%tx, %c0] : memref<64x4xf32, 3 : i32>
      gpu.barrier
      %y = memref.load %s[%c0, %c0] : memref<64x4xf32, 3 : i32>
      memref.store %y, %A[%tx, %c0] : memref<?x4xf32>
      %d = memref.load %D[%tx] : memref<?xf64>
      %t = math.tanh %d : f64
      memref.store %t, %p[%c0] : memref<2xf64>
      %q = memref.load %p[%c0] : memref<2xf64>
      memref.store %q, %D[%tx] : memref<?xf64>
      gpu.return
    }
  }
}

// CHECK:      func.func @host(%A: memref<?x4xf32>, %D: memref<?xf64>, %n: index) {
// CHECK:        gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c64, %c1, %c1) args(%A : memref<?x4xf32>, %D : memref<?xf64>, %n : index)

// CHECK:      gpu.module @kernels {
// CHECK-NEXT:   llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x f32>
// CHECK-NEXT:   llvm.func @k(%A: !llvm.ptr<1>, %A_d0: i64, %D: !llvm.ptr<1>, %D_d0: i64, %n: i64) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>} {
// CHECK-NEXT:     %0 = llvm.mlir.constant(2) : i64
// CHECK-NEXT:     %p = llvm.alloca %0 x f64 {alignment = 16 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:     %s = llvm.mlir.addressof @__wg_k_0 : !llvm.ptr<3>
// CHECK-NEXT:     %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:     %c3 = llvm.mlir.constant(3) : i64
// CHECK-NEXT:     %1 = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:     %tx = llvm.sext %1 : i32 to i64
// CHECK-NEXT:     %2 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:     %3 = llvm.mul %tx, %2 overflow<nsw> : i64
// CHECK-NEXT:     %4 = llvm.add %3, %c3 overflow<nsw> : i64
// CHECK-NEXT:     %5 = llvm.getelementptr inbounds %A[%4] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT:     %x = llvm.load %5 : !llvm.ptr<1> -> f32
// CHECK-NEXT:     %e = llvm.call @__nv_expf(%x) : (f32) -> f32
// CHECK-NEXT:     %6 = llvm.mul %tx, %2 overflow<nsw> : i64
// CHECK-NEXT:     %7 = llvm.add %6, %c0 overflow<nsw> : i64
// CHECK-NEXT:     %8 = llvm.getelementptr inbounds %s[%7] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-NEXT:     llvm.store %e, %8 : f32, !llvm.ptr<3>
// CHECK-NEXT:     nvvm.barrier0
// CHECK:          %y = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK:          llvm.store %y, %{{.*}} : f32, !llvm.ptr<1>
// CHECK:          %d = llvm.load %{{.*}} : !llvm.ptr<1> -> f64
// CHECK-NEXT:     %t = llvm.call @__nv_tanh(%d) : (f64) -> f64
// CHECK-NEXT:     %[[P:.*]] = llvm.getelementptr inbounds %p[%c0] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:     llvm.store %t, %[[P]] : f64, !llvm.ptr
// CHECK:          llvm.return
// CHECK-NEXT:   }
// CHECK-NEXT:   llvm.func @__nv_expf(f32) -> f32
// CHECK-NEXT:   llvm.func @__nv_tanh(f64) -> f64
// CHECK-NEXT: }
