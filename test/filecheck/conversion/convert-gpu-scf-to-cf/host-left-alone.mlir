// RUN: tc-opt %s -p convert-gpu-scf-to-cf | filecheck %s

// Only the device code is lowered to cf: the host function's scf.for of
// launches (a recurrence's steps) and its scf.if stay structured, for the
// CUDA runtime's host interpreter; the kernel's loop and branch become blocks.

builtin.module attributes {gpu.container_module} {
  func.func @host(%A: memref<8xf32>, %T: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %t = %c1 to %T step %c1 {
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%A : memref<8xf32>, %t : index)
    }
    %p = arith.cmpi sgt, %T, %c0 : index
    scf.if %p {
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%A : memref<8xf32>, %c0 : index)
    }
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%A: memref<8xf32>, %t: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tx = gpu.thread_id x
      %p = arith.cmpi slt, %tx, %t : index
      scf.if %p {
        %x = memref.load %A[%tx] : memref<8xf32>
        scf.for %r = %c0 to %t step %c1 {
          memref.store %x, %A[%r] : memref<8xf32>
        }
      }
      gpu.return
    }
  }
}

// CHECK-LABEL: func.func @host
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      gpu.launch_func @kernels::@k
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      gpu.launch_func @kernels::@k
// CHECK-NOT:     cf.
// CHECK:         func.return
// CHECK:       gpu.module @kernels
// CHECK:         gpu.func @k
// CHECK-NOT:       scf.
// CHECK:           cf.cond_br
// CHECK-NOT:       scf.
// CHECK:           cf.br
// CHECK-NOT:       scf.
// CHECK:           gpu.return
