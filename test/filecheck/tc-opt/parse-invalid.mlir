// RUN: tc-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// RUN: not tc-opt %s 2>&1 | filecheck %s --check-prefix=EXIT

// What xDSL 0.74 raises besides ParseError while reading IR (an
// OverflowError packing 1e300 as f32, a VerifyException building an
// attribute out of its type's range) is a parse error located on the
// innermost attribute, type or operation being read, not an unlocated
// message or an internal error.

func.func @f() -> f32 {
  %0 = arith.constant 1.000000e+300 : f32
  func.return %0 : f32
}

// CHECK:      parse-invalid.mlir:11:23
// CHECK-NEXT:   %0 = arith.constant 1.000000e+300 : f32
// CHECK-NEXT: {{^ +\^{19}$}}
// CHECK-NEXT: invalid IR (OverflowError: float too large to pack with f format)

// EXIT:       parse-invalid.mlir:11:23
// EXIT:       invalid IR (OverflowError: float too large to pack with f format)
// EXIT-NOT:   internal error

// -----

func.func @g() -> i8 {
  %0 = arith.constant 300 : i8
  func.return %0 : i8
}

// CHECK:      parse-invalid.mlir:27:23
// CHECK-NEXT:   %0 = arith.constant 300 : i8
// CHECK-NEXT: {{^ +\^{8}$}}
// CHECK-NEXT: invalid IR: Integer value 300 is out of range for type i8

// -----

// A failure outside any attribute or type: the operation read so far.
func.func @h(%a: i32) -> i1 {
  %0 = arith.cmpi foo, %a, %a : i32
  func.return %0 : i1
}

// CHECK:      parse-invalid.mlir:40:3
// CHECK-NEXT:   %0 = arith.cmpi foo, %a, %a : i32
// CHECK-NEXT: {{^ +\^{33}$}}
// CHECK-NEXT: invalid IR: Unknown comparison mnemonic: foo
