// RUN: tc-opt %s --split-input-file -p expand-math-polynomials | filecheck %s

// f32 calls of the C functions erfcf, exp10f and hypotf (external
// declarations, as convert-tc-to-affine emits them) are expanded and their
// declarations dropped once unused. fmodf, the f64 functions and calls of a
// function with a body stay.

builtin.module {
  func.func private @erfcf(f32) -> f32
  func.func private @exp10f(f32) -> f32
  func.func private @hypotf(f32, f32) -> f32
  func.func private @fmodf(f32, f32) -> f32
  func.func private @erfc(f64) -> f64
  func.func @calls(%x: f32, %y: f32, %d: f64) -> (f32, f32, f32, f32, f64) {
    %a = func.call @erfcf(%x) : (f32) -> f32
    %b = func.call @exp10f(%x) : (f32) -> f32
    %h = func.call @hypotf(%x, %y) : (f32, f32) -> f32
    %m = func.call @fmodf(%x, %y) : (f32, f32) -> f32
    %e = func.call @erfc(%d) : (f64) -> f64
    func.return %a, %b, %h, %m, %e : f32, f32, f32, f32, f64
  }
}

// CHECK:       builtin.module {
// CHECK-NEXT:    func.func private @fmodf(f32, f32) -> f32
// CHECK-NEXT:    func.func private @erfc(f64) -> f64
// CHECK-NEXT:    func.func @calls(%x: f32, %y: f32, %d: f64) -> (f32, f32, f32, f32, f64) {
// CHECK-NOT:       @erfcf
// CHECK-NOT:       @exp10f
// CHECK-NOT:       @hypotf
// CHECK:           %a = arith.select
// CHECK:           %b = arith.select
// CHECK:           %[[AX:.*]] = math.absf %x : f32
// CHECK-NEXT:      %[[AY:.*]] = math.absf %y : f32
// CHECK-NEXT:      %[[BIG:.*]] = arith.maxnumf %[[AX]], %[[AY]] : f32
// CHECK-NEXT:      %[[SMALL:.*]] = arith.minnumf %[[AX]], %[[AY]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[SMALL]], %[[BIG]] : f32
// CHECK:           math.sqrt
// CHECK:           %h = arith.select
// CHECK-NEXT:      %m = func.call @fmodf(%x, %y) : (f32, f32) -> f32
// CHECK-NEXT:      %e = func.call @erfc(%d) : (f64) -> f64
// CHECK-NEXT:      func.return %a, %b, %h, %m, %e : f32, f32, f32, f32, f64

// -----

// A defined function is not the C library's: its calls stay.

builtin.module {
  func.func @erfcf(%x: f32) -> f32 {
    func.return %x : f32
  }
  func.func @user(%x: f32) -> f32 {
    %y = func.call @erfcf(%x) : (f32) -> f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @user(%x: f32) -> f32 {
// CHECK-NEXT:    %y = func.call @erfcf(%x) : (f32) -> f32
// CHECK-NEXT:    func.return %y : f32
