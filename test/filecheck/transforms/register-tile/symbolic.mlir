// RUN: tc-opt %s -p 'register-tile{vector-width=4 rows=2 vectors=1 pack=never}' | filecheck %s

// Symbolic sizes inside a tile loop (as the isl scheduler writes them): the
// band is the point loops m, k, n; the tile loop %t, which m's bounds use,
// stays outside. Bounds with several results become arith.minsi/maxsi, the
// upper bounds are clamped to the lower ones, and the strips end at
// `lb + ((ub - lb) floordiv step) * step`; remainder columns run masked,
// remainder rows one at a time. The loops stay affine.for, like the input's.

func.func @tiled(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %K: index, %N: index) {
  affine.for %t = 0 to %M step 32 {
    affine.for %m = %t to min affine_map<(d0)[s0] -> (d0 + 32, s0)>(%t)[%M] {
      affine.for %k = 0 to %K {
        affine.for %n = max affine_map<()[s0] -> (0, s0 - 100)>()[%N] to %N {
          %a = affine.load %A[%m, %k] : memref<?x?xf32>
          %b = affine.load %B[%k, %n] : memref<?x?xf32>
          %p = arith.mulf %a, %b : f32
          %c = affine.load %C[%m, %n] : memref<?x?xf32>
          %s = arith.addf %c, %p fastmath<reassoc> : f32
          affine.store %s, %C[%m, %n] : memref<?x?xf32>
        }
      }
    }
  }
  func.return
}

// CHECK:      affine.for %t = 0 to %M step 32 {
// CHECK-NEXT:   %0 = affine.apply affine_map<()[s0] -> ((s0 + 32))> ()[%t]
// CHECK-NEXT:   %1 = arith.minsi %0, %M : index
// CHECK-NEXT:   %2 = arith.maxsi %1, %t : index
// CHECK-NEXT:   %3 = affine.apply affine_map<()[s0, s1] -> ((s0 + (((s1 + (s0 * -1)) floordiv 2) * 2)))> ()[%t, %2]
// CHECK-NEXT:   %4 = affine.apply affine_map<()[s0] -> ((s0 + -100))> ()[%N]
// CHECK-NEXT:   %5 = arith.constant 0 : index
// CHECK-NEXT:   %6 = arith.maxsi %5, %4 : index
// CHECK-NEXT:   %7 = arith.maxsi %N, %6 : index
// CHECK-NEXT:   %8 = affine.apply affine_map<()[s0, s1] -> ((s0 + (((s1 + (s0 * -1)) floordiv 4) * 4)))> ()[%6, %7]
// CHECK-NEXT:   affine.for %m = %t to %3 step 2 {
// CHECK-NEXT:     affine.for %n = %6 to %8 step 4 {
// CHECK-NEXT:       %9 = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%m]
// CHECK-NEXT:       %10 = vector.load %C[%m, %n] : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT:       %11 = vector.load %C[%9, %n] : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT:       %12, %13 = affine.for %k = 0 to %K iter_args(%14 = %10, %15 = %11) -> (vector<4xf32>, vector<4xf32>) {
// CHECK:            vector.store %13, %C[%9, %n] : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     affine.for %n_1 = %8 to %7 step 4 {
// CHECK-NEXT:       %23 = affine.apply affine_map<()[s0, s1] -> ((s1 + (s0 * -1)))> ()[%n_1, %7]
// CHECK-NEXT:       %24 = vector.create_mask %23 : vector<4xi1>
// CHECK:            vector.maskedstore %C[%25, %n_1], %24, %30 : memref<?x?xf32>, vector<4xi1>, vector<4xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   affine.for %m_1 = %3 to %2 {
// CHECK-NEXT:     affine.for %n_2 = %6 to %8 step 4 {
// CHECK:          affine.for %n_3 = %8 to %7 step 4 {
// CHECK:            vector.maskedstore %C[%m_1, %n_3]
