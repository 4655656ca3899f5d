// affine-gpu-map with reductions: a band with one parallel member (a row
// reduction) gives its reduction member to a warp along x, marked
// tc.gpu_reduce, and its rows to y; `reductions=false` keeps each row's
// reduction in one thread (rows on x); a band with two parallel members
// (matmul) keeps its reduction in the threads unless `reductions=true`; a
// whole-tensor sum (no parallel member) of unknown length is shared by a
// block of 1024 threads and the blocks along x (`tc.gpu_split`, as many as
// fill the GPU: 132 SMs x 2048 threads / 1024), or with `reductions=false`
// runs in one thread; a short one by a warp of one block. A few long rows
// get a block of 1024 threads each, and blocks along y share each row, their
// initialisation moved to a nest of its own before (the blocks' atomic
// updates need it done); a short row's initialisation stays fused.
// RUN: tc-opt %s -p affine-gpu-map | filecheck %s
// RUN: tc-opt %s -p 'affine-gpu-map{reductions=false}' | filecheck %s --check-prefix=OFF
// RUN: tc-opt %s -p 'affine-gpu-map{reductions=true}' | filecheck %s --check-prefix=ON

// CHECK-LABEL: func.func @rowsum
// CHECK:           affine.load %S
// CHECK:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64, tc.gpu_reduce} : (index) -> ()
// CHECK:       }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// OFF-LABEL:   func.func @rowsum
// OFF-NOT:     tc.gpu_reduce
// OFF:           affine.for
// OFF:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64}
func.func @rowsum(%I: memref<?x?xf32>, %S: memref<?xf32>, %N: index, %D: index) {
  affine.for %n = 0 to %N {
    affine.for %d = 0 to %D {
      %x = affine.load %I[%n, %d] : memref<?x?xf32>
      %s = affine.load %S[%n] : memref<?xf32>
      %t = arith.addf %s, %x fastmath<reassoc> : f32
      affine.store %t, %S[%n] : memref<?xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @matmul
// CHECK-NOT:   tc.gpu_reduce
// CHECK:       func.return
// With the default block (32, 8) only y is left for the rows and columns:
// the columns (innermost) take it; the rows go to blocks only (tiles of 1).
// ON-LABEL:    func.func @matmul
// ON-NOT:      affine.for %m =
// ON:          }) {tc.gpu_processor = "thread_x", tc.gpu_size = 32 : i64, tc.gpu_reduce} : (index) -> ()
// ON:          }) {tc.gpu_processor = "thread_y", tc.gpu_size = 8 : i64}
// ON-NOT:      thread_z
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

// CHECK-LABEL: func.func @sum
// CHECK:         affine.store %{{.*}}, %S[]
// CHECK:         "affine.parallel"
// CHECK:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_x", tc.gpu_split_size = 264 : i64} : (index) -> ()
// CHECK-LABEL: func.func @short_sum
// CHECK:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 128 : i64, tc.gpu_reduce} : () -> ()
// CHECK-NOT:     block_
// OFF-LABEL:   func.func @sum
// OFF-NOT:     tc.gpu_processor
// OFF:         func.return
func.func @sum(%A: memref<?xf32>, %S: memref<f32>, %N: index) {
  %z = arith.constant 0.0 : f32
  affine.store %z, %S[] : memref<f32>
  affine.for %i = 0 to %N {
    %a = affine.load %A[%i] : memref<?xf32>
    %s = affine.load %S[] : memref<f32>
    %t = arith.addf %s, %a fastmath<reassoc> : f32
    affine.store %t, %S[] : memref<f32>
  }
  func.return
}

func.func @short_sum(%A: memref<100xf32>, %S: memref<f32>) {
  %z = arith.constant 0.0 : f32
  affine.store %z, %S[] : memref<f32>
  affine.for %i = 0 to 100 {
    %a = affine.load %A[%i] : memref<100xf32>
    %s = affine.load %S[] : memref<f32>
    %t = arith.addf %s, %a fastmath<reassoc> : f32
    affine.store %t, %S[] : memref<f32>
  }
  func.return
}

// CHECK-LABEL: func.func @long_rows
// CHECK:         affine.store %{{.*}}, %S[%{{.*}}]
// CHECK:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 2 : i64}
// CHECK:         affine.store %{{.*}}, %S[%{{.*}}]
// CHECK:         }) {tc.gpu_processor = "thread_x", tc.gpu_size = 1024 : i64, tc.gpu_reduce, tc.gpu_split = "block_y", tc.gpu_split_size = 132 : i64}
// CHECK:         }) {tc.gpu_processor = "block_x"
// CHECK-LABEL: func.func @short_rows
// CHECK:         affine.store %{{.*}}, %S[%{{.*}}]
// CHECK-NEXT:    "affine.parallel"
// CHECK-NOT:     tc.gpu_split
// CHECK:         func.return
func.func @long_rows(%A: memref<2x65536xf32>, %S: memref<2xf32>) {
  %z = arith.constant 0.0 : f32
  affine.for %n = 0 to 2 {
    affine.store %z, %S[%n] : memref<2xf32>
    affine.for %d = 0 to 65536 {
      %x = affine.load %A[%n, %d] : memref<2x65536xf32>
      %s = affine.load %S[%n] : memref<2xf32>
      %t = arith.addf %s, %x fastmath<reassoc> : f32
      affine.store %t, %S[%n] : memref<2xf32>
    }
  }
  func.return
}

func.func @short_rows(%A: memref<2x4096xf32>, %S: memref<2xf32>) {
  %z = arith.constant 0.0 : f32
  affine.for %n = 0 to 2 {
    affine.store %z, %S[%n] : memref<2xf32>
    affine.for %d = 0 to 4096 {
      %x = affine.load %A[%n, %d] : memref<2x4096xf32>
      %s = affine.load %S[%n] : memref<2xf32>
      %t = arith.addf %s, %x fastmath<reassoc> : f32
      affine.store %t, %S[%n] : memref<2xf32>
    }
  }
  func.return
}
