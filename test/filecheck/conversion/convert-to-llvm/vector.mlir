// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// Contiguous vector accesses: a GEP to the first element, then an llvm
// load/store of the vector type aligned to the element size (unaligned
// addresses are allowed); a scalar broadcast is insertelement + a zero-mask
// shufflevector; dense splat constants, arith and FMAs stay vector-typed.
func.func @axpy(%A: memref<?x?xf32>, %B: memref<?xf32>, %i: index, %j: index, %s: f32) {
  %a = vector.load %A[%i, %j] : memref<?x?xf32>, vector<8xf32>
  %b = vector.load %B[%j] : memref<?xf32>, vector<8xf32>
  %x = vector.broadcast %s : f32 to vector<8xf32>
  %two = arith.constant dense<2.0> : vector<8xf32>
  %m = arith.mulf %a, %two fastmath<reassoc> : vector<8xf32>
  %f = math.fma %x, %m, %b fastmath<reassoc,contract> : vector<8xf32>
  %g = vector.fma %x, %f, %b : vector<8xf32>
  %h = arith.maximumf %g, %a : vector<8xf32>
  vector.store %h, %B[%j] : memref<?xf32>, vector<8xf32>
  func.return
}

// CHECK:      llvm.func @axpy(%A: !llvm.ptr, %A_d0: i64, %A_d1: i64, %B: !llvm.ptr, %B_d0: i64, %i: i64, %j: i64, %s: f32) {
// CHECK-NEXT:   %0 = llvm.mul %i, %A_d1 overflow<nsw> : i64
// CHECK-NEXT:   %1 = llvm.add %0, %j overflow<nsw> : i64
// CHECK-NEXT:   %2 = llvm.getelementptr inbounds %A[%1] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %a = llvm.load %2 {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:   %3 = llvm.getelementptr inbounds %B[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %b = llvm.load %3 {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:   %4 = llvm.mlir.undef : vector<8xf32>
// CHECK-NEXT:   %5 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %6 = llvm.insertelement %s, %4[%5 : i32] : vector<8xf32>
// CHECK-NEXT:   %x = llvm.shufflevector %6, %4 [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>
// CHECK-NEXT:   %two = llvm.mlir.constant(dense<2.000000e+00> : vector<8xf32>) : vector<8xf32>
// CHECK-NEXT:   %m = llvm.fmul %a, %two {fastmathFlags = #llvm.fastmath<reassoc>} : vector<8xf32>
// CHECK-NEXT:   %f = llvm.intr.fma(%x, %m, %b) {fastmathFlags = #llvm.fastmath<reassoc,contract>} : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:   %g = llvm.intr.fma(%x, %f, %b) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:   %h = llvm.call_intrinsic "llvm.maximum.v8f32"(%g, %a) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:   %7 = llvm.getelementptr inbounds %B[%j] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %h, %7 {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// -----

// Reductions: fadd/fmul take the accumulator (or -0.0 / 1.0) as the start
// value and carry the fast-math flags (reassoc: a tree, else in order);
// min/max and integer kinds reduce, then combine with the accumulator.
func.func @reduce(%v: vector<16xf32>, %w: vector<4xi64>, %acc: f32, %iacc: i64) -> f32 {
  %r0 = vector.reduction <add>, %v, %acc fastmath<reassoc> : vector<16xf32> into f32
  %r1 = vector.reduction <mul>, %v : vector<16xf32> into f32
  %r2 = vector.reduction <maximumf>, %v, %r0 : vector<16xf32> into f32
  %r3 = vector.reduction <minnumf>, %v : vector<16xf32> into f32
  %i0 = vector.reduction <add>, %w, %iacc : vector<4xi64> into i64
  %i1 = vector.reduction <maxsi>, %w, %i0 : vector<4xi64> into i64
  %s = arith.addf %r1, %r2 : f32
  func.return %s : f32
}

