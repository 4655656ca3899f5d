// RUN: tc-opt %s -p 'nontemporal-stores{vector-width=16 min-bytes=4096}' | filecheck %s

// An outlined elementwise chunk (dynamic bounds): constants and math ops go
// onto vectors with the loads along %i, the store is aligned to 64 bytes and
// non-temporal. O is also stored outside the rewritten loops, so its write
// prefetch stays.

func.func @chunk(%begin: index, %end: index, %A: memref<4096xf32>, %B: memref<4096xf32>, %O: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.000000e+00 : f32
  memref.store %zero, %O[%c0] : memref<4096xf32>
  memref.prefetch %O[%begin], write, locality<3>, data : memref<4096xf32>
  scf.for %i = %begin to %end step %c1 {
    %a = memref.load %A[%i] : memref<4096xf32>
    %b = memref.load %B[%i] : memref<4096xf32>
    %h = arith.constant 5.000000e-01 : f32
    %m = arith.mulf %a, %h : f32
    %e = math.exp %m : f32
    %r = arith.maxnumf %e, %b : f32
    memref.store %r, %O[%i] : memref<4096xf32>
  }
  func.return
}

// CHECK:         memref.prefetch %O[%begin], write, locality<3>, data : memref<4096xf32>
// CHECK:         %[[BASE:.*]] = "memref.extract_aligned_pointer_as_index"(%O) : (memref<4096xf32>) -> index
// CHECK:         %[[M63:.*]] = arith.constant 63 : index
// CHECK-NEXT:    arith.andi %{{.*}}, %[[M63]] : index
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK:         scf.for %i = %begin to %[[VS:.*]] step %c1 {
// CHECK:           math.exp %m : f32
// CHECK:         }
// CHECK-NEXT:    scf.for %i_1 = %[[VS]] to %[[VE:.*]] step %{{.*}} {
// CHECK-NEXT:      %a_1 = vector.load %A[%i_1] : memref<4096xf32>, vector<16xf32>
// CHECK-NEXT:      %b_1 = vector.load %B[%i_1] : memref<4096xf32>, vector<16xf32>
// CHECK-NEXT:      %h_1 = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[HB:.*]] = vector.broadcast %h_1 : f32 to vector<16xf32>
// CHECK-NEXT:      %m_1 = arith.mulf %a_1, %[[HB]] : vector<16xf32>
// CHECK-NEXT:      %e_1 = math.exp %m_1 : vector<16xf32>
// CHECK-NEXT:      %r_1 = arith.maxnumf %e_1, %b_1 : vector<16xf32>
// CHECK-NEXT:      vector.store %r_1, %O[%i_1] {alignment = 64 : i64, nontemporal = true} : memref<4096xf32>, vector<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i_2 = %[[VE]] to %end step %c1 {
// CHECK:           memref.store %r_2, %O[%i_2] : memref<4096xf32>
// CHECK-NEXT:    }

// f64 elements: vector-width counts 32-bit lanes, so 8 doubles, 64 bytes.

func.func @double(%N: index, %A: memref<1024xf64>, %O: memref<1024xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%i] : memref<1024xf64>
    %s = math.sqrt %a : f64
    memref.store %s, %O[%i] : memref<1024xf64>
  }
  func.return
}

// CHECK-LABEL: func.func @double
// CHECK:         %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    arith.muli %{{.*}}, %[[EIGHT]] : index
// CHECK:         scf.for %i_1 =
// CHECK-NEXT:      %a_1 = vector.load %A[%i_1] : memref<1024xf64>, vector<8xf64>
// CHECK-NEXT:      %s_1 = math.sqrt %a_1 : vector<8xf64>
// CHECK-NEXT:      vector.store %s_1, %O[%i_1] {alignment = 64 : i64, nontemporal = true} : memref<1024xf64>, vector<8xf64>

// Dynamic extents: the size is checked at run time; the vector loop runs only
// when O holds at least min-bytes (4096) bytes and its address is a multiple
// of the element size.

func.func @dynamic(%N: index, %A: memref<?x?xf32>, %O: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %a = memref.load %A[%c1, %i] : memref<?x?xf32>
    memref.store %a, %O[%c1, %i] : memref<?x?xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[COLS:.*]] = memref.dim %O, %[[ONE]] : memref<?x?xf32>
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %c1, %[[COLS]] : index
// CHECK-NEXT:    %[[LIN:.*]] = arith.addi %[[ROW]], %c0 : index
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ROWS:.*]] = memref.dim %O, %[[ZERO]] : memref<?x?xf32>
// CHECK-NEXT:    %[[S0:.*]] = arith.muli %[[FOUR]], %[[ROWS]] : index
// CHECK-NEXT:    %[[S1:.*]] = arith.muli %[[S0]], %[[COLS]] : index
// CHECK-NEXT:    %[[MIN:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    %[[BIG:.*]] = arith.cmpi uge, %[[S1]], %[[MIN]] : index
// CHECK-NEXT:    %[[BOTH:.*]] = arith.andi %[[OK]], %[[BIG]] : i1
// CHECK-NEXT:    arith.select %[[BOTH]], %{{.*}}, %N : index
// CHECK:         vector.store %a_1, %O[%c1, %i_1] {alignment = 64 : i64, nontemporal = true} : memref<?x?xf32>, vector<16xf32>
