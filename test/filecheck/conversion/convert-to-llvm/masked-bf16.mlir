// RUN: tc-opt %s -p convert-to-llvm | filecheck %s

// Masked accesses of bf16 vectors move i16 vectors, bit-cast: x86-64 without
// AVX512-BF16 would scalarise a masked `bfloat` access through float and
// round each lane back with `__truncsfbf2`, which the CPU JIT's process lacks.
// Other element types keep their own (vector.mlir, @masked).

// CHECK-LABEL: llvm.func @masked_bf16(
// CHECK:         %[[Z:.*]] = llvm.bitcast %zero : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT:    %[[L:.*]] = llvm.call_intrinsic "llvm.masked.load.v8i16.p0"(%{{.*}}, %mask, %[[Z]]) : (!llvm.ptr, vector<8xi1>, vector<8xi16>) -> vector<8xi16>
// CHECK-NEXT:    %a = llvm.bitcast %[[L]] : vector<8xi16> to vector<8xbf16>
// CHECK:         %[[S:.*]] = llvm.bitcast %a : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT:    llvm.call_intrinsic "llvm.masked.store.v8i16.p0"(%[[S]], %{{.*}}, %mask) : (vector<8xi16>, !llvm.ptr, vector<8xi1>) -> ()
// CHECK-NOT:     bf16
func.func @masked_bf16(%A: memref<?xbf16>, %B: memref<?xbf16>, %i: index, %n: index) {
  %mask = vector.create_mask %n : vector<8xi1>
  %zero = arith.constant dense<0.0> : vector<8xbf16>
  %a = vector.maskedload %A[%i], %mask, %zero : memref<?xbf16>, vector<8xi1>, vector<8xbf16> into vector<8xbf16>
  vector.maskedstore %B[%i], %mask, %a : memref<?xbf16>, vector<8xi1>, vector<8xbf16>
  func.return
}
