// RUN: tc-opt %s -p collapse-dims | filecheck %s

// A stencil: w + kw is a computed subscript, so w cannot merge with h (and
// X's last two dimensions are not walked whole).
func.func @stencil(%X: memref<4x10xf32>, %Y: memref<4x8xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (4, 8)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%h: index, %w: index):
    affine.for %kw = 0 to 3 {
      %x = affine.load %X[%h, %w + %kw] : memref<4x10xf32>
      %y = affine.load %Y[%h, %w] : memref<4x8xf32>
      %s = arith.addf %x, %y : f32
      affine.store %s, %Y[%h, %w] : memref<4x8xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}
// CHECK-LABEL: func.func @stencil(%X: memref<4x10xf32>, %Y: memref<4x8xf32>)
// CHECK:         ^bb0(%h: index, %w: index):

// einsum's batch and row loops a, b are whole and adjacent, but not the
// innermost dimension of X and O: left to the scheduler's batch tiling.
func.func @outer(%X: memref<2x3x5xf32>, %Y: memref<5x4xf32>, %O: memref<2x3x4xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0, 0)>, lowerBoundsGroups = dense<1> : tensor<3xi32>, upperBoundsMap = affine_map<() -> (2, 3, 4)>, upperBoundsGroups = dense<1> : tensor<3xi32>, steps = [1 : i64, 1 : i64, 1 : i64]}> ({
  ^bb0(%a: index, %b: index, %d: index):
    affine.for %r = 0 to 5 {
      %x = affine.load %X[%a, %b, %r] : memref<2x3x5xf32>
      %y = affine.load %Y[%r, %d] : memref<5x4xf32>
      %m = arith.mulf %x, %y : f32
      %o = affine.load %O[%a, %b, %d] : memref<2x3x4xf32>
      %s = arith.addf %o, %m : f32
      affine.store %s, %O[%a, %b, %d] : memref<2x3x4xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}
// CHECK-LABEL: func.func @outer(%X: memref<2x3x5xf32>, %Y: memref<5x4xf32>, %O: memref<2x3x4xf32>)
// CHECK:         ^bb0(%a: index, %b: index, %d: index):

// The loops run 0 to 4 and 0 to 8 but the memref's last extent is dynamic
// (its rows may be longer than 8): left alone.
func.func @dynamic(%X: memref<4x?xf32>, %Y: memref<4x8xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%i, %j] : memref<4x?xf32>
      affine.store %x, %Y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @dynamic(%X: memref<4x?xf32>, %Y: memref<4x8xf32>)
// CHECK-NEXT:    affine.for %i = 0 to 4 {
// CHECK-NEXT:      affine.for %j = 0 to 8 {

// A sequential nest that walks X column by column: merging would reorder
// the iterations, so the affine.for pair is left alone.
func.func @transposed(%X: memref<8x4xf32>, %Y: memref<8x4xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%j, %i] : memref<8x4xf32>
      affine.store %x, %Y[%j, %i] : memref<8x4xf32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @transposed(%X: memref<8x4xf32>, %Y: memref<8x4xf32>)
// CHECK-NEXT:    affine.for %i = 0 to 4 {
// CHECK-NEXT:      affine.for %j = 0 to 8 {

// X also has a use that is not an affine access, so X's nest stays (and Y,
// which shares its loops, with it); in Z's nest j is used in arithmetic.
func.func @other_uses(%X: memref<4x8xf32>, %Y: memref<4x8xf32>, %Z: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %X[%c0, %c0] : memref<4x8xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%i, %j] : memref<4x8xf32>
      affine.store %x, %Y[%i, %j] : memref<4x8xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %k = arith.index_cast %j : index to i64
      %f = arith.sitofp %k : i64 to f32
      affine.store %f, %Z[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @other_uses(%X: memref<4x8xf32>, %Y: memref<4x8xf32>, %Z: memref<4x8xf32>)
// CHECK:         affine.for %i = 0 to 4 {
// CHECK-NEXT:      affine.for %j = 0 to 8 {
// CHECK:         affine.for %i_1 = 0 to 4 {
// CHECK-NEXT:      affine.for %j_1 = 0 to 8 {

// X is walked whole in one nest but shifted in another: X's dimensions stay,
// so neither nest collapses.
func.func @shared(%X: memref<4x9xf32>, %Y: memref<4x9xf32>, %Z: memref<4x8xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 9 {
      %x = affine.load %X[%i, %j] : memref<4x9xf32>
      affine.store %x, %Y[%i, %j] : memref<4x9xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%i, %j + 1] : memref<4x9xf32>
      affine.store %x, %Z[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
// CHECK-LABEL: func.func @shared(%X: memref<4x9xf32>, %Y: memref<4x9xf32>, %Z: memref<4x8xf32>)
// CHECK-NEXT:    affine.for %i = 0 to 4 {
// CHECK-NEXT:      affine.for %j = 0 to 9 {
