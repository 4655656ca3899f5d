// RUN: tc-opt %s | filecheck %s
// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// Round trip of every gpu op, in custom and generic form. The custom form is
// MLIR 22's (mlir-opt prints the same, up to SSA names and a doubled space
// after some op names); the generic form keeps MLIR 22's split of properties
// and attributes, checked against mlir-opt by test/e2e/test_mlir_oracle_gpu.py.

builtin.module attributes {gpu.container_module} {
  func.func @host(%A: memref<?xf32>, %n: index, %smem: i32) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %n : index)
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%A : memref<?xf32>, %n : index) {tag}
    gpu.launch_func @kernels::@empty clusters in (%c1, %c1, %c1) blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%A: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bz = gpu.block_id z
      %bd = gpu.block_dim x
      %gd = gpu.grid_dim y
      %lane = gpu.lane_id
      %v = memref.load %A[%tx] : memref<?xf32>
      %off = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %x, %xok = gpu.shuffle xor %v, %off, %width : f32
      %d, %dok = gpu.shuffle down %v, %off, %width : f32
      %u, %uok = gpu.shuffle up %v, %off, %width : f32
      %i, %iok = gpu.shuffle idx %off, %off, %width : i32
      gpu.barrier
      %s0 = arith.addi %tx, %ty : index
      %s1 = arith.addi %bz, %bd : index
      %s2 = arith.addi %gd, %lane : index
      %s3 = arith.addi %s0, %s1 : index
      %s4 = arith.addi %s3, %s2 : index
      %f0 = arith.addf %x, %d : f32
      %f1 = arith.addf %f0, %u : f32
      %ok0 = arith.andi %xok, %dok : i1
      %ok1 = arith.andi %uok, %iok : i1
      %ok2 = arith.andi %ok0, %ok1 : i1
      %f2 = arith.select %ok2, %f1, %v : f32
      memref.store %f2, %A[%s4] : memref<?xf32>
      gpu.return
    }
    gpu.func @empty() kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, tc.note = "extra"} {
      gpu.return
    }
    gpu.func @buffers(%A: memref<?xf32>) workgroup(%w : memref<32xf32, 3 : i32>, %w2 : memref<4xi32, 3 : i32>) private(%p : memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @device(%a: f32, %b: f32) -> f32 {
      gpu.return %a : f32
    }
    gpu.func @pair(%a: f32) -> (f32, f32) {
      gpu.return %a, %a : f32, f32
    }
  }
  gpu.module @nothing attributes {tc.note} {
  }
}

