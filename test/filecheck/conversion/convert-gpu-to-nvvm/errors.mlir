// RUN: tc-opt %s --split-input-file --verify-diagnostics -p convert-gpu-to-nvvm | filecheck %s

// A constant shuffle width must be a number of lanes of a warp.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f32) kernel {
      %c1 = arith.constant 1 : i32
      %c64 = arith.constant 64 : i32
      %r, %v = gpu.shuffle xor %x, %c1, %c64 : f32
      gpu.return
    }
  }
}

// CHECK: convert-gpu-to-nvvm: shuffle width 64 is not in 1..32 in 'gpu.shuffle'

// -----

// Values of more than 64 bits and vectors are not shuffled.

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: vector<4xf32>) kernel {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %r, %v = gpu.shuffle xor %x, %c1, %c32 : vector<4xf32>
      gpu.return
    }
  }
}

// CHECK: convert-gpu-to-nvvm: cannot shuffle a value of type vector<4xf32> in 'gpu.shuffle'

// -----

builtin.module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: i128) kernel {
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %r, %v = gpu.shuffle xor %x, %c1, %c32 : i128
      gpu.return
    }
  }
}

// CHECK: convert-gpu-to-nvvm: cannot shuffle a value of type i128 in 'gpu.shuffle'
