// RUN: tc-opt %s -p convert-tc-to-affine | filecheck %s

// Only tc.defs are replaced; other ops of the module stay as they are, and an
// existing declaration of a C function is reused. tc.size in a body becomes
// the size argument; tc.def-level arith ops are kept at the function start.

func.func private @hypotf(f32, f32) -> f32

func.func @keep(%x: index) -> index {
  %c = arith.constant 3 : index
  %y = arith.addi %x, %c : index
  func.return %y : index
}

tc.def @sized<N>(X) -> (Y) {
^bb0(%X: !tc.tensor<[N], f32>):
  %two = arith.constant 2.0 : f32
  %Y = tc.comprehension @Y(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %x = tc.read %X[%i] : !tc.tensor<[N], f32>
    %n = tc.size "N"
    %ni = arith.index_cast %n : index to i32
    %nf = arith.sitofp %ni : i32 to f32
    %h = tc.builtin "hypot"(%x, %nf) : (f32, f32) -> f32
    %r = arith.mulf %h, %two : f32
    tc.yield %r : f32
  }
  tc.return %Y : !tc.tensor<[N], f32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func private @hypotf(f32, f32) -> f32
// CHECK-NEXT:   func.func @keep(%x: index) -> index {
// CHECK-NEXT:     %c = arith.constant 3 : index
// CHECK-NEXT:     %y = arith.addi %x, %c : index
// CHECK-NEXT:     func.return %y : index
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @sized(%X: memref<?xf32>, %Y: memref<?xf32>, %N: index) attributes {tc.inputs = ["X"], tc.outputs = ["Y"], tc.sizes = ["N"]} {
// CHECK-NEXT:     %two = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:     "affine.parallel"(%N)
// CHECK-NEXT:     ^bb0(%i: index):
// CHECK-NEXT:       %x = affine.load %X[%i] : memref<?xf32>
// CHECK-NEXT:       %ni = arith.index_cast %N : index to i32
// CHECK-NEXT:       %nf = arith.sitofp %ni : i32 to f32
// CHECK-NEXT:       %h = func.call @hypotf(%x, %nf) : (f32, f32) -> f32
// CHECK-NEXT:       %r = arith.mulf %h, %two : f32
// CHECK-NEXT:       affine.store %r, %Y[%i] : memref<?xf32>
// CHECK-NEXT:       affine.yield
// CHECK-NEXT:     }) : (index) -> ()
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