// CHECK:      builtin.module attributes {gpu.container_module} {
// CHECK-NEXT:   func.func @host(%A: memref<?xf32>, %n: index, %smem: i32) {
// CHECK-NEXT:     %c1 = arith.constant 1 : index
// CHECK-NEXT:     %c128 = arith.constant 128 : index
// CHECK-NEXT:     gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) args(%A : memref<?xf32>, %n : index)
// CHECK-NEXT:     gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %smem args(%A : memref<?xf32>, %n : index) {tag}
// CHECK-NEXT:     gpu.launch_func @kernels::@empty clusters in (%c1, %c1, %c1) blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.module @kernels {
// CHECK-NEXT:     gpu.func @k(%A: memref<?xf32>, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// CHECK-NEXT:       %tx = gpu.thread_id x
// CHECK-NEXT:       %ty = gpu.thread_id y
// CHECK-NEXT:       %bz = gpu.block_id z
// CHECK-NEXT:       %bd = gpu.block_dim x
// CHECK-NEXT:       %gd = gpu.grid_dim y
// CHECK-NEXT:       %lane = gpu.lane_id
// CHECK-NEXT:       %v = memref.load %A[%tx] : memref<?xf32>
// CHECK-NEXT:       %off = arith.constant 1 : i32
// CHECK-NEXT:       %width = arith.constant 32 : i32
// CHECK-NEXT:       %x, %xok = gpu.shuffle xor %v, %off, %width : f32
// CHECK-NEXT:       %d, %dok = gpu.shuffle down %v, %off, %width : f32
// CHECK-NEXT:       %u, %uok = gpu.shuffle up %v, %off, %width : f32
// CHECK-NEXT:       %i, %iok = gpu.shuffle idx %off, %off, %width : i32
// CHECK-NEXT:       gpu.barrier
// CHECK-NEXT:       %s0 = arith.addi %tx, %ty : index
// CHECK-NEXT:       %s1 = arith.addi %bz, %bd : index
// CHECK-NEXT:       %s2 = arith.addi %gd, %lane : index
// CHECK-NEXT:       %s3 = arith.addi %s0, %s1 : index
// CHECK-NEXT:       %s4 = arith.addi %s3, %s2 : index
// CHECK-NEXT:       %f0 = arith.addf %x, %d : f32
// CHECK-NEXT:       %f1 = arith.addf %f0, %u : f32
// CHECK-NEXT:       %ok0 = arith.andi %xok, %dok : i1
// CHECK-NEXT:       %ok1 = arith.andi %uok, %iok : i1
// CHECK-NEXT:       %ok2 = arith.andi %ok0, %ok1 : i1
// CHECK-NEXT:       %f2 = arith.select %ok2, %f1, %v : f32
// CHECK-NEXT:       memref.store %f2, %A[%s4] : memref<?xf32>
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @empty() kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, tc.note = "extra"} {
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @buffers(%A: memref<?xf32>) workgroup(%w : memref<32xf32, 3 : i32>, %w2 : memref<4xi32, 3 : i32>) private(%p : memref<4xf32>) kernel {
// CHECK-NEXT:       gpu.return
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @device(%a: f32, %b: f32) -> f32 {
// CHECK-NEXT:       gpu.return %a : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     gpu.func @pair(%a: f32) -> (f32, f32) {
// CHECK-NEXT:       gpu.return %a, %a : f32, f32
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.module @nothing attributes {tc.note} {
// CHECK-NEXT:   }
// CHECK-NEXT: }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   "func.func"() <{sym_name = "host", function_type = (memref<?xf32>, index, i32) -> ()}> ({
// CHECK-GENERIC-NEXT:   ^bb0(%A: memref<?xf32>, %n: index, %smem: i32):
// CHECK-GENERIC-NEXT:     %c1 = "arith.constant"() <{value = 1 : index}> : () -> index
// CHECK-GENERIC-NEXT:     %c128 = "arith.constant"() <{value = 128 : index}> : () -> index
// CHECK-GENERIC-NEXT:     "gpu.launch_func"(%n, %c1, %c1, %c128, %c1, %c1, %A, %n) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<?xf32>, index) -> ()
// CHECK-GENERIC-NEXT:     "gpu.launch_func"(%n, %c1, %c1, %c128, %c1, %c1, %smem, %A, %n) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 2, 0>}> {tag} : (index, index, index, index, index, index, i32, memref<?xf32>, index) -> ()
// CHECK-GENERIC-NEXT:     "gpu.launch_func"(%n, %c1, %c1, %c128, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@empty, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0>}> : (index, index, index, index, index, index, index, index, index) -> ()
// CHECK-GENERIC-NEXT:     "func.return"() : () -> ()
// CHECK-GENERIC-NEXT:   }) : () -> ()
// CHECK-GENERIC-NEXT:   "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-GENERIC-NEXT:     "gpu.func"() <{function_type = (memref<?xf32>, index) -> (), known_block_size = array<i32: 128, 1, 1>}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%A: memref<?xf32>, %n: index):
// CHECK-GENERIC-NEXT:       %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:       %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:       %bz = "gpu.block_id"() <{dimension = #gpu<dim z>}> : () -> index
// CHECK-GENERIC-NEXT:       %bd = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:       %gd = "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:       %lane = "gpu.lane_id"() : () -> index
// CHECK-GENERIC-NEXT:       %v = "memref.load"(%A, %tx) : (memref<?xf32>, index) -> f32
// CHECK-GENERIC-NEXT:       %off = "arith.constant"() <{value = 1 : i32}> : () -> i32
// CHECK-GENERIC-NEXT:       %width = "arith.constant"() <{value = 32 : i32}> : () -> i32
// CHECK-GENERIC-NEXT:       %x, %xok = "gpu.shuffle"(%v, %off, %width) <{mode = #gpu<shuffle_mode xor>}> : (f32, i32, i32) -> (f32, i1)
// CHECK-GENERIC-NEXT:       %d, %dok = "gpu.shuffle"(%v, %off, %width) <{mode = #gpu<shuffle_mode down>}> : (f32, i32, i32) -> (f32, i1)
// CHECK-GENERIC-NEXT:       %u, %uok = "gpu.shuffle"(%v, %off, %width) <{mode = #gpu<shuffle_mode up>}> : (f32, i32, i32) -> (f32, i1)
// CHECK-GENERIC-NEXT:       %i, %iok = "gpu.shuffle"(%off, %off, %width) <{mode = #gpu<shuffle_mode idx>}> : (i32, i32, i32) -> (i32, i1)
// CHECK-GENERIC-NEXT:       "gpu.barrier"() : () -> ()
// CHECK-GENERIC-NEXT:       %s0 = "arith.addi"(%tx, %ty) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
// CHECK-GENERIC:            %f2 = "arith.select"(%ok2, %f1, %v) : (i1, f32, f32) -> f32
// CHECK-GENERIC-NEXT:       "memref.store"(%f2, %A, %s4) : (f32, memref<?xf32>, index) -> ()
// CHECK-GENERIC-NEXT:       "gpu.return"() : () -> ()
// CHECK-GENERIC-NEXT:     }) {gpu.kernel, sym_name = "k", workgroup_attributions = 0 : i64} : () -> ()
// CHECK-GENERIC-NEXT:     "gpu.func"() <{function_type = () -> (), known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}> ({
// CHECK-GENERIC-NEXT:       "gpu.return"() : () -> ()
// CHECK-GENERIC-NEXT:     }) {gpu.kernel, sym_name = "empty", workgroup_attributions = 0 : i64, tc.note = "extra"} : () -> ()
// CHECK-GENERIC-NEXT:     "gpu.func"() <{function_type = (memref<?xf32>) -> ()}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%A: memref<?xf32>, %w: memref<32xf32, 3 : i32>, %w2: memref<4xi32, 3 : i32>, %p: memref<4xf32>):
// CHECK-GENERIC-NEXT:       "gpu.return"() : () -> ()
// CHECK-GENERIC-NEXT:     }) {gpu.kernel, sym_name = "buffers", workgroup_attributions = 2 : i64} : () -> ()
// CHECK-GENERIC-NEXT:     "gpu.func"() <{function_type = (f32, f32) -> f32}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%a: f32, %b: f32):
// CHECK-GENERIC-NEXT:       "gpu.return"(%a) : (f32) -> ()
// CHECK-GENERIC-NEXT:     }) {sym_name = "device", workgroup_attributions = 0 : i64} : () -> ()
// CHECK-GENERIC-NEXT:     "gpu.func"() <{function_type = (f32) -> (f32, f32)}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%a: f32):
// CHECK-GENERIC-NEXT:       "gpu.return"(%a, %a) : (f32, f32) -> ()
// CHECK-GENERIC-NEXT:     }) {sym_name = "pair", workgroup_attributions = 0 : i64} : () -> ()
// CHECK-GENERIC-NEXT:   }) : () -> ()
// CHECK-GENERIC-NEXT:   "gpu.module"() <{sym_name = "nothing"}> ({
// CHECK-GENERIC-NEXT:   ^bb0:
// CHECK-GENERIC-NEXT:   }) {tc.note} : () -> ()
// CHECK-GENERIC-NEXT: }) {gpu.container_module} : () -> ()
