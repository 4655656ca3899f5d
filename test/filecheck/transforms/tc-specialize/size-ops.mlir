// RUN: tc-opt %s -p 'tc-specialize{sizes="M=4"}' | filecheck %s

// tc.size of a bound name becomes an index constant (at def level too);
// other ops, and sizes not named, are left alone.

func.func @other() {
  func.return
}

tc.def @f<M, N>(X) -> (Y) {
^bb0(%X: !tc.tensor<[M, N], f32>):
  %m = tc.size "M"
  %Y = tc.comprehension @Y(%i in [0, M), %j in [0, N)) "=" : !tc.tensor<[M, N], f32> {
    %n = tc.size "N"
    %m2 = tc.size "M"
    %s = arith.addi %m, %n : index
    %t = arith.addi %s, %m2 : index
    %x = tc.read %X[%i, %j] : !tc.tensor<[M, N], f32>
    tc.yield %x : f32
  }
  tc.return %Y : !tc.tensor<[M, N], f32>
}

// CHECK:      func.func @other() {
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: tc.def @f<N>(X) -> (Y) {
// CHECK-NEXT: ^bb0(%X: !tc.tensor<[4, N], f32>):
// CHECK-NEXT:   %m = arith.constant 4 : index
// CHECK-NEXT:   %Y = tc.comprehension @Y(%i in [0, 4), %j in [0, N)) "=" : !tc.tensor<[4, N], f32> {
// CHECK-NEXT:     %n = tc.size "N"
// CHECK-NEXT:     %m2 = arith.constant 4 : index
