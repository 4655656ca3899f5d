// RUN: tc-opt %s --split-input-file -p 'register-tile{vector-width=8}' | filecheck %s

// What register-tile leaves alone (the output is the input).

// A nest without a reduction loop (every band IV is in the target).
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT:   vector.
// CHECK:       %s = arith.addf %c, %a fastmath<reassoc> : f32
// CHECK-NEXT:  affine.store %s, %C[%m, %n] : memref<8x64xf32>
func.func @elementwise(%A: memref<8x64xf32>, %C: memref<8x64xf32>) {
  affine.for %m = 0 to 8 {
    affine.for %n = 0 to 64 {
      %a = affine.load %A[%m, %n] : memref<8x64xf32>
      %c = affine.load %C[%m, %n] : memref<8x64xf32>
      %s = arith.addf %c, %a fastmath<reassoc> : f32
      affine.store %s, %C[%m, %n] : memref<8x64xf32>
    }
  }
  func.return
}

// -----

// A target with stride 2 in its only output loop, and an operand that no
// loop walks with stride 1.
// CHECK-LABEL: func.func @strided_target
// CHECK-NOT:   vector.
// CHECK:       affine.store %s, %C[%m * 2] : memref<64xf32>
func.func @strided_target(%A: memref<64x32xf32>, %C: memref<64xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %k = 0 to 64 {
      %a = affine.load %A[%k, %m] : memref<64x32xf32>
      %c = affine.load %C[%m * 2] : memref<64xf32>
      %s = arith.addf %c, %a fastmath<reassoc> : f32
      affine.store %s, %C[%m * 2] : memref<64xf32>
    }
  }
  func.return
}

// -----

// The statement reads its target at another element.
// CHECK-LABEL: func.func @reads_target
// CHECK-NOT:   vector.
// CHECK:       %t = affine.load %C[%m, %k] : memref<64x64xf32>
func.func @reads_target(%A: memref<64x64xf32>, %C: memref<64x64xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%k, %n] : memref<64x64xf32>
        %t = affine.load %C[%m, %k] : memref<64x64xf32>
        %p = arith.mulf %a, %t : f32
        %c = affine.load %C[%m, %n] : memref<64x64xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x64xf32>
      }
    }
  }
  func.return
}

// -----

// Two statements in the nest.
// CHECK-LABEL: func.func @two_statements
// CHECK-NOT:   vector.
// CHECK:       affine.store %s, %C[%m, %n] : memref<64x64xf32>
// CHECK-NEXT:  affine.store %a, %D[%m, %n] : memref<64x64xf32>
func.func @two_statements(%A: memref<64x64xf32>, %C: memref<64x64xf32>, %D: memref<64x64xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%k, %n] : memref<64x64xf32>
        %c = affine.load %C[%m, %n] : memref<64x64xf32>
        %s = arith.addf %c, %a fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x64xf32>
        affine.store %a, %D[%m, %n] : memref<64x64xf32>
      }
    }
  }
  func.return
}

// -----

// A float reduction without `reassoc`, and one whose combining op is not a
// reduction kind (subtraction).
// CHECK-LABEL: func.func @strict
// CHECK-NOT:   vector.
// CHECK:       %s = arith.addf %c, %a : f32
// CHECK:       %r = arith.subf %d, %a_1 fastmath<reassoc> : f32
func.func @strict(%A: memref<64x64xf32>, %C: memref<64x64xf32>, %D: memref<64x64xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%k, %n] : memref<64x64xf32>
        %c = affine.load %C[%m, %n] : memref<64x64xf32>
        %s = arith.addf %c, %a : f32
        affine.store %s, %C[%m, %n] : memref<64x64xf32>
      }
    }
  }
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%k, %n] : memref<64x64xf32>
        %d = affine.load %D[%m, %n] : memref<64x64xf32>
        %r = arith.subf %d, %a fastmath<reassoc> : f32
        affine.store %r, %D[%m, %n] : memref<64x64xf32>
      }
    }
  }
  func.return
}

// -----

// Ops without vector forms in e (a comparison and a select).
// CHECK-LABEL: func.func @no_vector_form
// CHECK-NOT:   vector.
// CHECK:       %r = arith.select %lt, %a, %z : f32
func.func @no_vector_form(%A: memref<64x64xf32>, %C: memref<64x64xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 64 {
      affine.for %k = 0 to 64 {
        %a = affine.load %A[%k, %n] : memref<64x64xf32>
        %z = arith.constant 0.0 : f32
        %lt = arith.cmpf olt, %a, %z : f32
        %r = arith.select %lt, %a, %z : f32
        %c = affine.load %C[%m, %n] : memref<64x64xf32>
        %s = arith.addf %c, %r fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x64xf32>
      }
    }
  }
  func.return
}
