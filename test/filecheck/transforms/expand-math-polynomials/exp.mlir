// RUN: tc-opt %s -p expand-math-polynomials | filecheck %s

// math.exp on f32 becomes call-free arithmetic; f64 exp and other math ops
// are left alone.

builtin.module {
  func.func @exp32(%x: f32) -> f32 {
    %y = math.exp %x : f32
    func.return %y : f32
  }
  func.func @others(%x: f32, %d: f64) -> (f32, f64) {
    %l = math.log %x : f32
    %e = math.exp %d : f64
    func.return %l, %e : f32, f64
  }
}

// CHECK-LABEL: func.func @exp32(%x: f32) -> f32 {
// CHECK-NOT:     math.exp
// CHECK:         arith.maxnumf %x
// CHECK:         arith.minnumf
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.shrsi
// CHECK:         arith.shli
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         arith.cmpf ogt, %x
// CHECK:         arith.cmpf olt, %x
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %x, %x : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.select %[[NAN]], %x, %{{.*}} : f32
// CHECK-NEXT:    func.return %[[Y]] : f32

// CHECK-LABEL: func.func @others(%x: f32, %d: f64) -> (f32, f64) {
// CHECK-NEXT:    %l = math.log %x : f32
// CHECK-NEXT:    %e = math.exp %d : f64
// CHECK-NEXT:    func.return %l, %e : f32, f64
