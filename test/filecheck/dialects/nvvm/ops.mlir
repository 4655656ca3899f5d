// RUN: tc-opt %s | tc-opt | filecheck %s
// RUN: TC_ROUNDTRIP
// RUN: TC_GENERIC_ROUNDTRIP

// tc-opt's nvvm ops have MLIR 22's names, properties and syntax (mlir-opt
// reads these lines as they are printed).

llvm.func @sregs() {
  %0 = nvvm.read.ptx.sreg.tid.x : i32
  %1 = nvvm.read.ptx.sreg.tid.y : i32
  %2 = nvvm.read.ptx.sreg.tid.z : i32
  %3 = nvvm.read.ptx.sreg.ntid.x : i32
  %4 = nvvm.read.ptx.sreg.ntid.y : i32
  %5 = nvvm.read.ptx.sreg.ntid.z : i32
  %6 = nvvm.read.ptx.sreg.ctaid.x : i32
  %7 = nvvm.read.ptx.sreg.ctaid.y : i32
  %8 = nvvm.read.ptx.sreg.ctaid.z : i32
  %9 = nvvm.read.ptx.sreg.nctaid.x : i32
  %10 = nvvm.read.ptx.sreg.nctaid.y : i32
  %11 = nvvm.read.ptx.sreg.nctaid.z : i32
  %12 = nvvm.read.ptx.sreg.laneid : i32
  %13 = nvvm.read.ptx.sreg.warpsize : i32
  llvm.return
}

// CHECK-LABEL: llvm.func @sregs() {
// CHECK-NEXT:    %0 = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:    %1 = nvvm.read.ptx.sreg.tid.y : i32
// CHECK-NEXT:    %2 = nvvm.read.ptx.sreg.tid.z : i32
// CHECK-NEXT:    %3 = nvvm.read.ptx.sreg.ntid.x : i32
// CHECK-NEXT:    %4 = nvvm.read.ptx.sreg.ntid.y : i32
// CHECK-NEXT:    %5 = nvvm.read.ptx.sreg.ntid.z : i32
// CHECK-NEXT:    %6 = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT:    %7 = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK-NEXT:    %8 = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK-NEXT:    %9 = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT:    %10 = nvvm.read.ptx.sreg.nctaid.y : i32
// CHECK-NEXT:    %11 = nvvm.read.ptx.sreg.nctaid.z : i32
// CHECK-NEXT:    %12 = nvvm.read.ptx.sreg.laneid : i32
// CHECK-NEXT:    %13 = nvvm.read.ptx.sreg.warpsize : i32

// CHECK-GENERIC:      %0 = "nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-GENERIC:      %13 = "nvvm.read.ptx.sreg.warpsize"() : () -> i32

llvm.func @sync(%mask: i32, %v: f32, %i: i32, %off: i32, %clamp: i32) {
  nvvm.barrier0
  nvvm.bar.warp.sync %mask : i32
  %a = nvvm.shfl.sync bfly %mask, %v, %off, %clamp : f32 -> f32
  %b = nvvm.shfl.sync up %mask, %i, %off, %clamp : i32 -> i32
  %c = nvvm.shfl.sync down %mask, %v, %off, %clamp {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
  %d = nvvm.shfl.sync idx %mask, %i, %off, %clamp {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>
  llvm.return
}

// CHECK-LABEL: llvm.func @sync(
// CHECK-NEXT:    nvvm.barrier0
// CHECK-NEXT:    nvvm.bar.warp.sync %mask : i32
// CHECK-NEXT:    %a = nvvm.shfl.sync bfly %mask, %v, %off, %clamp : f32 -> f32
// CHECK-NEXT:    %b = nvvm.shfl.sync up %mask, %i, %off, %clamp : i32 -> i32
// CHECK-NEXT:    %c = nvvm.shfl.sync down %mask, %v, %off, %clamp {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
// CHECK-NEXT:    %d = nvvm.shfl.sync idx %mask, %i, %off, %clamp {return_value_and_is_valid} : i32 -> !llvm.struct<(i32, i1)>

// CHECK-GENERIC:      "nvvm.barrier0"() : () -> ()
// CHECK-GENERIC-NEXT: "nvvm.bar.warp.sync"(%mask) : (i32) -> ()
// CHECK-GENERIC-NEXT: %a = "nvvm.shfl.sync"(%mask, %v, %off, %clamp) <{kind = #nvvm<shfl_kind bfly>}> : (i32, f32, i32, i32) -> f32
// CHECK-GENERIC-NEXT: %b = "nvvm.shfl.sync"(%mask, %i, %off, %clamp) <{kind = #nvvm<shfl_kind up>}> : (i32, i32, i32, i32) -> i32
// CHECK-GENERIC-NEXT: %c = "nvvm.shfl.sync"(%mask, %v, %off, %clamp) <{kind = #nvvm<shfl_kind down>, return_value_and_is_valid}> : (i32, f32, i32, i32) -> !llvm.struct<(f32, i1)>
// CHECK-GENERIC-NEXT: %d = "nvvm.shfl.sync"(%mask, %i, %off, %clamp) <{kind = #nvvm<shfl_kind idx>, return_value_and_is_valid}> : (i32, i32, i32, i32) -> !llvm.struct<(i32, i1)>
