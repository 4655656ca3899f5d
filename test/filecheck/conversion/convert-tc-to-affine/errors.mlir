// RUN: not tc-opt %s -p convert-tc-to-affine 2>&1 | filecheck %s

// Unsupported input is a clear error.

tc.def @f<N>(X) -> (Y) {
^bb0(%X: !tc.tensor<[N], f16>):
  %Y = tc.comprehension @Y(%i in [0, N)) "=" : !tc.tensor<[N], f16> {
    %x = tc.read %X[%i] : !tc.tensor<[N], f16>
    %h = tc.builtin "hypot"(%x, %x) : (f16, f16) -> f16
    tc.yield %h : f16
  }
  tc.return %Y : !tc.tensor<[N], f16>
}

// CHECK: convert-tc-to-affine: @f: builtin 'hypot' is not supported on f16
