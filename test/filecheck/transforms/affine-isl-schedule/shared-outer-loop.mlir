// max fusion, when isl's fully fused band would lose parallel loops: the
// groups still share their common outer parallel loop when dropping it takes
// no register tile's outer product from any statement. The groups then run
// in sequence inside one parallel loop, each on its slice.
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=max}' | filecheck %s
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=preserve3coincident}' | filecheck %s --check-prefix=P3C
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=max tile=100,2}' | filecheck %s --check-prefix=TILE

// Two mode products along a batch m (kronecker3's shape): each is a small
// contraction per m, and the second reads the first's slice for the same m.
func.func @modes(%W: memref<16x8xf32>, %V: memref<4x8xf32>, %X: memref<64x8x8xf32>, %XW: memref<64x8x16xf32>, %Y: memref<64x4x16xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %k = 0 to 8 {
      affine.for %d = 0 to 16 {
        %z = arith.constant 0.0 : f32
        affine.store %z, %XW[%m, %k, %d] : memref<64x8x16xf32>
      }
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %k = 0 to 8 {
      affine.for %d = 0 to 16 {
        affine.for %r = 0 to 8 {
          %x = affine.load %X[%m, %k, %r] : memref<64x8x8xf32>
          %w = affine.load %W[%d, %r] : memref<16x8xf32>
          %p = arith.mulf %x, %w : f32
          %a = affine.load %XW[%m, %k, %d] : memref<64x8x16xf32>
          %s = arith.addf %a, %p fastmath<reassoc> : f32
          affine.store %s, %XW[%m, %k, %d] : memref<64x8x16xf32>
        }
      }
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %e = 0 to 4 {
      affine.for %d = 0 to 16 {
        %z = arith.constant 0.0 : f32
        affine.store %z, %Y[%m, %e, %d] : memref<64x4x16xf32>
      }
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %e = 0 to 4 {
      affine.for %d = 0 to 16 {
        affine.for %r = 0 to 8 {
          %t = affine.load %XW[%m, %r, %d] : memref<64x8x16xf32>
          %v = affine.load %V[%e, %r] : memref<4x8xf32>
          %p = arith.mulf %t, %v : f32
          %a = affine.load %Y[%m, %e, %d] : memref<64x4x16xf32>
          %s = arith.addf %a, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %e, %d] : memref<64x4x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @modes
// CHECK:         "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (64)>
// CHECK-NEXT:    ^bb0(%m: index):
// CHECK:           affine.store %{{.*}}, %XW[%m, %{{.*}}, %{{.*}}]
// CHECK:           affine.load %X[%m,
// CHECK:           affine.store %{{.*}}, %XW[%m,
// CHECK:           affine.store %{{.*}}, %Y[%m,
// CHECK:           affine.load %XW[%m,
// CHECK:           affine.store %{{.*}}, %Y[%m,
// CHECK:           affine.yield
// CHECK-NEXT:    })
// CHECK-NOT:     affine.parallel
// CHECK:         func.return

// Tile sizes still name the loops in order: m's first (one tile of 100: isl
// drops that loop, and the point loop over m runs in parallel), then k's.
// TILE-LABEL: func.func @modes
// TILE:         "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (64)>
// TILE-NEXT:    ^bb0(%m: index):
// TILE-NEXT:      affine.for %[[T:.*]] = 0 to 4 {
// TILE-NEXT:        affine.for %k = affine_map<(d0) -> ((d0 * 2))>(%[[T]]) to affine_map<(d0) -> (((d0 * 2) + 2))>(%[[T]]) {

// preserve3coincident keeps one parallel nest per contraction.
// P3C-LABEL: func.func @modes
// P3C:         "affine.parallel"()
// P3C:           affine.store %{{.*}}, %XW
// P3C:           affine.yield
// P3C:         "affine.parallel"()
// P3C:           affine.store %{{.*}}, %Y
// P3C:           affine.yield
// P3C:         func.return

// Left alone: two chained matrix products. Sharing the rows m would leave
// each product one row at a time (no rows-by-columns register tile), so
// each keeps its own parallel nest.
func.func @two_matmuls(%A: memref<64x24xf32>, %B: memref<24x16xf32>, %T: memref<64x16xf32>, %D: memref<16x8xf32>, %C: memref<64x8xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %T[%m, %n] : memref<64x16xf32>
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 24 {
        %a = affine.load %A[%m, %k] : memref<64x24xf32>
        %b = affine.load %B[%k, %n] : memref<24x16xf32>
        %p = arith.mulf %a, %b : f32
        %t = affine.load %T[%m, %n] : memref<64x16xf32>
        %s = arith.addf %t, %p fastmath<reassoc> : f32
        affine.store %s, %T[%m, %n] : memref<64x16xf32>
      }
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %p = 0 to 8 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %p] : memref<64x8xf32>
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %p = 0 to 8 {
      affine.for %n = 0 to 16 {
        %t = affine.load %T[%m, %n] : memref<64x16xf32>
        %d = affine.load %D[%n, %p] : memref<16x8xf32>
        %q = arith.mulf %t, %d : f32
        %c = affine.load %C[%m, %p] : memref<64x8xf32>
        %s = arith.addf %c, %q fastmath<reassoc> : f32
        affine.store %s, %C[%m, %p] : memref<64x8xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @two_matmuls
// CHECK:         "affine.parallel"()
// CHECK:           affine.store %{{.*}}, %T
// CHECK:           affine.yield
// CHECK:         "affine.parallel"()
// CHECK:           affine.store %{{.*}}, %C
// CHECK:           affine.yield
// CHECK:         func.return
