// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Every verifier check of the tc dialect (and the type parser's), one chunk
// each. The custom form is used where it can express the bad IR, else the
// generic form.

// tc.read takes one subscript per dimension.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i, %i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[N], f32>
}

// CHECK:      %a = "tc.read"(%A, %i, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.read of a rank-1 tensor needs 1 subscript, got 2
// CHECK:      -----

// -----

tc.def @f<M, N>(A) -> () {
^bb0(%A: !tc.tensor<[M, N], f32>):
  %B = tc.comprehension @B() "=" : !tc.tensor<[], f32> {
    %a = "tc.read"(%A) : (!tc.tensor<[M, N], f32>) -> f32
    tc.yield %a : f32
  }
  tc.return
}

// CHECK:      %a = "tc.read"(%A)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.read of a rank-2 tensor needs 2 subscripts, got 0
// CHECK:      -----

// -----

// The result of tc.read is the (signless) element type.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f64> {
    %a = "tc.read"(%A, %i) : (!tc.tensor<[N], f32>, index) -> f64
    tc.yield %a : f64
  }
  tc.return %B : !tc.tensor<[N], f64>
}

// CHECK:      %a = "tc.read"(%A, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.read result type f64 does not match the element type f32: expected f32
// CHECK:      -----

// -----

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], ui8>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], ui8> {
    %a = "tc.read"(%A, %i) : (!tc.tensor<[N], ui8>, index) -> ui8
    tc.yield %a : ui8
  }
  tc.return
}

// CHECK:      %a = "tc.read"(%A, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.read result type ui8 does not match the element type ui8: expected i8 (reads give signless values)
// CHECK:      -----

// -----

// tc.read reads a tensor.

tc.def @f<>() -> () {
  %B = tc.comprehension @B() "=" : !tc.tensor<[], f32> {
    %c = arith.constant 1.0 : f32
    %a = "tc.read"(%c) : (f32) -> f32
    tc.yield %a : f32
  }
  tc.return
}

// CHECK:      %a = "tc.read"(%c)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operand 'tensor' at position 0 does not verify:
// CHECK:      -----

// -----

// Output indices start at 0.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [1, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[N], f32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: output index #0 must start at 0, not at 1
// CHECK:      -----

// -----

// The upper bound of an output index is the extent of the result.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N - 1)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[N], f32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: output index #0 ranges up to N - 1 but the result extent is N
// CHECK:      -----

// -----

// '=' has no reduction indices.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B() "=" (%i in [0, N)) : !tc.tensor<[], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[], f32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: '=' comprehension cannot have reduction indices
// CHECK:      -----

// -----

// A reduction without '!' accumulates 'into' a previous value.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B() "+=" (%i in [0, N)) : !tc.tensor<[], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[], f32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: '+=' accumulates: it needs an 'into' operand
// CHECK:      -----

// -----

// A reduction with '!' starts from the identity: no 'into'.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B0 = tc.comprehension @B() "=" : !tc.tensor<[], f32> {
    %c = arith.constant 0.0 : f32
    tc.yield %c : f32
  }
  %B = tc.comprehension @B() "max=!" (%i in [0, N)) into %B0 : !tc.tensor<[], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[], f32>
}

// CHECK:      %B = "tc.comprehension"(%B0)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'max=!' does not accumulate: no 'into' operand allowed
// CHECK:      -----

// -----

// Neither does '='.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" into %A : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[N], f32>
}

// CHECK:      %B = "tc.comprehension"(%A)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: '=' does not accumulate: no 'into' operand allowed
// CHECK:      -----

// -----

// 'into' has the type of the result.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B0 = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = [], upper_bounds = []}> ({
    %c = "arith.constant"() <{value = 0.0 : f64}> : () -> f64
    "tc.yield"(%c) : (f64) -> ()
  }) : () -> !tc.tensor<[], f64>
  %B = "tc.comprehension"(%B0) <{target = "B", op = "*=", lower_bounds = [], upper_bounds = []}> ({
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : (!tc.tensor<[], f64>) -> !tc.tensor<[], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"(%B0)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'into' operand type !tc.tensor<[], f64> does not match the result type !tc.tensor<[], f32>
// CHECK:      -----

// -----

// In the custom form, 'into' is resolved with the result type.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B0 = tc.comprehension @B() "=" : !tc.tensor<[], f64> {
    %c = arith.constant 0.0 : f64
    tc.yield %c : f64
  }
  %B = tc.comprehension @B() "*=" (%i in [0, N)) into %B0 : !tc.tensor<[], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[], f32>
}

// CHECK:      {{.*}}invalid.mlir:234:55
// CHECK-NEXT:   %B = tc.comprehension @B() "*=" (%i in [0, N)) into %B0 : !tc.tensor<[], f32> {
// CHECK-NEXT: ^^^
// CHECK-NEXT: operand is used with type !tc.tensor<[], f32>, but has been previously used or defined with type !tc.tensor<[], f64>
// CHECK:      -----

// -----

