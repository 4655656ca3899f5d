// Reduction loops over a window of at most 4 values (pooling, convolution)
// go innermost in each statement's own loop order, after the unit-stride
// loop: LLVM unrolls them, the accumulator stays in a register, and the loop
// over the output columns is innermost once they are gone (the strided loads
// become interleaved vector loads). Longer reductions stay where they were.
// RUN: tc-opt %s -p 'affine-isl-schedule{print-schedule=true}' | filecheck %s

// O(h, w) max=! I(2h + r_i, 2w + r_j) where r_i, r_j in 0:2
func.func @maxpool(%I: memref<64x64xf32>, %O: memref<32x32xf32>) {
  affine.for %h = 0 to 32 {
    affine.for %w = 0 to 32 {
      affine.for %ri = 0 to 2 {
        affine.for %rj = 0 to 2 {
          %x = affine.load %I[2 * %h + %ri, 2 * %w + %rj] : memref<64x64xf32>
          %o = affine.load %O[%h, %w] : memref<32x32xf32>
          %m = arith.maximumf %o, %x fastmath<reassoc> : f32
          affine.store %m, %O[%h, %w] : memref<32x32xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: // schedule of @maxpool:
// CHECK:         schedule: "[{ S0[h, w, ri, rj] -> [(w)] }, { S0[h, w, ri, rj] -> [(ri)] }, { S0[h, w, ri, rj] -> [(ri + rj)] }]"
// CHECK:       func.func @maxpool
// CHECK:         ^bb0(%h: index):
// CHECK-NEXT:      affine.for %w = 0 to 32 {
// CHECK-NEXT:        affine.for %ri = 0 to 2 {
// CHECK-NEXT:          affine.for %{{.*}} = {{.*}}(%ri) to {{.*}}(%ri) {
// CHECK:                 affine.load %O[%h, %w]

// A column sum over 8 rows: not a window, the unit-stride loop over the
// columns stays innermost.
func.func @colsum(%A: memref<8x64xf32>, %S: memref<64xf32>) {
  affine.for %k = 0 to 8 {
    affine.for %j = 0 to 64 {
      %a = affine.load %A[%k, %j] : memref<8x64xf32>
      %s = affine.load %S[%j] : memref<64xf32>
      %t = arith.addf %s, %a fastmath<reassoc> : f32
      affine.store %t, %S[%j] : memref<64xf32>
    }
  }
  func.return
}

// CHECK:       func.func @colsum
// CHECK:         affine.for %k = 0 to 8 {
// CHECK-NEXT:      affine.for %j = 0 to 64 {
