// Fusion strategies on a producer/consumer pair and a transposed consumer.
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=max tile=0}' | filecheck %s --check-prefix=MAX
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=0}' | filecheck %s --check-prefix=MIN
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=preserve3coincident tile=0}' | filecheck %s --check-prefix=P3C

func.func @pair(%A: memref<64x32xf32>, %B: memref<64x32xf32>, %C: memref<64x32xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 32 {
      %a = affine.load %A[%i, %j] : memref<64x32xf32>
      %b = arith.addf %a, %a : f32
      affine.store %b, %B[%i, %j] : memref<64x32xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 32 {
      %a = affine.load %B[%i, %j] : memref<64x32xf32>
      %b = arith.mulf %a, %a : f32
      affine.store %b, %C[%i, %j] : memref<64x32xf32>
    }
  }
  func.return
}

// max: one nest, both statements in the innermost loop, outer loop parallel.
// MAX-LABEL: func.func @pair
// MAX:         "affine.parallel"()
// MAX-NEXT:    ^bb0(%i: index):
// MAX-NEXT:      affine.for %j = 0 to 32 {
// MAX-NEXT:        affine.load %A[%i, %j]
// MAX-NEXT:        arith.addf
// MAX-NEXT:        affine.store %{{.*}}, %B[%i, %j]
// MAX-NEXT:        affine.load %B[%i, %j]
// MAX-NEXT:        arith.mulf
// MAX-NEXT:        affine.store %{{.*}}, %C[%i, %j]
// MAX-NEXT:      }
// MAX-NOT:     affine.for
// MAX:         func.return

// min: one nest per statement, in order, each with a parallel outer loop.
// MIN-LABEL: func.func @pair
// MIN:         "affine.parallel"()
// MIN:           affine.store %{{.*}}, %B[%i, %j]
// MIN:         "affine.parallel"()
// MIN:           affine.store %{{.*}}, %C[%i_1, %j_1]
// MIN:         func.return

// preserve3coincident fuses: the fused band keeps both loops coincident.
// P3C-LABEL: func.func @pair
// P3C:         "affine.parallel"()
// P3C:           affine.store %{{.*}}, %B[%i, %j]
// P3C-NEXT:      affine.load %B[%i, %j]
// P3C-NOT:     "affine.parallel"()
// P3C:         func.return

// A consumer that reads the producer transposed over the whole array cannot
// share the inner loop; max still fuses the outer one when isl finds a shift.
func.func @reduce_then_scale(%A: memref<16x8xf32>, %S: memref<16xf32>, %O: memref<16x8xf32>) {
  affine.for %i = 0 to 16 {
    %z = arith.constant 0.0 : f32
    affine.store %z, %S[%i] : memref<16xf32>
  }
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 8 {
      %a = affine.load %A[%i, %k] : memref<16x8xf32>
      %s = affine.load %S[%i] : memref<16xf32>
      %t = arith.addf %s, %a fastmath<reassoc> : f32
      affine.store %t, %S[%i] : memref<16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 8 {
      %a = affine.load %A[%i, %j] : memref<16x8xf32>
      %s = affine.load %S[%i] : memref<16xf32>
      %q = arith.divf %a, %s : f32
      affine.store %q, %O[%i, %j] : memref<16x8xf32>
    }
  }
  func.return
}

// max: one parallel row loop; init, the reduction loop, then the scaling loop.
// MAX-LABEL: func.func @reduce_then_scale
// MAX:         "affine.parallel"()
// MAX-NEXT:    ^bb0(%i: index):
// MAX:           affine.store %{{.*}}, %S[%i]
// MAX:           affine.for %k = 0 to 8 {
// MAX:             arith.addf
// MAX:           }
// MAX:           affine.for
// MAX:             arith.divf
// MAX-NOT:     "affine.parallel"()
// MAX:         func.return

// min: three nests.
// MIN-LABEL: func.func @reduce_then_scale
// MIN-COUNT-3: "affine.parallel"()
// MIN:         func.return
