// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s
// RUN: tc-opt %s -p 'expand-math-polynomials{native_ldexp=true}' | filecheck %s --check-prefix=NATIVE

// math.exp on f32: clamp to [-104, 89] with compare-selects that keep a NaN
// (it then propagates: no NaN test at the end), n = round(x log2 e) with the
// 1.5 * 2^23 trick as one multiply-add (n read from the sum's bits),
// Cody-Waite r = x - n ln2_hi - n ln2_lo as two multiply-adds,
// 1 + r + r^2 Q(r), scaling by 2^(n >> 1) * 2^(n - (n >> 1)) built from
// exponent bits. With native_ldexp the scaling is one llvm.ldexp call.
// No math.exp is left.

builtin.module {
  func.func @exp32(%x: f32) -> f32 {
    %y = math.exp %x : f32
    func.return %y : f32
  }
}

// CHECK-LABEL: func.func @exp32(%x: f32) -> f32 {
// CHECK-NOT:     math.exp
// CHECK:         %[[LO:.*]] = arith.constant -1.040000e+02 : f32
// CHECK-NEXT:    %[[B1:.*]] = arith.cmpf olt, %x, %[[LO]] : f32
// CHECK-NEXT:    %[[C1:.*]] = arith.select %[[B1]], %[[LO]], %x : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.constant 8.900000e+01 : f32
// CHECK-NEXT:    %[[B2:.*]] = arith.cmpf ogt, %[[C1]], %[[HI]] : f32
// CHECK-NEXT:    %[[XC:.*]] = arith.select %[[B2]], %[[HI]], %[[C1]] : f32
// CHECK:         %[[T:.*]] = arith.mulf %[[XC]], %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:    %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK-NEXT:    %[[TM:.*]] = arith.addf %[[T]], %[[MAGIC]] fastmath<contract> : f32
// CHECK-NEXT:    %[[NF:.*]] = arith.subf %[[TM]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[TB:.*]] = arith.bitcast %[[TM]] : f32 to i32
// CHECK-NEXT:    %[[MB:.*]] = arith.constant 1262485504 : i32
// CHECK-NEXT:    %[[N:.*]] = arith.subi %[[TB]], %[[MB]] : i32
// CHECK-NEXT:    %[[LN2HI:.*]] = arith.constant -0.693145752 : f32
// CHECK-NEXT:    %[[P1:.*]] = arith.mulf %[[NF]], %[[LN2HI]] fastmath<contract> : f32
// CHECK-NEXT:    %{{.*}} = arith.addf %[[P1]], %[[XC]] fastmath<contract> : f32
// CHECK:         %[[N1:.*]] = arith.shrsi %[[N]], %{{.*}} : i32
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[N2:.*]] = arith.subi %[[N]], %[[N1]] : i32
// CHECK:         arith.shli
// CHECK:         %[[S2:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %y = arith.mulf %{{.*}}, %[[S2]] : f32
// CHECK-NEXT:    func.return %y : f32

// NATIVE-LABEL: func.func @exp32(%x: f32) -> f32 {
// NATIVE:         %[[TB:.*]] = arith.bitcast %{{.*}} : f32 to i32
// NATIVE-NEXT:    %[[MB:.*]] = arith.constant 1262485504 : i32
// NATIVE-NEXT:    %[[N:.*]] = arith.subi %[[TB]], %[[MB]] : i32
// NATIVE-NOT:     arith.shrsi
// NATIVE-NOT:     arith.shli
// NATIVE:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// NATIVE-NEXT:    %[[P:.*]] = arith.addf %{{[0-9]+}}, %[[ONE]] : f32
// NATIVE-NEXT:    %y = llvm.call_intrinsic "llvm.ldexp.f32.i32"(%[[P]], %[[N]]) : (f32, i32) -> f32
// NATIVE-NEXT:    func.return %y : f32
