// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// sin: j = round(x 2/pi) (the 1.5 * 2^23 trick), r = x - j pi/2 with pi/2 in
// seven parts (the rounding errors of the last five subtractions recovered
// into a correction term), sin and cos polynomials of r, the quadrant chosen
// with bit masks from j (odd j: cos; j & 2: negate), x itself for
// |x| < 2^-12 (keeps -0) and NaN beyond 6.5e6.

builtin.module {
  func.func @sin32(%x: f32) -> f32 {
    %y = math.sin %x : f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @sin32(%x: f32) -> f32 {
// CHECK-NOT:     math.sin
// CHECK:         %[[T:.*]] = arith.mulf %x, %{{.*}} : f32
// CHECK:         %[[J:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    %[[P1:.*]] = arith.constant 1.5703125 : f32
// CHECK-NEXT:    %[[JP1:.*]] = arith.mulf %[[JF:.*]], %[[P1]] : f32
// CHECK-NEXT:    %{{.*}} = arith.subf %x, %[[JP1]] : f32
// CHECK-COUNT-6: arith.mulf %[[JF]], %{{.*}} : f32
// CHECK:         %[[C31:.*]] = arith.constant 31 : i32
// CHECK-NEXT:    %[[SH:.*]] = arith.shli %[[J]], %[[C31]] : i32
// CHECK-NEXT:    %[[ODD:.*]] = arith.shrsi %[[SH]], %[[C31]] : i32
// CHECK:         arith.andi %{{.*}}, %[[ODD]] : i32
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %{{.*}} = arith.andi %[[J]], %[[TWO]] : i32
// CHECK:         %[[AX:.*]] = math.absf %x : f32
// CHECK-NEXT:    %[[TINYC:.*]] = arith.constant 0.000244140625 : f32
// CHECK-NEXT:    %[[TINY:.*]] = arith.cmpf olt, %[[AX]], %[[TINYC]] : f32
// CHECK-NEXT:    %[[Y1:.*]] = arith.select %[[TINY]], %x, %{{.*}} : f32
// CHECK-NEXT:    %[[MAX:.*]] = arith.constant 6.500000e+06 : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.cmpf ogt, %[[AX]], %[[MAX]] : f32
// CHECK-NEXT:    %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    %y = arith.select %[[BIG]], %[[NAN]], %[[Y1]] : f32
// CHECK-NEXT:    func.return %y : f32
