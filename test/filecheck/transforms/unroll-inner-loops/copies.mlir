// unroll-inner-loops and copies into shared memory (loops that store, only
// into memory space 3): unrolled by default, left alone with copies=false
// (TC's unroll_copy_shared off), while the other innermost loops still are.
// RUN: tc-opt %s -p 'unroll-inner-loops{factor=2}' | filecheck %s
// RUN: tc-opt %s -p 'unroll-inner-loops{factor=2 copies=false}' | filecheck %s --check-prefix=KEEP

gpu.module @kernels {
  gpu.func @copy(%A: memref<64xf32>, %C: memref<64xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %tile = memref.alloca() : memref<64xf32, 3 : i32>
    scf.for %i = %c0 to %c64 step %c1 {
      %x = memref.load %A[%i] : memref<64xf32>
      memref.store %x, %tile[%i] : memref<64xf32, 3 : i32>
    }
    gpu.barrier
    scf.for %j = %c0 to %n step %c1 {
      %y = memref.load %tile[%j] : memref<64xf32, 3 : i32>
      memref.store %y, %C[%j] : memref<64xf32>
    }
    gpu.return
  }
}

// CHECK-LABEL: gpu.func @copy
// CHECK:         scf.for %i = %c0 to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.load %A[%i]
// CHECK-NEXT:      memref.store %{{.*}}, %tile[%i]
// CHECK:           memref.store %{{.*}}, %tile[%{{.*}}]
// CHECK-NEXT:    }
// CHECK:         gpu.barrier

// KEEP-LABEL: gpu.func @copy
// KEEP:         scf.for %i = %c0 to %c64 step %c1 {
// KEEP-NEXT:      %x = memref.load %A[%i] : memref<64xf32>
// KEEP-NEXT:      memref.store %x, %tile[%i] : memref<64xf32, 3 : i32>
// KEEP-NEXT:    }
// KEEP-NEXT:    gpu.barrier
// The loop that reads the tile and stores into global memory is unrolled.
// KEEP:         scf.for %j = %c0 to %{{.*}} step %{{.*}} {
// KEEP:           memref.store %{{.*}}, %C[%{{.*}}]
// KEEP:           memref.store %{{.*}}, %C[%{{.*}}]
// KEEP-NEXT:    }
