// RUN: tc-opt %s -p 'register-tile{vector-width=16}' | filecheck %s

// With the default NV = 3 vectors of 16 lanes, 54 columns would leave a
// strip of one masked vector per row (6 columns, MR chains). One vector
// more covers them in one strip when the accumulators still fit: 4 rows x 4
// vectors, the last one masked (group conv's rows of 54).

func.func @one_more(%I: memref<8x54xf32>, %W: memref<4x8xf32>, %O: memref<4x54xf32>) {
  affine.for %f = 0 to 4 {
    affine.for %c = 0 to 8 {
      affine.for %w = 0 to 54 {
        %x = affine.load %I[%c, %w] : memref<8x54xf32>
        %y = affine.load %W[%f, %c] : memref<4x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = affine.load %O[%f, %w] : memref<4x54xf32>
        %s = arith.addf %o, %p fastmath<reassoc> : f32
        affine.store %s, %O[%f, %w] : memref<4x54xf32>
      }
    }
  }
  func.return
}

// (The masked vectors of rows f, f + 1 and f + 2, f + 3 use 6 of 16 lanes
// each: they are packed in pairs, pair-tails.mlir; 4 x 3 + 2 accumulators.)

// CHECK-LABEL: func.func @one_more
// CHECK-NEXT:    affine.for %f = 0 to 4 step 4 {
// CHECK-NEXT:      affine.for %w = 0 to 54 step 64 {
// CHECK:             {{(%[0-9]+, ){13}%[0-9]+}} = affine.for %c = 0 to 8 iter_args(
// CHECK-COUNT-3:     vector.store %{{.*}}, %O[%f, %{{.*}}] : memref<4x54xf32>, vector<16xf32>
// CHECK-NEXT:        vector.maskedstore %O[%f, %{{.*}}], %{{.*}}, %{{.*}} : memref<4x54xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:       affine.for %w
// CHECK:         func.return

// With 8 rows, 8 x 4 accumulators would not fit (24 at most), and strips of
// 3 vectors would leave one of a single vector per row (8 FMA chains on one
// column load per step): strips of 2 vectors instead, 32 columns and then 22
// (a full vector and a 6-lane one, whose row pairs share a vector: 8 + 4
// accumulators).

func.func @eight_rows(%I: memref<8x54xf32>, %W: memref<8x8xf32>, %O: memref<8x54xf32>) {
  affine.for %f = 0 to 8 {
    affine.for %c = 0 to 8 {
      affine.for %w = 0 to 54 {
        %x = affine.load %I[%c, %w] : memref<8x54xf32>
        %y = affine.load %W[%f, %c] : memref<8x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = affine.load %O[%f, %w] : memref<8x54xf32>
        %s = arith.addf %o, %p fastmath<reassoc> : f32
        affine.store %s, %O[%f, %w] : memref<8x54xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @eight_rows
// CHECK-NEXT:    affine.for %f = 0 to 8 step 8 {
// CHECK-NEXT:      affine.for %w = 0 to 32 step 32 {
// CHECK:             {{(%[0-9]+, ){15}%[0-9]+}} = affine.for %c = 0 to 8 iter_args(
// CHECK:           affine.for %w_1 = 32 to 54 step 32 {
// CHECK:             {{(%[0-9]+, ){11}%[0-9]+}} = affine.for %c_1 = 0 to 8 iter_args(
// CHECK:         func.return

// Rows left over from MR with a static extent: one strip of exactly those
// rows (26 = 3 x 8 + a strip of 2 rows, 2 x 2 accumulators), not 2 strips
// of 1 row each running its own reduction with half the FMA chains
// (tbmm's 26 x 26 batches).

func.func @rows_left(%X: memref<26x72xf32>, %Y: memref<72x26xf32>, %Z: memref<26x26xf32>) {
  affine.for %n = 0 to 26 {
    affine.for %k = 0 to 26 {
      affine.for %m = 0 to 72 {
        %x = affine.load %X[%n, %m] : memref<26x72xf32>
        %y = affine.load %Y[%m, %k] : memref<72x26xf32>
        %p = arith.mulf %x, %y : f32
        %o = affine.load %Z[%n, %k] : memref<26x26xf32>
        %s = arith.addf %o, %p fastmath<reassoc> : f32
        affine.store %s, %Z[%n, %k] : memref<26x26xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rows_left
// CHECK-NEXT:    affine.for %n = 0 to 24 step 8 {
// CHECK:           {{(%[0-9]+, ){15}%[0-9]+}} = affine.for %m = 0 to 72 iter_args(
// CHECK:         affine.for %n_1 = 24 to 26 step 2 {
// CHECK:           {{(%[0-9]+, ){3}%[0-9]+}} = affine.for %m_1 = 0 to 72 iter_args(
// CHECK-NOT:     affine.for %n
// CHECK:         func.return

// Leave alone: with a symbolic extent the rows left are not known, and
// they run one row per strip.

func.func @rows_symbolic(%X: memref<?x72xf32>, %Y: memref<72x26xf32>, %Z: memref<?x26xf32>) {
  %c0 = arith.constant 0 : index
  %N = memref.dim %Z, %c0 : memref<?x26xf32>
  affine.for %n = 0 to %N {
    affine.for %k = 0 to 26 {
      affine.for %m = 0 to 72 {
        %x = affine.load %X[%n, %m] : memref<?x72xf32>
        %y = affine.load %Y[%m, %k] : memref<72x26xf32>
        %p = arith.mulf %x, %y : f32
        %o = affine.load %Z[%n, %k] : memref<?x26xf32>
        %s = arith.addf %o, %p fastmath<reassoc> : f32
        affine.store %s, %Z[%n, %k] : memref<?x26xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rows_symbolic
// CHECK:         affine.for %n = 0 to {{.*}} step 8 {
// CHECK:         affine.for %n_1 = {{.*}} to {{.*}} {
// CHECK:           {{(%[0-9]+, )%[0-9]+}} = affine.for %m_1 = 0 to 72 iter_args(
// CHECK:         func.return

// 160 columns are 10 vectors: strips of 3 would leave a strip of one vector
// per row (8 FMA chains on one column load per step, and a dispatch of its
// own when the column strips are the parallel loop); strips of 2 divide
// them: 5 strips, no remainder.

func.func @two_vector_strips(%A: memref<8x8xf32>, %B: memref<8x160xf32>, %C: memref<8x160xf32>) {
  affine.for %m = 0 to 8 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 160 {
        %a = affine.load %A[%m, %k] : memref<8x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x160xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<8x160xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<8x160xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @two_vector_strips
// CHECK-NEXT:    affine.for %m = 0 to 8 step 8 {
// CHECK-NEXT:      affine.for %n = 0 to 160 step 32 {
// CHECK:             {{(%[0-9]+, ){15}%[0-9]+}} = affine.for %k = 0 to 8 iter_args(
// CHECK-NOT:       affine.for %n
// CHECK:         func.return

// Leave alone: 112 columns are 7 vectors, odd: 2 strips of 3, then one of 1.

func.func @odd_vector_count(%A: memref<8x8xf32>, %B: memref<8x112xf32>, %C: memref<8x112xf32>) {
  affine.for %m = 0 to 8 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 112 {
        %a = affine.load %A[%m, %k] : memref<8x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x112xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<8x112xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<8x112xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @odd_vector_count
// CHECK-NEXT:    affine.for %m = 0 to 8 step 8 {
// CHECK-NEXT:      affine.for %n = 0 to 96 step 48 {
// CHECK:           affine.for %n_1 = 96 to 112 step 16 {
// CHECK:         func.return
