// affine-gpu-map: tile loops to blocks (by default as many as tiles, up to
// CUDA's grid limits), point loops to threads (innermost member on x);
// matmul's reduction k runs inside each thread's elements, so by default
// each thread takes 4x4 of them (tiles of 32x128 on 32x8 threads) and k is
// tiled by 32 (a tile loop in each block, whose slices promotion stages in
// shared memory); tiles and blocks shrink to small static extents; functions
// outside the polyhedral model are left alone.
// RUN: tc-opt %s -p affine-gpu-map | filecheck %s
// RUN: tc-opt %s -p 'affine-gpu-map{tile=16,0 block=64 grid=7}' | filecheck %s --check-prefix=OPT

// CHECK-LABEL: func.func @matmul
// CHECK:       "affine.parallel"(%M) {{.*}}floordiv 32
// CHECK:         "affine.parallel"(%N) {{.*}}floordiv 128
// CHECK:           affine.for %[[KT:.*]] = 0 to affine_map<()[s0] -> ((((s0 + -1) floordiv 32) + 1))>()[%K] {
// CHECK:             "affine.parallel"{{.*}}upperBoundsMap = affine_map<(d0)[s0] -> (s0, ((d0 * 32) + 32))>
// CHECK:               "affine.parallel"{{.*}}upperBoundsMap = affine_map<(d0)[s0] -> (s0, ((d0 * 128) + 128))>
// CHECK:                 affine.for %k = affine_map<(d0) -> ((d0 * 32))>(%[[KT]]) to min affine_map<(d0)[s0] -> (s0, ((d0 * 32) + 32))>(%[[KT]])[%K] {
// CHECK:               }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
// CHECK:             }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// CHECK:         }) {tc.gpu_processor = "block_x", tc.gpu_size = 2147483647 : i64}
// CHECK:       }) {tc.gpu_processor = "block_y", tc.gpu_size = 65535 : i64}

// With tile=16,0 only m is tiled: its tile loop is the one block loop (grid
// cap 7); block=64 maps one thread loop, n (innermost); m is a loop per thread.
// OPT-LABEL: func.func @matmul
// OPT:       "affine.parallel"
// OPT:         affine.for
// OPT:           "affine.parallel"
// OPT:           }) {tc.gpu_processor = "thread_x", tc.gpu_size = 64 : i64}
// OPT:       }) {tc.gpu_processor = "block_x", tc.gpu_size = 7 : i64}
func.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %K: index, %N: index) {
  affine.for %m = 0 to %M {
    affine.for %n = 0 to %N {
      affine.for %k = 0 to %K {
        %a = affine.load %A[%m, %k] : memref<?x?xf32>
        %b = affine.load %B[%k, %n] : memref<?x?xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<?x?xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<?x?xf32>
      }
    }
  }
  func.return
}

// 10 x 5 elements: tiles of 10 x 5 (one tile, so isl drops the tile loops
// and no block loop remains), 5 threads on x and 8 on y.
// CHECK-LABEL: func.func @small
// CHECK-NOT:   block_
// CHECK:       }) {tc.gpu_processor = "thread_x", tc.gpu_size = 5 : i64}
// CHECK:       }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// CHECK-NOT:   block_
// CHECK:       func.return
func.func @small(%A: memref<10x5xf32>, %B: memref<10x5xf32>) {
  affine.for %i = 0 to 10 {
    affine.for %j = 0 to 5 {
      %a = affine.load %A[%i, %j] : memref<10x5xf32>
      %b = math.exp %a : f32
      affine.store %b, %B[%i, %j] : memref<10x5xf32>
    }
  }
  func.return
}

// Outside the model (an scf loop): left alone.
// CHECK-LABEL: func.func @outside
// CHECK-NOT:     tc.gpu_processor
// CHECK:         scf.for
// CHECK-NOT:     tc.gpu_processor
func.func @outside(%A: memref<?xf32>, %N: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %N step %c1 {
    %z = arith.constant 0.0 : f32
    memref.store %z, %A[%i] : memref<?xf32>
  }
  func.return
}

// CHECK: func.func private @declaration(f32) -> f32
func.func private @declaration(f32) -> f32
