// RUN: tc-opt %s -p convert-tc-to-affine | filecheck %s

// A scatter-accumulate (tc.yield ... at [...]): zeroed for "+=!", then a
// nest of affine.for whose statement adds with memref.atomic_rmw (kind 0,
// addf) under scf.if on the test of the subscripts that are not provably in
// range (%d is not re-tested); the else branch stores the target's code in
// tc.checked into the error flag (no load of it: those writes commute, as
// the atomic adds do, so the GPU runs the nest's points in parallel).

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
// CHECK-NEXT:          %{{.*}} = "memref.atomic_rmw"([[G]], %dE, [[X]], %d) <{kind = 0 : i64}> : (f32, memref<?x?xf32>, index, index) -> f32
// CHECK-NEXT:        } else {
// CHECK-NEXT:          [[CODE:%[0-9]+]] = arith.constant 1 : i32
// CHECK-NEXT:          [[C:%[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:          memref.store [[CODE]], %err[[[C]]] : memref<1xi32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// A 16-bit float target accumulating into its previous value: an f32
// buffer, extended from the target, scattered into (atomic f32 adds),
// rounded back once. Integer targets add with kind 1 (addi).

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
// CHECK-NEXT:        "memref.atomic_rmw"([[E]], %S_acc, %{{.*}}) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
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
// CHECK:           "memref.atomic_rmw"(%{{.*}}, %S, %{{.*}}) <{kind = 1 : i64}> : (i64, memref<?xi64>, index) -> i64

// Left alone: subscripts that are provably in range need no test (the
// atomic add is the statement, no scf.if, no error code), and an ordinary
// update of the same tensor afterwards stays affine.load + arith.addf
// + affine.store (no atomics: its updates of one element are ordered).

tc.def @inrange<K, D>(g) -> (S) {
^bb0(%g : !tc.tensor<[K, D], f32>):
  %S = tc.comprehension @S() "+=!" (%k in [0, K), %d in [0, D)) : !tc.tensor<[K, D], f32> {
    %0 = tc.read %g[%k, %d] : !tc.tensor<[K, D], f32>
    tc.yield %0 at [%k, %d] : f32
  }
  %S_1 = tc.comprehension @S(%k in [0, K)) "+=" (%d in [0, D)) into %S : !tc.tensor<[K, D], f32> {
    %0 = tc.read %g[%k, %d] : !tc.tensor<[K, D], f32>
    tc.yield %0 : f32
  }
  tc.return %S_1 : !tc.tensor<[K, D], f32>
}

// CHECK-LABEL: func.func @inrange(
// CHECK:         affine.for %k = 0 to %K {
// CHECK-NEXT:      affine.for %d = 0 to %D {
// CHECK-NEXT:        [[G:%[0-9]+]] = affine.load %g[%k, %d] : memref<?x?xf32>
// CHECK-NEXT:        %{{.*}} = "memref.atomic_rmw"([[G]], %S, %k, %d) <{kind = 0 : i64}> : (f32, memref<?x?xf32>, index, index) -> f32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NOT:     scf.if
// CHECK-NOT:     memref.store
// CHECK-NOT:     atomic_rmw
// CHECK:           affine.load %S
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      affine.store
// CHECK-NOT:     atomic_rmw
// CHECK:         func.return
