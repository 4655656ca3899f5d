// RUN: not tc-opt %s -p 'prefetch-next-slice{locality=4}' 2>&1 | filecheck %s
// RUN: not tc-opt %s -p 'prefetch-next-slice{min-bytes=100 max-bytes=10}' 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not tc-opt %s -p 'prefetch-next-slice{nta-bytes=-1}' 2>&1 | filecheck %s --check-prefix=NTABAD
// RUN: tc-opt %s -p 'prefetch-next-slice{max-bytes=65536 nta-bytes=8192}' | filecheck %s --check-prefix=BIG
// RUN: tc-opt %s -p 'prefetch-next-slice{max-bytes=65536}' | filecheck %s --check-prefix=NTA
// RUN: tc-opt %s -p 'prefetch-next-slice{max-bytes=65536 distance=2}' | filecheck %s --check-prefix=FAR
// RUN: not tc-opt %s -p 'prefetch-next-slice{distance=0}' 2>&1 | filecheck %s --check-prefix=NEAR

// Bad options are located errors, not tracebacks. With the default
// min-bytes (4 KiB) and max-bytes raised to 64 KiB, a 16 KiB slice is
// prefetched (untouched.mlir's @too_big leaves it alone at 8 KiB): with
// locality<3> when it is over nta-bytes (8 KiB here), with the non-temporal
// locality<0> at the default nta-bytes (16 KiB).

// CHECK: prefetch-next-slice: need 0 <= min-bytes <= max-bytes, 0 <= locality <= 3 and nta-bytes >= 0 (got 4096, 262144, 4, 16384)
// RANGE: prefetch-next-slice: need 0 <= min-bytes <= max-bytes, 0 <= locality <= 3 and nta-bytes >= 0 (got 100, 10, 3, 16384)
// NTABAD: prefetch-next-slice: need 0 <= min-bytes <= max-bytes, 0 <= locality <= 3 and nta-bytes >= 0 (got 4096, 262144, 3, -1)
// CHECK-NOT: Traceback
// RANGE-NOT: Traceback
// NTABAD-NOT: Traceback

func.func @big(%A: memref<8x4x1024xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c1024 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x1024xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      scf.for %l = %c0 to %c64 step %c1 {
        %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
        %u = vector.reduction <add>, %t : vector<4xf32> into f32
        memref.store %u, %O[%o, %j] : memref<8x8xf32>
      }
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// 256 lines over 8 x 64 = 512 iterations: one prefetch an iteration, line
// 256 g / 512 of A[o + 1], element 16 line, addressed as A[o + 1, 0, 16 line]
// (the last subscript runs on into the slice's later rows).
// BIG:      scf.for %l = %c0 to %c64 step %c1 {
// BIG-NEXT:   %[[C64:.*]] = arith.constant 64 : index
// BIG-NEXT:   %[[J:.*]] = arith.muli %j, %[[C64]] : index
// BIG-NEXT:   %[[G:.*]] = arith.addi %[[J]], %l : index
// BIG-NEXT:   %[[NEXT:.*]] = arith.addi %o, %c1 : index
// BIG-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// BIG-NEXT:   %[[L:.*]] = arith.constant 256 : index
// BIG-NEXT:   %[[GL:.*]] = arith.muli %[[G]], %[[L]] : index
// BIG-NEXT:   %[[SLOTS:.*]] = arith.constant 512 : index
// BIG-NEXT:   %[[LINE:.*]] = arith.divui %[[GL]], %[[SLOTS]] : index
// BIG-NEXT:   %[[W:.*]] = arith.constant 16 : index
// BIG-NEXT:   %[[E:.*]] = arith.muli %[[LINE]], %[[W]] : index
// BIG-NEXT:   memref.prefetch %A[%[[NEXT]], %[[ZERO]], %[[E]]], read, locality<3>, data : memref<8x4x1024xf32>
// BIG-NEXT:   %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>

// NTA:      scf.for %l = %c0 to %c64 step %c1 {
// NTA:        memref.prefetch %A[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<0>, data : memref<8x4x1024xf32>
// NTA-NOT:    locality<3>

// distance=2: the slice of o + 2 (two steps of 1 ahead).
// FAR:      scf.for %l = %c0 to %c64 step %c1 {
// FAR:        %[[TWO:.*]] = arith.constant 2 : index
// FAR-NEXT:   %[[AHEAD:.*]] = arith.muli %c1, %[[TWO]] : index
// FAR-NEXT:   %[[NEXT:.*]] = arith.addi %o, %[[AHEAD]] : index
// FAR:        memref.prefetch %A[%[[NEXT]], %{{.*}}, %{{.*}}], read, locality<0>, data : memref<8x4x1024xf32>
// NEAR: prefetch-next-slice: distance must be >= 1 (got 0)
// NEAR-NOT: Traceback
