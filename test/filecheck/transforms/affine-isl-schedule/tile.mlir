// Tiling with per-member sizes (0 = not tiled), sizes that do not divide the
// extents, the intra-tile order (stride-1 innermost) and the printed tree.
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=32,0,16 print-schedule=true}' | filecheck %s
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=0}' | filecheck %s --check-prefix=UNTILED
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=3,5}' | filecheck %s --check-prefix=ROWSUM

// C(m, n) += A(m, k) * B(k, n) with the reduction innermost (stride-N in B).
func.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %K: index, %N: index) {
  affine.for %m = 0 to %M {
    affine.for %n = 0 to %N {
      affine.for %k = 0 to %K {
        %a = affine.load %A[%m, %k] : memref<?x?xf32>
        %b = affine.load %B[%k, %n] : memref<?x?xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<?x?xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<?x?xf32>
      }
    }
  }
  func.return
}

// CHECK:       // schedule of @matmul:
// CHECK:       //     mark: "parallel@0"
// CHECK:       //       schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(floor((m)/32))] }]"
// CHECK:       //         schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(floor((k)/16))] }]"
// The point band is marked too (it counts only when isl drops the tile loop).
// CHECK:       //           mark: "parallel@2"
// CHECK:       //             schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(m)] }]"
// CHECK:       //               schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(k)] }, { S0[m, n, k] -> [(n)] }]"
// CHECK-LABEL: func.func @matmul
// The tile loops: rows of 32 (parallel), then the reduction in steps of 16.
// CHECK:         "affine.parallel"(%M) <{{.*}}upperBoundsMap = affine_map<()[s0] -> ((((s0 + -1) floordiv 32) + 1))>
// CHECK-NEXT:    ^bb0(%c0: index):
// CHECK-NEXT:      affine.for %c1 = 0 to affine_map<()[s0] -> ((((s0 + -1) floordiv 16) + 1))>()[%K] {
// The point loops m, k, n (serial inside the parallel tile loop): partial
// tiles clipped with min.
// CHECK-NEXT:        affine.for %m = affine_map<(d0) -> ((d0 * 32))>(%c0) to min affine_map<(d0)[s0] -> (s0, ((d0 * 32) + 32))>(%c0)[%M] {
// CHECK-NEXT:          affine.for %k = affine_map<(d0) -> ((d0 * 16))>(%c1) to min affine_map<(d0)[s0] -> (s0, ((d0 * 16) + 16))>(%c1)[%K] {
// CHECK-NEXT:            affine.for %n = 0 to %N {
// CHECK-NEXT:              affine.load %A[%m, %k]
// CHECK-NEXT:              affine.load %B[%k, %n]
// CHECK:                   affine.store %{{.*}}, %C[%m, %n]

// Untiled: the single-statement nest is still reordered so that n is innermost.
// UNTILED-LABEL: func.func @matmul
// UNTILED:         ^bb0(%m: index):
// UNTILED-NEXT:      affine.for %k = 0 to %K {
// UNTILED-NEXT:        affine.for %n = 0 to %N {

// Row sums of a 3x23 array tiled 3x5: the row-tile loop runs once, so isl
// drops it; its parallel mark must not fall to the reduction-tile loop inside,
// and the point loop over rows runs in parallel instead.
// ROWSUM-LABEL: func.func @rowsum
// ROWSUM-NOT:     affine.parallel
// ROWSUM:         affine.for %c1 = 0 to 5 {
// ROWSUM-NEXT:      "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (3)>
// ROWSUM-NEXT:      ^bb0(%i: index):
// ROWSUM-NEXT:        affine.for %k = affine_map<(d0) -> ((d0 * 5))>(%c1) to min affine_map<(d0) -> (23, ((d0 * 5) + 5))>(%c1) {
// ROWSUM-NOT:     affine.parallel
// ROWSUM:         func.return
func.func @rowsum(%A: memref<3x23xf32>, %S: memref<3xf32>) {
  affine.for %i = 0 to 3 {
    affine.for %k = 0 to 23 {
      %a = affine.load %A[%i, %k] : memref<3x23xf32>
      %s = affine.load %S[%i] : memref<3xf32>
      %t = arith.addf %s, %a fastmath<reassoc> : f32
      affine.store %t, %S[%i] : memref<3xf32>
    }
  }
  func.return
}
