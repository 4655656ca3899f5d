// Automatic tile sizes: the parallel member (m, 1000 rows) is cut into a
// multiple of `threads` tiles of equal size (a multiple of 8, at most ~512),
// the reduction into 256, and the innermost parallel member (n, the output's
// unit-stride dimension) stays whole. Parametric extents keep 192-row tiles.
// RUN: tc-opt %s -p 'affine-isl-schedule{print-schedule=true}' | filecheck %s --check-prefix=ONE
// RUN: tc-opt %s -p 'affine-isl-schedule{threads=2 print-schedule=true}' | filecheck %s --check-prefix=TWO
// RUN: tc-opt %s -p 'affine-isl-schedule{threads=3 print-schedule=true}' | filecheck %s --check-prefix=THREE

func.func @matmul(%A: memref<1000x300xf32>, %B: memref<300x100xf32>, %C: memref<1000x100xf32>) {
  affine.for %m = 0 to 1000 {
    affine.for %n = 0 to 100 {
      affine.for %k = 0 to 300 {
        %a = affine.load %A[%m, %k] : memref<1000x300xf32>
        %b = affine.load %B[%k, %n] : memref<300x100xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<1000x100xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<1000x100xf32>
      }
    }
  }
  func.return
}

func.func @generic(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %K: index, %N: index) {
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

// One thread: 1000 rows in two tiles of 504 and 496.
// ONE:       // schedule of @matmul:
// ONE:       schedule: "[{ S0[m, n, k] -> [(floor((m)/504))] }]"
// ONE-NOT:   floor((n)/
// ONE:       schedule: "[{ S0[m, n, k] -> [(floor((k)/256))] }]"
// ONE:       // schedule of @generic:
// ONE:       schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(floor((m)/192))] }]"
// ONE-NOT:   floor((n)/
// ONE:       schedule: "[M, K, N] -> [{ S0[m, n, k] -> [(floor((k)/256))] }]"

// Two threads: still two tiles, one each.
// TWO:       // schedule of @matmul:
// TWO:       schedule: "[{ S0[m, n, k] -> [(floor((m)/504))] }]"

// Three threads: three tiles of 336, 336 and 328.
// THREE:     // schedule of @matmul:
// THREE:     schedule: "[{ S0[m, n, k] -> [(floor((m)/336))] }]"
// THREE:     affine.parallel
