// Thread loops whose bounds vary in the kernel, and thread loops along y
// whose threads along x (several warps) share data.
// RUN: tc-opt %s --split-input-file -p convert-parallel-loops-to-gpu | filecheck %s

// A thread loop whose lower bound changes with the loop around it (%t + 1,
// no multiple of the 64 threads) starts at lb + (tid - lb) mod 64, so that
// element j is thread j mod 64's in every iteration of %t; one whose bound
// is a multiple of the block (%t * 64) keeps lb + tid.

// CHECK-LABEL: gpu.func @g_k0
// CHECK:         scf.for %t =
// CHECK:           %[[LO:.*]] = arith.addi %t, %c1 : index
// CHECK:           %[[TID:.*]] = arith.muli %{{.*}}, %c1 : index
// CHECK:           %[[CNT:.*]] = arith.muli %{{.*}}, %c1 : index
// CHECK:           %[[D:.*]] = arith.subi %[[TID]], %[[LO]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %[[D]], %[[CNT]] : index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[R]], %{{.*}} : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[R]], %[[CNT]] : index
// CHECK-NEXT:      %[[OFF:.*]] = arith.select %[[NEG]], %[[UP]], %[[R]] : index
// CHECK-NEXT:      %[[START:.*]] = arith.addi %[[LO]], %[[OFF]] : index
// CHECK-NEXT:      scf.for %j = %[[START]] to %c200 step %[[CNT]] {
// CHECK:           %[[LO64:.*]] = arith.muli %t, %c64 : index
// CHECK-NOT:       arith.remsi
// CHECK:           %[[S64:.*]] = arith.addi %[[LO64]], %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = arith.muli
// CHECK-NEXT:      scf.for %j_1 = %[[S64]] to %c200
func.func @g(%A: memref<300xf32>, %B: memref<300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c200 = arith.constant 200 : index
  %one = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%b: index):
    scf.for %t = %c0 to %c3 step %c1 {
      %lo = arith.addi %t, %c1 : index
      "scf.parallel"(%lo, %c200, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        %x = memref.load %A[%j] : memref<300xf32>
        %y = arith.addf %x, %one : f32
        memref.store %y, %A[%j] : memref<300xf32>
        scf.reduce
      }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64} : (index, index, index) -> ()
      %lo64 = arith.muli %t, %c64 : index
      "scf.parallel"(%lo64, %c200, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%j: index):
        %x = memref.load %B[%j] : memref<300xf32>
        %y = arith.addf %x, %one : f32
        memref.store %y, %B[%j] : memref<300xf32>
        scf.reduce
      }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64} : (index, index, index) -> ()
    }
    scf.reduce
  }) {tc.gpu_processor = "block_x", tc.gpu_size = 1 : i64} : (index, index, index) -> ()
  func.return
}

// -----

// Rows on threads along y, each row's elements on 64 threads along x (two
// warps): the second nest reads what other threads of its row wrote, so a
// gpu.barrier must come between the nests, and a barrier must be reached by
// every thread of the block. The row loop runs ceil(5 / 2) = 3 times in
// every thread, each nest under `%i < 5`, the barriers outside the guards.

// CHECK-LABEL: gpu.func @h_k0
// CHECK-SAME:    known_block_size = array<i32: 64, 2, 1>
// CHECK:         %[[START:.*]] = arith.addi %c0, %{{.*}} : index
// CHECK-NEXT:    %[[CNT:.*]] = arith.muli %{{.*}}, %c1 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %c5, %c0 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LESS:.*]] = arith.subi %[[CNT]], %[[ONE]] : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[SPAN]], %[[LESS]] : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.divsi %[[UP]], %[[CNT]] : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.muli %[[TRIPS]], %[[CNT]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %[[START]], %[[LEN]] : index
// CHECK-NEXT:    scf.for %i = %[[START]] to %[[END]] step %[[CNT]] {
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi slt, %i, %c5 : index
// CHECK:           scf.if %[[IN]] {
// CHECK-NEXT:        scf.for %j =
// CHECK-NEXT:          memref.store %one, %A[%i, %j]
// CHECK:           gpu.barrier
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        scf.for %j_1 =
// CHECK:               memref.load %A[%i, %r]
// CHECK:           gpu.barrier
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.return
func.func @h(%A: memref<5x64xf32>, %B: memref<5x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c5, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      memref.store %one, %A[%i, %j] : memref<5x64xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64} : (index, index, index) -> ()
    "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%j: index):
      %r = arith.subi %c63, %j : index
      %x = memref.load %A[%i, %r] : memref<5x64xf32>
      memref.store %x, %B[%i, %j] : memref<5x64xf32>
      scf.reduce
    }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64} : (index, index, index) -> ()
    scf.reduce
  }) {tc.gpu_processor = "thread_y", tc.gpu_size = 2 : i64} : (index, index, index) -> ()
  func.return
}
