// RUN: tc-opt %s -p contract-reduction-fma | filecheck %s

// A reduction's update `acc + a * b` (reassoc) becomes one fma, the product
// on either side, scalar or vector, in a gpu.func too; left alone: an add
// without reassoc, a product used twice, a 16-bit product extended to f32,
// and integers.

// CHECK-LABEL: func.func @update
// CHECK-NEXT:    %s = math.fma %a, %b, %acc {fastmath = #arith.fastmath<reassoc>} : f32
// CHECK-NEXT:    %t = math.fma %a, %b, %s {fastmath = #arith.fastmath<reassoc>} : f32
// CHECK-NEXT:    %v = math.fma %va, %vb, %vacc {fastmath = #arith.fastmath<reassoc>} : vector<8xf32>
// CHECK-NEXT:    func.return
func.func @update(%a: f32, %b: f32, %acc: f32, %va: vector<8xf32>, %vb: vector<8xf32>, %vacc: vector<8xf32>) -> (f32, f32, vector<8xf32>) {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p fastmath<reassoc> : f32
  %q = arith.mulf %a, %b : f32
  %t = arith.addf %q, %s fastmath<reassoc> : f32
  %vp = arith.mulf %va, %vb : vector<8xf32>
  %v = arith.addf %vacc, %vp fastmath<reassoc> : vector<8xf32>
  func.return %s, %t, %v : f32, f32, vector<8xf32>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:    %p = arith.mulf %a, %b : f32
// CHECK-NEXT:    %s = arith.addf %acc, %p : f32
// CHECK-NEXT:    %q = arith.mulf %a, %b : f32
// CHECK-NEXT:    %t = arith.addf %acc, %q fastmath<reassoc> : f32
// CHECK-NEXT:    %u = arith.addf %t, %q : f32
// CHECK-NEXT:    %h = arith.mulf %x, %y : f16
// CHECK-NEXT:    %w = arith.extf %h : f16 to f32
// CHECK-NEXT:    %z = arith.addf %acc, %w fastmath<reassoc> : f32
// CHECK-NEXT:    %i = arith.muli %m, %n : i32
// CHECK-NEXT:    %j = arith.addi %k, %i : i32
func.func @left_alone(%a: f32, %b: f32, %acc: f32, %x: f16, %y: f16, %m: i32, %n: i32, %k: i32) -> (f32, f32, f32, i32) {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %acc, %p : f32
  %q = arith.mulf %a, %b : f32
  %t = arith.addf %acc, %q fastmath<reassoc> : f32
  %u = arith.addf %t, %q : f32
  %h = arith.mulf %x, %y : f16
  %w = arith.extf %h : f16 to f32
  %z = arith.addf %acc, %w fastmath<reassoc> : f32
  %i = arith.muli %m, %n : i32
  %j = arith.addi %k, %i : i32
  func.return %s, %u, %z, %j : f32, f32, f32, i32
}

// CHECK-LABEL: gpu.func @kernel
// CHECK:         %s = math.fma %a, %b, %acc {fastmath = #arith.fastmath<reassoc>} : f32
builtin.module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @kernel(%a: f32, %b: f32, %acc: f32, %o: memref<f32>) kernel {
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p fastmath<reassoc> : f32
      memref.store %s, %o[] : memref<f32>
      gpu.return
    }
  }
}
