// RUN: tc-opt %s -p contract-temporaries | filecheck %s

// Softmax's exponentials after max fusion: every access to %e is in one
// iteration of the row loop, so each row gets its own buffer (on the stack:
// its shape is static and small).
func.func @rows(%I: memref<8x16xf32>, %O: memref<8x16xf32>) {
  %e = memref.alloc() : memref<8x16xf32>
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%n: index):
    affine.for %d = 0 to 16 {
      %x = affine.load %I[%n, %d] : memref<8x16xf32>
      %y = math.exp %x : f32
      affine.store %y, %e[%n, %d] : memref<8x16xf32>
    }
    affine.for %d = 0 to 16 {
      %y = affine.load %e[%n, %d] : memref<8x16xf32>
      affine.store %y, %O[%n, %d] : memref<8x16xf32>
    }
    affine.yield
  }) : () -> ()
  memref.dealloc %e : memref<8x16xf32>
  func.return
}

// CHECK-LABEL: func.func @rows
// CHECK-NOT:     memref.alloc
// CHECK:         ^bb0(%n: index):
// CHECK-NEXT:      %e = memref.alloca() : memref<16xf32>
// CHECK:           affine.store %{{.*}}, %e[%d] : memref<16xf32>
// CHECK:           affine.load %e[%d{{.*}}] : memref<16xf32>
// CHECK-NOT:       memref.dealloc
// CHECK:           affine.yield
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return

// Rows of 128 KiB exceed the stack budget: heap buffers, one per iteration.
func.func @big_rows(%O: memref<2x32768xf32>) {
  %t = memref.alloc() : memref<2x32768xf32>
  %c = arith.constant 1.0 : f32
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (2)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%n: index):
    affine.for %d = 0 to 32768 {
      affine.store %c, %t[%n, %d] : memref<2x32768xf32>
    }
    affine.for %d = 0 to 32768 {
      %y = affine.load %t[%n, %d] : memref<2x32768xf32>
      affine.store %y, %O[%n, %d] : memref<2x32768xf32>
    }
    affine.yield
  }) : () -> ()
  memref.dealloc %t : memref<2x32768xf32>
  func.return
}

// CHECK-LABEL: func.func @big_rows
// CHECK:         ^bb0(%n: index):
// CHECK-NEXT:      %t = memref.alloc() : memref<32768xf32>
// CHECK:           memref.dealloc %t : memref<32768xf32>
// CHECK-NEXT:      affine.yield

// A dynamic shape, the row index in the middle subscript: the size operand
// of the dropped dimension goes, the others stay. Then every access is in
// one iteration of the loop over `p`, at subscript `p`: one more dimension
// goes (heap buffers: their size is not a number).
func.func @dynamic(%A: memref<?x?x?xf32>, %P: index, %N: index, %Q: index) {
  %t = memref.alloc(%P, %N, %Q) : memref<?x?x?xf32>
  "affine.parallel"(%N) <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%n: index):
    affine.for %p = 0 to %P {
      affine.for %q = 0 to %Q {
        %x = affine.load %A[%p, %n, %q] : memref<?x?x?xf32>
        affine.store %x, %t[%p, %n, %q] : memref<?x?x?xf32>
      }
      affine.for %q = 0 to %Q {
        %y = affine.load %t[%p, %n, %q] : memref<?x?x?xf32>
        affine.store %y, %A[%p, %n, %q] : memref<?x?x?xf32>
      }
    }
    affine.yield
  }) : (index) -> ()
  memref.dealloc %t : memref<?x?x?xf32>
  func.return
}

// CHECK-LABEL: func.func @dynamic
// CHECK:         ^bb0(%n: index):
// CHECK-NEXT:      affine.for %p = 0 to %P {
// CHECK-NEXT:        %t = memref.alloc(%Q) : memref<?xf32>
// CHECK:               affine.store %{{.*}}, %t[%q] : memref<?xf32>
// CHECK:               affine.load %t[%q{{.*}}] : memref<?xf32>
// CHECK:             memref.dealloc %t : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      affine.yield

// Layernorm's centred rows: inside the parallel loop over `t`, every access
// to %cen is in one iteration of the (sequential) loop over `b`, at subscript
// `b`, so the buffer shrinks again, to one row (4 KiB on the stack instead
// of 512 KiB on the heap).
func.func @nested(%I: memref<4x128x1024xf32>, %O: memref<4x128x1024xf32>) {
  %cen = memref.alloc() : memref<4x128x1024xf32>
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (4)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%t: index):
    affine.for %b = 0 to 128 {
      affine.for %c = 0 to 1024 {
        %x = affine.load %I[%t, %b, %c] : memref<4x128x1024xf32>
        affine.store %x, %cen[%t, %b, %c] : memref<4x128x1024xf32>
      }
      affine.for %c = 0 to 1024 {
        %y = affine.load %cen[%t, %b, %c] : memref<4x128x1024xf32>
        affine.store %y, %O[%t, %b, %c] : memref<4x128x1024xf32>
      }
    }
    affine.yield
  }) : () -> ()
  memref.dealloc %cen : memref<4x128x1024xf32>
  func.return
}

// CHECK-LABEL: func.func @nested
// CHECK:         ^bb0(%t: index):
// CHECK-NEXT:      affine.for %b = 0 to 128 {
// CHECK-NEXT:        %cen = memref.alloca() : memref<1024xf32>
// CHECK:               affine.store %{{.*}}, %cen[%c] : memref<1024xf32>
// CHECK:               affine.load %cen[%c{{.*}}] : memref<1024xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
