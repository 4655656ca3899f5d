// RUN: tc-opt %s -p collapse-dims | filecheck %s

// tensordot: h and w index the last two dimensions of every array, whole and
// in that order, so they become one dimension of 12 (the arguments too: the
// bytes are the same). The reduction loop between stays.
func.func @tensordot(%I0: memref<2x5x3x4xf32>, %I1: memref<5x2x3x4xf32>, %O: memref<2x2x3x4xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0, 0, 0)>, lowerBoundsGroups = dense<1> : tensor<4xi32>, upperBoundsMap = affine_map<() -> (2, 2, 3, 4)>, upperBoundsGroups = dense<1> : tensor<4xi32>, steps = [1 : i64, 1 : i64, 1 : i64, 1 : i64]}> ({
  ^bb0(%c1: index, %c3: index, %h: index, %w: index):
    affine.for %r = 0 to 5 {
      %a = affine.load %I0[%c1, %r, %h, %w] : memref<2x5x3x4xf32>
      %b = affine.load %I1[%r, %c3, %h, %w] : memref<5x2x3x4xf32>
      %m = arith.mulf %a, %b : f32
      %o = affine.load %O[%c1, %c3, %h, %w] : memref<2x2x3x4xf32>
      %s = arith.addf %o, %m : f32
      affine.store %s, %O[%c1, %c3, %h, %w] : memref<2x2x3x4xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @tensordot(%I0: memref<2x5x12xf32>, %I1: memref<5x2x12xf32>, %O: memref<2x2x12xf32>)
// CHECK:         upperBoundsMap = affine_map<() -> (2, 2, 12)>, upperBoundsGroups = dense<1> : tensor<3xi32>, steps = [1 : i64, 1 : i64, 1 : i64]
// CHECK-NEXT:    ^bb0(%c1: index, %c3: index, %h_w: index):
// CHECK-NEXT:      affine.for %r = 0 to 5 {
// CHECK-NEXT:        %a = affine.load %I0[%c1, %r, %h_w] : memref<2x5x12xf32>
// CHECK-NEXT:        %b = affine.load %I1[%r, %c3, %h_w] : memref<5x2x12xf32>
// CHECK:             %o = affine.load %O[%c1, %c3, %h_w] : memref<2x2x12xf32>
// CHECK:             affine.store %s, %O[%c1, %c3, %h_w] : memref<2x2x12xf32>

// Two perfectly nested affine.for loops walking rows then columns become one
// loop over 32 elements, in the same order.
func.func @fors(%X: memref<4x8xf32>, %Y: memref<4x8xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%i, %j] : memref<4x8xf32>
      affine.store %x, %Y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @fors(%X: memref<32xf32>, %Y: memref<32xf32>)
// CHECK-NEXT:    affine.for %i_j = 0 to 32 {
// CHECK-NEXT:      %x = affine.load %X[%i_j] : memref<32xf32>
// CHECK-NEXT:      affine.store %x, %Y[%i_j] : memref<32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Walked whole everywhere, an elementwise op over (n, c, h, w) becomes one
// loop of 120 (the pass repeats: h, w; then c and h_w; then n), and the
// temporary between the two nests shrinks to one dimension with it.
func.func @chain(%X: memref<2x3x4x5xf32>, %Y: memref<2x3x4x5xf32>) {
  %t = memref.alloc() : memref<2x3x4x5xf32>
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0, 0, 0)>, lowerBoundsGroups = dense<1> : tensor<4xi32>, upperBoundsMap = affine_map<() -> (2, 3, 4, 5)>, upperBoundsGroups = dense<1> : tensor<4xi32>, steps = [1 : i64, 1 : i64, 1 : i64, 1 : i64]}> ({
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    %x = affine.load %X[%n, %c, %h, %w] : memref<2x3x4x5xf32>
    %e = math.exp %x : f32
    affine.store %e, %t[%n, %c, %h, %w] : memref<2x3x4x5xf32>
    affine.yield
  }) : () -> ()
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0, 0, 0)>, lowerBoundsGroups = dense<1> : tensor<4xi32>, upperBoundsMap = affine_map<() -> (2, 3, 4, 5)>, upperBoundsGroups = dense<1> : tensor<4xi32>, steps = [1 : i64, 1 : i64, 1 : i64, 1 : i64]}> ({
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    %y = affine.load %t[%n, %c, %h, %w] : memref<2x3x4x5xf32>
    affine.store %y, %Y[%n, %c, %h, %w] : memref<2x3x4x5xf32>
    affine.yield
  }) : () -> ()
  memref.dealloc %t : memref<2x3x4x5xf32>
  func.return
}

// CHECK-LABEL: func.func @chain(%X: memref<120xf32>, %Y: memref<120xf32>)
// CHECK-NEXT:    %t = memref.alloc() : memref<120xf32>
// CHECK-NEXT:    "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (120)>
// CHECK-NEXT:    ^bb0(%n_c_h_w: index):
// CHECK-NEXT:      %x = affine.load %X[%n_c_h_w] : memref<120xf32>
// CHECK:           affine.store %e, %t[%n_c_h_w] : memref<120xf32>
// CHECK:         ^bb0(%n_c_h_w_1: index):
// CHECK-NEXT:      %y = affine.load %t[%n_c_h_w_1] : memref<120xf32>
// CHECK-NEXT:      affine.store %y, %Y[%n_c_h_w_1] : memref<120xf32>
// CHECK:         memref.dealloc %t : memref<120xf32>

// A stack temporary (memref.alloca) is retyped the same way.
func.func @stack(%X: memref<4x8xf32>, %Y: memref<4x8xf32>) {
  %t = memref.alloca() : memref<4x8xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %x = affine.load %X[%i, %j] : memref<4x8xf32>
      affine.store %x, %t[%i, %j] : memref<4x8xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 8 {
      %y = affine.load %t[%i, %j] : memref<4x8xf32>
      affine.store %y, %Y[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @stack(%X: memref<32xf32>, %Y: memref<32xf32>)
// CHECK-NEXT:    %t = memref.alloca() : memref<32xf32>
// CHECK-NEXT:    affine.for %i_j = 0 to 32 {
// CHECK-NEXT:      %x = affine.load %X[%i_j] : memref<32xf32>
// CHECK-NEXT:      affine.store %x, %t[%i_j] : memref<32xf32>
// CHECK:         affine.for %i_j_1 = 0 to 32 {
// CHECK-NEXT:      %y = affine.load %t[%i_j_1] : memref<32xf32>
// CHECK-NEXT:      affine.store %y, %Y[%i_j_1] : memref<32xf32>

// The dimensions of an affine.parallel have no order: j (the major
// subscript) and i merge although i comes first.
func.func @parallel_order(%X: memref<8x4xf32>, %Y: memref<8x4xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (4, 8)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%i: index, %j: index):
    %x = affine.load %X[%j, %i] : memref<8x4xf32>
    affine.store %x, %Y[%j, %i] : memref<8x4xf32>
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @parallel_order(%X: memref<32xf32>, %Y: memref<32xf32>)
// CHECK-NEXT:    "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (32)>
// CHECK-NEXT:    ^bb0(%j_i: index):
// CHECK-NEXT:      %x = affine.load %X[%j_i] : memref<32xf32>
