// RUN: tc-opt %s -p 'register-tile{vector-width=8}' | filecheck %s

// mx(n) max=! I(n, r_d) inside a row loop that is not part of the band (the
// init statement shares it): mode 2 with a single point. One chain of
// `maximumf` (a dependent ~6-instruction sequence on x86) would bound the
// loop by latency, so r runs by 4 vectors into 4 partial maxima, folded after
// the loop; then one vector at a time (96..104), then scalars (104..110).
// The vector loops also prefetch the next row, I[n + 1, d], once per 64
// bytes (`next_rows`).

func.func @rowmax(%I: memref<37x110xf32>, %mx: memref<37xf32>) {
  affine.for %n = 0 to 37 {
    %init = arith.constant 0xFF800000 : f32
    affine.store %init, %mx[%n] : memref<37xf32>
    affine.for %d = 0 to 110 {
      %x = affine.load %I[%n, %d] : memref<37x110xf32>
      %m = affine.load %mx[%n] : memref<37xf32>
      %r = arith.maximumf %m, %x fastmath<reassoc> : f32
      affine.store %r, %mx[%n] : memref<37xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rowmax(
// CHECK:      %[[ACC:.*]] = affine.load %mx[%n] : memref<37xf32>
// CHECK-NEXT: %{{[0-9]+}} = arith.constant dense<0xff800000> : vector<8xf32>
// CHECK-NEXT: %[[N1:[0-9]+]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%n]
// CHECK-NEXT: %[[ID:[0-9]+]] = arith.constant dense<0xff800000> : vector<8xf32>
// CHECK-NEXT: %[[P0:[0-9]+]], %[[P1:[0-9]+]], %[[P2:[0-9]+]], %[[P3:[0-9]+]] = affine.for %d = 0 to 96 step 32 iter_args(%[[A0:[0-9]+]] = %{{[0-9]+}}, %[[A1:[0-9]+]] = %[[ID]], %[[A2:[0-9]+]] = %[[ID]], %[[A3:[0-9]+]] = %[[ID]]) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:        vector.load %I[%n, %d] : memref<37x110xf32>, vector<8xf32>
// CHECK:        arith.maximumf %[[A0]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:   memref.prefetch %I[%[[N1]], %d], read, locality<0>, data : memref<37x110xf32>
// CHECK:        vector.load %I[%n, %{{.*}}] : memref<37x110xf32>, vector<8xf32>
// CHECK:        arith.maximumf %[[A1]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NOT:    memref.prefetch
// CHECK:        arith.maximumf %[[A2]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:   memref.prefetch %I[%[[N1]], %{{.*}}], read, locality<0>, data : memref<37x110xf32>
// CHECK:        arith.maximumf %[[A3]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK-NOT:    memref.prefetch
// CHECK:      }
// CHECK-NEXT: %[[F1:.*]] = arith.maximumf %[[P0]], %[[P1]] fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT: %[[F2:.*]] = arith.maximumf %[[F1]], %[[P2]] fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT: %[[F3:.*]] = arith.maximumf %[[F2]], %[[P3]] fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT: %[[V:.*]] = affine.for %{{.*}} = 96 to 104 step 8 iter_args(%{{.*}} = %[[F3]]) -> (vector<8xf32>) {
// CHECK:      %[[S:.*]] = affine.for %{{.*}} = 104 to 110 iter_args(%{{.*}} = %[[ACC]]) -> (f32) {
// CHECK:      vector.reduction <maximumf>, %[[V]], %[[S]] fastmath<reassoc> : vector<8xf32> into f32


// When the row loop is in the band, its unrolled rows (6 here) are the
// independent chains: no split along r (nor in the one-row remainder: the
// split is chosen once per nest).
func.func @rowmax_band(%I: memref<37x110xf32>, %mx: memref<37xf32>) {
  affine.for %n = 0 to 37 {
    affine.for %d = 0 to 110 {
      %x = affine.load %I[%n, %d] : memref<37x110xf32>
      %m = affine.load %mx[%n] : memref<37xf32>
      %r = arith.maximumf %m, %x fastmath<reassoc> : f32
      affine.store %r, %mx[%n] : memref<37xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rowmax_band
// CHECK:       affine.for %n = 0 to 36 step 6 {
// CHECK-NOT:   step 32
// CHECK:       affine.for %d = 0 to 104 step 8 iter_args
// CHECK-NOT:   step 32
// CHECK:       affine.for %n_1 = 36 to 37 {
// CHECK:       affine.for %d_2 = 0 to 104 step 8 iter_args
// CHECK:       func.return
