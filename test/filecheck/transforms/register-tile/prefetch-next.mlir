// RUN: tc-opt %s --split-input-file -p 'register-tile{vector-width=8}' | filecheck %s

// A row reduction inside a row loop that other statements share (the init
// and O's nest): its vector loops prefetch what the next row will touch, at
// the same columns, once per 64 bytes (8-float vectors, 4 per step: columns
// d and d + 16): I[n + 1, .] for reading, with the non-temporal hint
// (locality<0>), and O[n + 1, .], which a later nest of the row stores along
// a loop with the reduction loop's bounds, for writing.

func.func @center(%I: memref<64x256xf32>, %m: memref<64xf32>, %O: memref<64x256xf32>) {
  affine.for %n = 0 to 64 {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<64xf32>
    affine.for %r = 0 to 256 {
      %x = affine.load %I[%n, %r] : memref<64x256xf32>
      %a = affine.load %m[%n] : memref<64xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<64xf32>
    }
    affine.for %d = 0 to 256 {
      %x = affine.load %I[%n, %d] : memref<64x256xf32>
      %a = affine.load %m[%n] : memref<64xf32>
      %c = arith.subf %x, %a : f32
      affine.store %c, %O[%n, %d] : memref<64x256xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @center
// CHECK:         %[[N1:[0-9]+]] = affine.apply affine_map<()[s0] -> ((s0 + 1))> ()[%n]
// CHECK:         affine.for %r = 0 to 256 step 32
// CHECK:           vector.load %I[%n, %r]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.prefetch %I[%[[N1]], %r], read, locality<0>, data : memref<64x256xf32>
// CHECK-NEXT:      memref.prefetch %O[%[[N1]], %r], write, locality<3>, data : memref<64x256xf32>
// CHECK:           %[[C16:[0-9]+]] = affine.apply affine_map<()[s0] -> ((s0 + 16))> ()[%r]
// CHECK-NEXT:      vector.load %I[%n, %[[C16]]]
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      memref.prefetch %I[%[[N1]], %[[C16]]], read, locality<0>, data : memref<64x256xf32>
// CHECK-NEXT:      memref.prefetch %O[%[[N1]], %[[C16]]], write, locality<3>, data : memref<64x256xf32>
// CHECK:           affine.yield
// CHECK-NOT:     memref.prefetch
// CHECK:         func.return

// -----

// Left alone: consecutive rows are 32 KiB apart (more than
// PREFETCH_NEXT_BYTES): the next row's lines would leave L1 before use.

func.func @long_rows(%I: memref<4x8192xf32>, %m: memref<4xf32>) {
  affine.for %n = 0 to 4 {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<4xf32>
    affine.for %r = 0 to 8192 {
      %x = affine.load %I[%n, %r] : memref<4x8192xf32>
      %a = affine.load %m[%n] : memref<4xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<4xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @long_rows
// CHECK:         vector.load %I
// CHECK-NOT:     memref.prefetch
// CHECK:         func.return

// -----

// Left alone: the row loop does not move W (every row reads it again, from
// cache), and with no row streamed in, O's row is not prefetched either.

func.func @same_row(%W: memref<256xf32>, %m: memref<64xf32>, %O: memref<64x256xf32>) {
  affine.for %n = 0 to 64 {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<64xf32>
    affine.for %r = 0 to 256 {
      %x = affine.load %W[%r] : memref<256xf32>
      %a = affine.load %m[%n] : memref<64xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<64xf32>
    }
    affine.for %d = 0 to 256 {
      %a = affine.load %m[%n] : memref<64xf32>
      affine.store %a, %O[%n, %d] : memref<64x256xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @same_row
// CHECK:         vector.load %W
// CHECK-NOT:     memref.prefetch
// CHECK:         func.return

// -----

// Only the read: O's row is stored along a loop with other bounds than the
// reduction loop's (0 to 128), so its columns are not the reduction's.

func.func @other_columns(%I: memref<64x256xf32>, %m: memref<64xf32>, %O: memref<64x256xf32>) {
  affine.for %n = 0 to 64 {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<64xf32>
    affine.for %r = 0 to 256 {
      %x = affine.load %I[%n, %r] : memref<64x256xf32>
      %a = affine.load %m[%n] : memref<64xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<64xf32>
    }
    affine.for %d = 0 to 128 {
      %a = affine.load %m[%n] : memref<64xf32>
      affine.store %a, %O[%n, %d] : memref<64x256xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @other_columns
// CHECK:         memref.prefetch %I
// CHECK-NOT:     memref.prefetch %O
// CHECK:         func.return

// -----

// Left alone: with dynamic extents the distance to the next row is unknown.

func.func @dynamic(%I: memref<?x?xf32>, %m: memref<?xf32>, %N: index, %D: index) {
  affine.for %n = 0 to %N {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<?xf32>
    affine.for %r = 0 to %D {
      %x = affine.load %I[%n, %r] : memref<?x?xf32>
      %a = affine.load %m[%n] : memref<?xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<?xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         vector.load %I
// CHECK-NOT:     memref.prefetch
// CHECK:         func.return

// -----

// Two reductions over the same row (moments2): only the first statement's
// kernel prefetches the next row, once per iteration of the row loop.

func.func @siblings(%I: memref<64x256xf32>, %m: memref<64xf32>, %v: memref<64xf32>) {
  affine.for %n = 0 to 64 {
    %zero = arith.constant 0.0 : f32
    affine.store %zero, %m[%n] : memref<64xf32>
    affine.for %r = 0 to 256 {
      %x = affine.load %I[%n, %r] : memref<64x256xf32>
      %a = affine.load %m[%n] : memref<64xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      affine.store %s, %m[%n] : memref<64xf32>
    }
    affine.store %zero, %v[%n] : memref<64xf32>
    affine.for %r = 0 to 256 {
      %x = affine.load %I[%n, %r] : memref<64x256xf32>
      %q = arith.mulf %x, %x : f32
      %a = affine.load %v[%n] : memref<64xf32>
      %s = arith.addf %a, %q fastmath<reassoc> : f32
      affine.store %s, %v[%n] : memref<64xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @siblings
// CHECK:         affine.for %r = 0 to 256 step 32
// CHECK:           memref.prefetch %I
// CHECK:         affine.for %{{.*}} = 0 to 256 step 32
// CHECK-NOT:       memref.prefetch
// CHECK:         func.return
