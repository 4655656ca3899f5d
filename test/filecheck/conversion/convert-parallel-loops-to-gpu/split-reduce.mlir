// A shared reduction marked tc.gpu_split = "block_x": the blocks along x
// share it too. Thread t of block b starts at b * block_dim + t and steps by
// grid_dim * block_dim; each block's total goes into S with an atomic update
// in its thread 0 (kind 0: addf; 4: maximumf; 10: mins). The host launches
// no more blocks than give each thread 8 elements (N / (1024 * 8)), at most
// tc.gpu_split_size. Left alone (one block, S[] = S[] op total): a product
// (no atomic multiply), and a kernel that also initialises S (each block
// would reset it).
// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// CHECK-LABEL: func.func @sum
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi
// CHECK:         %[[PER:.*]] = arith.constant 8192 : index
// CHECK:         %[[N:.*]] = arith.divsi %[[TRIPS]], %[[PER]] : index
// CHECK:         %[[CAP:.*]] = arith.constant 264 : index
// CHECK:         %[[C:.*]] = arith.minsi %[[N]], %[[CAP]] : index
// CHECK:         %[[G:.*]] = arith.maxsi %[[C]], %{{.*}} : index
// CHECK:         gpu.launch_func @sum_kernels::@sum_k0 blocks in (%[[G]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-LABEL: gpu.func @sum_k0
// CHECK-SAME:    known_block_size = array<i32: 1024, 1, 1>
// CHECK:         %[[BD:.*]] = gpu.block_dim x
// CHECK:         %[[BX:.*]] = gpu.block_id x
// CHECK:         %[[GD:.*]] = gpu.grid_dim x
// CHECK:         %[[BASE:.*]] = arith.muli %[[BX]], %[[BD]] : index
// CHECK:         %[[MINE:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK:         %[[ALL:.*]] = arith.muli %[[GD]], %[[BD]] : index
// CHECK:         %[[P:.*]] = scf.for
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         gpu.barrier
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK:         scf.if
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      "memref.atomic_rmw"(%{{.*}}, %S) <{kind = 0 : i64}> : (f32, memref<f32>) -> f32
// CHECK-NEXT:    }
func.func @sum(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %a = memref.load %A[%i] : memref<?xf32>
    %s = memref.load %S[] : memref<f32>
    %t = arith.addf %s, %a fastmath<reassoc> : f32
    memref.store %t, %S[] : memref<f32>
    scf.reduce
  }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_x", tc.gpu_split_size = 264 : i64} : (index, index, index) -> ()
  func.return
}

// Rows on block_x, the blocks along y share each row.
// CHECK-LABEL: func.func @rowmax
// CHECK:         gpu.launch_func @rowmax_kernels::@rowmax_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-LABEL: gpu.func @rowmax_k0
// CHECK:         gpu.block_id x
// CHECK:         gpu.block_id y
// CHECK:         gpu.grid_dim y
// CHECK:         gpu.shuffle xor %{{.*}} : f64
// CHECK:         "memref.atomic_rmw"(%{{.*}}, %S, %n) <{kind = 4 : i64}> : (f64, memref<?xf64>, index) -> f64
func.func @rowmax(%I: memref<?x?xf64>, %S: memref<?xf64>, %N: index, %D: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%n: index):
    "scf.parallel"(%c0, %D, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%d: index):
      %x = memref.load %I[%n, %d] : memref<?x?xf64>
      %s = memref.load %S[%n] : memref<?xf64>
      %t = arith.maximumf %s, %x : f64
      memref.store %t, %S[%n] : memref<?xf64>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_y", tc.gpu_split_size = 64 : i64} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 65535 : i64} : (index, index, index) -> ()
  func.return
}

// An 8-bit signed minimum: its identity is 127.
// CHECK-LABEL: gpu.func @min8_k0
// CHECK:         arith.constant 127 : i8
// CHECK:         gpu.shuffle xor %{{.*}} : i8
// CHECK:         "memref.atomic_rmw"(%{{.*}}, %S) <{kind = 10 : i64}> : (i8, memref<i8>) -> i8
func.func @min8(%A: memref<?xi8>, %S: memref<i8>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %a = memref.load %A[%i] : memref<?xi8>
    %s = memref.load %S[] : memref<i8>
    %t = arith.minsi %s, %a : i8
    memref.store %t, %S[] : memref<i8>
    scf.reduce
  }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_x", tc.gpu_split_size = 264 : i64} : (index, index, index) -> ()
  func.return
}

// A product: no atomic multiply, so one block.
// CHECK-LABEL: gpu.func @prod_k0
// CHECK-NOT:     gpu.block_id
// CHECK-NOT:     atomic_rmw
// CHECK:         memref.load %S[]
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    memref.store
func.func @prod(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %a = memref.load %A[%i] : memref<?xf32>
    %s = memref.load %S[] : memref<f32>
    %t = arith.mulf %s, %a : f32
    memref.store %t, %S[] : memref<f32>
    scf.reduce
  }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_x", tc.gpu_split_size = 264 : i64} : (index, index, index) -> ()
  func.return
}

// The kernel also initialises S: one block.
// CHECK-LABEL: gpu.func @init_sum_k0
// CHECK-NOT:     gpu.block_id
// CHECK-NOT:     atomic_rmw
// CHECK:         gpu.return
func.func @init_sum(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    memref.store %z, %S[] : memref<f32>
    "scf.parallel"(%c0, %N, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %a = memref.load %A[%i] : memref<?xf32>
      %s = memref.load %S[] : memref<f32>
      %t = arith.addf %s, %a fastmath<reassoc> : f32
      memref.store %t, %S[] : memref<f32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_x", tc.gpu_split_size = 264 : i64} : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