// CHECK-LABEL: llvm.func @reduce(%v: vector<16xf32>, %w: vector<4xi64>, %acc: f32, %iacc: i64) -> f32 {
// CHECK-NEXT:   %r0 = llvm.call_intrinsic "llvm.vector.reduce.fadd.v16f32"(%acc, %v) {fastmathFlags = #llvm.fastmath<reassoc>} : (f32, vector<16xf32>) -> f32
// CHECK-NEXT:   %0 = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:   %r1 = llvm.call_intrinsic "llvm.vector.reduce.fmul.v16f32"(%0, %v) : (f32, vector<16xf32>) -> f32
// CHECK-NEXT:   %1 = llvm.call_intrinsic "llvm.vector.reduce.fmaximum.v16f32"(%v) : (vector<16xf32>) -> f32
// CHECK-NEXT:   %r2 = llvm.call_intrinsic "llvm.maximum.f32"(%1, %r0) : (f32, f32) -> f32
// CHECK-NEXT:   %r3 = llvm.call_intrinsic "llvm.vector.reduce.fmin.v16f32"(%v) : (vector<16xf32>) -> f32
// CHECK-NEXT:   %2 = llvm.call_intrinsic "llvm.vector.reduce.add.v4i64"(%w) : (vector<4xi64>) -> i64
// CHECK-NEXT:   %i0 = llvm.add %2, %iacc : i64
// CHECK-NEXT:   %3 = llvm.call_intrinsic "llvm.vector.reduce.smax.v4i64"(%w) : (vector<4xi64>) -> i64
// CHECK-NEXT:   %i1 = llvm.call_intrinsic "llvm.smax.i64"(%3, %i0) : (i64, i64) -> i64

// -----

// Masks: create_mask compares a lane-index constant with the splat bound;
// masked accesses are LLVM 22's llvm.masked.load/store (no alignment operand).
func.func @masked(%A: memref<?xf64>, %i: index, %n: index) {
  %mask = vector.create_mask %n : vector<4xi1>
  %zero = arith.constant dense<0.0> : vector<4xf64>
  %a = vector.maskedload %A[%i], %mask, %zero : memref<?xf64>, vector<4xi1>, vector<4xf64> into vector<4xf64>
  vector.maskedstore %A[%i], %mask, %a : memref<?xf64>, vector<4xi1>, vector<4xf64>
  func.return
}

// CHECK-LABEL: llvm.func @masked(%A: !llvm.ptr, %A_d0: i64, %i: i64, %n: i64) {
// CHECK-NEXT:   %0 = llvm.mlir.constant(dense<[0, 1, 2, 3]> : vector<4xi64>) : vector<4xi64>
// CHECK-NEXT:   %1 = llvm.mlir.undef : vector<4xi64>
// CHECK-NEXT:   %2 = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %3 = llvm.insertelement %n, %1[%2 : i32] : vector<4xi64>
// CHECK-NEXT:   %4 = llvm.shufflevector %3, %1 [0, 0, 0, 0] : vector<4xi64>
// CHECK-NEXT:   %mask = llvm.icmp "slt" %0, %4 : vector<4xi64>
// CHECK-NEXT:   %zero = llvm.mlir.constant(dense<0.000000e+00> : vector<4xf64>) : vector<4xf64>
// CHECK-NEXT:   %5 = llvm.getelementptr inbounds %A[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:   %a = llvm.call_intrinsic "llvm.masked.load.v4f64.p0"(%5, %mask, %zero) : (!llvm.ptr, vector<4xi1>, vector<4xf64>) -> vector<4xf64>
// CHECK-NEXT:   %6 = llvm.getelementptr inbounds %A[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:   llvm.call_intrinsic "llvm.masked.store.v4f64.p0"(%a, %6, %mask) : (vector<4xf64>, !llvm.ptr, vector<4xi1>) -> ()
// CHECK-NEXT:   llvm.return

// -----

// Integer min/max on vectors are intrinsics (llvm.select takes a scalar
// condition in xDSL); a scalar condition selects between vectors.
func.func @ints(%a: vector<8xi32>, %b: vector<8xi32>, %c: i1) -> vector<8xi32> {
  %x = arith.maxsi %a, %b : vector<8xi32>
  %y = arith.minui %a, %b : vector<8xi32>
  %z = arith.select %c, %x, %y : vector<8xi32>
  func.return %z : vector<8xi32>
}

// CHECK-LABEL: llvm.func @ints(%a: vector<8xi32>, %b: vector<8xi32>, %c: i1) -> vector<8xi32> {
// CHECK-NEXT:   %x = llvm.call_intrinsic "llvm.smax.v8i32"(%a, %b) : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CHECK-NEXT:   %y = llvm.call_intrinsic "llvm.umin.v8i32"(%a, %b) : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CHECK-NEXT:   %z = llvm.select %c, %x, %y : i1, vector<8xi32>
// CHECK-NEXT:   llvm.return %z : vector<8xi32>

// -----

