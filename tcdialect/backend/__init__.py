"""Compilation targets as objects; the only package that imports llvmlite.

- `base`: the interface every target implements (`Backend`) and what it may
  assume about its machine (`TargetInfo`);
- `registry`: targets by name (`get_backend`), built-in and from the
  `tcdialect.targets` entry-point group;
- `cpu/`: the `cpu` target (host code through llvmlite's MCJIT);
- `llvm`: llvm-dialect module → LLVM IR text (`translate`), shared by the
  targets (xDSL's llvmlite converter plus the fixes our pipeline and NVPTX
  need);
- `output_targets`: `tc-opt -t llvm|asm`, text output of an llvm-dialect module.
"""
