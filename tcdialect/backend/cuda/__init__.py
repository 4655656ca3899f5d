"""The CUDA targets: `cuda` (PTX through llvmlite's NVPTX backend, launched
by the CUDA runtime) and `cuda-sim` (the same `gpu` stage run by a simulator
on the CPU). See docs/gpu.md."""
