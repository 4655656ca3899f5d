// RUN: tc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// memref.atomic_rmw (a scatter-accumulate's update). In a function that no
// other thread runs (the CPU keeps scatter nests sequential), a plain load,
// add and store, which LLVM vectorises; in a body that tcrt.parallel_for
// calls (and in what it calls), llvm.atomicrmw: `fadd` for addf, `add` for
// addi, `fmaximum` for maximumf (a GPU reduction shared across blocks),
// relaxed (monotonic).

func.func @sequential(%A: memref<?xf32>, %N: memref<4xi64>, %i: index, %v: f32, %n: i64) {
  %0 = "memref.atomic_rmw"(%v, %A, %i) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
  %1 = "memref.atomic_rmw"(%n, %N, %i) <{kind = 1 : i64}> : (i64, memref<4xi64>, index) -> i64
  func.return
}

// CHECK-LABEL: llvm.func @sequential(
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         [[P:%[0-9]+]] = llvm.getelementptr inbounds %A[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    [[OLD:%[0-9]+]] = llvm.load [[P]] : !llvm.ptr -> f32
// CHECK-NEXT:    [[NEW:%[0-9]+]] = llvm.fadd [[OLD]], %v : f32
// CHECK-NEXT:    [[P2:%[0-9]+]] = llvm.getelementptr inbounds %A[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store [[NEW]], [[P2]] : f32, !llvm.ptr
// CHECK:         llvm.add %{{.*}}, %n : i64
// CHECK-NOT:     llvm.atomicrmw
// CHECK:         llvm.return

// -----

func.func @scatter(%A: memref<?xf32>, %Idx: memref<?xi32>, %n: index) {
  tcrt.parallel_for @scatter_par0(%n) (%A, %Idx) : (memref<?xf32>, memref<?xi32>)
  func.return
}
func.func private @scatter_par0(%begin: index, %end: index, %A: memref<?xf32>, %Idx: memref<?xi32>) {
  %one = arith.constant 1.0 : f32
  %x = memref.load %Idx[%begin] : memref<?xi32>
  %i = arith.index_cast %x : i32 to index
  %old = "memref.atomic_rmw"(%one, %A, %i) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
  %top = "memref.atomic_rmw"(%one, %A, %i) <{kind = 4 : i64}> : (f32, memref<?xf32>, index) -> f32
  func.return
}

// CHECK-LABEL: llvm.func internal @scatter_par0(
// CHECK:         [[P:%[0-9]+]] = llvm.getelementptr inbounds %A{{.*}}[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %old = llvm.atomicrmw fadd [[P]], %{{.*}} monotonic : !llvm.ptr, f32
// CHECK:         %top = llvm.atomicrmw fmaximum %{{.*}}, %{{.*}} monotonic : !llvm.ptr, f32

