// RUN: tc-opt %s -t llvm | filecheck %s

// A shuffle mask lane of -1 is undefined (LLVM allows it; llvmlite does
// not): it takes lane 0, one of the values an undefined lane may have.

llvm.func @f(%a: vector<4xf32>) -> vector<4xf32> {
  %0 = llvm.shufflevector %a, %a [-1, 0, 1, 2] : vector<4xf32>
  llvm.return %0 : vector<4xf32>
}

// CHECK: shufflevector <4 x float> %"a", <4 x float> %"a", <4 x i32> <i32 0, i32 0, i32 1, i32 2>
