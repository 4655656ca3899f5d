// RUN: tc-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// A hexadecimal element wider than its float type is an error, located at the
// element (MLIR: "hexadecimal float constant out of range for type").

func.func @wide() {
  %h = arith.constant dense<0x1FC00> : vector<2xf16>
  func.return
}

// CHECK:      dense<0x1FC00> : vector<2xf16>
// CHECK-NEXT:       ^^^^^^^
// CHECK-NEXT:       hexadecimal float constant out of range for type f16

// -----

func.func @wide_in_list() {
  %f = arith.constant dense<[1.0, 0x1FF800000]> : vector<2xf32>
  func.return
}

// CHECK:      dense<[1.0, 0x1FF800000]> : vector<2xf32>
// CHECK-NEXT:             ^^^^^^^^^^^
// CHECK-NEXT:             hexadecimal float constant out of range for type f32
