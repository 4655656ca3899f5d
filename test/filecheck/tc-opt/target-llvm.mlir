// RUN: tc-opt %s -t llvm | filecheck %s
// RUN: tc-opt %s -t 'llvm{triple="nvptx64-nvidia-cuda"}' | filecheck %s --check-prefix=PTX
// RUN: tc-opt %s -t asm | filecheck %s --check-prefix=ASM

// `-t llvm` prints the llvm-dialect module as LLVM IR (tcdialect's translator:
// opaque pointers, addressof of functions, typed intrinsics mangled by type,
// constant-size allocas in the entry block, block arguments as phis).

builtin.module {
  llvm.func @__tc_parallel_for(!llvm.ptr, !llvm.ptr, i64)
  llvm.func @expf(f32) -> f32
  llvm.func internal @scale_par0__thunk(%ctx: !llvm.ptr, %begin: i64, %end: i64) {
    llvm.return
  }
  llvm.func @scale(%a: !llvm.ptr, %n: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %one = llvm.mlir.constant(1 : i32) : i32
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    %p = llvm.getelementptr inbounds %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %x = llvm.load %p : !llvm.ptr -> f32
    %e = llvm.call @expf(%x) : (f32) -> f32
    %m = llvm.intr.maxnum(%e, %x) : (f32, f32) -> f32
    %s = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%m) : (f32) -> i32
    %ctx = llvm.alloca %one x !llvm.struct<(ptr, i64)> : (i32) -> !llvm.ptr
    %f = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i64)>
    llvm.store %n, %f : i64, !llvm.ptr
    %fn = llvm.mlir.addressof @scale_par0__thunk : !llvm.ptr
    llvm.call @__tc_parallel_for(%fn, %ctx, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.store %m, %p : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^exit:
    llvm.return
  }
}

// CHECK:      declare void @"__tc_parallel_for"(ptr %".1", ptr %".2", i64 %".3")
// CHECK:      declare float @"expf"(float %".1")
// CHECK:      define internal void @"scale_par0__thunk"(ptr %"ctx", i64 %"begin", i64 %"end")
// CHECK:      define void @"scale"(ptr %"a", i64 %"n")
// CHECK-NEXT: {
// CHECK-NEXT: entry:
// CHECK-NEXT:   %"ctx" = alloca {ptr, i64}, i32 1
// CHECK-NEXT:   br label %"bb1"
// CHECK-NEXT: bb1:
// CHECK-NEXT:   %"i" = phi  i64 [0, %"entry"], [%"next", %"bb2"]
// CHECK:      bb2:
// CHECK-NEXT:   %"p" = getelementptr inbounds float, ptr %"a", i64 %"i"
// CHECK-NEXT:   %"x" = load float, ptr %"p"
// CHECK-NEXT:   %"e" = call ccc float @"expf"(float %"x")
// CHECK-NEXT:   %"m" = call float @"llvm.maxnum.f32"(float %"e", float %"x")
// CHECK-NEXT:   %"s" = call i32 @"llvm.fptosi.sat.i32.f32"(float %"m")
// CHECK-NEXT:   %"f" = getelementptr {ptr, i64}, ptr %"ctx", i32 0, i32 1
// CHECK-NEXT:   store i64 %"n", ptr %"f"
// CHECK-NEXT:   call ccc void @"__tc_parallel_for"(ptr @"scale_par0__thunk", ptr %"ctx", i64 %"n")
// CHECK-NEXT:   store float %"m", ptr %"p"
// CHECK:      declare float @"llvm.maxnum.f32"(float %".1", float %".2")

// PTX: target triple = "nvptx64-nvidia-cuda"

// ASM: scale:
// ASM: callq
