// RUN: not tc-opt %s -t llvm 2>&1 | filecheck %s
// RUN: not tc-opt %s 2>&1 | filecheck %s
// RUN: not tc-opt %S/Inputs/use-before-def.mlir -t llvm 2>&1 | filecheck %s --check-prefix=USE

// A constant GEP index of -2147483648 is xDSL's marker for an SSA index: a
// located verifier error (tcdialect.verifier), with or without -t llvm; it
// crashed xDSL's printer ("internal error: IndexError") before.

llvm.func @f(%p: !llvm.ptr) -> !llvm.ptr {
  %0 = llvm.getelementptr inbounds %p[-2147483648] : (!llvm.ptr) -> !llvm.ptr, f32
  llvm.return %0 : !llvm.ptr
}

// CHECK:      "llvm.getelementptr"(%p) <{rawConstantIndices = array<i32: -2147483648>
// CHECK-NEXT: ^^^^
// CHECK-NEXT: | Operation does not verify: constant index -2147483648 is reserved (xDSL marks SSA indices with it)
// CHECK-NOT:  internal error

// A use before the definition is a verifier error (tcdialect.verifier; xDSL's
// own verifier does not check dominance), located at the use.
// USE:      %c = "llvm.icmp"(%a, %b)
// USE-NEXT: ^^^^
// USE-NEXT: | operand #1 (%b) does not dominate this use
