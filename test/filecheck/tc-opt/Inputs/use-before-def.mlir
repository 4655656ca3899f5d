llvm.func @f(%a: i64) -> i1 {
  %c = llvm.icmp "slt" %a, %b : i64
  %b = llvm.mlir.constant(1 : i64) : i64
  llvm.return %c : i1
}
