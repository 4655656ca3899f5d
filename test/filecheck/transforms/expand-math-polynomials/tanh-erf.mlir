// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// tanh: |x| < 0.55 an odd polynomial, else 1 - 2 / (exp(2|x|) + 1) with |x|
// clamped at 9.1 (tanh rounds to 1 there); the sign of x by copysign (NaN
// takes the polynomial branch: oge is false).
// erf: |x| < 1 x + x R(x^2), else 1 - C((min(|x|, 4) - 2.5) / 2); copysign.

builtin.module {
  func.func @tanh32(%x: f32) -> f32 {
    %y = math.tanh %x : f32
    func.return %y : f32
  }
  func.func @erf32(%x: f32) -> f32 {
    %y = math.erf %x : f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @tanh32(%x: f32) -> f32 {
// CHECK-NOT:     math.tanh
// CHECK:         %[[AX:.*]] = math.absf %x : f32
// CHECK-NEXT:    %[[CLAMP:.*]] = arith.constant 9.100000e+00 : f32
// CHECK-NEXT:    %[[AXC:.*]] = arith.minnumf %[[AX]], %[[CLAMP]] : f32
// CHECK-NEXT:    %{{.*}} = arith.addf %[[AXC]], %[[AXC]] : f32
// CHECK:         %[[Q:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.subf %{{.*}}, %[[Q]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.constant 5.500000e-01 : f32
// CHECK-NEXT:    %[[GE:.*]] = arith.cmpf oge, %[[AX]], %[[T]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.mulf %[[AX]], %[[AX]] : f32
// CHECK:         %[[SMALL:.*]] = arith.addf %{{.*}}, %[[AX]] : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.select %[[GE]], %[[BIG]], %[[SMALL]] : f32
// CHECK-NEXT:    %y = math.copysign %[[Y]], %x : f32
// CHECK-NEXT:    func.return %y : f32

// CHECK-LABEL: func.func @erf32(%x: f32) -> f32 {
// CHECK-NOT:     math.erf
// CHECK:         %[[AX:.*]] = math.absf %x : f32
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    %[[AXC:.*]] = arith.minnumf %[[AX]], %[[FOUR]] : f32
// CHECK-NEXT:    %[[MID:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT:    %[[D:.*]] = arith.subf %[[AXC]], %[[MID]] : f32
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %{{.*}} = arith.mulf %[[D]], %[[HALF]] : f32
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.subf %[[ONE]], %{{.*}} : f32
// CHECK-NEXT:    %[[GE:.*]] = arith.cmpf oge, %[[AX]], %[[ONE]] : f32
// CHECK:         %[[SMALL:.*]] = arith.addf %{{.*}}, %[[AX]] : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.select %[[GE]], %[[BIG]], %[[SMALL]] : f32
// CHECK-NEXT:    %y = math.copysign %[[Y]], %x : f32
// CHECK-NEXT:    func.return %y : f32
