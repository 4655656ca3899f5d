// RUN: tc-opt %s -p gpu-carry-registers --split-input-file | filecheck %s

// A thread's accumulator C[t] across a loop over k. Initialised under
// `%k == 0` (the loop's lower bound) before any other access: it starts
// from the stored zero, with neither a load of C before the loop nor a
// select in it.

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @init(%C: memref<8xf32>, %A: memref<8x4xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      scf.for %k = %c0 to %c4 step %c1 {
        %first = arith.cmpi eq, %k, %c0 : index
        scf.if %first {
          %z = arith.constant 0.000000e+00 : f32
          memref.store %z, %C[%t] : memref<8xf32>
        }
        %v = memref.load %C[%t] : memref<8xf32>
        %a = memref.load %A[%t, %k] : memref<8x4xf32>
        %s = arith.addf %v, %a : f32
        memref.store %s, %C[%t] : memref<8xf32>
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @init
// CHECK-NOT:     memref.load %C
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[R:.*]] = scf.for %k = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %[[Z]]) -> (f32) {
// CHECK-NOT:       arith.select
// CHECK-NOT:       memref.{{load|store}} {{.*}}%C
// CHECK:           %[[S:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT:      scf.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[R]], %C[%t] : memref<8xf32>

// -----

// Left with a load and a select: the store is under `%k == 1`, not the
// first iteration (C's value before the loop is used in iteration 0) ...

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @second(%C: memref<8xf32>, %A: memref<8x4xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      scf.for %k = %c0 to %c4 step %c1 {
        %first = arith.cmpi eq, %k, %c1 : index
        scf.if %first {
          %z = arith.constant 0.000000e+00 : f32
          memref.store %z, %C[%t] : memref<8xf32>
        }
        %v = memref.load %C[%t] : memref<8xf32>
        %a = memref.load %A[%t, %k] : memref<8x4xf32>
        %s = arith.addf %v, %a : f32
        memref.store %s, %C[%t] : memref<8xf32>
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @second
// CHECK:         %[[V0:.*]] = memref.load %C[%t] : memref<8xf32>
// CHECK-NEXT:    scf.for %k = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %[[V0]]) -> (f32) {
// CHECK:           arith.select %{{.*}}, %{{.*}}, %[[ACC]] : f32

// -----

// ... and here, where C is read before the first iteration's store.

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @read_first(%C: memref<8xf32>, %O: memref<8xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      scf.for %k = %c0 to %c4 step %c1 {
        %v = memref.load %C[%t] : memref<8xf32>
        memref.store %v, %O[%t] : memref<8xf32>
        %first = arith.cmpi eq, %k, %c0 : index
        scf.if %first {
          %z = arith.constant 0.000000e+00 : f32
          memref.store %z, %C[%t] : memref<8xf32>
        }
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @read_first
// CHECK:         %[[V0:.*]] = memref.load %C[%t] : memref<8xf32>
// CHECK:         scf.for %k = %c0 to %c4 step %c1 iter_args({{.*}} = %[[V0]]
// CHECK:           arith.select
