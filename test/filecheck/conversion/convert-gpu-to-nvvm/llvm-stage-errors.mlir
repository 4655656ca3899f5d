// RUN: tc-opt %s --split-input-file --verify-diagnostics -p 'convert-gpu-to-nvvm,convert-gpu-scf-to-cf,convert-to-llvm{target=cuda}' | filecheck %s

// What the device lowering rejects, with a message.

// Device code allocates no memory of its own: buffers are the host's.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%n: index) kernel {
      %a = memref.alloc(%n) : memref<?xf32>
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: unsupported operation 'memref.alloc'

// -----

// Dynamic shared memory is allocated in the entry block: a buffer's offset
// in it needs the extents of the buffers before it.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %a = memref.alloca(%n) : memref<?xf32, 3 : i32>
      }
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: dynamic shared memory allocated outside the entry block in 'memref.alloca'

// -----

// Memory spaces other than global (the default) and shared (3).
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<4xf32, 5 : i32>) kernel {
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: unsupported memref memory space memref<4xf32, 5 : i32> in 'gpu.func'

// -----

// libdevice has no half-precision functions.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<4xf16>, %x: f16) kernel {
      %c0 = arith.constant 0 : index
      %e = math.exp %x : f16
      memref.store %e, %A[%c0] : memref<4xf16>
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: no libdevice function for f16 in 'math.exp'

// -----

// Prefetches are the CPU's.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      memref.prefetch %A[%c0], read, locality<3>, data : memref<4xf32>
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: unsupported operation on the GPU in 'memref.prefetch'

// -----

// Shared memory is a memref.alloca, not a workgroup attribution.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() workgroup(%w: memref<32xf32, 3 : i32>) kernel {
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: unsupported workgroup or private attributions in 'gpu.func'

// -----

// A private buffer cannot flow where global memory is expected.
builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%A: memref<4xf32>, %c: i1) kernel {
      %c0 = arith.constant 0 : index
      %p = memref.alloca() : memref<4xf32>
      %b = scf.if %c -> (memref<4xf32>) {
        scf.yield %A : memref<4xf32>
      } else {
        scf.yield %p : memref<4xf32>
      }
      %x = memref.load %b[%c0] : memref<4xf32>
      memref.store %x, %A[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// CHECK: convert-to-llvm: unsupported block argument (a buffer in another memory) in 'cf.br'
