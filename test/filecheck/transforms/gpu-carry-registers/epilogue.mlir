// RUN: tc-opt %s -p gpu-carry-registers --split-input-file | filecheck %s

// A thread's accumulators C[t] and C[t + 8] across the loop over k, with an
// epilogue in the last iteration (`%k == 3`: straight-line code that reads
// and writes both, and reads a bias). The epilogue becomes an `scf.if` that
// yields the two values (else the values before it); C is neither loaded
// nor stored in the loop, the bias is still read in the epilogue.

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @epilogue(%C: memref<16xf32>, %A: memref<16x4xf32>, %bias: memref<16xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %u = arith.addi %t, %c8 : index
      scf.for %k = %c0 to %c4 step %c1 {
        %v = memref.load %C[%t] : memref<16xf32>
        %w = memref.load %C[%u] : memref<16xf32>
        %a = memref.load %A[%t, %k] : memref<16x4xf32>
        %s = arith.addf %v, %a : f32
        %r = arith.addf %w, %a : f32
        memref.store %s, %C[%t] : memref<16xf32>
        memref.store %r, %C[%u] : memref<16xf32>
        %last = arith.cmpi eq, %k, %c3 : index
        scf.if %last {
          %x = memref.load %C[%t] : memref<16xf32>
          %b = memref.load %bias[%t] : memref<16xf32>
          %y = arith.addf %x, %b : f32
          memref.store %y, %C[%t] : memref<16xf32>
          %x2 = memref.load %C[%u] : memref<16xf32>
          %z = arith.constant 0.000000e+00 : f32
          %y2 = arith.maximumf %x2, %z : f32
          memref.store %y2, %C[%u] : memref<16xf32>
        }
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @epilogue
// CHECK:         %[[V0:[0-9]+]] = memref.load %C[%t] : memref<16xf32>
// CHECK-NEXT:    %[[W0:[0-9]+]] = memref.load %C[%u] : memref<16xf32>
// CHECK-NEXT:    %[[R0:[0-9]+]], %[[R1:[0-9]+]] = scf.for %k = %c0 to %c4 step %c1 iter_args(%[[V:.*]] = %[[V0]], %[[W:.*]] = %[[W0]]) -> (f32, f32) {
// CHECK-NOT:       memref.{{load|store}} {{.*}}%C
// CHECK:           %[[S:.*]] = arith.addf %[[V]], %{{.*}} : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[W]], %{{.*}} : f32
// CHECK-NEXT:      %[[LAST:.*]] = arith.cmpi eq, %k, %c3 : index
// CHECK-NEXT:      %[[E0:[0-9]+]], %[[E1:[0-9]+]] = scf.if %[[LAST]] -> (f32, f32) {
// CHECK-NEXT:        %[[B:.*]] = memref.load %bias[%t] : memref<16xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT:        %[[Z:.*]] = arith.constant
// CHECK-NEXT:        %[[Y2:.*]] = arith.maximumf %[[T]], %[[Z]] : f32
// CHECK-NEXT:        scf.yield %[[Y]], %[[Y2]] : f32, f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[S]], %[[T]] : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[E0]], %[[E1]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[R0]], %C[%t] : memref<16xf32>
// CHECK-NEXT:    memref.store %[[R1]], %C[%u] : memref<16xf32>

// -----

// Left alone: the epilogue holds a loop (not straight-line code).

builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @nested(%C: memref<16xf32>, %A: memref<16x4xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      scf.for %k = %c0 to %c4 step %c1 {
        %v = memref.load %C[%t] : memref<16xf32>
        %a = memref.load %A[%t, %k] : memref<16x4xf32>
        %s = arith.addf %v, %a : f32
        memref.store %s, %C[%t] : memref<16xf32>
        %last = arith.cmpi eq, %k, %c3 : index
        scf.if %last {
          scf.for %j = %c0 to %c4 step %c1 {
            %x = memref.load %C[%t] : memref<16xf32>
            memref.store %x, %C[%t] : memref<16xf32>
          }
        }
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: gpu.func @nested
// CHECK:         scf.for %k = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %v = memref.load %C[%t] : memref<16xf32>
// CHECK:           memref.store %s, %C[%t] : memref<16xf32>
