// RUN: tc-opt %s -p 'register-tile{vector-width=8 rows=2 vectors=1}' | filecheck %s

// kronecker3's first mode product, Y(m, n, d) +=! X(m, n, r_k) * W(d, r_k):
// the band is (n, d, k) below an `m` loop that also holds Y's
// initialisation. W is strided along the vector loop `d`, so it must be
// gathered; a copy per (m, column strip) would serve only 4 rows, too few
// (mode 2 instead), but W does not vary along `m` and nothing in the `m`
// loop writes W, so it is gathered once, before the `m` loop, into
// buf[strip, k, lane], and serves 64 x 4 rows. (Y's initialisation is
// folded into the kernels: transforms/register-tile/initial.mlir.)

func.func @hoisted(%X: memref<64x4x16xf32>, %W: memref<8x16xf32>, %Y: memref<64x4x8xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        %z = arith.constant 0.0 : f32
        affine.store %z, %Y[%m, %n, %d] : memref<64x4x8xf32>
      }
    }
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%m, %n, %k] : memref<64x4x16xf32>
          %w = affine.load %W[%d, %k] : memref<8x16xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<64x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<64x4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @hoisted
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc() : memref<1x16x8xf32>
// CHECK-NEXT:    affine.for %strip = 0 to 1 {
// W is read along k, so the gather transposes blocks of 8 columns x 8 steps
// of k in registers: 8 vector loads (one per column), 3 stages of 8
// shuffles, 8 vector stores (one per k); the columns left over (none here)
// are copied one by one.
// CHECK:           affine.for %lanes = 0 to %{{.*}} {
// CHECK-NEXT:        %[[L:.*]] = affine.apply affine_map<()[s0] -> ((s0 * 8))> ()[%lanes]
// CHECK-NEXT:        affine.for %k = 0 to 16 step 8 {
// CHECK-COUNT-8:       vector.load %W[%{{.*}}, %k] : memref<8x16xf32>, vector<8xf32>
// CHECK-NOT:           vector.load
// CHECK:               %{{.*}} = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-23:      vector.shuffle
// CHECK-NEXT:          vector.store %{{.*}}, %[[BUF]][%strip, %k, %[[L]]] : memref<1x16x8xf32>, vector<8xf32>
// CHECK-COUNT-7:       vector.store %{{.*}}, %[[BUF]][%strip, %{{.*}}, %[[L]]] : memref<1x16x8xf32>, vector<8xf32>
// CHECK:           affine.for %lane = %{{.*}} to %{{.*}} {
// CHECK-NEXT:        %[[COL:.*]] = affine.apply affine_map<()[s0, s1] -> ((s0 + s1))> ()[%{{.*}}, %lane]
// CHECK-NEXT:        affine.for %[[K0:.*]] = 0 to 16 {
// CHECK-NEXT:          %[[W:.*]] = affine.load %W[%[[COL]], %[[K0]]] : memref<8x16xf32>
// CHECK-NEXT:          affine.store %[[W]], %[[BUF]][%strip, %[[K0]], %lane] : memref<1x16x8xf32>
// CHECK:         affine.for %m = 0 to 64 {
// CHECK-NOT:       affine.store %z, %Y
// CHECK:           affine.for %[[D:.*]] = 0 to 8 step 8 {
// CHECK-NEXT:        %[[S:.*]] = affine.apply affine_map<()[s0] -> ((s0 floordiv 8))> ()[%[[D]]]
// CHECK-NEXT:        affine.for %[[N:.*]] = 0 to 4 step 2 {
// CHECK-NOT:           memref.alloc
// CHECK:               affine.for %[[K:.*]] = 0 to 16 iter_args(
// CHECK-NEXT:            %[[X0:.*]] = affine.load %X[%m, %[[N]], %[[K]]]
// CHECK-NEXT:            %[[B0:.*]] = vector.broadcast %[[X0]] : f32 to vector<8xf32>
// CHECK-NEXT:            %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:            %[[P:.*]] = vector.load %[[BUF]][%[[S]], %[[K]], %{{.*}}] : memref<1x16x8xf32>, vector<8xf32>
// CHECK-NEXT:            %{{.*}} = math.fma %[[B0]], %[[P]], %{{.*}} fastmath<reassoc> : vector<8xf32>
// CHECK:         memref.dealloc %[[BUF]] : memref<1x16x8xf32>
// CHECK-NEXT:    func.return

// Leave alone: the `m` loop writes W, so a copy could not move out of it,
// and one per (m, column strip) does not pay: the nest keeps mode 2 (dot
// products along k, folded by vector.reduction), with no copy.

func.func @written(%X: memref<64x4x16xf32>, %W: memref<8x16xf32>, %Y: memref<64x4x8xf32>) {
  affine.for %m = 0 to 64 {
    %z = arith.constant 0.0 : f32
    affine.store %z, %W[0, 0] : memref<8x16xf32>
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%m, %n, %k] : memref<64x4x16xf32>
          %w = affine.load %W[%d, %k] : memref<8x16xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<64x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<64x4x8xf32>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @written
// CHECK-NOT:     memref.alloc
// CHECK:         affine.for %m = 0 to 64 {
// CHECK-NEXT:      %z = arith.constant
// CHECK-NEXT:      affine.store %z, %W[0, 0]
// CHECK-NOT:       memref.alloc
// CHECK:           vector.load %W[%d, %k]
// CHECK:           vector.reduction <add>
// CHECK-NOT:     memref.alloc
// CHECK:         func.return

// The same nest as one band, `m` a parallel (kept) output loop of it: the
// gather moves before the band, out of the parallel loop.

func.func @kept(%X: memref<64x4x16xf32>, %W: memref<8x16xf32>, %Y: memref<64x4x8xf32>) {
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (64)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%m: index):
    affine.for %n = 0 to 4 {
      affine.for %d = 0 to 8 {
        affine.for %k = 0 to 16 {
          %x = affine.load %X[%m, %n, %k] : memref<64x4x16xf32>
          %w = affine.load %W[%d, %k] : memref<8x16xf32>
          %p = arith.mulf %x, %w : f32
          %y = affine.load %Y[%m, %n, %d] : memref<64x4x8xf32>
          %s = arith.addf %y, %p fastmath<reassoc> : f32
          affine.store %s, %Y[%m, %n, %d] : memref<64x4x8xf32>
        }
      }
    }
    affine.yield
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %[[KBUF:.*]] = memref.alloc() : memref<1x16x8xf32>
// CHECK-NEXT:    affine.for %strip = 0 to 1 {
// CHECK:           vector.store %{{.*}}, %[[KBUF]][%strip, %k, %{{.*}}]
// CHECK:         "affine.parallel"()
// CHECK-NEXT:    ^bb0(%m: index):
// CHECK-NEXT:      affine.for %d = 0 to 8 step 8 {
// CHECK-NOT:         memref.alloc
// CHECK:             vector.load %[[KBUF]][%{{.*}}, %k_2, %{{.*}}]
// CHECK:         memref.dealloc %[[KBUF]] : memref<1x16x8xf32>
// CHECK-NEXT:    func.return
