// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// math.log on f32: subnormals scaled by 2^23 first; x = 2^k (1 + f) with
// 1 + f in [sqrt(1/2), sqrt(2)) from the bits (subtract the bits of sqrt(1/2),
// shift out k, put the mantissa back above sqrt(1/2)); k ln2 in two parts plus
// f - f^2/2 + f^3 P(f); then x < 0 -> NaN, x == 0 -> -inf, +inf and NaN -> x.

builtin.module {
  func.func @log32(%x: f32) -> f32 {
    %y = math.log %x : f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @log32(%x: f32) -> f32 {
// CHECK-NOT:     math.log
// CHECK:         %[[TINY:.*]] = arith.cmpf olt, %x, %{{.*}} : f32
// CHECK:         %[[XS:.*]] = arith.select %[[TINY]], %{{.*}}, %x : f32
// CHECK-NEXT:    %[[B:.*]] = arith.bitcast %[[XS]] : f32 to i32
// CHECK-NEXT:    %[[SQ:.*]] = arith.constant 1060439283 : i32
// CHECK-NEXT:    %[[IX:.*]] = arith.subi %[[B]], %[[SQ]] : i32
// CHECK-NEXT:    %[[MASK:.*]] = arith.constant 8388607 : i32
// CHECK-NEXT:    %[[MANT:.*]] = arith.andi %[[IX]], %[[MASK]] : i32
// CHECK-NEXT:    %[[MB:.*]] = arith.addi %[[MANT]], %[[SQ]] : i32
// CHECK-NEXT:    %{{.*}} = arith.bitcast %[[MB]] : i32 to f32
// CHECK-NEXT:    %[[C23:.*]] = arith.constant 23 : i32
// CHECK-NEXT:    %{{.*}} = arith.shrsi %[[IX]], %[[C23]] : i32
// CHECK:         %[[NEG:.*]] = arith.cmpf olt, %x, %[[ZERO:.*]] : f32
// CHECK-NEXT:    %[[QNAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:    %{{.*}} = arith.select %[[NEG]], %[[QNAN]], %{{.*}} : f32
// CHECK-NEXT:    %[[Z:.*]] = arith.cmpf oeq, %x, %[[ZERO]] : f32
// CHECK-NEXT:    %[[MINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %{{.*}} = arith.select %[[Z]], %[[MINF]], %{{.*}} : f32
// CHECK-NEXT:    %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.cmpf uge, %x, %[[INF]] : f32
// CHECK-NEXT:    %y = arith.select %[[BIG]], %x, %{{.*}} : f32
// CHECK-NEXT:    func.return %y : f32
