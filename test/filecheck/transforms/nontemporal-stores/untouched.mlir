// RUN: tc-opt %s -p 'nontemporal-stores{vector-width=8 min-bytes=1024}' | filecheck %s

// Loops the pass must leave alone. Each function's loop would stream O out
// but for one thing.

// O below min-bytes (64 x 4 bytes).
func.func @small(%A: memref<64xf32>, %O: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %a = memref.load %A[%i] : memref<64xf32>
    memref.store %a, %O[%i] : memref<64xf32>
  }
  func.return
}

// A known trip count below 4 vectors.
func.func @short(%A: memref<1024xf32>, %O: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  scf.for %i = %c0 to %c31 step %c1 {
    %a = memref.load %A[%i] : memref<1024xf32>
    memref.store %a, %O[%i] : memref<1024xf32>
  }
  func.return
}

// The induction variable used in arithmetic.
func.func @iota(%N: index, %O: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %j = arith.index_cast %i : index to i32
    %x = arith.sitofp %j : i32 to f32
    memref.store %x, %O[%i] : memref<1024xf32>
  }
  func.return
}

// O read in the loop.
func.func @update(%N: index, %O: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %o = memref.load %O[%i] : memref<1024xf32>
    %d = arith.addf %o, %o : f32
    memref.store %d, %O[%i] : memref<1024xf32>
  }
  func.return
}

// Two stores; a store along a column; a transposed read.
func.func @others(%N: index, %A: memref<32x32xf32>, %O: memref<32x32xf32>, %P: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%c0, %i] : memref<32x32xf32>
    memref.store %a, %O[%c0, %i] : memref<32x32xf32>
    memref.store %a, %P[%c0, %i] : memref<32x32xf32>
  }
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%c0, %i] : memref<32x32xf32>
    memref.store %a, %O[%i, %c0] : memref<32x32xf32>
  }
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%i, %c0] : memref<32x32xf32>
    memref.store %a, %O[%c0, %i] : memref<32x32xf32>
  }
  func.return
}

// A step other than 1; a carried value.
func.func @shapes(%N: index, %A: memref<?xf32>, %O: memref<?xf32>, %Q: memref<1024xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.000000e+00 : f32
  scf.for %i = %c0 to %N step %c2 {
    %a = memref.load %A[%i] : memref<?xf32>
    memref.store %a, %O[%i] : memref<?xf32>
  }
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %N step %c1 iter_args(%acc = %zero) -> (f32) {
    %a = memref.load %A[%i] : memref<?xf32>
    memref.store %a, %Q[%i] : memref<1024xf32>
    %t = arith.addf %acc, %a : f32
    scf.yield %t : f32
  }
  func.return %s : f32
}

// f64: math.exp is not expanded on f64 (it would be a C call on vectors);
// i32 elements are not streamed.
func.func @types(%N: index, %A: memref<1024xf64>, %O: memref<1024xf64>, %I: memref<1024xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%i] : memref<1024xf64>
    %e = math.exp %a : f64
    memref.store %e, %O[%i] : memref<1024xf64>
  }
  %k = arith.constant 7 : i32
  scf.for %i = %c0 to %N step %c1 {
    memref.store %k, %I[%i] : memref<1024xi32>
  }
  func.return
}

// A load along %i from a strided array: not contiguous, no vector load.
func.func @strided(%N: index, %S: memref<1024xf32, strided<[2]>>, %O: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %s = memref.load %S[%i] : memref<1024xf32, strided<[2]>>
    memref.store %s, %O[%i] : memref<1024xf32>
  }
  func.return
}

// CHECK-NOT: nontemporal
// CHECK-NOT: extract_aligned_pointer
// CHECK-NOT: vector.