// The body yields the (signless) element type of the result.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], i32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[N], i32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: body yields f32 but the result element type needs i32
// CHECK:      -----

// -----

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], ui8>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], ui16> {
    %a = tc.read %A[%i] : !tc.tensor<[N], ui8>
    tc.yield %a : i8
  }
  tc.return %B : !tc.tensor<[N], ui16>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: body yields i8 but the result element type needs i16
// CHECK:      -----

// -----

// The body of a comprehension ends in tc.yield.

"tc.def"() <{sym_name = "f", sizes = [], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = [], upper_bounds = []}> ({
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
  }) : () -> !tc.tensor<[], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      Operation arith.constant terminates block in single-block region but is not a terminator
// CHECK:      -----

// -----

"tc.def"() <{sym_name = "f", sizes = [], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = [], upper_bounds = []}> ({
    "tc.return"() : () -> ()
  }) : () -> !tc.tensor<[], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      "tc.return"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'tc.return' expects parent op 'tc.def'
// CHECK:      -----

// -----

// Index variables have type index.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = ["0"], upper_bounds = ["N"]}> ({
  ^bb0(%i: i32):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: index variables must be of type index, got i32
// CHECK:      -----

// -----

// One lower and one upper bound per index variable.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = ["0", "0"], upper_bounds = ["N"]}> ({
  ^bb0(%i: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 1 index variable but 2 lower and 1 upper bounds
// CHECK:      -----

// -----

// One output index per dimension of the result.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = ["0"], upper_bounds = ["N"]}> ({
  ^bb0(%i: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N, N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result has rank 2 but there is only 1 index variable
// CHECK:      -----

// -----

// The assignment operator is one of TC's.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "-=", lower_bounds = ["0"], upper_bounds = ["N"]}> ({
  ^bb0(%i: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: unknown assignment operator '-='
// CHECK:      -----

// -----

// Size texts in the generic form must be canonical ...

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = ["0"], upper_bounds = ["1 + N"]}> ({
  ^bb0(%i: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N + 1], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: upper bound: size expression '1 + N' is not canonical
// CHECK:      -----

// -----

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "+=!", lower_bounds = ["0", "00"], upper_bounds = ["N", "N"]}> ({
  ^bb0(%i: index, %j: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: lower bound: size expression '00' is not canonical
// CHECK:      -----

// -----

// ... and valid.

"tc.def"() <{sym_name = "f", sizes = ["N"], inputs = [], outputs = []}> ({
  %B = "tc.comprehension"() <{target = "B", op = "=", lower_bounds = ["0"], upper_bounds = ["N * N"]}> ({
  ^bb0(%i: index):
    %c = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
    "tc.yield"(%c) : (f32) -> ()
  }) : () -> !tc.tensor<[N], f32>
  "tc.return"() : () -> ()
}) : () -> ()

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: output index #0 ranges up to N * N but the result extent is N
// CHECK:      -----

// -----

// Ranges use the sizes of the enclosing definition only.

tc.def @f<N>(A) -> (B) {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B() "+=!" (%i in [0, M)) : !tc.tensor<[], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    tc.yield %a : f32
  }
  tc.return %B : !tc.tensor<[], f32>
}

// CHECK:      %B = "tc.comprehension"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: upper bound 'M' uses M, which is not a size of @f
// CHECK:      -----

// -----

// So do the types of the inputs.

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N, K + M], f32>):
  tc.return
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: input extent 'K + M' uses K, M, which are not sizes of @f
// CHECK:      -----

// -----

// tc.size reads a size of the enclosing definition.

tc.def @f<N>() -> (B) {
  %B = tc.comprehension @B() "=" : !tc.tensor<[], i32> {
    %m = tc.size "M"
    %v = arith.index_cast %m : index to i32
    tc.yield %v : i32
  }
  tc.return %B : !tc.tensor<[], i32>
}

// CHECK:      %m = "tc.size"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'M' is not a size of @f
// CHECK:      -----

// -----

// tc.builtin calls one of the builtins that have no math op ...

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    %e = tc.builtin "no_such_fn"(%a) : (f32) -> f32
    tc.yield %e : f32
  }
  tc.return
}

// CHECK:      %e = "tc.builtin"(%a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: unknown builtin 'no_such_fn'
// CHECK:      -----

// -----

// ... with its number of arguments ...

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    %e = tc.builtin "hypot"(%a) : (f32) -> f32
    tc.yield %e : f32
  }
  tc.return
}

// CHECK:      %e = "tc.builtin"(%a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'hypot' takes 2 arguments, got 1
// CHECK:      -----

// -----

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    %e = tc.builtin "erfc"(%a, %a) : (f32, f32) -> f32
    tc.yield %e : f32
  }
  tc.return
}

// CHECK:      %e = "tc.builtin"(%a, %a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'erfc' takes 1 argument, got 2
// CHECK:      -----

// -----

// ... on floats ...

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], i32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], i32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], i32>
    %e = tc.builtin "erfc"(%a) : (i32) -> i32
    tc.yield %e : i32
  }
  tc.return
}

