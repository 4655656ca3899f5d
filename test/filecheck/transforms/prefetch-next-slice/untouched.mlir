// RUN: tc-opt %s -p 'prefetch-next-slice{min-bytes=512 max-bytes=8192}' | filecheck %s
// RUN: tc-opt %s -p 'prefetch-next-slice{min-bytes=512 max-bytes=8192}' | filecheck %s --check-prefix=NONE

// What the pass leaves alone: each function below breaks one condition of
// the contract that slice.mlir's @spread meets (min-bytes=512 keeps the
// inner loops' 128-byte rows out, as there).

// NONE-NOT: memref.prefetch

// A is written in the loop (by the second nest).
func.func @written(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %A[%o, %c0, %j] : memref<8x4x32xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @written(

// A is also read at row 0, which the next iteration reads again.
func.func @other_row(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%c0, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @other_row(

// The nests' bounds are not constants.
func.func @dynamic_bounds(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %n step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %n step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @dynamic_bounds(

// Each nest has 1 iteration: 8 lines would take 8 prefetches an iteration
// (at most 4).
func.func @short(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c1 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c1 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @short(

// A's shape is not static.
func.func @dynamic_shape(%A: memref<?x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<?x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @dynamic_shape(

// A's slice (128 x 32 floats, 16 KiB: 256 lines) is over
// max-bytes.
func.func @too_big(%A: memref<8x128x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x128x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c64 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %c0] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @too_big(

// The parallel loop's step is not a constant.
func.func @variable_step(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @variable_step(

// A has a non-identity layout.
func.func @strided(%A: memref<8x4x32xf32, strided<[256, 64, 1]>>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %x = memref.load %A[%o, %i, %k] : memref<8x4x32xf32, strided<[256, 64, 1]>>
        memref.store %x, %T[%i] : memref<4xf32>
      }
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
      %u = vector.reduction <add>, %t : vector<4xf32> into f32
      memref.store %u, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @strided(

// The parallel loop is nested in another one: only outermost loops count.
func.func @not_outermost(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%p: index):
      scf.for %i = %c0 to %c4 step %c1 {
        scf.for %k = %c0 to %c32 step %c1 {
          %x = memref.load %A[%p, %i, %k] : memref<8x4x32xf32>
          memref.store %x, %T[%i] : memref<4xf32>
        }
      }
      scf.for %j = %c0 to %c8 step %c1 {
        %t = vector.load %T[%c0] : memref<4xf32>, vector<4xf32>
        %u = vector.reduction <add>, %t : vector<4xf32> into f32
        memref.store %u, %O[%p, %j] : memref<8x8xf32>
      }
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @not_outermost(

// Both nests are innermost loops on scalars: LLVM's loop vectoriser (or
// nontemporal-stores) takes them, and a prefetch in a body would stop them.
func.func @scalar_loop(%A: memref<8x4x32xf32>, %T: memref<4xf32>, %O: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%o: index):
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %A[%o, %i, %c0] : memref<8x4x32xf32>
      memref.store %x, %T[%i] : memref<4xf32>
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %t = memref.load %T[%c0] : memref<4xf32>
      memref.store %t, %O[%o, %j] : memref<8x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
// CHECK-LABEL: func.func @scalar_loop(
