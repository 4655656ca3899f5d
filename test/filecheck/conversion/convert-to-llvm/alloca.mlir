// RUN: tc-opt %s -p convert-to-llvm | filecheck %s

// A static alloca inside a loop is placed in the entry block (64-byte
// aligned), so the loop reuses one buffer instead of growing the stack.
func.func @row(%A: memref<4x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  cf.br ^loop(%c0 : index)
^loop(%i: index):
  %buf = memref.alloca() : memref<8xf32>
  %x = memref.load %A[%i, %c0] : memref<4x8xf32>
  memref.store %x, %buf[%c0] : memref<8xf32>
  %y = memref.load %buf[%c0] : memref<8xf32>
  memref.store %y, %A[%i, %c1] : memref<4x8xf32>
  %next = arith.addi %i, %c1 : index
  %more = arith.cmpi slt, %next, %c4 : index
  cf.cond_br %more, ^loop(%next : index), ^done
^done:
  func.return
}

// CHECK-LABEL: llvm.func @row
// CHECK-NEXT:    %[[N:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %buf = llvm.alloca %[[N]] x f32 {alignment = 64 : i64}
// CHECK:         llvm.br
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.return
