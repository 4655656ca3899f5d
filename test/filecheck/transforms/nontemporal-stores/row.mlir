// RUN: tc-opt %s -p 'nontemporal-stores{vector-width=8 min-bytes=0}' | filecheck %s

// softmax's last row loop: the row of O is stored from its first 32-byte
// aligned element on with aligned non-temporal vector stores, between a
// scalar peel and a scalar remainder; the invariant load is broadcast. The
// write prefetch of O goes (every store of O is in the rewritten loops), the
// read prefetch of I stays.

func.func @row(%n: index, %I: memref<64x1024xf32>, %e: memref<1024xf32>, %s: memref<f32>, %O: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  memref.prefetch %I[%n, %c0], read, locality<3>, data : memref<64x1024xf32>
  memref.prefetch %O[%n, %c0], write, locality<3>, data : memref<64x1024xf32>
  scf.for %d = %c0 to %c1024 step %c1 {
    %x = memref.load %e[%d] : memref<1024xf32>
    %t = memref.load %s[] : memref<f32>
    %q = arith.divf %x, %t : f32
    memref.store %q, %O[%n, %d] : memref<64x1024xf32>
  }
  func.return
}

// CHECK:       func.func @row(%n: index, %I: memref<64x1024xf32>, %e: memref<1024xf32>, %s: memref<f32>, %O: memref<64x1024xf32>) {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c1024 = arith.constant 1024 : index
// CHECK-NEXT:    memref.prefetch %I[%n, %c0], read, locality<3>, data : memref<64x1024xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = arith.constant 1024 : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %n, %[[ROWS]] : index
// CHECK-NEXT:    %[[LIN:.*]] = arith.addi %[[ROW]], %c0 : index
// CHECK-NEXT:    %[[BASE:.*]] = "memref.extract_aligned_pointer_as_index"(%O) : (memref<64x1024xf32>) -> index
// CHECK-NEXT:    %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[OFF:.*]] = arith.muli %[[LIN]], %[[FOUR]] : index
// CHECK-NEXT:    %[[ADDR:.*]] = arith.addi %[[BASE]], %[[OFF]] : index
// CHECK-NEXT:    %[[M31:.*]] = arith.constant 31 : index
// CHECK-NEXT:    %[[MIS:.*]] = arith.andi %[[ADDR]], %[[M31]] : index
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[GAP0:.*]] = arith.subi %[[C32]], %[[MIS]] : index
// CHECK-NEXT:    %[[M31B:.*]] = arith.constant 31 : index
// CHECK-NEXT:    %[[GAP:.*]] = arith.andi %[[GAP0]], %[[M31B]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[PEEL:.*]] = arith.divui %[[GAP]], %[[C4]] : index
// CHECK-NEXT:    %[[START0:.*]] = arith.addi %c0, %[[PEEL]] : index
// CHECK-NEXT:    %[[START:.*]] = arith.minsi %[[START0]], %c1024 : index
// CHECK-NEXT:    %[[M3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ODD:.*]] = arith.andi %[[ADDR]], %[[M3]] : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi eq, %[[ODD]], %[[Z]] : index
// CHECK-NEXT:    %[[VS:.*]] = arith.select %[[OK]], %[[START]], %c1024 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %c1024, %[[VS]] : index
// CHECK-NEXT:    %[[L8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[NV:.*]] = arith.divui %[[SPAN]], %[[L8]] : index
// CHECK-NEXT:    %[[L8B:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.muli %[[NV]], %[[L8B]] : index
// CHECK-NEXT:    %[[VE:.*]] = arith.addi %[[VS]], %[[LEN]] : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 8 : index
// CHECK-NEXT:    scf.for %d = %c0 to %[[VS]] step %c1 {
// CHECK-NEXT:      %x = memref.load %e[%d] : memref<1024xf32>
// CHECK-NEXT:      %t = memref.load %s[] : memref<f32>
// CHECK-NEXT:      %q = arith.divf %x, %t : f32
// CHECK-NEXT:      memref.store %q, %O[%n, %d] : memref<64x1024xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[D:.*]] = %[[VS]] to %[[VE]] step %[[STEP]] {
// CHECK-NEXT:      %[[X:.*]] = vector.load %e[%[[D]]] : memref<1024xf32>, vector<8xf32>
// CHECK-NEXT:      %[[T:.*]] = memref.load %s[] : memref<f32>
// CHECK-NEXT:      %[[TB:.*]] = vector.broadcast %[[T]] : f32 to vector<8xf32>
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[X]], %[[TB]] : vector<8xf32>
// CHECK-NEXT:      vector.store %[[Q]], %O[%n, %[[D]]] {alignment = 32 : i64, nontemporal = true} : memref<64x1024xf32>, vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[D2:.*]] = %[[VE]] to %c1024 step %c1 {
// CHECK-NEXT:      %[[X2:.*]] = memref.load %e[%[[D2]]] : memref<1024xf32>
// CHECK-NEXT:      %[[T2:.*]] = memref.load %s[] : memref<f32>
// CHECK-NEXT:      %[[Q2:.*]] = arith.divf %[[X2]], %[[T2]] : f32
// CHECK-NEXT:      memref.store %[[Q2]], %O[%n, %[[D2]]] : memref<64x1024xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
