// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// Typed llvm.intr.* ops where xDSL has them, llvm.call_intrinsic for other
// LLVM intrinsics, C math functions otherwise (`f` suffix for f32).
func.func @math32(%x: f32, %y: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.log %0 : f32
  %2 = math.sqrt %1 : f32
  %3 = math.absf %2 : f32
  %4 = math.powf %3, %y : f32
  %5 = math.fma %4, %x, %y : f32
  %6 = math.tanh %5 : f32
  %7 = math.log10 %6 : f32
  %8 = math.round %7 : f32
  %9 = math.atan2 %8, %y : f32
  %10 = math.expm1 %9 : f32
  %11 = math.erf %10 : f32
  %12 = math.rsqrt %11 : f32
  %13 = arith.maximumf %12, %x : f32
  %14 = arith.minnumf %13, %y : f32
  %15 = arith.negf %14 : f32
  %16 = arith.divf %15, %x : f32
  func.return %16 : f32
}

// CHECK:      llvm.func @math32(%x: f32, %y: f32) -> f32 {
// CHECK-NEXT:   %0 = llvm.intr.exp(%x) : (f32) -> f32
// CHECK-NEXT:   %1 = llvm.intr.log(%0) : (f32) -> f32
// CHECK-NEXT:   %2 = llvm.intr.sqrt(%1) : (f32) -> f32
// CHECK-NEXT:   %3 = llvm.intr.fabs(%2) : (f32) -> f32
// CHECK-NEXT:   %4 = llvm.intr.pow(%3, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %5 = llvm.intr.fma(%4, %x, %y) : (f32, f32, f32) -> f32
// CHECK-NEXT:   %6 = llvm.call_intrinsic "llvm.tanh.f32"(%5) : (f32) -> f32
// CHECK-NEXT:   %7 = llvm.call_intrinsic "llvm.log10.f32"(%6) : (f32) -> f32
// CHECK-NEXT:   %8 = llvm.call_intrinsic "llvm.round.f32"(%7) : (f32) -> f32
// CHECK-NEXT:   %9 = llvm.call_intrinsic "llvm.atan2.f32"(%8, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %10 = llvm.call @expm1f(%9) : (f32) -> f32
// CHECK-NEXT:   %11 = llvm.call @erff(%10) : (f32) -> f32
// CHECK-NEXT:   %12 = llvm.intr.sqrt(%11) : (f32) -> f32
// CHECK-NEXT:   %13 = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:   %14 = llvm.fdiv %13, %12 : f32
// CHECK-NEXT:   %15 = llvm.call_intrinsic "llvm.maximum.f32"(%14, %x) : (f32, f32) -> f32
// CHECK-NEXT:   %16 = llvm.intr.minnum(%15, %y) : (f32, f32) -> f32
// CHECK-NEXT:   %17 = llvm.fneg %16 : f32
// CHECK-NEXT:   %18 = llvm.fdiv %17, %x : f32
// CHECK-NEXT:   llvm.return %18 : f32
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @expm1f(f32) -> f32
// CHECK-NEXT: llvm.func @erff(f32) -> f32

// -----

// f64: C functions without suffix; an existing declaration is reused.
func.func private @cbrt(f64) -> f64
func.func @math64(%x: f64) -> f64 {
  %0 = math.cbrt %x : f64
  %1 = math.log1p %0 : f64
  %2 = math.acosh %1 : f64
  %3 = math.trunc %2 : f64
  %4 = math.sin %3 : f64
  %5 = func.call @cbrt(%4) : (f64) -> f64
  func.return %5 : f64
}

// CHECK:      llvm.func @cbrt(f64) -> f64
// CHECK-NEXT: llvm.func @math64(%x: f64) -> f64 {
// CHECK-NEXT:   %0 = llvm.call @cbrt(%x) : (f64) -> f64
// CHECK-NEXT:   %1 = llvm.call @log1p(%0) : (f64) -> f64
// CHECK-NEXT:   %2 = llvm.call @acosh(%1) : (f64) -> f64
// CHECK-NEXT:   %3 = llvm.call_intrinsic "llvm.trunc.f64"(%2) : (f64) -> f64
// CHECK-NEXT:   %4 = llvm.intr.sin(%3) : (f64) -> f64
// CHECK-NEXT:   %5 = llvm.call @cbrt(%4) : (f64) -> f64
// CHECK-NEXT:   llvm.return %5 : f64
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @log1p(f64) -> f64
// CHECK-NEXT: llvm.func @acosh(f64) -> f64
// CHECK-NEXT: }

// -----

// Fast-math flags go onto the intrinsic call (a max reduction's `nsz` spares
// x86 the ordering of -0 and +0); none, as above, leave the call bare.
func.func @flags(%x: f32, %y: f32) -> f32 {
  %0 = arith.maximumf %x, %y fastmath<reassoc,nsz> : f32
  %1 = arith.minimumf %0, %y fastmath<reassoc,nsz> : f32
  func.return %1 : f32
}

// CHECK:      llvm.func @flags(%x: f32, %y: f32) -> f32 {
// CHECK-NEXT:   %0 = llvm.call_intrinsic "llvm.maximum.f32"(%x, %y) {fastmathFlags = #llvm.fastmath<reassoc,nsz>} : (f32, f32) -> f32
// CHECK-NEXT:   %1 = llvm.call_intrinsic "llvm.minimum.f32"(%0, %y) {fastmathFlags = #llvm.fastmath<reassoc,nsz>} : (f32, f32) -> f32
