// RUN: tc-opt %s | filecheck %s
// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// Round trip of every tc op and of !tc.tensor, in custom and generic form.

// A definition with sizes, two inputs, a reduction from the identity ('+=!')
// and an accumulation into the previous value ('+=' with 'into').
tc.def @matmul<M, K, N>(A, B) -> (C) {
^bb0(%A: !tc.tensor<[M, K], f32>, %B: !tc.tensor<[K, N], f32>):
  %C0 = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%k in [0, K)) : !tc.tensor<[M, N], f32> {
    %a = tc.read %A[%m, %k] : !tc.tensor<[M, K], f32>
    %b = tc.read %B[%k, %n] : !tc.tensor<[K, N], f32>
    %p = arith.mulf %a, %b : f32
    tc.yield %p : f32
  }
  %C1 = tc.comprehension @C(%m1 in [0, M), %n1 in [0, N)) "+=" (%k1 in [0, K)) into %C0 : !tc.tensor<[M, N], f32> {
    %a1 = tc.read %A[%m1, %k1] : !tc.tensor<[M, K], f32>
    tc.yield %a1 : f32
  }
  tc.return %C1 : !tc.tensor<[M, N], f32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   tc.def @matmul<M, K, N>(A, B) -> (C) {
// CHECK-NEXT:   ^bb0(%A: !tc.tensor<[M, K], f32>, %B: !tc.tensor<[K, N], f32>):
// CHECK-NEXT:     %C0 = tc.comprehension @C(%m in [0, M), %n in [0, N)) "+=!" (%k in [0, K)) : !tc.tensor<[M, N], f32> {
// CHECK-NEXT:       %a = tc.read %A[%m, %k] : !tc.tensor<[M, K], f32>
// CHECK-NEXT:       %b = tc.read %B[%k, %n] : !tc.tensor<[K, N], f32>
// CHECK-NEXT:       %p = arith.mulf %a, %b : f32
// CHECK-NEXT:       tc.yield %p : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %C1 = tc.comprehension @C(%m1 in [0, M), %n1 in [0, N)) "+=" (%k1 in [0, K)) into %C0 : !tc.tensor<[M, N], f32> {
// CHECK-NEXT:       %a1 = tc.read %A[%m1, %k1] : !tc.tensor<[M, K], f32>
// CHECK-NEXT:       tc.yield %a1 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     tc.return %C1 : !tc.tensor<[M, N], f32>
// CHECK-NEXT:   }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   "tc.def"() <{sym_name = "matmul", sizes = ["M", "K", "N"], inputs = ["A", "B"], outputs = ["C"]}> ({
// CHECK-GENERIC-NEXT:   ^bb0(%A: !tc.tensor<[M, K], f32>, %B: !tc.tensor<[K, N], f32>):
// CHECK-GENERIC-NEXT:     %C0 = "tc.comprehension"() <{target = "C", op = "+=!", lower_bounds = ["0", "0", "0"], upper_bounds = ["M", "N", "K"]}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%m: index, %n: index, %k: index):
// CHECK-GENERIC-NEXT:       %a = "tc.read"(%A, %m, %k) : (!tc.tensor<[M, K], f32>, index, index) -> f32
// CHECK-GENERIC-NEXT:       %b = "tc.read"(%B, %k, %n) : (!tc.tensor<[K, N], f32>, index, index) -> f32
// CHECK-GENERIC-NEXT:       %p = "arith.mulf"(%a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:       "tc.yield"(%p) : (f32) -> ()
// CHECK-GENERIC-NEXT:     }) : () -> !tc.tensor<[M, N], f32>
// CHECK-GENERIC-NEXT:     %C1 = "tc.comprehension"(%C0) <{target = "C", op = "+=", lower_bounds = ["0", "0", "0"], upper_bounds = ["M", "N", "K"]}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%m1: index, %n1: index, %k1: index):
// CHECK-GENERIC-NEXT:       %a1 = "tc.read"(%A, %m1, %k1) : (!tc.tensor<[M, K], f32>, index, index) -> f32
// CHECK-GENERIC-NEXT:       "tc.yield"(%a1) : (f32) -> ()
// CHECK-GENERIC-NEXT:     }) : (!tc.tensor<[M, N], f32>) -> !tc.tensor<[M, N], f32>
// CHECK-GENERIC-NEXT:     "tc.return"(%C1) : (!tc.tensor<[M, N], f32>) -> ()
// CHECK-GENERIC-NEXT:   }) : () -> ()

// No sizes; 0-d tensors (read with '[]'); a 0-d target ('@r()'); literal
// extents; unsigned element types (values are signless in bodies); every
// other reduction operator.
tc.def @scalars<>(s, u) -> (r, q) {
^bb0(%s: !tc.tensor<[], f32>, %u: !tc.tensor<[4], ui8>):
  %r = tc.comprehension @r() "max=!" (%j in [0, 4)) : !tc.tensor<[], ui8> {
    %v = tc.read %u[%j] : !tc.tensor<[4], ui8>
    tc.yield %v : i8
  }
  %r1 = tc.comprehension @r() "min=" (%j1 in [0, 4)) into %r : !tc.tensor<[], ui8> {
    %v1 = tc.read %u[%j1] : !tc.tensor<[4], ui8>
    tc.yield %v1 : i8
  }
  %q = tc.comprehension @q() "=" : !tc.tensor<[], f32> {
    %x = tc.read %s[] : !tc.tensor<[], f32>
    tc.yield %x : f32
  }
  %q1 = tc.comprehension @q() "*=!" (%j2 in [0, 2)) : !tc.tensor<[], f32> {
    %x1 = tc.read %q[] : !tc.tensor<[], f32>
    tc.yield %x1 : f32
  }
  %q2 = tc.comprehension @q() "*=" into %q1 : !tc.tensor<[], f32> {
    %x2 = tc.read %s[] : !tc.tensor<[], f32>
    tc.yield %x2 : f32
  }
  %q3 = tc.comprehension @q() "max=" into %q2 : !tc.tensor<[], f32> {
    %x3 = tc.read %s[] : !tc.tensor<[], f32>
    tc.yield %x3 : f32
  }
  %q4 = tc.comprehension @q() "min=!" (%j3 in [0, 3)) : !tc.tensor<[], f32> {
    %x4 = tc.read %q3[] : !tc.tensor<[], f32>
    tc.yield %x4 : f32
  }
  tc.return %r1, %q4 : !tc.tensor<[], ui8>, !tc.tensor<[], f32>
}

// CHECK-NEXT:   tc.def @scalars<>(s, u) -> (r, q) {
// CHECK-NEXT:   ^bb0(%s: !tc.tensor<[], f32>, %u: !tc.tensor<[4], ui8>):
// CHECK-NEXT:     %r = tc.comprehension @r() "max=!" (%j in [0, 4)) : !tc.tensor<[], ui8> {
// CHECK-NEXT:       %v = tc.read %u[%j] : !tc.tensor<[4], ui8>
// CHECK-NEXT:       tc.yield %v : i8
// CHECK-NEXT:     }
// CHECK-NEXT:     %r1 = tc.comprehension @r() "min=" (%j1 in [0, 4)) into %r : !tc.tensor<[], ui8> {
// CHECK-NEXT:       %v1 = tc.read %u[%j1] : !tc.tensor<[4], ui8>
// CHECK-NEXT:       tc.yield %v1 : i8
// CHECK-NEXT:     }
// CHECK-NEXT:     %q = tc.comprehension @q() "=" : !tc.tensor<[], f32> {
// CHECK-NEXT:       %x = tc.read %s[] : !tc.tensor<[], f32>
// CHECK-NEXT:       tc.yield %x : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %q1 = tc.comprehension @q() "*=!" (%j2 in [0, 2)) : !tc.tensor<[], f32> {
// CHECK-NEXT:       %x1 = tc.read %q[] : !tc.tensor<[], f32>
// CHECK-NEXT:       tc.yield %x1 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %q2 = tc.comprehension @q() "*=" into %q1 : !tc.tensor<[], f32> {
// CHECK-NEXT:       %x2 = tc.read %s[] : !tc.tensor<[], f32>
// CHECK-NEXT:       tc.yield %x2 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %q3 = tc.comprehension @q() "max=" into %q2 : !tc.tensor<[], f32> {
// CHECK-NEXT:       %x3 = tc.read %s[] : !tc.tensor<[], f32>
// CHECK-NEXT:       tc.yield %x3 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %q4 = tc.comprehension @q() "min=!" (%j3 in [0, 3)) : !tc.tensor<[], f32> {
// CHECK-NEXT:       %x4 = tc.read %q3[] : !tc.tensor<[], f32>
// CHECK-NEXT:       tc.yield %x4 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     tc.return %r1, %q4 : !tc.tensor<[], ui8>, !tc.tensor<[], f32>
// CHECK-NEXT:   }

// CHECK-GENERIC:        "tc.def"() <{sym_name = "scalars", sizes = [], inputs = ["s", "u"], outputs = ["r", "q"]}> ({
// CHECK-GENERIC-NEXT:   ^bb0(%s: !tc.tensor<[], f32>, %u: !tc.tensor<[4], ui8>):
// CHECK-GENERIC-NEXT:     %r = "tc.comprehension"() <{target = "r", op = "max=!", lower_bounds = ["0"], upper_bounds = ["4"]}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%j: index):
// CHECK-GENERIC-NEXT:       %v = "tc.read"(%u, %j) : (!tc.tensor<[4], ui8>, index) -> i8
// CHECK-GENERIC-NEXT:       "tc.yield"(%v) : (i8) -> ()
// CHECK-GENERIC-NEXT:     }) : () -> !tc.tensor<[], ui8>
// CHECK-GENERIC-NEXT:     %r1 = "tc.comprehension"(%r) <{target = "r", op = "min=", lower_bounds = ["0"], upper_bounds = ["4"]}> ({
// CHECK-GENERIC:          %q = "tc.comprehension"() <{target = "q", op = "=", lower_bounds = [], upper_bounds = []}> ({
// CHECK-GENERIC-NEXT:       %x = "tc.read"(%s) : (!tc.tensor<[], f32>) -> f32
// CHECK-GENERIC-NEXT:       "tc.yield"(%x) : (f32) -> ()
// CHECK-GENERIC-NEXT:     }) : () -> !tc.tensor<[], f32>
// CHECK-GENERIC:          %q2 = "tc.comprehension"(%q1) <{target = "q", op = "*=", lower_bounds = [], upper_bounds = []}> ({
// CHECK-GENERIC:          "tc.return"(%r1, %q4) : (!tc.tensor<[], ui8>, !tc.tensor<[], f32>) -> ()

// Size expressions are canonicalised on parsing: floordiv, mod and ceildiv,
// min and max of several arguments, constant factors. tc.size reads a size;
// tc.builtin calls the builtins that have no math op. More element types:
// f64, f16, i1 (bool), i64, ui32.
tc.def @sizes<I, N, M>(X, Y, Z, W) -> (O) {
^bb0(%X: !tc.tensor<[I], f64>, %Y: !tc.tensor<[min(N, M), max(N, M + 1)], f64>, %Z: !tc.tensor<[N mod 4, N ceildiv 4, min(N, M, 4), 2*N+1, -N + 2 * M], f16>, %W: !tc.tensor<[2, 3], i1>):
  %O = tc.comprehension @O(%i in [0, (I + 1) floordiv 2), %l in [0, min(M, N))) "=" : !tc.tensor<[(I + 1) floordiv 2, min(M, N)], f64> {
    %sz = tc.size "N"
    %x = tc.read %X[%i] : !tc.tensor<[I], f64>
    %y = tc.read %Y[%l, %sz] : !tc.tensor<[min(M, N), max(M + 1, N)], f64>
    %h = tc.builtin "hypot"(%x, %y) : (f64, f64) -> f64
    %e = tc.builtin "erfc"(%h) : (f64) -> f64
    %t = tc.builtin "exp10"(%e) : (f64) -> f64
    %d = tc.builtin "fdim"(%t, %x) : (f64, f64) -> f64
    %f = tc.builtin "fmod"(%d, %y) : (f64, f64) -> f64
    tc.yield %f : f64
  }
  %T = tc.comprehension @T(%a in [0, 2), %b in [0, 3)) "=" : !tc.tensor<[2, 3], i64> {
    %w = tc.read %W[%a, %b] : !tc.tensor<[2, 3], i1>
    %w64 = arith.extui %w : i1 to i64
    tc.yield %w64 : i64
  }
  %U = tc.comprehension @U() "+=!" (%c in [0, 2)) : !tc.tensor<[], ui32> {
    %one = arith.constant 1 : i32
    tc.yield %one : i32
  }
  tc.return %O : !tc.tensor<[(I + 1) floordiv 2, min(M, N)], f64>
}

// CHECK-NEXT:   tc.def @sizes<I, N, M>(X, Y, Z, W) -> (O) {
// CHECK-NEXT:   ^bb0(%X: !tc.tensor<[I], f64>, %Y: !tc.tensor<[min(M, N), max(M + 1, N)], f64>, %Z: !tc.tensor<[N - 4 * (N floordiv 4), (N + 3) floordiv 4, min(4, M, N), 2 * N + 1, 2 * M - N], f16>, %W: !tc.tensor<[2, 3], i1>):
// CHECK-NEXT:     %O = tc.comprehension @O(%i in [0, (I + 1) floordiv 2), %l in [0, min(M, N))) "=" : !tc.tensor<[(I + 1) floordiv 2, min(M, N)], f64> {
// CHECK-NEXT:       %sz = tc.size "N"
// CHECK-NEXT:       %x = tc.read %X[%i] : !tc.tensor<[I], f64>
// CHECK-NEXT:       %y = tc.read %Y[%l, %sz] : !tc.tensor<[min(M, N), max(M + 1, N)], f64>
// CHECK-NEXT:       %h = tc.builtin "hypot"(%x, %y) : (f64, f64) -> f64
// CHECK-NEXT:       %e = tc.builtin "erfc"(%h) : (f64) -> f64
// CHECK-NEXT:       %t = tc.builtin "exp10"(%e) : (f64) -> f64
// CHECK-NEXT:       %d = tc.builtin "fdim"(%t, %x) : (f64, f64) -> f64
// CHECK-NEXT:       %f = tc.builtin "fmod"(%d, %y) : (f64, f64) -> f64
// CHECK-NEXT:       tc.yield %f : f64
// CHECK-NEXT:     }
// CHECK-NEXT:     %T = tc.comprehension @T(%a in [0, 2), %b in [0, 3)) "=" : !tc.tensor<[2, 3], i64> {
// CHECK-NEXT:       %w = tc.read %W[%a, %b] : !tc.tensor<[2, 3], i1>
// CHECK-NEXT:       %w64 = arith.extui %w : i1 to i64
// CHECK-NEXT:       tc.yield %w64 : i64
// CHECK-NEXT:     }
// CHECK-NEXT:     %U = tc.comprehension @U() "+=!" (%c in [0, 2)) : !tc.tensor<[], ui32> {
// CHECK-NEXT:       %one = arith.constant 1 : i32
// CHECK-NEXT:       tc.yield %one : i32
// CHECK-NEXT:     }
// CHECK-NEXT:     tc.return %O : !tc.tensor<[(I + 1) floordiv 2, min(M, N)], f64>
// CHECK-NEXT:   }

// CHECK-GENERIC:        "tc.def"() <{sym_name = "sizes", sizes = ["I", "N", "M"], inputs = ["X", "Y", "Z", "W"], outputs = ["O"]}> ({
// CHECK-GENERIC-NEXT:   ^bb0(%X: !tc.tensor<[I], f64>, %Y: !tc.tensor<[min(M, N), max(M + 1, N)], f64>, %Z: !tc.tensor<[N - 4 * (N floordiv 4), (N + 3) floordiv 4, min(4, M, N), 2 * N + 1, 2 * M - N], f16>, %W: !tc.tensor<[2, 3], i1>):
// CHECK-GENERIC-NEXT:     %O = "tc.comprehension"() <{target = "O", op = "=", lower_bounds = ["0", "0"], upper_bounds = ["(I + 1) floordiv 2", "min(M, N)"]}> ({
// CHECK-GENERIC-NEXT:     ^bb0(%i: index, %l: index):
// CHECK-GENERIC-NEXT:       %sz = "tc.size"() <{size = "N"}> : () -> index
// CHECK-GENERIC-NEXT:       %x = "tc.read"(%X, %i) : (!tc.tensor<[I], f64>, index) -> f64
// CHECK-GENERIC-NEXT:       %y = "tc.read"(%Y, %l, %sz) : (!tc.tensor<[min(M, N), max(M + 1, N)], f64>, index, index) -> f64
// CHECK-GENERIC-NEXT:       %h = "tc.builtin"(%x, %y) <{callee = "hypot"}> : (f64, f64) -> f64
// CHECK-GENERIC-NEXT:       %e = "tc.builtin"(%h) <{callee = "erfc"}> : (f64) -> f64
// CHECK-GENERIC-NEXT:       %t = "tc.builtin"(%e) <{callee = "exp10"}> : (f64) -> f64
// CHECK-GENERIC-NEXT:       %d = "tc.builtin"(%t, %x) <{callee = "fdim"}> : (f64, f64) -> f64
// CHECK-GENERIC-NEXT:       %f = "tc.builtin"(%d, %y) <{callee = "fmod"}> : (f64, f64) -> f64
// CHECK-GENERIC-NEXT:       "tc.yield"(%f) : (f64) -> ()
// CHECK-GENERIC-NEXT:     }) : () -> !tc.tensor<[(I + 1) floordiv 2, min(M, N)], f64>

// A definition without inputs or outputs; attributes survive.
tc.def @empty<>() -> () {
  tc.return
} {note = "nothing"}

// CHECK-NEXT:   tc.def @empty<>() -> () {
// CHECK-NEXT:     tc.return
// CHECK-NEXT:   } {note = "nothing"}
// CHECK-NEXT: }

// CHECK-GENERIC:        "tc.def"() <{sym_name = "empty", sizes = [], inputs = [], outputs = []}> ({
// CHECK-GENERIC-NEXT:     "tc.return"() : () -> ()
// CHECK-GENERIC-NEXT:   }) {note = "nothing"} : () -> ()
// CHECK-GENERIC-NEXT: }) : () -> ()
