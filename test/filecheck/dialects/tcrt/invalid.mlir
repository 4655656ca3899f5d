// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// tcrt.parallel_for needs an `index` count and a func.func callee that takes
// (index, index, captures...) and returns nothing.

func.func @f(%n: index) {
  tcrt.parallel_for @missing(%n) () : ()
  func.return
}

// CHECK: Operation does not verify: '@missing' does not reference a func.func

// -----

llvm.func @g()

func.func @f(%n: index) {
  tcrt.parallel_for @g(%n) () : ()
  func.return
}

// CHECK: Operation does not verify: '@g' does not reference a func.func

// -----

func.func @body(%begin: index, %end: index, %x: f32) {
  func.return
}

func.func @f(%n: index, %x: i32) {
  tcrt.parallel_for @body(%n) (%x) : (i32)
  func.return
}

// CHECK: Operation does not verify: callee @body takes (index, index, f32); expected (index, index, i32)

// -----

func.func @body(%begin: index) {
  func.return
}

func.func @f(%n: index) {
  tcrt.parallel_for @body(%n) () : ()
  func.return
}

// CHECK: Operation does not verify: callee @body takes (index); expected (index, index)

// -----

func.func @body(%begin: index, %end: index) -> index {
  func.return %begin : index
}

func.func @f(%n: index) {
  tcrt.parallel_for @body(%n) () : ()
  func.return
}

// CHECK: Operation does not verify: callee @body must not return values

// -----

func.func @body(%begin: index, %end: index) {
  func.return
}

func.func @f(%n: i64) {
  "tcrt.parallel_for"(%n) <{callee = @body}> : (i64) -> ()
  func.return
}

// CHECK: Operation does not verify: operand 'count' at position 0 does not verify:
// CHECK-NEXT: i64 should be of base attribute index
