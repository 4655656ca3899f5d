// RUN: tc-opt %s --split-input-file -p expand-math-polynomials | filecheck %s
// RUN: tc-opt %s --split-input-file -p 'expand-math-polynomials{mask_selects=true}' | filecheck %s --check-prefix=MASK

// vector<..xf32> operands: constants are dense splats, bit patterns
// vector<..xi32>, and conditions integer masks (xDSL's arith.cmpf/select only
// have i1 conditions): a comparison with a constant is the sign of x - c, a
// NaN test the sign of 0x7f800000 - (bits & 0x7fffffff), a select
// b ^ ((a ^ b) & mask): exp's clamp is minnum/maxnum with the NaN selected
// back. The results are those of the scalar expansion, bit for bit.

builtin.module {
  func.func @vexp(%x: vector<8xf32>) -> vector<8xf32> {
    %y = math.exp %x : vector<8xf32>
    func.return %y : vector<8xf32>
  }
}

// CHECK-LABEL: func.func @vexp(%x: vector<8xf32>) -> vector<8xf32> {
// CHECK-NOT:     arith.cmpf
// CHECK-NOT:     arith.select
// CHECK:         %[[LO:.*]] = arith.constant dense<-1.040000e+02> : vector<8xf32>
// CHECK-NEXT:    %[[C1:.*]] = arith.maxnumf %x, %[[LO]] : vector<8xf32>
// CHECK-NEXT:    %[[HI:.*]] = arith.constant dense<8.900000e+01> : vector<8xf32>
// CHECK-NEXT:    %[[C2:.*]] = arith.minnumf %[[C1]], %[[HI]] : vector<8xf32>
// CHECK-NEXT:    %[[XB:.*]] = arith.bitcast %x : vector<8xf32> to vector<8xi32>
// CHECK-NEXT:    %[[ABSM:.*]] = arith.constant dense<2147483647> : vector<8xi32>
// CHECK-NEXT:    %[[MAG:.*]] = arith.andi %[[XB]], %[[ABSM]] : vector<8xi32>
// CHECK-NEXT:    %[[INF:.*]] = arith.constant dense<2139095040> : vector<8xi32>
// CHECK-NEXT:    %[[D:.*]] = arith.subi %[[INF]], %[[MAG]] : vector<8xi32>
// CHECK-NEXT:    %[[C31:.*]] = arith.constant dense<31> : vector<8xi32>
// CHECK-NEXT:    %[[NAN:.*]] = arith.shrsi %[[D]], %[[C31]] : vector<8xi32>
// CHECK-NEXT:    %[[CB:.*]] = arith.bitcast %[[C2]] : vector<8xf32> to vector<8xi32>
// CHECK-NEXT:    %[[X:.*]] = arith.xori %[[XB]], %[[CB]] : vector<8xi32>
// CHECK-NEXT:    %[[A:.*]] = arith.andi %[[X]], %[[NAN]] : vector<8xi32>
// CHECK-NEXT:    %[[R:.*]] = arith.xori %[[CB]], %[[A]] : vector<8xi32>
// CHECK-NEXT:    %[[XC:.*]] = arith.bitcast %[[R]] : vector<8xi32> to vector<8xf32>
// CHECK-NEXT:    %[[L2E:.*]] = arith.constant dense<1.44269502> : vector<8xf32>
// CHECK-NEXT:    %{{.*}} = arith.mulf %[[XC]], %[[L2E]] fastmath<contract> : vector<8xf32>
// CHECK:         arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK:         arith.shrsi %{{.*}} : vector<8xi32>
// CHECK:         %y = arith.mulf %{{.*}} : vector<8xf32>
// CHECK-NEXT:    func.return %y : vector<8xf32>

// MASK-LABEL: func.func @vexp(

// -----

// A comparison with a constant in mask form; with mask_selects=true scalars
// take the same form.

builtin.module {
  func.func @tanh(%x: f32, %v: vector<4xf32>) -> (f32, vector<4xf32>) {
    %y = math.tanh %x : f32
    %w = math.tanh %v : vector<4xf32>
    func.return %y, %w : f32, vector<4xf32>
  }
}

// CHECK-LABEL: func.func @tanh(%x: f32, %v: vector<4xf32>) -> (f32, vector<4xf32>) {
// CHECK:         %[[AX:.*]] = math.absf %x : f32
// CHECK:         arith.cmpf oge, %[[AX]], %{{.*}} : f32
// CHECK:         %y = math.copysign %{{.*}}, %x : f32
// CHECK:         %[[AV:.*]] = math.absf %v : vector<4xf32>
// CHECK-NOT:     arith.cmpf
// CHECK:         %[[T:.*]] = arith.constant dense<5.500000e-01> : vector<4xf32>
// CHECK-NEXT:    %[[D:.*]] = arith.subf %[[AV]], %[[T]] : vector<4xf32>
// CHECK-NEXT:    %[[DB:.*]] = arith.bitcast %[[D]] : vector<4xf32> to vector<4xi32>
// CHECK-NEXT:    %[[LT:.*]] = arith.shrsi %[[DB]], %{{.*}} : vector<4xi32>
// CHECK-NEXT:    %[[ONES:.*]] = arith.constant dense<-1> : vector<4xi32>
// CHECK-NEXT:    %[[GE:.*]] = arith.xori %[[LT]], %[[ONES]] : vector<4xi32>
// CHECK-NEXT:    %[[ORD:.*]] = arith.xori %{{.*}}, %[[ONES]] : vector<4xi32>
// CHECK-NEXT:    %{{.*}} = arith.andi %[[GE]], %[[ORD]] : vector<4xi32>
// CHECK:         %w = math.copysign %{{.*}}, %v : vector<4xf32>

// MASK-LABEL: func.func @tanh(%x: f32, %v: vector<4xf32>) -> (f32, vector<4xf32>) {
// MASK-NOT:     arith.cmpf
// MASK-NOT:     arith.select
// MASK:         arith.bitcast %{{.*}} : f32 to i32
// MASK:         %y = math.copysign %{{.*}}, %x : f32
