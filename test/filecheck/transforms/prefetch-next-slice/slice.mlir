// RUN: tc-opt %s -p 'prefetch-next-slice{min-bytes=512}' | filecheck %s

// min-bytes=512 keeps the rows read by the inner loops (128 bytes or less)
// out; the slices of the parallel loops are 512 bytes and up.

// Row o of A is 4 x 32 floats (512 bytes, 8 lines). Both nests take
// prefetches of A[o + 1]: the first at %i (4 iterations; %k, an innermost
// loop on scalars, is never a level), the second at %j (8 iterations on
// vectors). 12 iterations in all, numbered in program order (the second
// nest's from 4), one prefetch each: slot g is line 8 g floordiv 12, so every
// line is fetched at least once. The element is addressed as A[o + 1, 0,
// 16 line]: the last subscript runs on past its extent into the slice's later
// rows (no division by the row length).

func.func @spread(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @spread(
// CHECK:         scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %o, %c1 : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[L:.*]] = arith.constant 8 : index
// CHECK-NEXT:      %[[SL:.*]] = arith.muli %i, %[[L]] : index
// CHECK-NEXT:      %[[T:.*]] = arith.constant 12 : index
// CHECK-NEXT:      %[[LINE:.*]] = arith.divui %[[SL]], %[[T]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[E:.*]] = arith.muli %[[LINE]], %[[W]] : index
// CHECK-NEXT:      memref.prefetch %A[%[[NEXT]], %[[ZERO]], %[[E]]], read, locality<0>, data : memref<8x4x32xf32>
// CHECK-NEXT:      scf.for %k = %c0 to %c32 step %c1 {
// CHECK-NOT:         memref.prefetch
// CHECK:         scf.for %j = %c0 to %c8 step %c1 {
// CHECK-NEXT:      %[[FIRST:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[G:.*]] = arith.addi %j, %[[FIRST]] : index
// CHECK-NEXT:      %[[NEXT2:.*]] = arith.addi %o, %c1 : index
// CHECK-NEXT:      %[[ZERO2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[L2:.*]] = arith.constant 8 : index
// CHECK-NEXT:      %[[SL2:.*]] = arith.muli %[[G]], %[[L2]] : index
// CHECK-NEXT:      %[[T2:.*]] = arith.constant 12 : index
// CHECK-NEXT:      %[[LINE2:.*]] = arith.divui %[[SL2]], %[[T2]] : index
// CHECK-NEXT:      %[[W2:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[E2:.*]] = arith.muli %[[LINE2]], %[[W2]] : index
// CHECK-NEXT:      memref.prefetch %A[%[[NEXT2]], %[[ZERO2]], %[[E2]]], read, locality<0>, data : memref<8x4x32xf32>
// CHECK-NEXT:      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
// CHECK-NEXT:      %u = vector.reduction <add>, %t : vector<4xf32> into f32
// CHECK-NEXT:      memref.store %u, %O[%o, %j] : memref<8x8xf32>
// CHECK-NEXT:    }

// The first nest reads A in an innermost loop on scalars, never a level. The
// other two, of 2 x 2 and 4 innermost iterations (8 in all, numbered in
// program order), take the 16 lines of A[o + 2] (step 2): two prefetches an
// iteration, slots 2g and 2g + 1, each its own line; the third nest's
// numbers start at 4. Its loops start at 1 and step by 2: (i - 1) / 2.

func.func @two_levels(%A: memref<8x16x16xf32>, %O: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant dense<0.0> : vector<2xf32>
  "scf.parallel"(%c0, %c8, %c2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c16 step %c1 {
      %s = memref.load %A[%o, %i, %c0] : memref<8x16x16xf32>
      memref.store %s, %O[%o, %i] : memref<8x16xf32>
    }
    scf.for %a = %c0 to %c2 step %c1 {
      scf.for %b = %c0 to %c2 step %c1 {
        vector.store %z, %O[%o, %b] : memref<8x16xf32>, vector<2xf32>
      }
    }
    scf.for %i = %c1 to %c9 step %c2 {
      vector.store %z, %O[%o, %i] : memref<8x16xf32>, vector<2xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @two_levels(
// CHECK:         scf.for %i = %c0 to %c16 step %c1 {
// CHECK-NEXT:      %s = memref.load %A[%o, %i, %c0] : memref<8x16x16xf32>
// CHECK:         scf.for %b = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %[[T2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[A2:.*]] = arith.muli %a, %[[T2]] : index
// CHECK-NEXT:      %[[G:.*]] = arith.addi %[[A2]], %b : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %o, %c2 : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[P:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[S0:.*]] = arith.muli %[[G]], %[[P]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[E0:.*]] = arith.muli %[[S0]], %[[W]] : index
// CHECK-NEXT:      memref.prefetch %A[%[[NEXT]], %[[ZERO]], %[[E0]]], read, locality<0>, data : memref<8x16x16xf32>
// CHECK-NEXT:      %[[P1:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[S1A:.*]] = arith.muli %[[G]], %[[P1]] : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[S1:.*]] = arith.addi %[[S1A]], %[[ONE]] : index
// CHECK-NEXT:      %[[W1:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[E1:.*]] = arith.muli %[[S1]], %[[W1]] : index
// CHECK-NEXT:      memref.prefetch %A[%[[NEXT]], %[[ZERO]], %[[E1]]], read, locality<0>, data : memref<8x16x16xf32>
// CHECK-NEXT:      vector.store %z, %O[%o, %b] : memref<8x16xf32>, vector<2xf32>
// CHECK:         scf.for %i_1 = %c1 to %c9 step %c2 {
// CHECK-NEXT:      %[[K:.*]] = arith.subi %i_1, %c1 : index
// CHECK-NEXT:      %[[K2:.*]] = arith.divui %[[K]], %c2 : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[G2:.*]] = arith.addi %[[K2]], %[[FIRST]] : index
// CHECK-NEXT:      %[[NEXT2:.*]] = arith.addi %o, %c2 : index
// CHECK-COUNT-2:   memref.prefetch %A[%[[NEXT2]],
// CHECK-NEXT:      vector.store %z, %O[%o, %i_1] : memref<8x16xf32>, vector<2xf32>

// The only nest reads A itself (group convolution's case): the prefetches go
// into it, at its first level with at least L / 4 iterations: 64 lines, 16
// iterations of %h, so 4 prefetches at the top of each (slots 4h .. 4h + 3),
// none in %w.

func.func @every_nest_reads(%A: memref<4x16x64xf32>, %O: memref<4x16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %h = %c0 to %c16 step %c1 {
      scf.for %w = %c0 to %c64 step %c16 {
        %v = vector.load %A[%o, %h, %w] : memref<4x16x64xf32>, vector<16xf32>
        vector.store %v, %O[%o, %h, %w] : memref<4x16x64xf32>, vector<16xf32>
      }
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @every_nest_reads(
// CHECK:         scf.for %h = %c0 to %c16 step %c1 {
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %o, %c1 : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[P:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[S:.*]] = arith.muli %h, %[[P]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[E:.*]] = arith.muli %[[S]], %[[W]] : index
// CHECK-NEXT:      memref.prefetch %A[%[[NEXT]], %[[ZERO]], %[[E]]], read, locality<0>, data : memref<4x16x64xf32>
// CHECK-COUNT-3:   memref.prefetch %A[%[[NEXT]], %[[ZERO]],
// CHECK-NEXT:      scf.for %w = %c0 to %c64 step %c16 {
// CHECK-NEXT:        %v = vector.load %A[%o, %h, %w] : memref<4x16x64xf32>, vector<16xf32>


// The nests fetch all of A[o + 1] while this iteration computes, so the
// first nest's own prefetch of A[o, i + 1, 0] (a row strip's look-ahead) is
// erased; a write prefetch and a prefetch of another array stay.

func.func @own_prefetch(%A: memref<8x4x32xf32>, %B: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      %n = arith.addi %i, %c1 : index
      memref.prefetch %A[%o, %n, %c0], read, locality<3>, data : memref<8x4x32xf32>
      memref.prefetch %B[%o, %n, %c0], read, locality<3>, data : memref<8x4x32xf32>
      memref.prefetch %O[%o, %n], write, locality<3>, data : memref<8x8xf32>
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @own_prefetch(
// CHECK:         scf.for %i = %c0 to %c4 step %c1 {
// CHECK:           memref.prefetch %A[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<0>, data : memref<8x4x32xf32>
// CHECK-NEXT:      %n = arith.addi %i, %c1 : index
// CHECK-NEXT:      memref.prefetch %B[%o, %n, %c0], read, locality<3>, data : memref<8x4x32xf32>
// CHECK-NEXT:      memref.prefetch %O[%o, %n], write, locality<3>, data : memref<8x8xf32>
// CHECK-NEXT:      scf.for %k
// CHECK:         scf.for %j = %c0 to %c8 step %c1 {
// CHECK:           memref.prefetch %A[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<0>, data : memref<8x4x32xf32>


// The one nest reads A itself and takes the prefetches of A[o + 1] (4 an
// iteration of %i); its own look-ahead prefetch of A[o, i + 1, 0] goes as
// well.

func.func @own_prefetch_one_nest(%A: memref<8x8x64xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant dense<0.0> : vector<8xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c8 step %c1 {
      %n = arith.addi %i, %c1 : index
      memref.prefetch %A[%o, %n, %c0], read, locality<3>, data : memref<8x8x64xf32>
      %s = scf.for %k = %c0 to %c64 step %c8 iter_args(%acc = %z) -> (vector<8xf32>) {
        %x = vector.load %A[%o, %i, %k] : memref<8x8x64xf32>, vector<8xf32>
        %y = arith.addf %acc, %x : vector<8xf32>
        scf.yield %y : vector<8xf32>
      }
      %r = vector.reduction <add>, %s : vector<8xf32> into f32
      memref.store %r, %O[%o, %i] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @own_prefetch_one_nest(
// CHECK:         scf.for %i = %c0 to %c8 step %c1 {
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %o, %c1 : index
// CHECK-COUNT-4:   memref.prefetch %A[%[[NEXT]],
// CHECK-NOT:       memref.prefetch
// CHECK:           %n = arith.addi %i, %c1 : index
// CHECK-NEXT:      %s = scf.for %k
