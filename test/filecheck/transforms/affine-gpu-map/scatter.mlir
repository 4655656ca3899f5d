// A scatter-accumulate's nest (convert-tc-to-affine: memref.atomic_rmw addf
// under scf.if, the error code stored in the else branch): its atomic adds
// commute with each other, so affine-gpu-map maps its loops to blocks and
// threads like any parallel nest; the zero-init of dE stays a nest of its
// own before it (it is ordered against the atomic adds). affine-isl-schedule
// (the CPU) orders the atomic adds like plain updates: the scatter stays a
// sequential affine.for nest, the zero-init is parallel.
// RUN: tc-opt %s -p affine-gpu-map | filecheck %s
// RUN: tc-opt %s -p 'affine-isl-schedule{threads=4}' | filecheck %s --check-prefix=CPU

func.func @emb(%Idx: memref<?xi32>, %g: memref<?x?xf32>, %dE: memref<?x?xf32>, %err: memref<1xi32>, %V: index, %D: index, %K: index) attributes {tc.inputs = ["Idx", "g"], tc.outputs = ["dE"], tc.sizes = ["V", "D", "K"], tc.checked = ["dE"]} {
  affine.for %v = 0 to %V {
    affine.for %e = 0 to %D {
      %z = arith.constant 0.000000e+00 : f32
      affine.store %z, %dE[%v, %e] : memref<?x?xf32>
    }
  }
  %c0 = arith.constant 0 : index
  affine.for %k = 0 to %K {
    affine.for %d = 0 to %D {
      %i = affine.load %Idx[%k] : memref<?xi32>
      %x = arith.index_cast %i : i32 to index
      %v = affine.load %g[%k, %d] : memref<?x?xf32>
      %ge = arith.cmpi sge, %x, %c0 : index
      %lt = arith.cmpi slt, %x, %V : index
      %ok = arith.andi %ge, %lt : i1
      scf.if %ok {
        %old = "memref.atomic_rmw"(%v, %dE, %x, %d) <{kind = 0 : i64}> : (f32, memref<?x?xf32>, index, index) -> f32
      } else {
        %code = arith.constant 1 : i32
        %c0_1 = arith.constant 0 : index
        memref.store %code, %err[%c0_1] : memref<1xi32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @emb(
// CHECK:                   affine.store %{{.*}}, %dE[%v, %e]
// CHECK:                 }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// CHECK:               }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// CHECK:             }) {tc.gpu_processor = "block_x", tc.gpu_size = 2147483647 : i64}
// CHECK:           }) {tc.gpu_processor = "block_y", tc.gpu_size = 65535 : i64}
// CHECK-NOT:     affine.for
// CHECK:         "affine.parallel"(%K)
// CHECK:           ^bb0(%k: index):
// CHECK:             ^bb0(%d: index):
// CHECK:               scf.if %ok {
// CHECK-NEXT:            "memref.atomic_rmw"(%{{.*}}, %dE, %x, %d) <{kind = 0 : i64}>
// CHECK-NEXT:          } else {
// CHECK:                 memref.store %code, %err
// CHECK:               }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// CHECK:             }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// CHECK:           }) {tc.gpu_processor = "block_x", tc.gpu_size = 2147483647 : i64}
// CHECK:         }) {tc.gpu_processor = "block_y", tc.gpu_size = 65535 : i64}
// CHECK-NEXT:    func.return

// CPU-LABEL: func.func @emb(
// CPU:         "affine.parallel"(%V)
// CPU:           affine.store %{{.*}}, %dE
// CPU:         affine.for %k = 0 to %K {
// CPU-NEXT:      affine.for %d = 0 to %D {
// CPU:             "memref.atomic_rmw"
// CPU-NOT:     affine.parallel
// CPU:         func.return
