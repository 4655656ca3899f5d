// RUN: tc-opt %s | filecheck %s
// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// Round trip of tcrt.parallel_for, in custom and generic form: the callee
// takes the chunk's [begin, end) and then the captures, in order.

func.func @body(%begin: index, %end: index, %lb: index, %A: memref<?xf32>) {
  func.return
}

func.func @no_captures(%begin: index, %end: index) {
  func.return
}

func.func @launch(%n: index, %lb: index, %A: memref<?xf32>) {
  tcrt.parallel_for @body(%n) (%lb, %A) : (index, memref<?xf32>)
  tcrt.parallel_for @no_captures(%n) () : ()
  func.return
}

// CHECK:      func.func @launch(%n: index, %lb: index, %A: memref<?xf32>) {
// CHECK-NEXT:   tcrt.parallel_for @body(%n) (%lb, %A) : (index, memref<?xf32>)
// CHECK-NEXT:   tcrt.parallel_for @no_captures(%n) () : ()
// CHECK-NEXT:   func.return
// CHECK-NEXT: }

// CHECK-GENERIC:      "tcrt.parallel_for"(%n, %lb, %A) <{callee = @body}> : (index, index, memref<?xf32>) -> ()
// CHECK-GENERIC-NEXT: "tcrt.parallel_for"(%n) <{callee = @no_captures}> : (index) -> ()
