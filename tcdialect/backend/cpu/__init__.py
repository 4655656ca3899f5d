"""The `cpu` target: host machine code JIT-compiled with llvmlite.

- `target.CpuBackend`: the target object of the registry (passes from
  `scheduled` down, text stages, compile);
- `options.CpuOptions`: what a user may choose;
- `host.host_info()`: the host as a `TargetInfo` (the only host query);
- `jit`: llvm dialect → optimised host code in an MCJIT engine
  (`compile_cpu` → `CpuModule`), linked with the `__tc_parallel_for` runtime;
- `call_stub`: a call's argument checks compiled to host code.

Importing this package imports neither llvmlite nor any pass.
"""
