// RUN: tc-opt %s -p 'register-tile{vector-width=16 pack=never}' | filecheck %s
// RUN: tc-opt %s -p 'register-tile{vector-width=8 pack=never}' | filecheck %s --check-prefix=YMM

// Columns that fit one vector (NV = 1) with 16 lanes: 16 rows a strip when 16
// divides the row extent (16 accumulators), the default 8 otherwise (24 rows
// would leave a strip of 8) and with 8 lanes (16 registers), where the
// columns are 2 vectors anyway.

func.func @rows32(%A: memref<32x8xf32>, %B: memref<8x16xf32>, %C: memref<32x16xf32>) {
  affine.for %m = 0 to 32 {
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 8 {
        %a = affine.load %A[%m, %k] : memref<32x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<32x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<32x16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rows32(
// CHECK:         affine.for %m = 0 to 32 step 16 {
// CHECK:           affine.for %k = 0 to 8 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-16:    math.fma
// CHECK-NOT:         math.fma
// CHECK:           }

func.func @rows24(%A: memref<24x8xf32>, %B: memref<8x16xf32>, %C: memref<24x16xf32>) {
  affine.for %m = 0 to 24 {
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 8 {
        %a = affine.load %A[%m, %k] : memref<24x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<24x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<24x16xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rows24(
// CHECK:         affine.for %m = 0 to 24 step 8 {
// CHECK:           affine.for %k = 0 to 8 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {

// YMM-LABEL: func.func @rows32(
// YMM:         affine.for %m = 0 to 30 step 6 {
// YMM-LABEL: func.func @rows24(
// YMM:         affine.for %m = 0 to 24 step 6 {
