// RUN: not tc-opt %s --split-input-file -p convert-to-llvm 2>&1 | filecheck %s

func.func @f(%A: memref<4xf32>) {
  "memref.copy"(%A, %A) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}

// CHECK: convert-to-llvm: unsupported operation 'memref.copy'
