// RUN: not tc-opt %s -p 'nontemporal-stores{vector-width=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tc-opt %s -p 'nontemporal-stores{vector-width=6}' 2>&1 | filecheck %s --check-prefix=ODD
// RUN: not tc-opt %s -p 'nontemporal-stores{min-bytes=-1}' 2>&1 | filecheck %s --check-prefix=BYTES
// RUN: tc-opt %s -p 'nontemporal-stores{min-bytes=0}' | filecheck %s --check-prefix=DEFAULT
// RUN: tc-opt %s -p 'nontemporal-stores{vector-width=16 min-bytes=0}' | filecheck %s --check-prefix=WIDE

// `vector-width` is f32 lanes per vector register, a positive power of two;
// bad options are located errors, not tracebacks. The default is 8 lanes
// (256-bit vectors, 32-byte aligned stores) on every machine.

// ZERO: nontemporal-stores: vector-width must be a positive power of two, not 0
// ODD: nontemporal-stores: vector-width must be a positive power of two, not 6
// BYTES: nontemporal-stores: min-bytes must be >= 0, not -1
// ZERO-NOT: Traceback
// ODD-NOT: Traceback
// BYTES-NOT: Traceback

func.func @copy(%I: memref<1024xf32>, %O: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  scf.for %d = %c0 to %c1024 step %c1 {
    %x = memref.load %I[%d] : memref<1024xf32>
    memref.store %x, %O[%d] : memref<1024xf32>
  }
  func.return
}

// DEFAULT: vector.store %{{.*}}, %O[%{{.*}}] {alignment = 32 : i64, nontemporal = true} : memref<1024xf32>, vector<8xf32>
// WIDE: vector.store %{{.*}}, %O[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<1024xf32>, vector<16xf32>
