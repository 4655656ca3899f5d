// RUN: tc-opt %s --split-input-file -p convert-gpu-to-nvvm | filecheck %s

// gpu.barrier is nvvm.barrier0. gpu.shuffle is nvvm.shfl.sync among the first
// `width` lanes, as in MLIR: mask -1 >> (32 - width), clamp width - 1
// (32 - width for `up`), constants when the width is one. The validity bit
// comes from the `return_value_and_is_valid` form when it is used.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @warp(%A: memref<32xf32>, %I: memref<32xi32>, %w: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %x = memref.load %A[%c0] : memref<32xf32>
      %i = memref.load %I[%c0] : memref<32xi32>
      gpu.barrier
      %a, %va = gpu.shuffle xor %x, %c1, %c32 : f32
      %b, %vb = gpu.shuffle up %i, %c1, %c16 : i32
      %c, %vc = gpu.shuffle down %x, %c1, %w : f32
      %d, %vd = gpu.shuffle idx %a, %c1, %c32 : f32
      memref.store %d, %A[%c0] : memref<32xf32>
      %e = arith.select %vb, %b, %i : i32
      memref.store %e, %I[%c0] : memref<32xi32>
      gpu.return
    }
  }
}

// CHECK:      nvvm.barrier0
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1 : i32
// CHECK-NEXT: %[[C31:.*]] = arith.constant 31 : i32
// CHECK-NEXT: %a = nvvm.shfl.sync bfly %[[M1]], %x, %c1, %[[C31]] : f32 -> f32
// CHECK-NEXT: %[[VA:.*]] = arith.constant true

// Width 16, `up`: lanes 0..15, clamp 16; the validity bit is used.
// CHECK-NEXT: %[[M16:.*]] = arith.constant 65535 : i32
// CHECK-NEXT: %[[C16:.*]] = arith.constant 16 : i32
// CHECK-NEXT: %[[P:.*]] = nvvm.shfl.sync up %[[M16]], %i, %c1, %[[C16]] {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
// CHECK-NEXT: %b = llvm.extractvalue %[[P]][0] : !llvm.struct<(i32, i1)>
// CHECK-NEXT: %vb = llvm.extractvalue %[[P]][1] : !llvm.struct<(i32, i1)>

// A width known only at run time.
// CHECK-NEXT: %[[K32:.*]] = arith.constant 32 : i32
// CHECK-NEXT: %[[OFF:.*]] = arith.subi %[[K32]], %w : i32
// CHECK-NEXT: %[[KM1:.*]] = arith.constant -1 : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.shrui %[[KM1]], %[[OFF]] : i32
// CHECK-NEXT: %[[K1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[CLAMP:.*]] = arith.subi %w, %[[K1]] : i32
// CHECK-NEXT: %c = nvvm.shfl.sync down %[[MASK]], %x, %c1, %[[CLAMP]] : f32 -> f32

// CHECK:      %d = nvvm.shfl.sync idx %{{.*}}, %a, %c1, %{{.*}} : f32 -> f32
// CHECK:      %e = arith.select %vb, %b, %i : i32

// -----

// Other types travel as i32 words: narrower integers widened, floats by their
// bits, values of 33 to 64 bits as two halves, the first giving the
// validity bit.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @types(%h: f16, %b: i1, %d: f64, %l: i48) kernel {
      %c2 = arith.constant 2 : i32
      %c32 = arith.constant 32 : i32
      %h2, %vh = gpu.shuffle xor %h, %c2, %c32 : f16
      %b2, %vbb = gpu.shuffle xor %b, %c2, %c32 : i1
      %d2, %vd = gpu.shuffle down %d, %c2, %c32 : f64
      %l2, %vl = gpu.shuffle xor %l, %c2, %c32 : i48
      gpu.return
    }
  }
}

// CHECK:      %[[HB:.*]] = arith.bitcast %h : f16 to i16
// CHECK-NEXT: arith.constant -1 : i32
// CHECK-NEXT: arith.constant 31 : i32
// CHECK-NEXT: %[[HW:.*]] = arith.extui %[[HB]] : i16 to i32
// CHECK-NEXT: %[[HS:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[HW]], %c2, %{{.*}} : i32 -> i32
// CHECK-NEXT: %[[HT:.*]] = arith.trunci %[[HS]] : i32 to i16
// CHECK-NEXT: %h2 = arith.bitcast %[[HT]] : i16 to f16

// CHECK:      %[[BW:.*]] = arith.extui %b : i1 to i32
// CHECK-NEXT: %[[BS:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[BW]], %c2, %{{.*}} : i32 -> i32
// CHECK-NEXT: %b2 = arith.trunci %[[BS]] : i32 to i1

// CHECK:      %[[DB:.*]] = arith.bitcast %d : f64 to i64
// CHECK-NEXT: arith.constant -1 : i32
// CHECK-NEXT: arith.constant 31 : i32
// CHECK-NEXT: %[[K:.*]] = arith.constant 32 : i64
// CHECK-NEXT: %[[LO:.*]] = arith.trunci %[[DB]] : i64 to i32
// CHECK-NEXT: %[[SH:.*]] = arith.shrui %[[DB]], %[[K]] : i64
// CHECK-NEXT: %[[HI:.*]] = arith.trunci %[[SH]] : i64 to i32
// CHECK-NEXT: %[[LO2:.*]] = nvvm.shfl.sync down %{{.*}}, %[[LO]], %c2, %{{.*}} : i32 -> i32
// CHECK-NEXT: %[[HI2:.*]] = nvvm.shfl.sync down %{{.*}}, %[[HI]], %c2, %{{.*}} : i32 -> i32
// CHECK-NEXT: %[[LOW:.*]] = arith.extui %[[LO2]] : i32 to i64
// CHECK-NEXT: %[[HIGH0:.*]] = arith.extui %[[HI2]] : i32 to i64
// CHECK-NEXT: %[[HIGH:.*]] = arith.shli %[[HIGH0]], %[[K]] : i64
// CHECK-NEXT: %[[J:.*]] = arith.ori %[[LOW]], %[[HIGH]] : i64
// CHECK-NEXT: %d2 = arith.bitcast %[[J]] : i64 to f64

// CHECK:      %[[LW:.*]] = arith.extui %l : i48 to i64
// CHECK:      nvvm.shfl.sync bfly
// CHECK:      nvvm.shfl.sync bfly
// CHECK:      %l2 = arith.trunci %{{.*}} : i64 to i48
