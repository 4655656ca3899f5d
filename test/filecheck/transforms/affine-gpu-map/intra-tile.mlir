// affine-gpu-map{intra-tile-fusion}: the point loops inside a tile are
// rescheduled with their own fusion strategy (tcdialect.poly.intra_tile).
// With `max` outside, B = A * 2 and C = B + 1 share one thread nest per
// tile; `min` inside gives each statement a thread nest of its own, one
// after the other in the block's tile (the tile loops stay shared);
// `preserve3coincident` keeps them fused (the fused band keeps both
// coincident members). Statements in a dependence cycle inside a tile stay
// in one nest whatever the strategy. When the two strategies are equal,
// the output is exactly that without the option (and by default, where
// the mapper's preserve3coincident is the outer one: test_poly_intra_tile.py).
// RUN: tc-opt %s -p 'affine-gpu-map{fusion=max}' | tee %t.max | filecheck %s --check-prefix=FUSED
// RUN: tc-opt %s -p 'affine-gpu-map{fusion=max intra-tile-fusion=max}' | diff %t.max -
// RUN: tc-opt %s -p 'affine-gpu-map{fusion=max intra-tile-fusion=preserve3coincident}' | filecheck %s --check-prefix=FUSED
// RUN: tc-opt %s -p 'affine-gpu-map{fusion=max intra-tile-fusion=min}' | filecheck %s --check-prefix=MIN
// RUN: not tc-opt %s -p 'affine-gpu-map{intra-tile-fusion=most}' 2>&1 | filecheck %s --check-prefix=BAD

// FUSED-LABEL: func.func @pc
// FUSED:         ^bb0(%i: index):
// FUSED:           ^bb0(%j: index):
// FUSED:             affine.store %{{.*}}, %B[%i, %j]
// FUSED:             affine.store %{{.*}}, %C[%i, %j]
// FUSED:           }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// FUSED-NEXT:      affine.yield
// FUSED-NEXT:    }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// FUSED-NEXT:    affine.yield
// FUSED-NEXT:  }) {tc.gpu_processor = "block_x", tc.gpu_size = 2147483647 : i64}

// MIN-LABEL: func.func @pc
// MIN:         ^bb0(%c1: index):
// MIN:           ^bb0(%i: index):
// MIN:             ^bb0(%j: index):
// MIN:               affine.store %{{.*}}, %B[%i, %j]
// MIN-NOT:           affine.store
// MIN:             }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// MIN-NEXT:        affine.yield
// MIN-NEXT:      }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// MIN-NEXT:      "affine.parallel"(%c0, %c0)
// MIN-NEXT:      ^bb0(%i_1: index):
// MIN:             ^bb0(%j_1: index):
// MIN:               affine.store %{{.*}}, %C[%i_1, %j_1]
// MIN:             }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// MIN-NEXT:        affine.yield
// MIN-NEXT:      }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// MIN-NEXT:      affine.yield
// MIN-NEXT:    }) {tc.gpu_processor = "block_x", tc.gpu_size = 2147483647 : i64}
func.func @pc(%A: memref<64x48xf32>, %B: memref<64x48xf32>, %C: memref<64x48xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 48 {
      %a = affine.load %A[%i, %j] : memref<64x48xf32>
      %two = arith.constant 2.0 : f32
      %b = arith.mulf %a, %two : f32
      affine.store %b, %B[%i, %j] : memref<64x48xf32>
    }
  }
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 48 {
      %b = affine.load %B[%i, %j] : memref<64x48xf32>
      %one = arith.constant 1.0 : f32
      %c = arith.addf %b, %one : f32
      affine.store %c, %C[%i, %j] : memref<64x48xf32>
    }
  }
  func.return
}

// X(i, j) reads Y(i, j), which the previous j's second statement wrote: a
// dependence cycle carried by j, inside a tile of i. Both stay in one nest.
// MIN-LABEL: func.func @cycle
// MIN:         ^bb0(%i: index):
// MIN-NEXT:      affine.for %j = 0 to 48 {
// MIN:             affine.store %{{.*}}, %X[%i, %j]
// MIN:             affine.store %{{.*}}, %Y[%i, %j + 1]
// MIN:           }
// MIN:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64}
// MIN-NOT:     tc.gpu_processor
// MIN:         func.return
func.func @cycle(%X: memref<64x48xf32>, %Y: memref<64x49xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 48 {
      %y = affine.load %Y[%i, %j] : memref<64x49xf32>
      %two = arith.constant 2.0 : f32
      %x = arith.mulf %y, %two : f32
      affine.store %x, %X[%i, %j] : memref<64x48xf32>
      %x2 = affine.load %X[%i, %j] : memref<64x48xf32>
      %one = arith.constant 1.0 : f32
      %y2 = arith.addf %x2, %one : f32
      affine.store %y2, %Y[%i, %j + 1] : memref<64x49xf32>
    }
  }
  func.return
}

// BAD: affine-gpu-map: unknown intra-tile-fusion 'most' (expected one of max, preserve3coincident, min)