// A two-input shuffle of 1-D vectors (register-tile's in-register transposes)
// is one shufflevector with the same mask; the result may be longer.
func.func @shuffle(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<8xf32> {
  %lo = vector.shuffle %a, %b [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
  %hi = vector.shuffle %a, %b [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
  %c = vector.shuffle %lo, %hi [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
  func.return %c : vector<8xf32>
}

// CHECK:      llvm.func @shuffle(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<8xf32> {
// CHECK-NEXT:   %lo = llvm.shufflevector %a, %b [0, 1, 4, 5] : vector<4xf32>
// CHECK-NEXT:   %hi = llvm.shufflevector %a, %b [2, 3, 6, 7] : vector<4xf32>
// CHECK-NEXT:   %c = llvm.shufflevector %lo, %hi [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xf32>
// CHECK-NEXT:   llvm.return %c : vector<8xf32>

// -----

// A non-temporal store with a larger alignment keeps both (as MLIR's
// vector-to-llvm does); extract_aligned_pointer_as_index is a ptrtoint.
func.func @stream(%O: memref<64xf32>, %v: vector<16xf32>, %i: index) -> index {
  vector.store %v, %O[%i] {alignment = 64 : i64, nontemporal = true} : memref<64xf32>, vector<16xf32>
  %p = "memref.extract_aligned_pointer_as_index"(%O) : (memref<64xf32>) -> index
  func.return %p : index
}

// CHECK:      llvm.func @stream(%O: !llvm.ptr, %v: vector<16xf32>, %i: i64) -> i64 {
// CHECK-NEXT:   %0 = llvm.getelementptr inbounds %O[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %v, %0 {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT:   %p = llvm.ptrtoint %O : !llvm.ptr to i64
// CHECK-NEXT:   llvm.return %p : i64
// CHECK-NEXT: }

// -----

// Vector stores and masked accesses: constant addends of the subscripts
// along dimensions of static stride become one constant offset after the
// rest (a register tile's rows then share a base register; the backend
// folds the offset into the displacement). The first GEP may point outside
// the array, so neither is `inbounds`. Plain loads keep the full index, and
// so does a dimension whose stride is dynamic (%D's first).
func.func @rows(%T: memref<32x16xf32>, %D: memref<4x?xf32>, %n: index, %d: index, %m: vector<16xi1>, %v: vector<16xf32>) {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %r = arith.addi %n, %c3 : index
  %s = arith.addi %c5, %r : index
  vector.store %v, %T[%s, %d] : memref<32x16xf32>, vector<16xf32>
  %l = vector.maskedload %T[%n, %r], %m, %v : memref<32x16xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
  vector.maskedstore %D[%r, %d], %m, %l : memref<4x?xf32>, vector<16xi1>, vector<16xf32>
  %x = vector.load %T[%r, %d] : memref<32x16xf32>, vector<16xf32>
  vector.store %x, %D[%n, %r] : memref<4x?xf32>, vector<16xf32>
  func.return
}

// CHECK-LABEL: llvm.func @rows(
// CHECK:        %[[A:.*]] = llvm.mul %n, %[[S16:.*]] overflow<nsw> : i64
// CHECK-NEXT:   %[[B:.*]] = llvm.add %[[A]], %d overflow<nsw> : i64
// CHECK-NEXT:   %[[P:.*]] = llvm.getelementptr %T[%[[B]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[Q:.*]] = llvm.getelementptr %[[P]][128] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %v, %[[Q]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT:   %[[C:.*]] = llvm.mul %n, %[[S16]] overflow<nsw> : i64
// CHECK-NEXT:   %[[E:.*]] = llvm.add %[[C]], %n overflow<nsw> : i64
// CHECK-NEXT:   %[[F:.*]] = llvm.getelementptr %T[%[[E]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[G:.*]] = llvm.getelementptr %[[F]][3] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   %l = llvm.call_intrinsic "llvm.masked.load.v16f32.p0"(%[[G]], %m, %v)
// CHECK-NEXT:   %[[H:.*]] = llvm.mul %r, %D_d1 overflow<nsw> : i64
// CHECK-NEXT:   %[[I:.*]] = llvm.add %[[H]], %d overflow<nsw> : i64
// CHECK-NEXT:   %[[J:.*]] = llvm.getelementptr inbounds %D[%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.call_intrinsic "llvm.masked.store.v16f32.p0"(%l, %[[J]], %m)
// CHECK-NEXT:   %[[K:.*]] = llvm.mul %r, %[[S16]] overflow<nsw> : i64
// CHECK-NEXT:   %[[L:.*]] = llvm.add %[[K]], %d overflow<nsw> : i64
// CHECK-NEXT:   %[[M:.*]] = llvm.getelementptr inbounds %T[%[[L]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %x = llvm.load %[[M]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NEXT:   %[[N:.*]] = llvm.mul %n, %D_d1 overflow<nsw> : i64
// CHECK-NEXT:   %[[O:.*]] = llvm.add %[[N]], %n overflow<nsw> : i64
// CHECK-NEXT:   %[[R:.*]] = llvm.getelementptr %D[%[[O]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[U:.*]] = llvm.getelementptr %[[R]][3] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %x, %[[U]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
