// RUN: tc-opt %s --split-input-file -p 'register-tile{vector-width=8 rows=2 vectors=1}' | filecheck %s

// Short broadcast rows that change with an outer loop: before each full row
// strip's reduction loop, the lines of the next strip's rows (n0 + 2, n0 + 3)
// are prefetched, one per 64 bytes of a row plus its last element (rows of
// 16 floats: columns 0 and 15). Then, for writing, the tile's vectors of Y at
// the next iteration of the kept loop m (16 reduction steps: enough).

func.func @next_rows(%X: memref<32x4x16xf32>, %W: memref<16x8xf32>, %Y: memref<32x4x8xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%m, %n, %k] : memref<32x4x16xf32>
          %w = affine.load %W[%k, %d] : memref<16x8xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<32x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<32x4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @next_rows
// CHECK:         affine.for %n = 0 to 4 step 2 {
// CHECK-NEXT:      affine.for %d = 0 to 8 step 8 {
// CHECK-NEXT:        %[[N1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%n]
// CHECK-NEXT:        %[[Y0:.*]] = vector.load %Y[%m, %n, %d]
// CHECK-NEXT:        %[[Y1:.*]] = vector.load %Y[%m, %[[N1]], %d]
// CHECK-NEXT:        %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[C15:.*]] = arith.constant 15 : index
// CHECK-NEXT:        %[[N2:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 2))> ()[%n]
// CHECK-NEXT:        memref.prefetch %X[%m, %[[N2]], %[[C0]]], read, locality<3>, data : memref<32x4x16xf32>
// CHECK-NEXT:        memref.prefetch %X[%m, %[[N2]], %[[C15]]], read, locality<3>, data : memref<32x4x16xf32>
// CHECK-NEXT:        %[[N3:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 3))> ()[%n]
// CHECK-NEXT:        memref.prefetch %X[%m, %[[N3]], %[[C0]]], read, locality<3>, data : memref<32x4x16xf32>
// CHECK-NEXT:        memref.prefetch %X[%m, %[[N3]], %[[C15]]], read, locality<3>, data : memref<32x4x16xf32>
// CHECK-NEXT:        %[[M1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%m]
// CHECK-NEXT:        memref.prefetch %Y[%[[M1]], %n, %d], write, locality<3>, data : memref<32x4x8xf32>
// CHECK-NEXT:        memref.prefetch %Y[%[[M1]], %[[N1]], %d], write, locality<3>, data : memref<32x4x8xf32>
// CHECK-NEXT:        affine.for %k = 0 to 16 iter_args(%{{.*}} = %[[Y0]], %{{.*}} = %[[Y1]])
// CHECK-NOT:         memref.prefetch
// CHECK:         func.return

// -----

// Left alone: the columns take two strips (16 = 2 x 8 lanes), so every
// strip's rows are read again by the second column strip, from cache.

func.func @two_column_strips(%X: memref<32x4x16xf32>, %W: memref<16x16xf32>, %Y: memref<32x4x16xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 16 {
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%m, %n, %k] : memref<32x4x16xf32>
          %w = affine.load %W[%k, %d] : memref<16x16xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<32x4x16xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<32x4x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @two_column_strips
// CHECK-NOT:     memref.prefetch {{.*}}, read
// CHECK:         func.return

// -----

// Left alone: the broadcast rows W(n, k) are the same at every `m`, so they
// stay in cache after the first one.

func.func @same_rows(%X: memref<32x16x8xf32>, %W: memref<4x16xf32>, %Y: memref<32x4x8xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 16 {
          %w = affine.load %W[%n, %k] : memref<4x16xf32>
          %x = affine.load %X[%m, %k, %d] : memref<32x16x8xf32>
          %p = arith.mulf %w, %x : f32
          %y = affine.load %Y[%m, %n, %d] : memref<32x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<32x4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @same_rows
// CHECK-NOT:     memref.prefetch {{.*}}, read
// CHECK:         func.return

// -----

// Left alone: rows of 256 floats (1 KiB) are long enough for the hardware
// prefetcher.

func.func @long_rows(%X: memref<32x4x256xf32>, %W: memref<256x8xf32>, %Y: memref<32x4x8xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 256 {
          %x = affine.load %X[%m, %n, %k] : memref<32x4x256xf32>
          %w = affine.load %W[%k, %d] : memref<256x8xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<32x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<32x4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @long_rows
// CHECK-NOT:     memref.prefetch {{.*}}, read
// CHECK:         func.return

// -----

// The target's next tile: prefetched for writing at the next h (the kept
// loop around the row and column strips), one per vector (2 rows x 1 here),
// before the 4 x 3 x 3 = 36 reduction steps.

func.func @next_target(%I: memref<4x10x18xf32>, %W: memref<8x4x3x3xf32>, %O: memref<8x8x16xf32>) {
  affine.for %h = 0 to 8 {
    affine.for %f = 0 to 8 {
      affine.for %w = 0 to 16 {
        affine.for %c = 0 to 4 {
          affine.for %i = 0 to 3 {
            affine.for %j = 0 to 3 {
              %x = affine.load %I[%c, %h + %i, %w + %j] : memref<4x10x18xf32>
              %k = affine.load %W[%f, %c, %i, %j] : memref<8x4x3x3xf32>
              %p = arith.mulf %k, %x : f32
              %o = affine.load %O[%f, %h, %w] : memref<8x8x16xf32>
              %s = arith.addf %o, %p fastmath<reassoc> : f32
              affine.store %s, %O[%f, %h, %w] : memref<8x8x16xf32>
            }
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @next_target
// CHECK:         affine.for %h = 0 to 8 {
// CHECK:           %[[F1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%f]
// CHECK:           %[[H1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%h]
// CHECK-NEXT:      memref.prefetch %O[%f, %[[H1]], %w], write, locality<3>, data : memref<8x8x16xf32>
// CHECK-NEXT:      memref.prefetch %O[%[[F1]], %[[H1]], %w], write, locality<3>, data : memref<8x8x16xf32>
// CHECK-NEXT:      affine.for %c = 0 to 4
// CHECK:         func.return

// -----

// Left alone: 8 reduction steps are too few to pay for a prefetch per vector
// (tensordot).

func.func @short_reduction(%A: memref<8x8x16xf32>, %B: memref<8x8x16xf32>, %O: memref<8x8x16xf32>) {
  affine.for %h = 0 to 8 {
    affine.for %f = 0 to 8 {
      affine.for %w = 0 to 16 {
        affine.for %r = 0 to 8 {
          %a = affine.load %A[%f, %r, %w] : memref<8x8x16xf32>
          %b = affine.load %B[%h, %r, %w] : memref<8x8x16xf32>
          %p = arith.mulf %a, %b : f32
          %o = affine.load %O[%f, %h, %w] : memref<8x8x16xf32>
          %s = arith.addf %o, %p fastmath<reassoc> : f32
          affine.store %s, %O[%f, %h, %w] : memref<8x8x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @short_reduction
// CHECK-NOT:     memref.prefetch
// CHECK:         func.return
