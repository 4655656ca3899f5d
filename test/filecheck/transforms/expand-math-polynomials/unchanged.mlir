// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// Left alone: f64 and f16 (C library calls / LLVM intrinsics later), vectors
// of f64, and the ops without an expansion (sqrt, fma, floor, powf, ...: LLVM
// instructions or C library calls).

builtin.module {
  func.func @unchanged(%d: f64, %h: f16, %v: vector<4xf64>, %x: f32, %y: f32) -> (f64, f64, f16, vector<4xf64>, f32, f32, f32, f32) {
    %0 = math.exp %d : f64
    %1 = math.atan2 %d, %d : f64
    %2 = math.tanh %h : f16
    %3 = math.log %v : vector<4xf64>
    %4 = math.sqrt %x : f32
    %5 = math.powf %x, %y : f32
    %6 = math.floor %x : f32
    %7 = math.fma %x, %y, %x : f32
    func.return %0, %1, %2, %3, %4, %5, %6, %7 : f64, f64, f16, vector<4xf64>, f32, f32, f32, f32
  }
}

// CHECK-LABEL: func.func @unchanged(
// CHECK-NEXT:    %0 = math.exp %d : f64
// CHECK-NEXT:    %1 = math.atan2 %d, %d : f64
// CHECK-NEXT:    %2 = math.tanh %h : f16
// CHECK-NEXT:    %3 = math.log %v : vector<4xf64>
// CHECK-NEXT:    %4 = math.sqrt %x : f32
// CHECK-NEXT:    %5 = math.powf %x, %y : f32
// CHECK-NEXT:    %6 = math.floor %x : f32
// CHECK-NEXT:    %7 = math.fma %x, %y, %x : f32
// CHECK-NEXT:    func.return
