// convert-parallel-loops-to-gpu leaves a function without memory effects (and
// declarations) alone: no kernel, no gpu.module, no container attribute.
// RUN: tc-opt %s -p convert-parallel-loops-to-gpu | filecheck %s

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @sizes(%N: index) -> index {
// CHECK-NEXT:     %c2 = arith.constant 2 : index
// CHECK-NEXT:     %0 = arith.muli %N, %c2 : index
// CHECK-NEXT:     func.return %0 : index
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @exp(f32) -> f32
// CHECK-NEXT: }
// CHECK-NOT:  gpu.
func.func @sizes(%N: index) -> index {
  %c2 = arith.constant 2 : index
  %0 = arith.muli %N, %c2 : index
  func.return %0 : index
}
func.func private @exp(f32) -> f32
