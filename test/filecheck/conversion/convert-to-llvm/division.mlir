// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// Signed division: y == 0 gives 0, y == -1 negates x (wrapping), no trap.
func.func @divsi(%x: i32, %y: i32) -> i32 {
  %q = arith.divsi %x, %y : i32
  func.return %q : i32
}

// CHECK:      llvm.func @divsi(%x: i32, %y: i32) -> i32 {
// CHECK-NEXT:   %0 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %1 = llvm.icmp "eq" %y, %0 : i32
// CHECK-NEXT:   %2 = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %3 = llvm.icmp "eq" %y, %2 : i32
// CHECK-NEXT:   %4 = llvm.or %1, %3 : i1
// CHECK-NEXT:   %5 = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %6 = llvm.select %4, %5, %y : i1, i32
// CHECK-NEXT:   %7 = llvm.sdiv %x, %6 : i32
// CHECK-NEXT:   %8 = llvm.sub %0, %7 : i32
// CHECK-NEXT:   %9 = llvm.select %3, %8, %7 : i1, i32
// CHECK-NEXT:   %q = llvm.select %1, %0, %9 : i1, i32
// CHECK-NEXT:   llvm.return %q : i32
// CHECK-NEXT: }

// -----

// Remainders: the divisor is replaced by 1 when it is 0 (or -1, signed).
func.func @rem(%x: i64, %y: i64) -> i64 {
  %r = arith.remsi %x, %y : i64
  %u = arith.remui %x, %y : i64
  %s = arith.addi %r, %u : i64
  func.return %s : i64
}

// CHECK:      llvm.func @rem(%x: i64, %y: i64) -> i64 {
// CHECK:        %[[SAFE:.*]] = llvm.select %{{.*}}, %{{.*}}, %y : i1, i64
// CHECK-NEXT:   %r = llvm.srem %x, %[[SAFE]] : i64
// CHECK-NEXT:   %[[ZERO:.*]] = llvm.icmp "eq" %y, %{{.*}} : i64
// CHECK-NEXT:   %[[USAFE:.*]] = llvm.select %[[ZERO]], %{{.*}}, %y : i1, i64
// CHECK-NEXT:   %u = llvm.urem %x, %[[USAFE]] : i64

// -----

// Unsigned division by zero gives 0.
func.func @divui(%x: i16, %y: i16) -> i16 {
  %q = arith.divui %x, %y : i16
  func.return %q : i16
}

// CHECK:      llvm.func @divui(%x: i16, %y: i16) -> i16 {
// CHECK-NEXT:   %0 = llvm.mlir.constant(0 : i16) : i16
// CHECK-NEXT:   %1 = llvm.icmp "eq" %y, %0 : i16
// CHECK-NEXT:   %2 = llvm.mlir.constant(1 : i16) : i16
// CHECK-NEXT:   %3 = llvm.select %1, %2, %y : i1, i16
// CHECK-NEXT:   %4 = llvm.udiv %x, %3 : i16
// CHECK-NEXT:   %q = llvm.select %1, %0, %4 : i1, i16
// CHECK-NEXT:   llvm.return %q : i16
// CHECK-NEXT: }

// -----

// A constant divisor other than 0 and -1 needs no guard; floordivsi still
// adjusts the truncated quotient when the remainder's sign differs from y's.
func.func @floordiv_const(%x: index) -> index {
  %c4 = arith.constant 4 : index
  %q = arith.floordivsi %x, %c4 : index
  func.return %q : index
}

// CHECK:      llvm.func @floordiv_const(%x: i64) -> i64 {
// CHECK-NEXT:   %c4 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %0 = llvm.sdiv %x, %c4 : i64
// CHECK-NEXT:   %1 = llvm.srem %x, %c4 : i64
// CHECK-NEXT:   %2 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %3 = llvm.icmp "ne" %1, %2 : i64
// CHECK-NEXT:   %4 = llvm.icmp "slt" %1, %2 : i64
// CHECK-NEXT:   %5 = llvm.icmp "slt" %c4, %2 : i64
// CHECK-NEXT:   %6 = llvm.xor %4, %5 : i1
// CHECK-NEXT:   %7 = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %8 = llvm.and %3, %6 : i1
// CHECK-NEXT:   %9 = llvm.add %0, %7 : i64
// CHECK-NEXT:   %q = llvm.select %8, %9, %0 : i1, i64
// CHECK-NEXT:   llvm.return %q : i64
// CHECK-NEXT: }

// -----

// ceildivsi: +1 when the remainder is non-zero with the sign of y.
func.func @ceildiv(%x: i32, %y: i32) -> i32 {
  %c = arith.constant -1 : i32
  %q = arith.ceildivsi %x, %y : i32
  %z = arith.divsi %x, %c : i32
  %s = arith.addi %q, %z : i32
  func.return %s : i32
}

// CHECK:      llvm.func @ceildiv(%x: i32, %y: i32) -> i32 {
// CHECK:        %[[REM:.*]] = llvm.srem %x, %{{.*}} : i32
// CHECK:        %[[RNEG:.*]] = llvm.icmp "slt" %[[REM]], %{{.*}} : i32
// CHECK-NEXT:   %[[YNEG:.*]] = llvm.icmp "slt" %y, %{{.*}} : i32
// CHECK-NEXT:   %[[SAME:.*]] = llvm.icmp "eq" %[[RNEG]], %[[YNEG]] : i1
// CHECK-NEXT:   %[[ADJ:.*]] = llvm.and %{{.*}}, %[[SAME]] : i1
// CHECK-NEXT:   %[[UP:.*]] = llvm.add %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:   %q = llvm.select %[[ADJ]], %[[UP]], %{{.*}} : i1, i32
// A constant -1 divisor keeps the guard (INT_MIN / -1).
// CHECK:        llvm.icmp "eq" %c, %{{.*}} : i32
// CHECK:        %z = llvm.select
