// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

func.func @casts(%f: f32, %d: f64, %i: i32, %l: i64, %b: i1, %n: index) {
  %0 = arith.fptosi %f : f32 to i32
  %1 = arith.fptoui %d : f64 to i8
  %2 = arith.sitofp %i : i32 to f64
  %3 = arith.uitofp %i : i32 to f32
  %4 = arith.uitofp %b : i1 to f64
  %5 = arith.uitofp %l : i64 to f32
  %6 = arith.index_cast %n : index to i32
  %7 = arith.index_cast %i : i32 to index
  %8 = arith.index_cast %l : i64 to index
  %9 = arith.extf %f : f32 to f64
  %10 = arith.truncf %d : f64 to f32
  %11 = arith.extsi %i : i32 to i64
  %12 = arith.extui %b : i1 to i32
  %13 = arith.trunci %l : i64 to i16
  %14 = arith.bitcast %f : f32 to i32
  func.return
}

// CHECK:      llvm.func @casts(%f: f32, %d: f64, %i: i32, %l: i64, %b: i1, %n: i64) {
// Saturating intrinsics: NaN gives 0, out-of-range values clamp.
// CHECK-NEXT:   %0 = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%f) : (f32) -> i32
// CHECK-NEXT:   %1 = llvm.call_intrinsic "llvm.fptoui.sat.i8.f64"(%d) : (f64) -> i8
// CHECK-NEXT:   %2 = llvm.sitofp %i : i32 to f64
// uitofp from up to 63 bits: zero-extend to i64, then sitofp.
// CHECK-NEXT:   %3 = llvm.zext %i : i32 to i64
// CHECK-NEXT:   %4 = llvm.sitofp %3 : i64 to f32
// CHECK-NEXT:   %5 = llvm.zext %b : i1 to i64
// CHECK-NEXT:   %6 = llvm.sitofp %5 : i64 to f64
// uitofp from i64: halve (keeping the low bit) when the sign bit is set.
// CHECK-NEXT:   %7 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %8 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %9 = llvm.icmp "slt" %l, %8 : i64
// CHECK-NEXT:   %10 = llvm.lshr %l, %7 : i64
// CHECK-NEXT:   %11 = llvm.and %l, %7 : i64
// CHECK-NEXT:   %12 = llvm.or %10, %11 : i64
// CHECK-NEXT:   %13 = llvm.sitofp %12 : i64 to f32
// CHECK-NEXT:   %14 = llvm.fadd %13, %13 : f32
// CHECK-NEXT:   %15 = llvm.sitofp %l : i64 to f32
// CHECK-NEXT:   %16 = llvm.select %9, %14, %15 : i1, f32
// index is i64: index_cast truncates, sign-extends or vanishes.
// CHECK-NEXT:   %17 = llvm.trunc %n : i64 to i32
// CHECK-NEXT:   %18 = llvm.sext %i : i32 to i64
// CHECK-NEXT:   %19 = llvm.fpext %f : f32 to f64
// CHECK-NEXT:   %20 = llvm.fptrunc %d : f64 to f32
// CHECK-NEXT:   %21 = llvm.sext %i : i32 to i64
// CHECK-NEXT:   %22 = llvm.zext %b : i1 to i32
// CHECK-NEXT:   %23 = llvm.trunc %l : i64 to i16
// CHECK-NEXT:   %24 = llvm.bitcast %f : f32 to i32
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// -----

func.func @compare(%x: f32, %y: f32, %a: index, %b: index) -> i1 {
  %0 = arith.cmpf ult, %x, %y : f32
  %1 = arith.cmpf false, %x, %y : f32
  %2 = arith.cmpf true, %x, %y : f32
  %3 = arith.cmpi uge, %a, %b : index
  %4 = arith.minsi %a, %b : index
  %5 = arith.maxui %a, %b : index
  %6 = arith.select %0, %x, %y : f32
  %r = arith.andi %1, %2 : i1
  func.return %r : i1
}

// CHECK:      llvm.func @compare(%x: f32, %y: f32, %a: i64, %b: i64) -> i1 {
// CHECK-NEXT:   %0 = llvm.fcmp "ult" %x, %y : f32
// CHECK-NEXT:   %1 = llvm.mlir.constant(false) : i1
// CHECK-NEXT:   %2 = llvm.mlir.constant(true) : i1
// CHECK-NEXT:   %3 = llvm.icmp "uge" %a, %b : i64
// CHECK-NEXT:   %4 = llvm.icmp "slt" %a, %b : i64
// CHECK-NEXT:   %5 = llvm.select %4, %a, %b : i1, i64
// CHECK-NEXT:   %6 = llvm.icmp "ugt" %a, %b : i64
// CHECK-NEXT:   %7 = llvm.select %6, %a, %b : i1, i64
// CHECK-NEXT:   %8 = llvm.select %0, %x, %y : i1, f32
// CHECK-NEXT:   %r = llvm.and %1, %2 : i1
// CHECK-NEXT:   llvm.return %r : i1
// CHECK-NEXT: }
