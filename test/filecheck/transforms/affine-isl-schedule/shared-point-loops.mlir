// Inside a tile, each statement gets its own point loops, below the leading
// point loops that all of them share. A loop stays shared while it leads
// every statement's own loop order, each statement keeps a parallel loop of
// its own (two when a reduction loop runs between its parallel ones: a
// register tile's rows and vectors), and a statement whose loads form an
// outer product (one load varies along a loop and not along another, a
// second load the other way round) keeps one below it.
// RUN: tc-opt %s -p 'affine-isl-schedule{print-schedule=true}' | filecheck %s

// A batch of small contractions: b is shared, the (i, j) outer product of X
// and W stays with the update. The batch's slice of T is zeroed just before
// it is accumulated.
func.func @batched(%X: memref<256x32x32xf32>, %W: memref<16x32xf32>, %T: memref<256x32x16xf32>) {
  affine.for %b = 0 to 256 {
    affine.for %i = 0 to 32 {
      affine.for %j = 0 to 16 {
        %z = arith.constant 0.0 : f32
        affine.store %z, %T[%b, %i, %j] : memref<256x32x16xf32>
      }
    }
  }
  affine.for %b = 0 to 256 {
    affine.for %i = 0 to 32 {
      affine.for %j = 0 to 16 {
        affine.for %k = 0 to 32 {
          %x = affine.load %X[%b, %i, %k] : memref<256x32x32xf32>
          %w = affine.load %W[%j, %k] : memref<16x32xf32>
          %p = arith.mulf %x, %w : f32
          %t = affine.load %T[%b, %i, %j] : memref<256x32x16xf32>
          %s = arith.addf %t, %p fastmath<reassoc> : f32
          affine.store %s, %T[%b, %i, %j] : memref<256x32x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: // schedule of @batched:
// CHECK:         schedule: "[{ S{{[01]}}[b, i, j{{.*}}] -> [(b)]; S{{[01]}}[b, i, j{{.*}}] -> [(b)] }]"
// CHECK-NOT:     -> [(i)]
// CHECK:         sequence:
// CHECK-NEXT:    - filter: "{ S0[b, i, j] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S0[b, i, j] -> [(i)] }, { S0[b, i, j] -> [(j)] }]"
// CHECK:         - filter: "{ S1[b, i, j, k] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S1[b, i, j, k] -> [(i)] }, { S1[b, i, j, k] -> [(j)] }, { S1[b, i, j, k] -> [(k)] }]"

// No outer product (both loads vary along c, h and w): the loops are shared
// down to the last two parallel ones, so a 28 x 28 slice of O is zeroed and
// then accumulated while it is in cache.
func.func @pointwise(%I0: memref<4x64x8x28x28xf32>, %I1: memref<4x8x28x28xf32>, %O: memref<4x64x28x28xf32>) {
  affine.for %n = 0 to 4 {
    affine.for %c = 0 to 64 {
      affine.for %h = 0 to 28 {
        affine.for %w = 0 to 28 {
          %z = arith.constant 0.0 : f32
          affine.store %z, %O[%n, %c, %h, %w] : memref<4x64x28x28xf32>
        }
      }
    }
  }
  affine.for %n = 0 to 4 {
    affine.for %c = 0 to 64 {
      affine.for %h = 0 to 28 {
        affine.for %w = 0 to 28 {
          affine.for %r = 0 to 8 {
            %a = affine.load %I0[%n, %c, %r, %h, %w] : memref<4x64x8x28x28xf32>
            %b = affine.load %I1[%n, %r, %h, %w] : memref<4x8x28x28xf32>
            %p = arith.mulf %a, %b : f32
            %o = affine.load %O[%n, %c, %h, %w] : memref<4x64x28x28xf32>
            %s = arith.addf %o, %p fastmath<reassoc> : f32
            affine.store %s, %O[%n, %c, %h, %w] : memref<4x64x28x28xf32>
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: // schedule of @pointwise:
// CHECK:         schedule: "[{ S{{[01]}}[n, c, h, w{{.*}}] -> [(n)]; S{{[01]}}[n, c, h, w{{.*}}] -> [(n)] }]"
// CHECK:         schedule: "[{ S{{[01]}}[n, c, h, w{{.*}}] -> [(c)]; S{{[01]}}[n, c, h, w{{.*}}] -> [(c)] }]"
// CHECK-NOT:     -> [(h)]
// CHECK:         sequence:
// CHECK-NEXT:    - filter: "{ S0[n, c, h, w] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S0[n, c, h, w] -> [(h)] }, { S0[n, c, h, w] -> [(w)] }]"
// CHECK:         - filter: "{ S1[n, c, h, w, r] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S1[n, c, h, w, r] -> [(h)] }, { S1[n, c, h, w, r] -> [(r)] }, { S1[n, c, h, w, r] -> [(w)] }]"

// A reduction over windows (maxpool), which runs inside its innermost
// parallel loop, needs only that loop of its own: h is shared too, so each
// row of O is set to -inf right before the pooling reads it back, instead of
// a whole 16 x 16 slice in a separate pass.
func.func @window(%I: memref<4x16x32x32xf32>, %O: memref<4x16x16x16xf32>) {
  affine.for %b = 0 to 4 {
    affine.for %c = 0 to 16 {
      affine.for %h = 0 to 16 {
        affine.for %w = 0 to 16 {
          %z = arith.constant 0xFF800000 : f32
          affine.store %z, %O[%b, %c, %h, %w] : memref<4x16x16x16xf32>
        }
      }
    }
  }
  affine.for %b = 0 to 4 {
    affine.for %c = 0 to 16 {
      affine.for %h = 0 to 16 {
        affine.for %w = 0 to 16 {
          affine.for %i = 0 to 2 {
            affine.for %j = 0 to 2 {
              %x = affine.load %I[%b, %c, %h * 2 + %i, %w * 2 + %j] : memref<4x16x32x32xf32>
              %o = affine.load %O[%b, %c, %h, %w] : memref<4x16x16x16xf32>
              %m = arith.maximumf %o, %x fastmath<reassoc> : f32
              affine.store %m, %O[%b, %c, %h, %w] : memref<4x16x16x16xf32>
            }
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: // schedule of @window:
// CHECK:         schedule: "[{ S{{[01]}}[b, c, h, w{{.*}}] -> [(c)]; S{{[01]}}[b, c, h, w{{.*}}] -> [(c)] }, { S{{[01]}}[b, c, h, w{{.*}}] -> [(h)]; S{{[01]}}[b, c, h, w{{.*}}] -> [(h)] }]"
// CHECK:         sequence:
// CHECK-NEXT:    - filter: "{ S0[b, c, h, w] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S0[b, c, h, w] -> [(w)] }]"
// CHECK:         - filter: "{ S1[b, c, h, w, i, j] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        schedule: "[{ S1[b, c, h, w, i, j] -> [(w)] }, { S1[b, c, h, w, i, j] -> [(i)] }, { S1[b, c, h, w, i, j] -> [(i + j)] }]"

// Left alone: sharing m would take the matmul's only outer product (A varies
// along m, B along n), so the zeroing and the update each keep all their
// point loops.
func.func @matmul(%A: memref<512x512xf32>, %B: memref<512x512xf32>, %C: memref<512x512xf32>) {
  affine.for %m = 0 to 512 {
    affine.for %n = 0 to 512 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<512x512xf32>
    }
  }
  affine.for %m = 0 to 512 {
    affine.for %n = 0 to 512 {
      affine.for %k = 0 to 512 {
        %a = affine.load %A[%m, %k] : memref<512x512xf32>
        %b = affine.load %B[%k, %n] : memref<512x512xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<512x512xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<512x512xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: // schedule of @matmul:
// CHECK:         sequence:
// CHECK-NEXT:    - filter: "{ S0[m, n] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        mark: "parallel@{{[0-9]+}}"
// CHECK-NEXT:        child:
// CHECK-NEXT:          schedule: "[{ S0[m, n] -> [(m)] }]"
// CHECK:         - filter: "{ S1[m, n, k] : {{.*}} }"
// CHECK-NEXT:      child:
// CHECK-NEXT:        mark: "parallel@{{[0-9]+}}"
// CHECK-NEXT:        child:
// CHECK-NEXT:          schedule: "[{ S1[m, n, k] -> [(m)] }]"
