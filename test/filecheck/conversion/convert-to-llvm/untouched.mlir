// RUN: tc-opt %s -p convert-to-llvm | filecheck %s

// What convert-to-llvm leaves alone: llvm.func definitions and declarations
// and llvm.mlir.global at the top level stay as they are (in place, before
// the translated functions' helpers and declarations); llvm ops inside a
// func.func are kept with their operands remapped; an existing declaration of
// a function the conversion calls (here `malloc`) is reused, not repeated.

llvm.mlir.global external @counter(7 : i64) {addr_space = 0 : i32} : i64
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @twice(%x: i64) -> i64 {
  %y = llvm.add %x, %x : i64
  llvm.return %y : i64
}

func.func @mixed(%n: index) -> index {
  %A = memref.alloc(%n) : memref<?xi8>
  %p = llvm.mlir.addressof @counter : !llvm.ptr
  %c = llvm.load %p : !llvm.ptr -> i64
  %i = builtin.unrealized_conversion_cast %c : i64 to index
  %s = arith.addi %i, %n : index
  func.return %s : index
}

// CHECK:      builtin.module {
// CHECK-NEXT:   llvm.mlir.global external @counter(7 : i64) {addr_space = 0 : i32} : i64
// CHECK-NEXT:   llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-NEXT:   llvm.func @twice(%x: i64) -> i64 {
// CHECK-NEXT:     %y = llvm.add %x, %x : i64
// CHECK-NEXT:     llvm.return %y : i64
// CHECK-NEXT:   }
// CHECK-NEXT:   llvm.func @mixed(%n: i64) -> i64 {
// CHECK-NEXT:     %0 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:     %1 = llvm.mul %n, %0 : i64
// CHECK-NEXT:     %A = llvm.call @malloc(%1) : (i64) -> !llvm.ptr
// CHECK-NEXT:     %p = llvm.mlir.addressof @counter : !llvm.ptr
// CHECK-NEXT:     %c = llvm.load %p : !llvm.ptr -> i64
// CHECK-NEXT:     %s = llvm.add %c, %n : i64
// CHECK-NEXT:     llvm.return %s : i64
// CHECK-NEXT:   }
// CHECK-NEXT: }
