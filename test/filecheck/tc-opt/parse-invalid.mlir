// RUN: not tc-opt %s 2>&1 | filecheck %s

// What xDSL 0.74 raises besides ParseError while reading IR (here an
// OverflowError packing 1e300 as f32) is a located parse error, not an
// internal error.

func.func @f() -> f32 {
  %0 = arith.constant 1.000000e+300 : f32
  func.return %0 : f32
}

// CHECK:      parse-invalid.mlir:9:3
// CHECK-NEXT:   func.return %0 : f32
// CHECK:        invalid IR (OverflowError: float too large to pack with f format)
// CHECK-NOT:  internal error
