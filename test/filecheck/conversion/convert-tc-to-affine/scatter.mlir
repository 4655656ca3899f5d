// RUN: tc-opt %s -p convert-tc-to-affine | filecheck %s

// A scatter-accumulate (tc.yield ... at [...]): zeroed for "+=!", then a
// nest of affine.for (never affine.parallel: iterations may add at one
// element) whose statement adds under scf.if on the test of the subscripts
// that are not provably in range (%d is not re-tested) and ends by storing
// the error flag (unchanged, or the target's code in tc.checked).

tc.def @emb<V, D, K>(E, Idx, g) -> (dE) {
^bb0(%E : !tc.tensor<[V, D], f32>, %Idx : !tc.tensor<[K], i32>, %g : !tc.tensor<[K, D], f32>):
  %dE = tc.comprehension @dE() "+=!" (%k in [0, K), %d in [0, D)) : !tc.tensor<[V, D], f32> {
    %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
    %1 = arith.index_cast %0 : i32 to index
    %2 = tc.read %g[%k, %d] : !tc.tensor<[K, D], f32>
    tc.yield %2 at [%1, %d] : f32
  }
  tc.return %dE : !tc.tensor<[V, D], f32>
}

// CHECK-LABEL: func.func @emb(%E: memref<?x?xf32>, %Idx: memref<?xi32>, %g: memref<?x?xf32>, %dE: memref<?x?xf32>, %err: memref<1xi32>, %V: index, %D: index, %K: index) attributes {{{.*}}tc.checked = ["dE"]} {
// CHECK-NEXT:    "affine.parallel"(%V, %D)
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      [[Z:%[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      affine.store [[Z]], %dE
// CHECK:         [[C0:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    affine.for %k = 0 to %K {
// CHECK-NEXT:      affine.for %d = 0 to %D {
// CHECK-NEXT:        [[I:%[0-9]+]] = affine.load %Idx[%k] : memref<?xi32>
// CHECK-NEXT:        [[X:%[0-9]+]] = arith.index_cast [[I]] : i32 to index
// CHECK-NEXT:        [[G:%[0-9]+]] = affine.load %g[%k, %d] : memref<?x?xf32>
// CHECK-NEXT:        [[GE:%[0-9]+]] = arith.cmpi sge, [[X]], [[C0]] : index
// CHECK-NEXT:        [[LT:%[0-9]+]] = arith.cmpi slt, [[X]], %V : index
// CHECK-NEXT:        [[OK:%[0-9]+]] = arith.andi [[GE]], [[LT]] : i1
// CHECK-NEXT:        scf.if [[OK]] {
// CHECK-NEXT:          [[OLD:%[0-9]+]] = memref.load %dE[[[X]], %d] : memref<?x?xf32>
// CHECK-NEXT:          [[NEW:%[0-9]+]] = arith.addf [[OLD]], [[G]] fastmath<reassoc> : f32
// CHECK-NEXT:          memref.store [[NEW]], %dE[[[X]], %d] : memref<?x?xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        [[C:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:        [[F:%[0-9]+]] = memref.load %err[[[C]]] : memref<1xi32>
// CHECK-NEXT:        [[CODE:%[0-9]+]] = arith.constant 1 : i32
// CHECK-NEXT:        [[S:%[0-9]+]] = arith.select [[OK]], [[F]], [[CODE]] : i32
// CHECK-NEXT:        memref.store [[S]], %err[[[C]]] : memref<1xi32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// A 16-bit float target accumulating into its previous value: an f32
// buffer, extended from the target, scattered into, rounded back once.
// Integer targets add with arith.addi.

tc.def @half<V, K>(E, Idx, g) -> (S) {
^bb0(%E : !tc.tensor<[V], f16>, %Idx : !tc.tensor<[K], i32>, %g : !tc.tensor<[K], f16>):
  %S = tc.comprehension @S(%v in [0, V)) "=" : !tc.tensor<[V], f16> {
    %0 = tc.read %E[%v] : !tc.tensor<[V], f16>
    tc.yield %0 : f16
  }
  %S_1 = tc.comprehension @S() "+=" (%k in [0, K)) into %S : !tc.tensor<[V], f16> {
    %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
    %1 = arith.index_cast %0 : i32 to index
    %2 = tc.read %g[%k] : !tc.tensor<[K], f16>
    tc.yield %2 at [%1] : f16
  }
  tc.return %S_1 : !tc.tensor<[V], f16>
}

// CHECK-LABEL: func.func @half(
// CHECK:         %S_acc = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           [[H:%[0-9]+]] = affine.load %S[%{{.*}}] : memref<?xf16>
// CHECK-NEXT:      [[W:%[0-9]+]] = arith.extf [[H]] : f16 to f32
// CHECK-NEXT:      affine.store [[W]], %S_acc
// CHECK:         affine.for %k = 0 to %K {
// CHECK:             [[E:%[0-9]+]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:        [[OLD:%[0-9]+]] = memref.load %S_acc[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        arith.addf [[OLD]], [[E]] fastmath<reassoc> : f32
// CHECK:           [[A:%[0-9]+]] = affine.load %S_acc
// CHECK-NEXT:      [[T:%[0-9]+]] = arith.truncf [[A]] : f32 to f16
// CHECK-NEXT:      affine.store [[T]], %S
// CHECK:         memref.dealloc %S_acc

tc.def @ints<V, K>(E, Idx) -> (S) {
^bb0(%E : !tc.tensor<[V], i64>, %Idx : !tc.tensor<[K], i32>):
  %S = tc.comprehension @S() "+=!" (%k in [0, K)) : !tc.tensor<[V], i64> {
    %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
    %1 = arith.index_cast %0 : i32 to index
    %2 = arith.constant 1 : i64
    tc.yield %2 at [%1] : i64
  }
  tc.return %S : !tc.tensor<[V], i64>
}

// CHECK-LABEL: func.func @ints(
// CHECK:           [[OLD:%[0-9]+]] = memref.load %S[%{{.*}}] : memref<?xi64>
// CHECK-NEXT:      arith.addi [[OLD]], %{{.*}} : i64
