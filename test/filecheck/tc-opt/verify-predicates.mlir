// RUN: tc-opt %s --verify-diagnostics --split-input-file | filecheck %s
// RUN: not tc-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// A comparison's predicate must be one of its op's (tcdialect.verifier; xDSL
// 0.74 accepted any integer, then crashed printing one past the last and
// printed a negative one as another predicate). Valid ones are left alone.

func.func @cmpi(%a: i32) -> i1 {
  %c = "arith.cmpi"(%a, %a) <{predicate = 10 : i64}> : (i32, i32) -> i1
  func.return %c : i1
}

// CHECK:      %c = "arith.cmpi"(%a, %a) <{predicate = 10 : i64}>
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: predicate 10 is not one of 0..9

// -----

func.func @cmpf(%x: f32) -> i1 {
  %c = "arith.cmpf"(%x, %x) <{predicate = -1 : i64}> : (f32, f32) -> i1
  func.return %c : i1
}

// CHECK:      %c = "arith.cmpf"(%x, %x) <{predicate = -1 : i64
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: predicate -1 is not one of 0..15

// -----

func.func @icmp(%a: i32) -> i1 {
  %c = "llvm.icmp"(%a, %a) <{predicate = 99 : i64}> : (i32, i32) -> i1
  func.return %c : i1
}

// CHECK:      %c = "llvm.icmp"(%a, %a) <{predicate = 99 : i64}>
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: predicate 99 is not one of 0..9

// -----

func.func @fcmp(%x: f32) -> i1 {
  %c = "llvm.fcmp"(%x, %x) <{predicate = 16 : i64}> : (f32, f32) -> i1
  func.return %c : i1
}

// CHECK:      %c = "llvm.fcmp"(%x, %x) <{predicate = 16 : i64
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: predicate 16 is not one of 0..15

// -----

func.func @valid(%a: i32, %x: f32) -> (i1, i1, i1, i1) {
  %0 = "arith.cmpi"(%a, %a) <{predicate = 9 : i64}> : (i32, i32) -> i1
  %1 = "arith.cmpf"(%x, %x) <{predicate = 15 : i64}> : (f32, f32) -> i1
  %2 = "llvm.icmp"(%a, %a) <{predicate = 0 : i64}> : (i32, i32) -> i1
  %3 = "llvm.fcmp"(%x, %x) <{predicate = 0 : i64}> : (f32, f32) -> i1
  func.return %0, %1, %2, %3 : i1, i1, i1, i1
}

// CHECK-LABEL: func.func @valid
// CHECK-NEXT:  arith.cmpi uge, %a, %a : i32
// CHECK-NEXT:  arith.cmpf true, %x, %x : f32
// CHECK-NEXT:  llvm.icmp "eq" %a, %a : i32
// CHECK-NEXT:  llvm.fcmp "_false" %x, %x : f32

// Without --verify-diagnostics the first error ends the run: exit status 1,
// the diagnostic, no internal error.
// EXIT:     predicate 10 is not one of 0..9
// EXIT-NOT: internal error
