// RUN: tc-opt %s | filecheck %s
// RUN: cat %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// tc-opt reads plain MLIR too: builtin, func and arith round-trip unchanged.

func.func @add(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @add(%a: i32, %b: i32) -> i32 {
// CHECK-NEXT:     %c = arith.addi %a, %b : i32
// CHECK-NEXT:     func.return %c : i32
// CHECK-NEXT:   }
// CHECK-NEXT: }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   "func.func"() <{sym_name = "add", function_type = (i32, i32) -> i32}> ({
// CHECK-GENERIC-NEXT:   ^bb0(%a: i32, %b: i32):
// CHECK-GENERIC-NEXT:     %c = "arith.addi"(%a, %b) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
// CHECK-GENERIC-NEXT:     "func.return"(%c) : (i32) -> ()
// CHECK-GENERIC-NEXT:   }) : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()
