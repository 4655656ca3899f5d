// RUN: tc-opt %s -p convert-to-llvm | filecheck %s

// Fast-math flags of arith float ops carry over to the llvm ops (reductions
// are marked `reassoc` by convert-tc-to-affine so that LLVM can vectorise
// them); ops without flags stay strict.

builtin.module {
  func.func @flags(%a: f32, %b: f32) -> f32 {
    %s = arith.addf %a, %b fastmath<reassoc> : f32
    %p = arith.mulf %s, %b fastmath<reassoc,contract> : f32
    %q = arith.subf %p, %a : f32
    func.return %q : f32
  }
}

// CHECK:      llvm.func @flags(%a: f32, %b: f32) -> f32
// CHECK-NEXT:   %{{.*}} = llvm.fadd %a, %b {fastmathFlags = #llvm.fastmath<reassoc>} : f32
// CHECK-NEXT:   %{{.*}} = llvm.fmul %{{.*}}, %b {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NEXT:   %{{.*}} = llvm.fsub %{{.*}}, %a : f32
