// RUN: tc-opt %s -t llvm | filecheck %s
// RUN: tc-opt %s -t asm | filecheck %s --check-prefix=ASM

// `nontemporal` on llvm.store becomes LLVM's !nontemporal metadata, which the
// x86 backend emits as a streaming store when the access is aligned.

builtin.module {
  llvm.func @stream(%p: !llvm.ptr, %v: vector<8xf32>) {
    llvm.store %v, %p {alignment = 32 : i64, nontemporal} : vector<8xf32>, !llvm.ptr
    llvm.return
  }
}

// CHECK:      define void @"stream"(ptr %"p", <8 x float> %"v")
// CHECK:        store <8 x float> %"v", ptr %"p", align 32, !nontemporal ![[MD:[0-9]+]]
// CHECK:      ![[MD]] = !{ i32 1 }

// ASM: movntps
