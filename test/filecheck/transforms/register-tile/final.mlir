// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=1}' | filecheck %s

// The MLP layer O = max(I W + B, 0), as the isl scheduler leaves it: O's
// initialisation, the reduction in two tiles (`kt`), then the bias and the
// ReLU as two pointwise passes over O. Both are folded into the kernels:
// in the last tile they add B and take the max before storing, and the two
// nests are gone (as is the initialisation: initial.mlir).

func.func @mlp(%I: memref<16x16xf32>, %W: memref<16x16xf32>, %B: memref<16xf32>, %O: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %O[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to 16 {
      affine.for %k = affine_map<(d0) -> (d0 * 8)>(%kt) to affine_map<(d0) -> (d0 * 8 + 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %I[%m, %k] : memref<16x16xf32>
          %b = affine.load %W[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %O[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %O[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %b = affine.load %B[%n] : memref<16xf32>
      %s = arith.addf %o, %b : f32
      affine.store %s, %O[%m, %n] : memref<16x16xf32>
    }
  }
  %zero = arith.constant 0.0 : f32
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %r = arith.maxnumf %o, %zero : f32
      affine.store %r, %O[%m, %n] : memref<16x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @mlp
// CHECK:         %{{.*}}, %{{.*}} = affine.for %k =
// CHECK:         }
// CHECK-NEXT:    %[[LAST:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[AT:.*]] = arith.cmpi eq, %kt, %[[LAST]] : index
// CHECK-NEXT:    %[[R0:.*]], %[[R1:.*]] = scf.if %[[AT]] -> (vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:      %[[B0:.*]] = vector.load %B[%n] : memref<16xf32>, vector<8xf32>
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %{{.*}}, %[[B0]] : vector<8xf32>
// CHECK-NEXT:      %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[Z0:.*]] = vector.broadcast %zero : f32 to vector<8xf32>
// CHECK-NEXT:      %[[M0:.*]] = arith.maxnumf %[[S0]], %[[Z0]] : vector<8xf32>
// CHECK:           scf.yield %[[M0]], %{{.*}} : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %{{.*}}, %{{.*}} : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    vector.store %[[R0]], %O[%m, %n] : memref<16x16xf32>, vector<8xf32>
// CHECK-NEXT:    vector.store %[[R1]], %O[%{{.*}}, %n] : memref<16x16xf32>, vector<8xf32>
// CHECK-NOT:     affine.load %O
// CHECK-NOT:     affine.store
// CHECK:         func.return

// Leave alone: the bias is added to half of the columns only, and what
// follows is not folded either (the updates must be consecutive).

func.func @partial(%I: memref<16x16xf32>, %W: memref<16x16xf32>, %B: memref<16xf32>, %O: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %O[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to 16 {
      affine.for %k = affine_map<(d0) -> (d0 * 8)>(%kt) to affine_map<(d0) -> (d0 * 8 + 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %I[%m, %k] : memref<16x16xf32>
          %b = affine.load %W[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %O[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %O[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 8 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %b = affine.load %B[%n] : memref<16xf32>
      %s = arith.addf %o, %b : f32
      affine.store %s, %O[%m, %n] : memref<16x16xf32>
    }
  }
  %zero = arith.constant 0.0 : f32
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %r = arith.maxnumf %o, %zero : f32
      affine.store %r, %O[%m, %n] : memref<16x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @partial
// CHECK-NOT:     arith.maxnumf
// CHECK:         vector.store
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.maxnumf %{{.*}}, %zero : f32
// CHECK:         func.return

// Leave alone: the update reads another element of O (its first column),
// which a later kernel may not have finished; and one that writes another
// array.

func.func @neighbour(%I: memref<16x16xf32>, %W: memref<16x16xf32>, %B: memref<16xf32>, %O: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %O[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to 16 {
      affine.for %k = affine_map<(d0) -> (d0 * 8)>(%kt) to affine_map<(d0) -> (d0 * 8 + 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %I[%m, %k] : memref<16x16xf32>
          %b = affine.load %W[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %O[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %O[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %f = affine.load %O[%m, 0] : memref<16x16xf32>
      %s = arith.addf %o, %f : f32
      affine.store %s, %O[%m, %n] : memref<16x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @neighbour
// CHECK:         vector.store
// CHECK:         affine.load %O[%{{.*}}, 0] : memref<16x16xf32>
// CHECK:         func.return

func.func @elsewhere(%I: memref<16x16xf32>, %W: memref<16x16xf32>, %B: memref<16xf32>, %O: memref<16x16xf32>) {
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %z = arith.constant 0.0 : f32
      affine.store %z, %O[%m, %n] : memref<16x16xf32>
    }
  }
  affine.for %kt = 0 to 2 {
    affine.for %m = 0 to 16 {
      affine.for %k = affine_map<(d0) -> (d0 * 8)>(%kt) to affine_map<(d0) -> (d0 * 8 + 8)>(%kt) {
        affine.for %n = 0 to 16 {
          %a = affine.load %I[%m, %k] : memref<16x16xf32>
          %b = affine.load %W[%k, %n] : memref<16x16xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %O[%m, %n] : memref<16x16xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %O[%m, %n] : memref<16x16xf32>
        }
      }
    }
  }
  affine.for %m = 0 to 16 {
    affine.for %n = 0 to 16 {
      %o = affine.load %O[%m, %n] : memref<16x16xf32>
      %b = affine.load %B[%n] : memref<16xf32>
      %s = arith.addf %o, %b : f32
      affine.store %s, %W[%m, %n] : memref<16x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @elsewhere
// CHECK:         vector.store
// CHECK:         affine.store %{{.*}}, %W[%{{.*}}, %{{.*}}] : memref<16x16xf32>
// CHECK:         func.return
