// RUN: tc-opt %s -p contract-temporaries | filecheck %s

// Used in two parallel loops: values flow from one loop to the other.
func.func @two_loops(%O: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %c = arith.constant 1.0 : f32
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index):
    affine.store %c, %t[%i] : memref<8xf32>
    affine.yield
  }) : () -> ()
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index):
    %x = affine.load %t[%i] : memref<8xf32>
    affine.store %x, %O[%i] : memref<8xf32>
    affine.yield
  }) : () -> ()
  memref.dealloc %t : memref<8xf32>
  func.return
}
// CHECK-LABEL: func.func @two_loops
// CHECK-NEXT:    %t = memref.alloc() : memref<8xf32>
// CHECK:         memref.dealloc %t : memref<8xf32>

// The loop index shifted (%i + 1 reads another iteration's slice), and in two
// subscripts: left alone.
func.func @shifted(%O: memref<8xf32>) {
  %t = memref.alloc() : memref<9xf32>
  %u = memref.alloc() : memref<8x8xf32>
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index):
    %x = affine.load %t[%i + 1] : memref<9xf32>
    affine.store %x, %u[%i, %i] : memref<8x8xf32>
    %y = affine.load %u[%i, %i] : memref<8x8xf32>
    affine.store %y, %O[%i] : memref<8xf32>
    affine.yield
  }) : () -> ()
  memref.dealloc %u : memref<8x8xf32>
  memref.dealloc %t : memref<9xf32>
  func.return
}
// CHECK-LABEL: func.func @shifted
// CHECK-NEXT:    %t = memref.alloc() : memref<9xf32>
// CHECK-NEXT:    %u = memref.alloc() : memref<8x8xf32>

// A serial loop around the parallel one carries values between its runs.
func.func @inside_a_loop(%O: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  affine.for %k = 0 to 4 {
    "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
    ^bb0(%i: index):
      %x = affine.load %t[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      affine.store %y, %t[%i] : memref<8xf32>
      affine.yield
    }) : () -> ()
  }
  memref.dealloc %t : memref<8xf32>
  func.return
}
// CHECK-LABEL: func.func @inside_a_loop
// CHECK-NEXT:    %t = memref.alloc() : memref<8xf32>

// Arguments and temporaries with other users stay.
func.func private @use(memref<8xf32>)
func.func @escapes(%A: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (8)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%i: index):
    %x = affine.load %A[%i] : memref<8xf32>
    affine.store %x, %t[%i] : memref<8xf32>
    affine.store %x, %A[%i] : memref<8xf32>
    affine.yield
  }) : () -> ()
  func.call @use(%t) : (memref<8xf32>) -> ()
  memref.dealloc %t : memref<8xf32>
  func.return
}
// CHECK-LABEL: func.func @escapes
// CHECK-NEXT:    %t = memref.alloc() : memref<8xf32>
// CHECK:         func.call @use(%t)

// Inside the parallel loop, the loop over `b` reads row 0, written by its
// first iteration: contracted along `t` only.
func.func @inner_reads_another_row(%O: memref<4x8xf32>) {
  %u = memref.alloc() : memref<4x8xf32>
  %c = arith.constant 1.0 : f32
  "affine.parallel"() <{reductions = [], lowerBoundsMap = affine_map<() -> (0)>, lowerBoundsGroups = dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (4)>, upperBoundsGroups = dense<1> : tensor<1xi32>, steps = [1 : i64]}> ({
  ^bb0(%t: index):
    affine.for %b = 0 to 8 {
      affine.store %c, %u[%t, %b] : memref<4x8xf32>
      %x = affine.load %u[%t, 0] : memref<4x8xf32>
      affine.store %x, %O[%t, %b] : memref<4x8xf32>
    }
    affine.yield
  }) : () -> ()
  memref.dealloc %u : memref<4x8xf32>
  func.return
}
// CHECK-LABEL: func.func @inner_reads_another_row
// CHECK:         ^bb0(%t: index):
// CHECK-NEXT:      %u = memref.alloca() : memref<8xf32>
// CHECK-NEXT:      affine.for %b = 0 to 8 {
// CHECK-NEXT:        affine.store %{{.*}}, %u[%b] : memref<8xf32>
// CHECK-NEXT:        %{{.*}} = affine.load %u[0] : memref<8xf32>
