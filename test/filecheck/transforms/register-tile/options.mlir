// RUN: not tc-opt %s -p 'register-tile{vector-width=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tc-opt %s -p 'register-tile{vector-width=12}' 2>&1 | filecheck %s --check-prefix=ODD
// RUN: not tc-opt %s -p 'register-tile{vector-width=-8}' 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not tc-opt %s -p 'register-tile{rows=-1}' 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: tc-opt %s -p 'register-tile' | filecheck %s --check-prefix=DEFAULT
// RUN: tc-opt %s -p 'register-tile{vector-width=16}' | filecheck %s --check-prefix=WIDE

// `vector-width` is f32 lanes per vector register, a positive power of two;
// bad options are located errors, not tracebacks. The default is 8 lanes
// (256-bit vectors) on every machine: it does not depend on the host.

// ZERO: register-tile: vector-width must be a positive power of two, not 0
// ODD: register-tile: vector-width must be a positive power of two, not 12
// NEG: register-tile: vector-width must be a positive power of two, not -8
// ROWS: register-tile: rows and vectors must be >= 0 (got -1, 0)
// ZERO-NOT: Traceback
// ODD-NOT: Traceback
// NEG-NOT: Traceback
// ROWS-NOT: Traceback

func.func @mm(%A: memref<64x8xf32>, %B: memref<8x256xf32>, %C: memref<64x256xf32>) {
  affine.for %m = 0 to 64 {
    affine.for %n = 0 to 256 {
      affine.for %k = 0 to 8 {
        %a = affine.load %A[%m, %k] : memref<64x8xf32>
        %b = affine.load %B[%k, %n] : memref<8x256xf32>
        %p = arith.mulf %a, %b : f32
        %c = affine.load %C[%m, %n] : memref<64x256xf32>
        %s = arith.addf %c, %p fastmath<reassoc> : f32
        affine.store %s, %C[%m, %n] : memref<64x256xf32>
      }
    }
  }
  func.return
}

// DEFAULT: vector.load %C[{{.*}}] : memref<64x256xf32>, vector<8xf32>
// DEFAULT-NOT: vector<16xf32>
// WIDE: vector.load %C[{{.*}}] : memref<64x256xf32>, vector<16xf32>
// WIDE-NOT: vector<8xf32>
