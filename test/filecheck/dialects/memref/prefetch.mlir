// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// tc-opt's memref dialect is xDSL's plus MLIR's `memref.prefetch`, in MLIR's
// syntax (mlir-opt reads these lines as they are printed).

func.func @prefetch(%A: memref<64x32xf32>, %B: memref<?xi8>, %i: index, %j: index) {
  memref.prefetch %A[%i, %j], read, locality<3>, data : memref<64x32xf32>
  memref.prefetch %B[%j], write, locality<0>, instr : memref<?xi8>
  %x = memref.load %A[%i, %j] : memref<64x32xf32>
  func.return
}

// CHECK:      memref.prefetch %A[%i, %j], read, locality<3>, data : memref<64x32xf32>
// CHECK-NEXT: memref.prefetch %B[%j], write, locality<0>, instr : memref<?xi8>
// CHECK-NEXT: %x = memref.load %A[%i, %j] : memref<64x32xf32>

// CHECK-GENERIC:      "memref.prefetch"(%A, %i, %j) <{isWrite = false, localityHint = 3 : i32, isDataCache = true}> : (memref<64x32xf32>, index, index) -> ()
// CHECK-GENERIC-NEXT: "memref.prefetch"(%B, %j) <{isWrite = true, localityHint = 0 : i32, isDataCache = false}> : (memref<?xi8>, index) -> ()
