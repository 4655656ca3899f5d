// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// math.exp on f32: clamp to [-104, 89], n = round(x log2 e) with the 1.5 * 2^23
// trick (n read from the sum's bits), Cody-Waite r = x - n ln2_hi - n ln2_lo,
// 1 + r + r^2 Q(r), scaling by 2^(n >> 1) * 2^(n - (n >> 1)) built from exponent
// bits; NaN is passed through by the last select. No math.exp is left.

builtin.module {
  func.func @exp32(%x: f32) -> f32 {
    %y = math.exp %x : f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @exp32(%x: f32) -> f32 {
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[C1:.*]] = arith.maxnumf %x, %[[LO]] : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 8.900000e+01 : f32
// CHECK-NEXT:    %[[XC:.*]] = arith.minnumf %[[C1]], %[[HI]] : f32
// CHECK:         %[[T:.*]] = arith.mulf %[[XC]], %{{.*}} : f32
// CHECK-NEXT:    %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT:    %[[TM:.*]] = arith.addf %[[T]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[NF:.*]] = arith.subf %[[TM]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[TB:.*]] = arith.bitcast %[[TM]] : f32 to i32
// CHECK-NEXT:    %[[MB:.*]] = arith.constant 1262485504 : i32
// CHECK-NEXT:    %[[N:.*]] = arith.subi %[[TB]], %[[MB]] : i32
// CHECK-NEXT:    %[[LN2HI:.*]] = arith.constant 0.693145752 : f32
// CHECK-NEXT:    %{{.*}} = arith.mulf %[[NF]], %[[LN2HI]] : f32
// CHECK:         %[[N1:.*]] = arith.shrsi %[[N]], %{{.*}} : i32
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[N2:.*]] = arith.subi %[[N]], %[[N1]] : i32
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %x, %x : f32
// CHECK-NEXT:    %y = arith.select %[[NAN]], %x, %{{.*}} : f32
// CHECK-NEXT:    func.return %y : f32
