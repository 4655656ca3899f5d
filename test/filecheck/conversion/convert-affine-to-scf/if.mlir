// RUN: tc-opt %s --split-input-file -p convert-affine-to-scf | filecheck %s

// affine.if → scf.if on the conjunction of the integer set constraints
// (`e >= 0` → cmpi sge, `e == 0` → cmpi eq), keeping results and the else
// region. affine.if has no custom syntax in xDSL: generic form.

func.func @if_else(%A: memref<?xf32>, %N: index, %i: index) -> f32 {
  %r = "affine.if"(%i, %N) <{condition = affine_set<(d0)[s0] : (d0 >= 0, s0 - d0 - 1 >= 0)>}> ({
    %x = affine.load %A[%i] : memref<?xf32>
    "affine.yield"(%x) : (f32) -> ()
  }, {
    %z = arith.constant 0.0 : f32
    "affine.yield"(%z) : (f32) -> ()
  }) : (index, index) -> f32
  func.return %r : f32
}

// CHECK-LABEL: func.func @if_else(%A: memref<?xf32>, %N: index, %i: index) -> f32
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[GE0:.*]] = arith.cmpi sge, %i, %[[C0]] : index
// CHECK-NEXT:    %[[D:.*]] = arith.subi %N, %i : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[E:.*]] = arith.subi %[[D]], %[[C1]] : index
// CHECK-NEXT:    %[[GE1:.*]] = arith.cmpi sge, %[[E]], %[[C0]] : index
// CHECK-NEXT:    %[[COND:.*]] = arith.andi %[[GE0]], %[[GE1]] : i1
// CHECK-NEXT:    %r = scf.if %[[COND]] -> (f32) {
// CHECK-NEXT:      %x = memref.load %A[%i] : memref<?xf32>
// CHECK-NEXT:      scf.yield %x : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      scf.yield %z : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : f32

// -----

func.func @if_eq_no_else(%A: memref<?xf32>, %i: index) {
  %z = arith.constant 0.0 : f32
  "affine.if"(%i) <{condition = affine_set<(d0) : (d0 mod 2 == 0)>}> ({
    affine.store %z, %A[%i] : memref<?xf32>
    "affine.yield"() : () -> ()
  }, {
  }) : (index) -> ()
  func.return
}

// CHECK-LABEL: func.func @if_eq_no_else
// CHECK:         %[[REM:.*]] = arith.remsi %i, %{{.*}} : index
// CHECK:         %[[MOD:.*]] = arith.select
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[MOD]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[EQ]] {
// CHECK-NEXT:      memref.store %z, %A[%i] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Constant sets fold to a constant condition (the scf.if stays).

func.func @if_constant(%A: memref<?xf32>, %i: index) {
  %z = arith.constant 0.0 : f32
  "affine.if"() <{condition = affine_set<() : (1 >= 0)>}> ({
    "affine.yield"() : () -> ()
  }, {
  }) : () -> ()
  "affine.if"() <{condition = affine_set<() : (-1 >= 0, 0 == 0)>}> ({
    "affine.yield"() : () -> ()
  }, {
  }) : () -> ()
  func.return
}

// CHECK-LABEL: func.func @if_constant
// CHECK:         %[[T:.*]] = arith.constant true
// CHECK-NEXT:    scf.if %[[T]] {
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[F:.*]] = arith.constant false
// CHECK-NEXT:    scf.if %[[F]] {
// CHECK-NEXT:    }
