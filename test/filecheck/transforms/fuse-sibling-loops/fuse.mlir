// RUN: tc-opt %s -p fuse-sibling-loops | filecheck %s

// moments2 after register-tile: a row sum and a row sum of squares, each a
// loop over k carrying its partial sums, with the first result stored and
// the second loop's initial value defined between them. They become one
// loop that reads the row once; the constant moves up before it. The first
// loop's prefetch of the next row (a hint, no memory effect) does not keep
// them apart.

func.func @moments(%I: memref<4x64xf32>, %mean: memref<4xf32>, %var: memref<4xf32>) {
  affine.for %n = 0 to 4 {
    %z = arith.constant dense<0.0> : vector<8xf32>
    %n1 = affine.apply affine_map<(d0) -> (d0 + 1)> (%n)
    %s = affine.for %k = 0 to 64 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      memref.prefetch %I[%n1, %k], read, locality<3>, data : memref<4x64xf32>
      affine.yield %a1 : vector<8xf32>
    }
    %c0 = arith.constant 0.0 : f32
    %m = vector.reduction <add>, %s, %c0 fastmath<reassoc> : vector<8xf32> into f32
    affine.store %m, %mean[%n] : memref<4xf32>
    %z2 = arith.constant dense<0.0> : vector<8xf32>
    %q = affine.for %k = 0 to 64 step 8 iter_args(%b = %z2) -> (vector<8xf32>) {
      %y = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %b1 = math.fma %y, %y, %b fastmath<reassoc> : vector<8xf32>
      affine.yield %b1 : vector<8xf32>
    }
    %v = vector.reduction <add>, %q, %c0 fastmath<reassoc> : vector<8xf32> into f32
    affine.store %v, %var[%n] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @moments
// CHECK:         affine.for %n = 0 to 4 {
// CHECK-NEXT:      %z = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:      %n1 = affine.apply affine_map<(d0) -> ((d0 + 1))> (%n)
// CHECK-NEXT:      %z2 = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:      %s, %q = affine.for %k = 0 to 64 step 8 iter_args(%[[A:.*]] = %z, %[[B:.*]] = %z2) -> (vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:        %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
// CHECK-NEXT:        %a1 = arith.addf %[[A]], %x fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:        memref.prefetch %I[%n1, %k], read, locality<3>, data : memref<4x64xf32>
// CHECK-NEXT:        %y = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
// CHECK-NEXT:        %b1 = math.fma %y, %y, %[[B]] fastmath<reassoc> : vector<8xf32>
// CHECK-NEXT:        affine.yield %a1, %b1 : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %c0 = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %m = vector.reduction <add>, %s, %c0 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:      affine.store %m, %mean[%n] : memref<4xf32>
// CHECK-NEXT:      %v = vector.reduction <add>, %q, %c0 fastmath<reassoc> : vector<8xf32> into f32
// CHECK-NEXT:      affine.store %v, %var[%n] : memref<4xf32>
// CHECK-NEXT:    }

// Left alone, each for one reason: the second loop uses the first's result;
// an op between them writes the array the second reads; a loop stores; the
// bounds differ; the loops read different arrays; loops without iter_args.

func.func @leaves_alone(%I: memref<4x64xf32>, %J: memref<4x64xf32>, %O: memref<64xf32>) {
  affine.for %n = 0 to 4 {
    %z = arith.constant dense<0.0> : vector<8xf32>
    // uses the result
    %s1 = affine.for %k = 0 to 64 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    %s2 = affine.for %k = 0 to 64 step 8 iter_args(%a = %s1) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    // a write between
    %c0 = arith.constant 0.0 : f32
    affine.store %c0, %I[%n, 0] : memref<4x64xf32>
    %s3 = affine.for %k = 0 to 64 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    // a loop that stores
    %s4 = affine.for %k = 0 to 64 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      vector.store %x, %O[%k] : memref<64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    // other bounds
    %s5 = affine.for %k = 0 to 32 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %I[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    // another array
    %s6 = affine.for %k = 0 to 32 step 8 iter_args(%a = %z) -> (vector<8xf32>) {
      %x = vector.load %J[%n, %k] : memref<4x64xf32>, vector<8xf32>
      %a1 = arith.addf %a, %x fastmath<reassoc> : vector<8xf32>
      affine.yield %a1 : vector<8xf32>
    }
    // no iter_args
    affine.for %k = 0 to 32 step 8 {
      %x = vector.load %J[%n, %k] : memref<4x64xf32>, vector<8xf32>
    }
    affine.for %k = 0 to 32 step 8 {
      %x = vector.load %J[%n, %k] : memref<4x64xf32>, vector<8xf32>
    }
    %t = arith.addf %s2, %s3 : vector<8xf32>
    %t2 = arith.addf %s4, %s5 : vector<8xf32>
    %t3 = arith.addf %t, %s6 : vector<8xf32>
    %t4 = arith.addf %t2, %t3 : vector<8xf32>
    vector.store %t4, %O[%n] : memref<64xf32>, vector<8xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @leaves_alone
// CHECK:         %s1 = affine.for %{{.*}} = 0 to 64 step 8 iter_args(%{{.*}} = %z)
// CHECK:         %s2 = affine.for %{{.*}} = 0 to 64 step 8 iter_args(%{{.*}} = %s1)
// CHECK:         affine.store %c0, %I[%n, 0]
// CHECK-NEXT:    %s3 = affine.for %{{.*}} = 0 to 64 step 8 iter_args(%{{.*}} = %z)
// CHECK:         %s4 = affine.for %{{.*}} = 0 to 64 step 8 iter_args(%{{.*}} = %z)
// CHECK:         %s5 = affine.for %{{.*}} = 0 to 32 step 8 iter_args(%{{.*}} = %z)
// CHECK:         %s6 = affine.for %{{.*}} = 0 to 32 step 8 iter_args(%{{.*}} = %z)
// CHECK:         affine.for %{{.*}} = 0 to 32 step 8 {
// CHECK:         affine.for %{{.*}} = 0 to 32 step 8 {
