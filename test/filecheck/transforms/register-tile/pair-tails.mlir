// RUN: tc-opt %s -p 'register-tile{vector-width=16 rows=4 pack=never}' | filecheck %s
// RUN: tc-opt %s -p 'register-tile{vector-width=16 rows=4 pack=never pair-tails=false}' | filecheck %s --check-prefix=OFF

// 22 columns by 16 lanes: a full vector and a masked one of 6 lanes per row.
// The masked vectors of rows m and m + 1 become one: lanes 0-7 for row m,
// 8-15 for row m + 1 (3 accumulators instead of 4). B's tail, the same for
// both rows, is loaded once (8 lanes, masked to 6) and repeated; A's two
// rows are blended from their broadcasts; the result is split into the two
// rows' halves, each stored masked.

func.func @pairs(%A: memref<2x8xf32>, %B: memref<8x22xf32>, %C: memref<2x22xf32>) {
  affine.for %m = 0 to 2 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 22 {
        %a = affine.load %A[%m, %k] : memref<2x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x22xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<2x22xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<2x22xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @pairs
// CHECK:         %[[M1:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%m]
// CHECK-NEXT:    %[[N16:.*]] = affine.apply affine_map<()[s0] -> ((s0 + 16))> ()[%n]
// CHECK-NEXT:    %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:    %[[HALF:.*]] = vector.create_mask %[[SIX]] : vector<8xi1>
// CHECK-NOT:     vector<16xi1>
// CHECK:         %[[C0:.*]] = vector.maskedload %C[%m, %[[N16]]], %[[HALF]], %{{.*}} : memref<2x22xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:    %[[C1:.*]] = vector.maskedload %C[%[[M1]], %[[N16]]], %[[HALF]], %{{.*}} : memref<2x22xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:    %[[CP:.*]] = vector.shuffle %[[C0]], %[[C1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK:         %{{.*}}, %[[PAIR:.*]], %{{.*}} = affine.for %k = 0 to 8 iter_args(%{{.*}} = %{{.*}}, %[[ACC:.*]] = %[[CP]], %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:           %[[A0:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:           %[[A1:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-NEXT:      %[[AP:.*]] = vector.shuffle %[[A0]], %[[A1]] [0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT:      %[[B:.*]] = vector.maskedload %B[%k, %[[N16]]], %[[HALF]], %{{.*}} : memref<8x22xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:      %[[BP:.*]] = vector.shuffle %[[B]], %[[B]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      %{{.*}} = math.fma %[[AP]], %[[BP]], %[[ACC]] fastmath<reassoc> : vector<16xf32>
// CHECK:         %[[LO:.*]] = vector.shuffle %[[PAIR]], %[[PAIR]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT:    %[[HI:.*]] = vector.shuffle %[[PAIR]], %[[PAIR]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT:    vector.store %{{.*}}, %C[%m, %n] : memref<2x22xf32>, vector<16xf32>
// CHECK-NEXT:    vector.maskedstore %C[%m, %[[N16]]], %[[HALF]], %[[LO]] : memref<2x22xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    vector.maskedstore %C[%[[M1]], %[[N16]]], %[[HALF]], %[[HI]] : memref<2x22xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    vector.store %{{.*}}, %C[%[[M1]], %n] : memref<2x22xf32>, vector<16xf32>

// OFF-LABEL: func.func @pairs
// OFF:         vector.create_mask %{{.*}} : vector<16xi1>
// OFF-NOT:     vector<8x
// OFF:         affine.for %k = 0 to 8 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// OFF:       func.return

// An operand that moves with the row loop as well: its two rows' tails are
// loaded and joined; W's broadcast, the same for both rows, is shared.

func.func @by_row(%X: memref<2x8x22xf32>, %W: memref<8xf32>, %C: memref<2x22xf32>) {
  affine.for %m = 0 to 2 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 22 {
        %x = affine.load %X[%m, %k, %n] : memref<2x8x22xf32>
        %w = affine.load %W[%k] : memref<8xf32>
        %p = arith.mulf %x, %w : f32
        %c = affine.load %C[%m, %n] : memref<2x22xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<2x22xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @by_row
// CHECK:         affine.for %k = 0 to 8 iter_args(
// CHECK:           %[[W:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:           %[[X0:.*]] = vector.maskedload %X[%m, %k, %{{.*}}], %{{.*}}, %{{.*}} : memref<2x8x22xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:      %[[X1:.*]] = vector.maskedload %X[%{{.*}}, %k, %{{.*}}], %{{.*}}, %{{.*}} : memref<2x8x22xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:      %[[XP:.*]] = vector.shuffle %[[X0]], %[[X1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      math.fma %[[XP]], %[[W]], %{{.*}} fastmath<reassoc> : vector<16xf32>
// CHECK-NOT:       vector.broadcast
// CHECK:           affine.yield

// An odd number of rows: rows m, m + 1 pair, row m + 2 keeps its masked
// 16-lane vector.

func.func @odd_rows(%A: memref<3x8xf32>, %B: memref<8x22xf32>, %C: memref<3x22xf32>) {
  affine.for %m = 0 to 3 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 22 {
        %a = affine.load %A[%m, %k] : memref<3x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x22xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<3x22xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<3x22xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @odd_rows
// CHECK:         affine.for %k = 0 to 8 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:         vector.maskedstore %C[%m, %{{.*}}], %{{.*}}, %{{.*}} : memref<3x22xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    vector.maskedstore %C[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<3x22xf32>, vector<8xi1>, vector<8xf32>
// CHECK:         vector.maskedstore %C[%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<3x22xf32>, vector<16xi1>, vector<16xf32>

// Leave alone: a tail of 10 lanes does not fit half a vector.

func.func @wide_tail(%A: memref<2x8xf32>, %B: memref<8x26xf32>, %C: memref<2x26xf32>) {
  affine.for %m = 0 to 2 {
    affine.for %k = 0 to 8 {
      affine.for %n = 0 to 26 {
        %a = affine.load %A[%m, %k] : memref<2x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x26xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<2x26xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<2x26xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @wide_tail
// CHECK-NOT:     vector.shuffle
// CHECK:         affine.for %k = 0 to 8 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NOT:     vector.shuffle
// CHECK:         func.return
