// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 pack=never pair-tails=false}' | filecheck %s

// (pair-tails=false: pair-tails.mlir shows the masked vectors of the two
// rows packed into one.)

// 12 columns, fewer than the default 2 vectors of 8: the kernel still keeps
// 2 vectors per row, the second masked to 4 lanes (one strip of 2 x 2
// accumulators instead of a 2 x 1 strip and a masked 2 x 1 strip).

func.func @mm(%A: memref<6x32xf32>, %B: memref<32x12xf32>, %C: memref<6x12xf32>) {
  affine.for %m = 0 to 6 {
    affine.for %n = 0 to 12 {
      affine.for %k = 0 to 32 {
        %a = affine.load %A[%m, %k] : memref<6x32xf32>
        %b = affine.load %B[%k, %n] : memref<32x12xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<6x12xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<6x12xf32>
      }
    }
  }
  func.return
}

// CHECK:      affine.for %m = 0 to 6 step 2 {
// CHECK-NEXT:   affine.for %n = 0 to 12 step 16 {
// CHECK-NEXT:     %[[N:.*]] = affine.apply affine_map<()[s0] -> (((s0 * -1) + 4))> ()[%n]
// CHECK-NEXT:     %[[MASK:.*]] = vector.create_mask %[[N]] : vector<8xi1>
// CHECK:          affine.for %k = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:            vector.load %B[%k, %n] : memref<32x12xf32>, vector<8xf32>
// CHECK:            vector.maskedload %B[%k, %{{.*}}], %[[MASK]], %{{.*}} : memref<32x12xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:          vector.store %{{.*}}, %C[%m, %n] : memref<6x12xf32>, vector<8xf32>
// CHECK-NEXT:     vector.maskedstore %C[%m, %{{.*}}], %[[MASK]], %{{.*}} : memref<6x12xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:  affine.for %n
// CHECK:      func.return
