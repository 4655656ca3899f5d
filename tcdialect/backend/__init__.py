"""Code generation out of the IR world; the only package that imports llvmlite.

- `tcdialect.backend.llvm`: llvm-dialect module → LLVM IR text (`translate`),
  xDSL's llvmlite converter plus the fixes our pipeline and NVPTX need.
- `tcdialect.backend.cpu`: LLVM IR → optimised host code in an MCJIT engine
  (`compile_cpu` → `CpuModule`), linked with the `__tc_parallel_for` runtime;
  `llvm_ir_text` / `host_asm` give the `llvm-ir` and `asm` stages.
"""
