// RUN: tc-opt %s -p gpu-carry-registers | filecheck %s

// The loop over r reads X[t + 1] and X[t] (an input: other threads read
// them too) and accumulates into S[t]. The reads are loaded once before the
// loop and used as they are; only S[t], which the loop stores, is carried
// and stored back. (Storing X back would write an input and race with the
// threads that read it.)

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%X: memref<9xf32>, %S: memref<8xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c10 = arith.constant 10 : index
      %t = gpu.thread_id x
      %u = arith.addi %t, %c1 : index
      scf.for %r = %c0 to %c10 step %c1 {
        %a = memref.load %X[%u] : memref<9xf32>
        %b = memref.load %X[%t] : memref<9xf32>
        %s = memref.load %S[%t] : memref<8xf32>
        %d = arith.subf %a, %b : f32
        %n = arith.addf %s, %d : f32
        memref.store %n, %S[%t] : memref<8xf32>
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @k
// CHECK:         %[[A:[a-z0-9]+]] = memref.load %X[%u] : memref<9xf32>
// CHECK-NEXT:    %[[B:[a-z0-9]+]] = memref.load %X[%t] : memref<9xf32>
// CHECK-NEXT:    %[[S0:[a-z0-9]+]] = memref.load %S[%t] : memref<8xf32>
// CHECK-NEXT:    %[[R:[a-z0-9]+]] = scf.for %r = %c0 to %c10 step %c1 iter_args(%[[S:.*]] = %[[S0]]) -> (f32) {
// CHECK-NEXT:      %d = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %n = arith.addf %[[S]], %d : f32
// CHECK-NEXT:      scf.yield %n : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[R]], %S[%t] : memref<8xf32>
// CHECK-NOT:     memref.store {{.*}}%X
// CHECK:         gpu.return