// CHECK:      %e = "tc.builtin"(%a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'erfc' needs a float type, got i32
// CHECK:      -----

// -----

// ... of one type.

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], f32>):
  %B = tc.comprehension @B(%i in [0, N)) "=" : !tc.tensor<[N], f32> {
    %a = tc.read %A[%i] : !tc.tensor<[N], f32>
    %d = arith.extf %a : f32 to f64
    %e = tc.builtin "fdim"(%a, %d) : (f32, f64) -> f32
    tc.yield %e : f32
  }
  tc.return
}

// CHECK:      %e = "tc.builtin"(%a, %d)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'fdim' operand type f64 differs from f32
// CHECK:      -----

// -----

// The entry block has one argument per declared input ...

tc.def @f<N>(A, B) -> () {
^bb0(%A: !tc.tensor<[N], f32>):
  tc.return
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: @f declares 2 inputs but its body has 1 argument
// CHECK:      -----

// -----

// ... and tc.return one value per declared output.

tc.def @f<N>(A) -> (B, C) {
^bb0(%A: !tc.tensor<[N], f32>):
  tc.return %A : !tc.tensor<[N], f32>
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: @f declares 2 outputs but tc.return has 1 value
// CHECK:      -----

// -----

// Sizes, inputs and outputs share one namespace.

tc.def @f<N>(N) -> () {
^bb0(%N: !tc.tensor<[N], f32>):
  tc.return
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: name 'N' is declared twice in @f
// CHECK:      -----

// -----

tc.def @f<N>(A) -> (A) {
^bb0(%A: !tc.tensor<[N], f32>):
  tc.return %A : !tc.tensor<[N], f32>
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: name 'A' is declared twice in @f
// CHECK:      -----

// -----

tc.def @f<N, M, N>() -> () {
  tc.return
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: name 'N' is declared twice in @f
// CHECK:      -----

// -----

// Inputs and outputs are tensors.

tc.def @f<>(a) -> () {
^bb0(%a: f32):
  tc.return
}

// CHECK:      "tc.def"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.def input must be a !tc.tensor, got f32
// CHECK:      -----

// -----

"tc.def"() <{sym_name = "f", sizes = [], inputs = [], outputs = ["x"]}> ({
  %x = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
  "tc.return"(%x) : (f32) -> ()
}) : () -> ()

// CHECK:      "tc.return"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: tc.return operand must be a !tc.tensor, got f32
// CHECK:      -----

// -----

// tc.def ends in tc.return.

"tc.def"() <{sym_name = "f", sizes = [], inputs = [], outputs = []}> ({
  %x = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
}) : () -> ()

// CHECK:      Operation arith.constant terminates block in single-block region but is not a terminator
// CHECK:      -----

// -----

// tc.yield belongs in a tc.comprehension.

func.func @g(%x: f32) {
  "tc.yield"(%x) : (f32) -> ()
}

// CHECK:      "tc.yield"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'tc.yield' expects parent op 'tc.comprehension'
// CHECK:      -----

// -----

// The element type of a tensor is an integer or float type.

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], index>):
  tc.return
}

// CHECK:      {{.*}}invalid.mlir:697:26
// CHECK-NEXT: ^bb0(%A: !tc.tensor<[N], index>):
// CHECK-NEXT: ^^^
// CHECK-NEXT: tc.tensor element type must be an integer or float type, got index
// CHECK:      -----

// -----

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N], !tc.tensor<[N], f32>>):
  tc.return
}

// CHECK:      {{.*}}invalid.mlir:710:26
// CHECK-NEXT: ^bb0(%A: !tc.tensor<[N], !tc.tensor<[N], f32>>):
// CHECK-NEXT: ^^^
// CHECK-NEXT: tc.tensor element type must be an integer or float type, got !tc.tensor<[N], f32>
// CHECK:      -----

// -----

// Extents are (quasi-affine) size expressions.

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N + ], f32>):
  tc.return
}

// CHECK:      {{.*}}invalid.mlir:725:22
// CHECK-NEXT: ^bb0(%A: !tc.tensor<[N + ], f32>):
// CHECK-NEXT: ^^^
// CHECK-NEXT: invalid size expression 'N +': expected a token in size expression
// CHECK:      -----

// -----

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N floordiv 0], f32>):
  tc.return
}

// CHECK:      {{.*}}invalid.mlir:738:22
// CHECK-NEXT: ^bb0(%A: !tc.tensor<[N floordiv 0], f32>):
// CHECK-NEXT: ^^^
// CHECK-NEXT: invalid size expression 'N floordiv 0': floordiv by non-positive constant 0
// CHECK:      -----

// -----

// Constant extents are not negative.

tc.def @f<N>(A) -> () {
^bb0(%A: !tc.tensor<[N, 1 - 3], f32>):
  tc.return
}

// CHECK:      {{.*}}invalid.mlir:753:25
// CHECK-NEXT: ^bb0(%A: !tc.tensor<[N, 1 - 3], f32>):
// CHECK-NEXT: ^^^
// CHECK-NEXT: tc.tensor extent -2 is negative
