// RUN: tc-opt %s -p convert-gpu-to-nvvm | filecheck %s
// RUN: tc-opt %s -p 'convert-gpu-to-nvvm{min-blocks-per-sm=2}' | filecheck %s --check-prefix=MIN

// The thread, block and lane indices read PTX special registers (an i32 cast
// to index); the block size is the constant of known_block_size, the grid
// size that of known_grid_size when there is one. A kernel gets nvvm.kernel
// and nvvm.maxntid; with min-blocks-per-sm, every kernel (not a device
// function) also nvvm.minctasm (CUDA's __launch_bounds__ second argument).
// The host function and its launch are left alone.

builtin.module attributes {gpu.container_module} {
  func.func @host(%A: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@ids blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %n : index)
    func.return
  }
  gpu.module @kernels {
    gpu.func @ids(%A: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %tz = gpu.thread_id z
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %bz = gpu.block_id z
      %dx = gpu.block_dim x
      %dz = gpu.block_dim z
      %gx = gpu.grid_dim x
      %gy = gpu.grid_dim y
      %gz = gpu.grid_dim z
      %l = gpu.lane_id
      gpu.return
    }
    gpu.func @grid() kernel attributes {known_block_size = array<i32: 32, 4, 2>, known_grid_size = array<i32: 7, 1, 1>} {
      %gx = gpu.grid_dim x
      %dy = gpu.block_dim y
      gpu.return
    }
    gpu.func @unbounded() kernel {
      %dx = gpu.block_dim x
      gpu.return
    }
    gpu.func @device(%x: index) {
      %t = gpu.thread_id x
      gpu.return
    }
  }
}

// CHECK:      func.func @host(%A: memref<?xf32>, %n: index) {
// CHECK-NEXT:   %c1 = arith.constant 1 : index
// CHECK-NEXT:   %c128 = arith.constant 128 : index
// CHECK-NEXT:   gpu.launch_func @kernels::@ids blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %n : index)
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// CHECK:      gpu.func @ids(%A: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
// CHECK-NEXT:   %0 = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:   %tx = arith.index_cast %0 : i32 to index
// CHECK-NEXT:   %1 = nvvm.read.ptx.sreg.tid.y : i32
// CHECK-NEXT:   %ty = arith.index_cast %1 : i32 to index
// CHECK-NEXT:   %2 = nvvm.read.ptx.sreg.tid.z : i32
// CHECK-NEXT:   %tz = arith.index_cast %2 : i32 to index
// CHECK-NEXT:   %3 = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT:   %bx = arith.index_cast %3 : i32 to index
// CHECK-NEXT:   %4 = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK-NEXT:   %by = arith.index_cast %4 : i32 to index
// CHECK-NEXT:   %5 = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK-NEXT:   %bz = arith.index_cast %5 : i32 to index
// CHECK-NEXT:   %dx = arith.constant 128 : index
// CHECK-NEXT:   %dz = arith.constant 1 : index
// CHECK-NEXT:   %6 = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT:   %gx = arith.index_cast %6 : i32 to index
// CHECK-NEXT:   %7 = nvvm.read.ptx.sreg.nctaid.y : i32
// CHECK-NEXT:   %gy = arith.index_cast %7 : i32 to index
// CHECK-NEXT:   %8 = nvvm.read.ptx.sreg.nctaid.z : i32
// CHECK-NEXT:   %gz = arith.index_cast %8 : i32 to index
// CHECK-NEXT:   %9 = nvvm.read.ptx.sreg.laneid : i32
// CHECK-NEXT:   %l = arith.index_cast %9 : i32 to index
// CHECK-NEXT:   gpu.return
// CHECK-NEXT: }

// CHECK:      gpu.func @grid() kernel attributes {known_block_size = array<i32: 32, 4, 2>, known_grid_size = array<i32: 7, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 32, 4, 2>} {
// CHECK-NEXT:   %gx = arith.constant 7 : index
// CHECK-NEXT:   %dy = arith.constant 4 : index
// CHECK-NEXT:   gpu.return

// Without known_block_size: no nvvm.maxntid, and the block size is read.
// CHECK:      gpu.func @unbounded() kernel attributes {nvvm.kernel} {
// CHECK-NEXT:   %0 = nvvm.read.ptx.sreg.ntid.x : i32
// CHECK-NEXT:   %dx = arith.index_cast %0 : i32 to index

// A device function that is not a kernel is not marked.
// CHECK:      gpu.func @device(%x: index) {
// CHECK-NEXT:   %0 = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:   %t = arith.index_cast %0 : i32 to index
// CHECK-NEXT:   gpu.return

// MIN:      gpu.func @ids({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 2 : i32} {
// MIN:      gpu.func @grid() kernel attributes {{{.*}}nvvm.maxntid = array<i32: 32, 4, 2>, nvvm.minctasm = 2 : i32} {
// MIN:      gpu.func @unbounded() kernel attributes {nvvm.kernel, nvvm.minctasm = 2 : i32} {
// MIN:      gpu.func @device(%x: index) {
