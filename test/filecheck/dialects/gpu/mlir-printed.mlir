// RUN: tc-opt %s | filecheck %s

// tc-opt reads the gpu ops as mlir-opt 22 prints them: this input is
// `mlir-opt-22`'s output for ops.mlir, verbatim (its SSA names, the doubled
// spaces after `gpu.launch_func`, `gpu.thread_id` and `gpu.shuffle`, and the
// trailing ones of a launch without arguments).

module attributes {gpu.container_module} {
  func.func @host(%arg0: memref<?xf32>, %arg1: index, %arg2: i32) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func  @kernels::@k blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1)  args(%arg0 : memref<?xf32>, %arg1 : index)
    gpu.launch_func  @kernels::@k blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1)  dynamic_shared_memory_size %arg2 args(%arg0 : memref<?xf32>, %arg1 : index) {tag}
    gpu.launch_func  @kernels::@empty clusters in (%c1, %c1, %c1) blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1)  
    return
  }
  gpu.module @kernels {
    gpu.func @k(%arg0: memref<?xf32>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %thread_id_x = gpu.thread_id  x
      %thread_id_y = gpu.thread_id  y
      %block_id_z = gpu.block_id  z
      %block_dim_x = gpu.block_dim  x
      %grid_dim_y = gpu.grid_dim  y
      %0 = gpu.lane_id
      %1 = memref.load %arg0[%thread_id_x] : memref<?xf32>
      %c1_i32 = arith.constant 1 : i32
      %c32_i32 = arith.constant 32 : i32
      %shuffleResult, %valid = gpu.shuffle  xor %1, %c1_i32, %c32_i32 : f32
      %shuffleResult_0, %valid_1 = gpu.shuffle  down %1, %c1_i32, %c32_i32 : f32
      %shuffleResult_2, %valid_3 = gpu.shuffle  up %1, %c1_i32, %c32_i32 : f32
      %shuffleResult_4, %valid_5 = gpu.shuffle  idx %c1_i32, %c1_i32, %c32_i32 : i32
      gpu.barrier
      %2 = arith.addi %thread_id_x, %thread_id_y : index
      %3 = arith.addi %block_id_z, %block_dim_x : index
      %4 = arith.addi %grid_dim_y, %0 : index
      %5 = arith.addi %2, %3 : index
      %6 = arith.addi %5, %4 : index
      %7 = arith.addf %shuffleResult, %shuffleResult_0 : f32
      %8 = arith.addf %7, %shuffleResult_2 : f32
      %9 = arith.andi %valid, %valid_1 : i1
      %10 = arith.andi %valid_3, %valid_5 : i1
      %11 = arith.andi %9, %10 : i1
      %12 = arith.select %11, %8, %1 : f32
      memref.store %12, %arg0[%6] : memref<?xf32>
      gpu.return
    }
    gpu.func @empty() kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, tc.note = "extra"} {
      gpu.return
    }
    gpu.func @buffers(%arg0: memref<?xf32>) workgroup(%arg1 : memref<32xf32, 3 : i32>, %arg2 : memref<4xi32, 3 : i32>) private(%arg3 : memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @device(%arg0: f32, %arg1: f32) -> f32 {
      gpu.return %arg0 : f32
    }
    gpu.func @pair(%arg0: f32) -> (f32, f32) {
      gpu.return %arg0, %arg0 : f32, f32
    }
  }
  gpu.module @nothing attributes {tc.note} {
  }
}


// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:   func.func @host(%arg0: memref<?xf32>, %arg1: index, %arg2: i32) {
// CHECK-NEXT:     %c1 = arith.constant 1 : index
// CHECK-NEXT:     %c128 = arith.constant 128 : index
// CHECK-NEXT:     gpu.launch_func @kernels::@k blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1) args(%arg0 : memref<?xf32>, %arg1 : index)
// CHECK-NEXT:     gpu.launch_func @kernels::@k blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %arg2 args(%arg0 : memref<?xf32>, %arg1 : index) {tag}
// CHECK-NEXT:     gpu.launch_func @kernels::@empty clusters in (%c1, %c1, %c1) blocks in (%arg1, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.module @kernels {
// CHECK-NEXT:     gpu.func @k(%arg0: memref<?xf32>, %arg1: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// CHECK-NEXT:       %thread_id_x = gpu.thread_id x
// CHECK-NEXT:       %thread_id_y = gpu.thread_id y
// CHECK-NEXT:       %block_id_z = gpu.block_id z
// CHECK-NEXT:       %block_dim_x = gpu.block_dim x
// CHECK-NEXT:       %grid_dim_y = gpu.grid_dim y
// CHECK-NEXT:       %0 = gpu.lane_id
// CHECK-NEXT:       %1 = memref.load %arg0[%thread_id_x] : memref<?xf32>
// CHECK-NEXT:       %c1_i32 = arith.constant 1 : i32
// CHECK-NEXT:       %c32_i32 = arith.constant 32 : i32
// CHECK-NEXT:       %shuffleResult, %valid = gpu.shuffle xor %1, %c1_i32, %c32_i32 : f32
// CHECK-NEXT:       %shuffleResult_1, %valid_1 = gpu.shuffle down %1, %c1_i32, %c32_i32 : f32
// CHECK-NEXT:       %shuffleResult_2, %valid_2 = gpu.shuffle up %1, %c1_i32, %c32_i32 : f32
// CHECK-NEXT:       %shuffleResult_3, %valid_3 = gpu.shuffle idx %c1_i32, %c1_i32, %c32_i32 : i32
// CHECK-NEXT:       gpu.barrier
// CHECK-NEXT:       %2 = arith.addi %thread_id_x, %thread_id_y : index
// CHECK-NEXT:       %3 = arith.addi %block_id_z, %block_dim_x : index
// CHECK-NEXT:       %4 = arith.addi %grid_dim_y, %0 : index
// CHECK-NEXT:       %5 = arith.addi %2, %3 : index
// CHECK-NEXT:       %6 = arith.addi %5, %4 : index
// CHECK-NEXT:       %7 = arith.addf %shuffleResult, %shuffleResult_1 : f32
// CHECK-NEXT:       %8 = arith.addf %7, %shuffleResult_2 : f32
// CHECK-NEXT:       %9 = arith.andi %valid, %valid_1 : i1
// CHECK-NEXT:       %10 = arith.andi %valid_2, %valid_3 : i1
// CHECK-NEXT:       %11 = arith.andi %9, %10 : i1
// CHECK-NEXT:       %12 = arith.select %11, %8, %1 : f32
// CHECK-NEXT:       memref.store %12, %arg0[%6] : memref<?xf32>
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @empty() kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, tc.note = "extra"} {
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @buffers(%arg0: memref<?xf32>) workgroup(%arg1 : memref<32xf32, 3 : i32>, %arg2 : memref<4xi32, 3 : i32>) private(%arg3 : memref<4xf32>) kernel {
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @device(%arg0: f32, %arg1: f32) -> f32 {
// CHECK-NEXT:       gpu.return %arg0 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @pair(%arg0: f32) -> (f32, f32) {
// CHECK-NEXT:       gpu.return %arg0, %arg0 : f32, f32
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.module @nothing attributes {tc.note} {
// CHECK-NEXT:   }
// CHECK-NEXT: }
