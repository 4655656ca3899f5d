// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=1}' | filecheck %s

// C(m, n) +=! A(m, r_k) * B(r_k, n) with the reduction split into two tiles
// (the isl scheduler's `kt`): the nest that zeroes C is folded into the
// kernels. In the first tile they start from the zero instead of loading C;
// the nest is gone.

func.func @tiles(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to 16 {
      affine.for %k = affine_map<(d0) -> (d0 * 8)>(%kt) to affine_map<(d0) -> (d0 * 8 + 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %A[%m, %k] : memref<16x16xf32>
          %b = affine.load %B[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %C[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %C[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @tiles
// CHECK-NEXT:    affine.for %kt = 0 to 2 {
// CHECK-NEXT:      affine.for %m = 0 to 16 step 2 {
// CHECK-NEXT:        affine.for %n = 0 to 16 step 8 {
// CHECK-NEXT:          %[[M1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%m]
// CHECK-NEXT:          %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:          %[[Z:.*]] = vector.broadcast %z : f32 to vector<8xf32>
// CHECK-NEXT:          %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:          %[[FIRST:.*]] = arith.cmpi eq, %kt, %[[LB]] : index
// CHECK-NEXT:          %[[A0:.*]], %[[A1:.*]] = scf.if %[[FIRST]] -> (vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:            scf.yield %[[Z]], %[[Z]] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:          } else {
// CHECK-NEXT:            %[[C0:.*]] = vector.load %C[%m, %n] : memref<16x16xf32>, vector<8xf32>
// CHECK-NEXT:            %[[C1:.*]] = vector.load %C[%[[M1]], %n] : memref<16x16xf32>, vector<8xf32>
// CHECK-NEXT:            scf.yield %[[C0]], %[[C1]] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:          %{{.*}}, %{{.*}} = affine.for %k = {{.*}} iter_args(%{{.*}} = %[[A0]], %{{.*}} = %[[A1]])
// CHECK:               vector.store %{{.*}}, %C[%m, %n]
// CHECK-NEXT:          vector.store %{{.*}}, %C[%[[M1]], %n]
// CHECK-NOT:     affine.store
// CHECK:         func.return

// Without tile loops (the initialisation right before the band, both in an
// outer `b` loop, as in a batched matmul), and with a value defined before
// the nest: the kernels start from it and never load T.

func.func @untiled(%X: memref<4x8x8xf32>, %Y: memref<4x8x8xf32>, %Z: memref<4x8x8xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %b = 0 to 4 {
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 8 {
        affine.store %one, %Z[%b, %i, %j] : memref<4x8x8xf32>
      }
    }
    affine.for %i = 0 to 8 {
      affine.for %k = 0 to 8 {
        affine.for %j = 0 to 8 {
          %x = affine.load %X[%b, %i, %k] : memref<4x8x8xf32>
          %y = affine.load %Y[%b, %k, %j] : memref<4x8x8xf32>
          %p = arith.mulf %x, %y : f32
          %z = affine.load %Z[%b, %i, %j] : memref<4x8x8xf32>
          %s = arith.addf %z, %p fastmath<reassoc> : f32
          affine.store %s, %Z[%b, %i, %j] : memref<4x8x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @untiled
// CHECK-NEXT:    %one = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    affine.for %b = 0 to 4 {
// CHECK-NOT:       affine.store
// CHECK-NOT:       vector.load %Z
// CHECK:           %[[ONE:.*]] = vector.broadcast %one : f32 to vector<8xf32>
// CHECK:           %{{.*}}, %{{.*}} = affine.for %k = 0 to 8 iter_args(%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK-NOT:       vector.load %Z
// CHECK:           vector.store %{{.*}}, %Z[%b, %i, %j]
// CHECK:         func.return

// Leave alone: the nest zeroes 16 columns, the band updates 8 of them.

func.func @wider(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %n = 0 to 8 {
        %a = affine.load %A[%m, %k] : memref<16x16xf32>
        %b = affine.load %B[%k, %n] : memref<16x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<16x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<16x16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @wider
// CHECK:         affine.store %z, %C[%m, %n] : memref<16x16xf32>
// CHECK:         vector.load %C[%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<8xf32>
// CHECK:         func.return

// The first tile (`kt` = 0) runs no reduction step, but its kernels still
// load and store every element of C: they store the zeroes.

func.func @late(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 3 {
    affine.for %m = 0 to 16 {
      affine.for %k = max affine_map<(d0) -> (0, d0 * 8 - 8)>(%kt) to affine_map<(d0) -> (d0 * 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %A[%m, %k] : memref<16x16xf32>
          %b = affine.load %B[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %C[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %C[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @late
// CHECK-NEXT:    affine.for %kt = 0 to 3 {
// CHECK-NOT:       affine.store
// CHECK:           arith.cmpi eq, %kt, %{{.*}} : index
// CHECK-NEXT:      scf.if
// CHECK:         func.return

// Leave alone: the first tile (`kt` = 0) has no rows (m < 16 kt), so it
// writes nothing and the zeroes would be lost.

func.func @empty_first(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to min affine_map<(d0) -> (d0 * 16, 16)>(%kt) {
      affine.for %k = 0 to 16 {
        affine.for %n = 0 to 16 {
          %a = affine.load %A[%m, %k] : memref<16x16xf32>
          %b = affine.load %B[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %C[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %C[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @empty_first
// CHECK:         affine.store %z, %C[%m, %n] : memref<16x16xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.load %C[%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<8xf32>
// CHECK:         func.return

// Leave alone: something between the initialisation and the band (a store
// to another array), and an initial value read from memory (also not an
// update to fold into the first band: D is read across the vectors).

func.func @apart(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>, %D: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %C[%m, %n] : memref<16x16xf32>
    }
  }
  %w = arith.constant 2.0 : f32
  affine.store %w, %D[0, 0] : memref<16x16xf32>
  affine.for %m = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %n = 0 to 16 {
        %a = affine.load %A[%m, %k] : memref<16x16xf32>
        %b = affine.load %B[%k, %n] : memref<16x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<16x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<16x16xf32>
      }
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %d = affine.load %D[%n, %m] : memref<16x16xf32>
      affine.store %d, %C[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %n = 0 to 16 {
        %a = affine.load %A[%m, %k] : memref<16x16xf32>
        %b = affine.load %B[%k, %n] : memref<16x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<16x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<16x16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @apart
// CHECK:         affine.store %z, %C[%m, %n] : memref<16x16xf32>
// CHECK:         affine.store %w, %D[0, 0] : memref<16x16xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.load %C
// CHECK:         %d = affine.load %D[%{{.*}}, %{{.*}}] : memref<16x16xf32>
// CHECK-NEXT:    affine.store %d, %C[%{{.*}}, %{{.*}}] : memref<16x16xf32>
// CHECK-NOT:     scf.if
// CHECK:         vector.load %C
// CHECK:         func.return

// A buffer that `contract-temporaries` made local to a loop body (a
// `memref.alloca`, kronecker's XW2 per `m`): its zeroing nest is folded too.
// The buffer is fresh at every `m`, so only this body's nest can cover it.

func.func @local(%X: memref<4x8x8xf32>, %W: memref<8x8xf32>, %O: memref<4x8xf32>) {
  affine.for %m = 0 to 4 {
    %T = memref.alloca() : memref<8x8xf32>
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 8 {
        %z = arith.constant 0.0 : f32
        affine.store %z, %T[%i, %j] : memref<8x8xf32>
      }
    }
    affine.for %i = 0 to 8 {
      affine.for %k = 0 to 8 {
        affine.for %j = 0 to 8 {
          %x = affine.load %X[%m, %i, %k] : memref<4x8x8xf32>
          %w = affine.load %W[%k, %j] : memref<8x8xf32>
          %p = arith.mulf %x, %w : f32
          %t = affine.load %T[%i, %j] : memref<8x8xf32>
          %s = arith.addf %t, %p fastmath<reassoc> : f32
          affine.store %s, %T[%i, %j] : memref<8x8xf32>
        }
      }
    }
    affine.for %i = 0 to 8 {
      %t = affine.load %T[%i, 0] : memref<8x8xf32>
      affine.store %t, %O[%m, %i] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @local
// CHECK-NEXT:    affine.for %m = 0 to 4 {
// CHECK-NEXT:      %T = memref.alloca() : memref<8x8xf32>
// CHECK-NEXT:      affine.for %i = 0 to 8 step 2 {
// CHECK:             %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[Z:.*]] = vector.broadcast %z : f32 to vector<8xf32>
// CHECK-NOT:         vector.load %T
// CHECK:             affine.for %k = 0 to 8 iter_args(%{{.*}} = %[[Z]], %{{.*}} = %[[Z]])
// CHECK:             vector.store %{{.*}}, %T[%i, %j]
// CHECK-NOT:     affine.store %z
// CHECK:         func.return
