// unroll-inner-loops: the innermost loops of kernels get `factor` copies of
// their body in a main loop (iteration arguments threaded through) and a
// remainder loop; outer loops, loops outside kernels and factor 1 are left
// alone.
// RUN: tc-opt %s -p 'unroll-inner-loops{factor=2}' | filecheck %s
// RUN: tc-opt %s -p 'unroll-inner-loops{factor=1}' | filecheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @host
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
func.func @host(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %z, %A[%i] : memref<?xf32>
  }
  func.return
}

gpu.module @kernels {
  // CHECK-LABEL: gpu.func @sum
  // CHECK:         %[[TWO:.*]] = arith.constant 2 : index
  // CHECK-NEXT:    %[[BIG:.*]] = arith.muli %c1, %[[TWO]] : index
  // CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %n, %c0 : index
  // CHECK-NEXT:    %[[WHOLE:.*]] = arith.divsi %[[SPAN]], %[[BIG]] : index
  // CHECK-NEXT:    %[[MAIN:.*]] = arith.muli %[[WHOLE]], %[[BIG]] : index
  // CHECK-NEXT:    %[[END0:.*]] = arith.addi %c0, %[[MAIN]] : index
  // CHECK-NEXT:    %[[END:.*]] = arith.maxsi %[[END0]], %c0 : index
  // CHECK-NEXT:    %[[P:.*]] = scf.for %i = %c0 to %[[END]] step %[[BIG]] iter_args(%[[A:.*]] = %z) -> (f32) {
  // CHECK-NEXT:      %[[X0:.*]] = memref.load %A[%i]
  // CHECK-NEXT:      %[[S0:.*]] = arith.addf %[[A]], %[[X0]] : f32
  // CHECK:           %[[I1:.*]] = arith.addi %i, %{{.*}} : index
  // CHECK-NEXT:      %[[X1:.*]] = memref.load %A[%[[I1]]]
  // CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[S0]], %[[X1]] : f32
  // CHECK-NEXT:      scf.yield %[[S1]] : f32
  // CHECK-NEXT:    }
  // CHECK-NEXT:    %{{.*}} = scf.for %i_1 = %[[END]] to %n step %c1 iter_args(%{{.*}} = %[[P]]) -> (f32) {
  // ONE-LABEL:   gpu.func @sum
  // ONE:           scf.for %i = %c0 to %n step %c1 iter_args
  // ONE-NOT:       arith.divsi
  gpu.func @sum(%A: memref<?xf32>, %S: memref<f32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) {
      %x = memref.load %A[%i] : memref<?xf32>
      %t = arith.addf %a, %x : f32
      scf.yield %t : f32
    }
    memref.store %s, %S[] : memref<f32>
    gpu.return
  }

  // Only the inner loop of a nest is unrolled.
  // CHECK-LABEL: gpu.func @nest
  // CHECK:         scf.for %i = %c0 to %n step %c1 {
  // CHECK:           scf.for %j = %c0 to %{{.*}} step %{{.*}} {
  // CHECK:           scf.for %j_1 = %{{.*}} to %n step %c1 {
  gpu.func @nest(%A: memref<?x?xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        memref.store %z, %A[%i, %j] : memref<?x?xf32>
      }
    }
    gpu.return
  }
}
