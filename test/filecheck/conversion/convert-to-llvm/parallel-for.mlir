// RUN: tc-opt %s -p convert-to-llvm | filecheck %s

// tcrt.parallel_for: the expanded captures go into a context of 8-byte slots
// (allocated in the entry block), then __tc_parallel_for(thunk, ctx, n); the
// thunk loads them back and calls the body.
func.func @relu(%A: memref<?xf32>, %k: f32, %n: index) {
  %c0 = arith.constant 0 : index
  tcrt.parallel_for @relu_par0(%n) (%c0, %A, %k) : (index, memref<?xf32>, f32)
  tcrt.parallel_for @empty_par1(%n) () : ()
  func.return
}
func.func private @relu_par0(%begin: index, %end: index, %lb: index, %A: memref<?xf32>, %k: f32) {
  func.return
}
func.func private @empty_par1(%begin: index, %end: index) {
  func.return
}

// CHECK:      llvm.func @relu(%A: !llvm.ptr, %A_d0: i64, %k: f32, %n: i64) {
// CHECK-NEXT:   %[[SLOTS:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   %[[CTX:.*]] = llvm.alloca %[[SLOTS]] x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[FN:.*]] = llvm.mlir.addressof @relu_par0__thunk : !llvm.ptr
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %[[CTX]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %c0, %[[S0]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %[[CTX]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   llvm.store %A, %[[S1]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[S2:.*]] = llvm.getelementptr inbounds %[[CTX]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   llvm.store %A_d0, %[[S2]] : i64, !llvm.ptr
// CHECK-NEXT:   %[[S3:.*]] = llvm.getelementptr inbounds %[[CTX]][6] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   llvm.store %k, %[[S3]] : f32, !llvm.ptr
// CHECK-NEXT:   llvm.call @__tc_parallel_for(%[[FN]], %[[CTX]], %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// Without captures the context is null.
// CHECK-NEXT:   %[[FN1:.*]] = llvm.mlir.addressof @empty_par1__thunk : !llvm.ptr
// CHECK-NEXT:   %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:   llvm.call @__tc_parallel_for(%[[FN1]], %[[NULL]], %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// CHECK:      llvm.func internal @relu_par0(%begin: i64, %end: i64, %lb: i64, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: f32) {
// CHECK:      llvm.func internal @empty_par1(

// CHECK:      llvm.func internal @relu_par0__thunk(%[[C:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64) {
// CHECK-NEXT:   %[[P0:.*]] = llvm.getelementptr inbounds %[[C]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[V0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[P1:.*]] = llvm.getelementptr inbounds %[[C]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:   %[[V1:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[P2:.*]] = llvm.getelementptr inbounds %[[C]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[V2:.*]] = llvm.load %[[P2]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[P3:.*]] = llvm.getelementptr inbounds %[[C]][6] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:   %[[V3:.*]] = llvm.load %[[P3]] : !llvm.ptr -> f32
// CHECK-NEXT:   llvm.call @relu_par0(%[[B]], %[[E]], %[[V0]], %[[V1]], %[[V2]], %[[V3]]) : (i64, i64, i64, !llvm.ptr, i64, f32) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func internal @empty_par1__thunk(%{{.*}}: !llvm.ptr, %[[B1:.*]]: i64, %[[E1:.*]]: i64) {
// CHECK-NEXT:   llvm.call @empty_par1(%[[B1]], %[[E1]]) : (i64, i64) -> ()
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @__tc_parallel_for(!llvm.ptr, !llvm.ptr, i64)
