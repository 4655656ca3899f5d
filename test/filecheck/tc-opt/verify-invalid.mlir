// RUN: tc-opt %s --verify-diagnostics --split-input-file | filecheck %s
// RUN: not tc-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// Some of xDSL 0.74's verifiers raise a plain Exception or an AssertionError
// instead of a VerifyException; tcdialect.verifier reports them like any
// verifier error, on the op, instead of an "internal error".

func.func @load_rank(%m: memref<4x4xf32>, %i: index) -> f32 {
  %v = memref.load %m[%i] : memref<4x4xf32>
  func.return %v : f32
}

// CHECK:      %v = "memref.load"(%m, %i)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: expected an index for each dimension

// -----

func.func @trunc_to_float(%x: i32) -> f32 {
  %v = llvm.trunc %x : i32 to f32
  func.return %v : f32
}

// CHECK:      %v = "llvm.trunc"(%x)
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: its verifier failed (AssertionError)

// EXIT-NOT:   internal error
// EXIT:       Operation does not verify: expected an index for each dimension
// EXIT-NOT:   internal error
