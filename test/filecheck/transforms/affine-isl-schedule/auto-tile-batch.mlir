// Automatic tile sizes of an outermost batch member. Where every array
// varies along it (no element is touched at two of its values) and it has
// at least 8 values per thread, each tile is one batch, so the parallel loop
// hands the runtime's threads many small chunks (@batched). Fewer batches
// (@few_batches) and a batch member along which an operand is reused
// (@shared_operand: Y) keep one tile per thread.
// RUN: tc-opt %s -p 'affine-isl-schedule{threads=2 print-schedule=true}' | filecheck %s
// RUN: tc-opt %s -p 'affine-isl-schedule{threads=2}' | filecheck %s --check-prefix=CODE

func.func @batched(%X: memref<64x8x16xf32>, %Y: memref<64x16x8xf32>, %Z: memref<64x8x8xf32>) {
  affine.for %b = 0 to 64 {
    affine.for %n = 0 to 8 {
      affine.for %k = 0 to 8 {
        affine.for %m = 0 to 16 {
          %x = affine.load %X[%b, %n, %m] : memref<64x8x16xf32>
          %y = affine.load %Y[%b, %m, %k] : memref<64x16x8xf32>
          %p = arith.mulf %x, %y : f32
          %z = affine.load %Z[%b, %n, %k] : memref<64x8x8xf32>
          %s = arith.addf %z, %p fastmath<reassoc> : f32
          affine.store %s, %Z[%b, %n, %k] : memref<64x8x8xf32>
        }
      }
    }
  }
  func.return
}

func.func @few_batches(%X: memref<4x8x16xf32>, %Y: memref<4x16x8xf32>, %Z: memref<4x8x8xf32>) {
  affine.for %b = 0 to 4 {
    affine.for %n = 0 to 8 {
      affine.for %k = 0 to 8 {
        affine.for %m = 0 to 16 {
          %x = affine.load %X[%b, %n, %m] : memref<4x8x16xf32>
          %y = affine.load %Y[%b, %m, %k] : memref<4x16x8xf32>
          %p = arith.mulf %x, %y : f32
          %z = affine.load %Z[%b, %n, %k] : memref<4x8x8xf32>
          %s = arith.addf %z, %p fastmath<reassoc> : f32
          affine.store %s, %Z[%b, %n, %k] : memref<4x8x8xf32>
        }
      }
    }
  }
  func.return
}

func.func @shared_operand(%X: memref<64x8x16xf32>, %Y: memref<16x8xf32>, %Z: memref<64x8x8xf32>) {
  affine.for %b = 0 to 64 {
    affine.for %n = 0 to 8 {
      affine.for %k = 0 to 8 {
        affine.for %m = 0 to 16 {
          %x = affine.load %X[%b, %n, %m] : memref<64x8x16xf32>
          %y = affine.load %Y[%m, %k] : memref<16x8xf32>
          %p = arith.mulf %x, %y : f32
          %z = affine.load %Z[%b, %n, %k] : memref<64x8x8xf32>
          %s = arith.addf %z, %p fastmath<reassoc> : f32
          affine.store %s, %Z[%b, %n, %k] : memref<64x8x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK:       // schedule of @batched:
// CHECK:       mark: "parallel@0"
// CHECK-NEXT:  child:
// CHECK-NEXT:  schedule: "[{ S0[b, n, k, m] -> [(b)] }]"
// CHECK-NOT:   floor((b)/
// CHECK:       // schedule of @few_batches:
// CHECK:       schedule: "[{ S0[b, n, k, m] -> [(floor((b)/2))] }]"
// CHECK:       // schedule of @shared_operand:
// CHECK:       schedule: "[{ S0[b, n, k, m] -> [(floor((b)/32))] }]"

// The batched nest runs its 64 batches as the parallel loop.
// CODE-LABEL: func.func @batched
// CODE:       "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (64)>
// CODE-NEXT:  ^bb0(%b: index):
// CODE-NEXT:    affine.for %n = 0 to 8 {
// CODE-LABEL: func.func @few_batches
// CODE:       "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (2)>
