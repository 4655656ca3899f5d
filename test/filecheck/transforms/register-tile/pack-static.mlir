// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=4 vectors=1}' | filecheck %s

// C(m, n) +=! A(m, r_k) * B(r_k, n) with static sizes, the rows (m) the
// parallel loop, as `affine-isl-schedule` leaves a nest whose outer tile loop
// has one iteration.

func.func @rows_4k_apart(%A: memref<64x1024xf32>, %B: memref<1024x256xf32>, %C: memref<64x256xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (64)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%m: index):
    affine.for %n = 0 to 256 {
      affine.for %k = 0 to 1024 {
        %a = affine.load %A[%m, %k] : memref<64x1024xf32>
        %b = affine.load %B[%k, %n] : memref<1024x256xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<64x256xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x256xf32>
      }
    }
    affine.yield
  }) : () -> ()
  func.return
}

// Rows 4 KiB apart (1024 floats): four of them share one L1 set, so A's
// rows are packed, once for every strip of 4 rows, although k walks them
// with unit stride. The rows were the parallel loop; with 32 column strips
// for 16 row strips the column strips become the parallel loop (each copies
// its own panel) and the row strips a serial loop inside. The panel, 32 KiB,
// does not stay in L1 from one row strip to the next: the kernel prefetches
// it 768 bytes (24 steps) ahead, once per step.
// CHECK-LABEL: func.func @rows_4k_apart
// CHECK:       %[[ROWS:.*]] = memref.alloc() : memref<16x1024x4xf32>
// CHECK-NEXT:  "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (16)>{{.*}}steps = [1 : i64]}> ({
// CHECK-NEXT:  ^bb0(%strip: index):
// CHECK:         affine.load %A[
// CHECK:       "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (256)>{{.*}}steps = [8 : i64]}> ({
// CHECK-NEXT:  ^bb0(%n: index):
// CHECK-NEXT:    %[[PANEL:.*]] = memref.alloc() : memref<1024x8xf32>
// CHECK:         affine.for %m = 0 to 64 step 4 {
// CHECK:           affine.for %k_2 = 0 to 1024 iter_args(
// CHECK-NEXT:        %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:        %{{.*}} = affine.load %[[ROWS]][%{{.*}}, %k_2, %{{.*}}] : memref<16x1024x4xf32>
// CHECK:             %{{.*}} = vector.load %[[PANEL]][%k_2, %[[COL:.*]]] : memref<1024x8xf32>, vector<8xf32>
// CHECK-NEXT:        %[[AHEAD:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 24))> ()[%k_2]
// CHECK-NEXT:        memref.prefetch %[[PANEL]][%[[AHEAD]], %[[COL]]], read, locality<3>, data : memref<1024x8xf32>
// CHECK-NOT:         memref.prefetch
// CHECK:           memref.dealloc %[[PANEL]] : memref<1024x8xf32>
// CHECK:       memref.dealloc %[[ROWS]] : memref<16x1024x4xf32>

func.func @rows_1k_apart(%A: memref<64x256xf32>, %B: memref<256x256xf32>, %C: memref<64x256xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (64)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%m: index):
    affine.for %n = 0 to 256 {
      affine.for %k = 0 to 256 {
        %a = affine.load %A[%m, %k] : memref<64x256xf32>
        %b = affine.load %B[%k, %n] : memref<256x256xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<64x256xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x256xf32>
      }
    }
    affine.yield
  }) : () -> ()
  func.return
}

// Rows 1 KiB apart fall into four L1 sets: the kernel reads A itself. B's
// panel, 8 KiB, stays in L1: no prefetch.
// CHECK-LABEL: func.func @rows_1k_apart
// CHECK-NOT:   memref<16x256x4xf32>
// CHECK:       "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (256)>{{.*}}steps = [8 : i64]}> ({
// CHECK-NEXT:  ^bb0(%n: index):
// CHECK-NEXT:    %[[PANEL:.*]] = memref.alloc() : memref<256x8xf32>
// CHECK:         affine.for %m = 0 to 64 step 4 {
// CHECK:           affine.for %k_1 = 0 to 256 iter_args(
// CHECK-NEXT:        %{{.*}} = affine.load %A[%m, %k_1] : memref<64x256xf32>
// CHECK:             vector.load %[[PANEL]]
// CHECK-NOT:       memref.prefetch
// CHECK:           memref.dealloc %[[PANEL]] : memref<256x8xf32>

func.func @more_row_strips(%A: memref<256x1024xf32>, %B: memref<1024x1024xf32>, %C: memref<256x16xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (256)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%m: index):
    affine.for %n = 0 to 16 {
      affine.for %k = 0 to 1024 {
        %a = affine.load %A[%m, %k] : memref<256x1024xf32>
        %b = affine.load %B[%k, %n] : memref<1024x1024xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<256x16xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<256x16xf32>
      }
    }
    affine.yield
  }) : () -> ()
  func.return
}

// 64 row strips and 2 column strips: the row strips stay the parallel
// loop, inside the serial column strips (too few columns for A's rows to
// be worth a copy).
// CHECK-LABEL: func.func @more_row_strips
// CHECK:       affine.for %n = 0 to 16 step 8 {
// CHECK-NEXT:    %{{.*}} = memref.alloc() : memref<1024x8xf32>
// CHECK:         "affine.parallel"() <{{.*}}upperBoundsMap = affine_map<() -> (256)>{{.*}}steps = [4 : i64]}> ({
// CHECK:             affine.load %A[%m, %k_1] : memref<256x1024xf32>
