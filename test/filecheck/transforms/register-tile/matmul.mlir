// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=3 vectors=2 pack=never}' | filecheck %s

// C(m, n) +=! A(m, r_k) * B(r_k, n) with M=10, K=32, N=45 (as
// convert-tc-to-affine writes it): vectors along n (stride 1 in C and B),
// 3 rows of m x 2 vectors of 8 accumulators, loaded once, updated by FMAs
// with A broadcast per row and B loaded per vector, stored once. Remainders:
// columns 32..45 as one strip of 2 vectors, the second masked (5 lanes); row 9
// with one row.

func.func @mm(%A: memref<10x32xf32>, %B: memref<32x45xf32>, %C: memref<10x45xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0, 0)>, lowerBoundsGroups = dense<1> : tensor<2xi32>, upperBoundsMap = affine_map<() -> (10, 45)>, upperBoundsGroups = dense<1> : tensor<2xi32>, steps = [1 : i64, 1 : i64]}> ({
  ^bb0(%m: index, %n: index):
    affine.for %k = 0 to 32 {
      %a = affine.load %A[%m, %k] : memref<10x32xf32>
      %b = affine.load %B[%k, %n] : memref<32x45xf32>
      %p = arith.mulf %a, %b : f32
      %c = affine.load %C[%m, %n] : memref<10x45xf32>
      %s = arith.addf %c, %p fastmath<reassoc> : f32
      affine.store %s, %C[%m, %n] : memref<10x45xf32>
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK:      func.func @mm(%A: memref<10x32xf32>, %B: memref<32x45xf32>, %C: memref<10x45xf32>) {
// CHECK-NEXT:   "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (9)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [3 : i64]}> ({
// CHECK-NEXT:   ^bb0(%m: index):
// CHECK-NEXT:     "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (32)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [16 : i64]}> ({
// CHECK-NEXT:     ^bb0(%n: index):
// CHECK-NEXT:       %0 = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%m]
// CHECK-NEXT:       %1 = affine.apply affine_map<()[s0] -> ((s0 + 2))> ()[%m]
// CHECK-NEXT:       %2 = affine.apply affine_map<()[s0] -> ((s0 + 8))> ()[%n]
// CHECK-NEXT:       %3 = vector.load %C[%m, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %4 = vector.load %C[%m, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %5 = vector.load %C[%0, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %6 = vector.load %C[%0, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %7 = vector.load %C[%1, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %8 = vector.load %C[%1, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %9, %10, %11, %12, %13, %14 = affine.for %k = 0 to 32 iter_args(%15 = %3, %16 = %4, %17 = %5, %18 = %6, %19 = %7, %20 = %8) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:         %21 = affine.load %A[%m, %k] : memref<10x32xf32>
// CHECK-NEXT:         %22 = vector.broadcast %21 : f32 to vector<8xf32>
// CHECK-NEXT:         %23 = vector.load %B[%k, %n] : memref<32x45xf32>, vector<8xf32>
// CHECK-NEXT:         %24 = math.fma %22, %23, %15 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         %25 = vector.load %B[%k, %2] : memref<32x45xf32>, vector<8xf32>
// CHECK-NEXT:         %26 = math.fma %22, %25, %16 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         %27 = affine.load %A[%0, %k] : memref<10x32xf32>
// CHECK-NEXT:         %28 = vector.broadcast %27 : f32 to vector<8xf32>
// CHECK-NEXT:         %29 = math.fma %28, %23, %17 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         %30 = math.fma %28, %25, %18 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         %31 = affine.load %A[%1, %k] : memref<10x32xf32>
// CHECK-NEXT:         %32 = vector.broadcast %31 : f32 to vector<8xf32>
// CHECK-NEXT:         %33 = math.fma %32, %23, %19 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         %34 = math.fma %32, %25, %20 fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:         affine.yield %24, %26, %29, %30, %33, %34 : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:       vector.store %9, %C[%m, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.store %10, %C[%m, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.store %11, %C[%0, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.store %12, %C[%0, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.store %13, %C[%1, %n] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.store %14, %C[%1, %2] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       affine.yield
// CHECK-NEXT:     }) : () -> ()

// Columns 32..45 (known extent): one strip of exactly the 2 vectors left,
// the second masked to its 5 lanes (45 - (32 + 8)); the first loads plainly:
// CHECK-NEXT:     "affine.parallel"() <{{.*}}lowerBoundsMap = affine_map<() -> (32)>{{.*}}upperBoundsMap = affine_map<() -> (45)>{{.*}}steps = [16 : i64]}> ({
// CHECK-NEXT:     ^bb0(%n_1: index):
// CHECK-NEXT:       %35 = affine.apply affine_map<()[s0] -> (((s0 * -1) + 37))> ()[%n_1]
// CHECK-NEXT:       %36 = vector.create_mask %35 : vector<8xi1>
// CHECK:            %39 = affine.apply affine_map<()[s0] -> ((s0 + 8))> ()[%n_1]
// CHECK-NEXT:       %40 = vector.load %C[%m, %n_1] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       %41 = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:       %42 = vector.maskedload %C[%m, %39], %36, %41 : memref<10x45xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:            affine.for %k_1 = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:              %61 = vector.load %B[%k_1, %n_1] : memref<32x45xf32>, vector<8xf32>
// CHECK:              %63 = vector.maskedload %B[%k_1, %39], %36, %41 : memref<32x45xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK:            vector.store %47, %C[%m, %n_1] : memref<10x45xf32>, vector<8xf32>
// CHECK-NEXT:       vector.maskedstore %C[%m, %39], %36, %48 : memref<10x45xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NOT:      vector.load %C[%m, %39]

// The last row, with the same two strips:
// CHECK:        "affine.parallel"() <{{.*}}lowerBoundsMap = affine_map<() -> (9)>{{.*}}upperBoundsMap = affine_map<() -> (10)>{{.*}}steps = [1 : i64]}> ({
// CHECK-NEXT:   ^bb0(%m_1: index):
// CHECK:            affine.for %k_2 = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>) {
// CHECK:            %87 = vector.create_mask %86 : vector<8xi1>
// CHECK:            affine.for %k_3 = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>) {
// CHECK:            vector.maskedstore %C[%m_1, %88], %87, %93
// CHECK-NOT:        affine.for
// CHECK:          func.return
