// parallel-depth: which member of the outermost band is the parallel loop.
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=1,32 parallel-depth=1}' | filecheck %s
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=1,32}' | filecheck %s --check-prefix=OUTER
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=0 parallel-depth=1}' | filecheck %s --check-prefix=CARRIED
// RUN: tc-opt %s -p 'affine-isl-schedule{fusion=min tile=0}' | filecheck %s --check-prefix=SERIAL

// Z(b, m, n) += X(b, m, n) * 2 over a batch of 2.
func.func @scale(%X: memref<2x256x96xf32>, %Z: memref<2x256x96xf32>) {
  affine.for %b = 0 to 2 {
    affine.for %m = 0 to 256 {
      affine.for %n = 0 to 96 {
        %x = affine.load %X[%b, %m, %n] : memref<2x256x96xf32>
        %t = arith.addf %x, %x : f32
        affine.store %t, %Z[%b, %m, %n] : memref<2x256x96xf32>
      }
    }
  }
  func.return
}

// The batch loop runs in order; its row tiles of 32 are shared by the threads.
// CHECK-LABEL: func.func @scale
// CHECK:         affine.for %b = 0 to 2 {
// CHECK-NEXT:      "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (8)>
// CHECK-NOT:       affine.parallel
// CHECK:         func.return

// OUTER-LABEL: func.func @scale
// OUTER:         "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (2)>
// OUTER-NEXT:    ^bb0(%b: index):
// OUTER-NEXT:      affine.for %c1 = 0 to 8 {

// Each row depends on the one before (member 0 carries it): by default no
// loop is parallel, since the stride-1 column loop stays innermost; depth 1
// shares the columns of each row among the threads.
func.func @prefix(%A: memref<64x64xf32>) {
  affine.for %i = 1 to 64 {
    affine.for %j = 0 to 64 {
      %a = affine.load %A[%i - 1, %j] : memref<64x64xf32>
      %t = arith.addf %a, %a : f32
      affine.store %t, %A[%i, %j] : memref<64x64xf32>
    }
  }
  func.return
}

// CARRIED-LABEL: func.func @prefix
// CARRIED-NEXT:    affine.for %i = 1 to 64 {
// CARRIED-NEXT:      "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (64)>
// CARRIED-NEXT:      ^bb0(%j: index):

// SERIAL-LABEL: func.func @prefix
// SERIAL-NOT:     affine.parallel
// SERIAL:         func.return
