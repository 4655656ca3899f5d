// RUN: tc-opt %s | filecheck %s
// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s --check-prefix=LLVM

// A hexadecimal element of a dense float literal is the element type's bit
// pattern, as in MLIR: xDSL 0.74 printed -inf this way but read it back as
// 4.29e9 (tcdialect/dialects/dense_hex.py). Printing and reading again must
// keep every value; integer elements stay integers.

func.func @consts() {
  %ninf = arith.constant dense<0xff800000> : vector<8xf32>
  %mixed = arith.constant dense<[0x7fc00000, 1.0, 0x7F800000, -2.5]> : vector<4xf32>
  %d = arith.constant dense<0xFFF0000000000000> : vector<2xf64>
  %h = arith.constant dense<0xFC00> : vector<2xf16>
  %i = arith.constant dense<[0x10, 3]> : vector<2xi32>
  func.return
}

// CHECK:      %ninf = arith.constant dense<0xff800000> : vector<8xf32>
// CHECK-NEXT: %mixed = arith.constant dense<[0x7fc00000, 1.000000e+00, 0x7f800000, -2.500000e+00]> : vector<4xf32>
// CHECK-NEXT: %d = arith.constant dense<0xfff0000000000000> : vector<2xf64>
// CHECK-NEXT: %h = arith.constant dense<0xfc00> : vector<2xf16>
// CHECK-NEXT: %i = arith.constant dense<[16, 3]> : vector<2xi32>

// -----

// The lowered constant holds the same bits.

func.func @ninf() -> vector<8xf32> {
  %ninf = arith.constant dense<0xff800000> : vector<8xf32>
  func.return %ninf : vector<8xf32>
}

// CHECK:      %ninf = arith.constant dense<0xff800000> : vector<8xf32>
// LLVM:       llvm.func @ninf
// LLVM:       llvm.mlir.constant(dense<0xff800000> : vector<8xf32>) : vector<8xf32>
