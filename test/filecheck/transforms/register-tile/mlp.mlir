// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=2 pack=never}' | filecheck %s
// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=2 pack=always}' | filecheck %s --check-prefix=PACK

// O(b, n) +=! X(b, r_k) * W(n, r_k): no loop is stride-1 in both O and W.
// Without packing (mode 2): vectors along the reduction loop k, 2 x 2 points
// (b x n), each with a vector of partial sums from the identity (-0.0) and a
// scalar accumulator from O; k runs by 8, its remainder (16..20) scalar, then
// `vector.reduction <add>` folds each vector into its scalar.
// With packing (the default when there are at least 16 * MR rows, or an
// unknown number), W's rows are gathered lane by lane into a contiguous
// k x 8 panel per column strip and vectors run along n.

func.func @mlp(%X: memref<5x20xf32>, %W: memref<6x20xf32>, %O: memref<5x6xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (5, 6)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%b: index, %n: index):
    affine.for %k = 0 to 20 {
      %x = affine.load %X[%b, %k] : memref<5x20xf32>
      %w = affine.load %W[%n, %k] : memref<6x20xf32>
      %p = arith.mulf %x, %w : f32
      %o = affine.load %O[%b, %n] : memref<5x6xf32>
      %s = arith.addf %o, %p fastmath<reassoc> : f32
      affine.store %s, %O[%b, %n] : memref<5x6xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK:        ^bb0(%n: index):
// CHECK-NEXT:     %0 = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%b]
// CHECK-NEXT:     %1 = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%n]
// CHECK-NEXT:     %2 = affine.load %O[%b, %n] : memref<5x6xf32>
// CHECK-NEXT:     %3 = affine.load %O[%b, %1] : memref<5x6xf32>
// CHECK-NEXT:     %4 = affine.load %O[%0, %n] : memref<5x6xf32>
// CHECK-NEXT:     %5 = affine.load %O[%0, %1] : memref<5x6xf32>
// CHECK-NEXT:     %6 = arith.constant dense<-0.000000e+00> : vector<8xf32>
// CHECK-NEXT:     %7, %8, %9, %10 = affine.for %k = 0 to 16 step 8 iter_args(%11 = %6, %12 = %6, %13 = %6, %14 = %6) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:       %15 = vector.load %X[%b, %k] : memref<5x20xf32>, vector<8xf32>
// CHECK-NEXT:       %16 = vector.load %W[%n, %k] : memref<6x20xf32>, vector<8xf32>
// CHECK-NEXT:       %17 = math.fma %15, %16, %11 fastmath<reassoc> : vector<8xf32>
// CHECK:            affine.yield %17, %19, %21, %22 : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     %23, %24, %25, %26 = affine.for %k_1 = 16 to 20 iter_args(%27 = %2, %28 = %3, %29 = %4, %30 = %5) -> (f32, f32, f32, f32) {
// CHECK-NEXT:       %31 = affine.load %X[%b, %k_1] : memref<5x20xf32>
// CHECK-NEXT:       %32 = affine.load %W[%n, %k_1] : memref<6x20xf32>
// CHECK-NEXT:       %33 = math.fma %31, %32, %27 fastmath<reassoc> : f32
// CHECK:          }
// CHECK-NEXT:     %39 = vector.reduction <add>, %7, %23 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:     %40 = vector.reduction <add>, %8, %24 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:     %41 = vector.reduction <add>, %9, %25 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:     %42 = vector.reduction <add>, %10, %26 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:     affine.store %39, %O[%b, %n] : memref<5x6xf32>
// The last row: 1 x 2 points.
// CHECK:        ^bb0(%b_1: index):
// CHECK:          affine.for %k_2 = 0 to 16 step 8 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xf32>) {

// PACK:      ^bb0(%n: index):
// PACK-NEXT:   %[[P:.*]] = memref.alloc() : memref<20x8xf32>
// PACK-NEXT:   %[[R:.*]] = affine.apply affine_map<()[s0] -> (((s0 * -1) + 6))> ()[%n]
// PACK-NEXT:   %[[C8:.*]] = arith.constant 8 : index
// PACK-NEXT:   %[[L:.*]] = arith.minsi %[[C8]], %[[R]] : index
// PACK-NEXT:   affine.for %lane = 0 to %[[L]] {
// PACK-NEXT:     %[[COL:.*]] = affine.apply affine_map<()[s0, s1] -> ((s0 + s1))> ()[%n, %lane]
// PACK-NEXT:     affine.for %k_1 = 0 to 20 {
// PACK-NEXT:       %[[WE:.*]] = affine.load %W[%[[COL]], %k_1] : memref<6x20xf32>
// PACK-NEXT:       affine.store %[[WE]], %[[P]][%k_1, %lane] : memref<20x8xf32>
// PACK-NEXT:     }
// PACK-NEXT:   }
// PACK:          affine.for %k_2 = 0 to 20 iter_args(
// PACK:            %[[WV:.*]] = vector.load %[[P]][%k_2, %{{.*}}] : memref<20x8xf32>, vector<8xf32>
// PACK-NEXT:       %{{.*}} = math.fma %{{.*}}, %[[WV]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// PACK:        memref.dealloc %[[P]] : memref<20x8xf32>
