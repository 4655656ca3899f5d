// Inside a thread loop along y whose threads along x are one warp (a band
// whose reduction the warp shares), the ops that only the thread with x index
// 0 runs write what the other threads of its warp read next: a warp barrier
// (nvvm.bar.warp.sync, CUDA's __syncwarp) comes before the op that reads
// what such a write wrote, and ends the loop body; no gpu.barrier can be used there
// (threads along y run different numbers of iterations).
// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// CHECK-LABEL: gpu.func @f_k0
// CHECK-SAME:    known_block_size = array<i32: 32, 4, 1>
// CHECK:         scf.for %i =
// CHECK:           scf.if
// CHECK-NEXT:        memref.load
// CHECK-NEXT:        memref.store %{{.*}}, %T_prev[%i]
// CHECK-NEXT:      }
// CHECK:           %[[ALL:.*]] = arith.constant -1 : i32
// CHECK-NEXT:      nvvm.bar.warp.sync %[[ALL]] : i32
// CHECK-NEXT:      scf.for %r = {{.*}} iter_args
// CHECK:           gpu.shuffle xor
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %T[%i]
// CHECK:           }
// CHECK-NEXT:      %[[ALL2:.*]] = arith.constant -1 : i32
// CHECK-NEXT:      nvvm.bar.warp.sync %[[ALL2]] : i32
// CHECK-NEXT:    }
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.return
func.func @f(%T: memref<4xf32>, %T_prev: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %t = memref.load %T[%i] : memref<4xf32>
    memref.store %t, %T_prev[%i] : memref<4xf32>
    "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%r: index):
      %p = memref.load %T_prev[%i] : memref<4xf32>
      %s = memref.load %T[%i] : memref<4xf32>
      %m = arith.maximumf %s, %p : f32
      memref.store %m, %T[%i] : memref<4xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64, tc.gpu_reduce} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "thread_y", tc.gpu_size = 4 : i64} : (index, index, index) -> ()
  func.return
}
