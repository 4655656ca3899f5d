// RUN: tc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Every verifier check of the gpu dialect (MLIR 22's, with its messages), and
// the custom parser's own errors, one chunk each.

// A gpu.launch_func names an existing kernel: the gpu.module...

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    gpu.launch_func @missing::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
}

// CHECK: Operation does not verify: kernel container 'missing' is undefined

// -----

// ...and the gpu.func in it.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    gpu.launch_func @kernels::@missing blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: kernel function '@kernels::@missing' is undefined

// -----

// A flat symbol names no kernel.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    gpu.launch_func @k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: kernel container 'k' is undefined

// -----

// The launched function must be a kernel.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    gpu.launch_func @kernels::@device blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
  gpu.module @kernels {
    gpu.func @device() {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: kernel function is missing the 'gpu.kernel' attribute

// -----

// The kernel operands match the kernel's arguments, in number...

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%n: index) kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: got 0 kernel operands but expected 1

// -----

// ...and in type.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index, %x: f32) {
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c1 : index, %x : f32)
    func.return
  }
  gpu.module @kernels {
    gpu.func @k(%n: index, %y: f64) kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: type of function argument 1 does not match

// -----

// Launches need the container module attribute.

func.func @host(%c1: index) {
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
  func.return
}
gpu.module @kernels {
  gpu.func @k() kernel {
    gpu.return
  }
}

// CHECK: Operation does not verify: expected the closest surrounding module to have the 'gpu.container_module' attribute

// -----

// Async launches have no custom form here, and are rejected.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index, index) -> ()
    func.return
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: async launches are not supported

// -----

// Three cluster sizes or none.

builtin.module attributes {gpu.container_module} {
  func.func @host(%c1: index) {
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index, index) -> ()
    func.return
  }
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// CHECK: Operation does not verify: expected three cluster sizes or none

// -----

// The custom form takes exactly three grid sizes.

func.func @host(%c1: index) {
  gpu.launch_func @kernels::@k blocks in (%c1, %c1) threads in (%c1, %c1, %c1)
  func.return
}

// CHECK: expected three grid sizes

// -----

// A kernel returns nothing.

gpu.module @kernels {
  gpu.func @k(%a: f32) -> f32 kernel {
    gpu.return %a : f32
  }
}

// CHECK: Operation does not verify: expected void return type for kernel function

// -----

// gpu.return returns the function's results: as many...

gpu.module @kernels {
  gpu.func @f(%a: f32) -> f32 {
    gpu.return
  }
}

// CHECK: Operation does not verify: expected 1 result operands

// -----

// ...of the same types.

gpu.module @kernels {
  gpu.func @f(%a: f32) -> i32 {
    gpu.return %a : f32
  }
}

// CHECK: Operation does not verify: unexpected type `f32` for operand #0

// -----

// Attributions are memrefs.

gpu.module @kernels {
  gpu.func @f() workgroup(%w : f32) {
    gpu.return
  }
}

// CHECK: Operation does not verify: expected memref type in attribution

// -----

// Launch bounds are three i32s.

gpu.module @kernels {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1>} {
    gpu.return
  }
}

// CHECK: Operation does not verify: known_block_size and known_grid_size must be i32 dense arrays with 3 elements, got array<i32: 128, 1>

// -----

gpu.module @kernels {
  gpu.func @k() kernel attributes {known_grid_size = array<i64: 1, 1, 1>} {
    gpu.return
  }
}

// CHECK: Operation does not verify: Expected attribute i32 but got i64

// -----

// The entry block starts with the function's arguments.

gpu.module @kernels {
  "gpu.func"() <{function_type = (f32) -> ()}> ({
  ^bb0(%a: i32):
    "gpu.return"() : () -> ()
  }) {sym_name = "f"} : () -> ()
}

// CHECK: Operation does not verify: entry block argument types do not match the function type

// -----

// ...then the workgroup attributions.

gpu.module @kernels {
  "gpu.func"() <{function_type = (f32) -> ()}> ({
  ^bb0(%a: f32):
    "gpu.return"() : () -> ()
  }) {sym_name = "f", workgroup_attributions = 1 : i64} : () -> ()
}

// CHECK: Operation does not verify: expected at least 2 entry block arguments, got 1

// -----

// A gpu.func lives in a gpu.module.

func.func @host() {
  "gpu.func"() <{function_type = () -> ()}> ({
    "gpu.return"() : () -> ()
  }) {sym_name = "f"} : () -> ()
  func.return
}

// CHECK: Operation does not verify: 'gpu.func' expects parent op 'gpu.module'

// -----

// A shuffle returns a value of its operand's type and an i1.

gpu.module @kernels {
  gpu.func @f(%v: f32, %o: i32) {
    %r, %ok = "gpu.shuffle"(%v, %o, %o) <{mode = #gpu<shuffle_mode xor>}> : (f32, i32, i32) -> (i32, i1)
    gpu.return
  }
}

// CHECK: Operation does not verify: result 'shuffleResult' at position 0 does not verify:
// CHECK-NEXT: attribute f32 expected from variable 'T', but got i32

// -----

// gpu.return ends a gpu.func only.

func.func @f() {
  "gpu.return"() : () -> ()
}

// CHECK: Operation does not verify: 'gpu.return' expects parent op 'gpu.func'
