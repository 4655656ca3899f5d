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
// of the dropped dimension goes, the others stay.
func.func @dynamic(%A: memref<?x?x?xf32>, %P: index, %N: index, %Q: index) {
  %t = memref.alloc(%P, %N, %Q) : memref<?x?x?xf32>
  "affine.parallel"(%N) <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<()[s0] -> (s0)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%n: index):
    affine.for %p = 0 to %P {
      affine.for %q = 0 to %Q {
        %x = affine.load %A[%p, %n, %q] : memref<?x?x?xf32>
        affine.store %x, %t[%p, %n, %q] : memref<?x?x?xf32>
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
// CHECK-NEXT:      %t = memref.alloc(%P, %Q) : memref<?x?xf32>
// CHECK:           affine.store %{{.*}}, %t[%p, %q] : memref<?x?xf32>
// CHECK:           affine.load %t[%p, %q] : memref<?x?xf32>
// CHECK:           memref.dealloc %t : memref<?x?xf32>
