"""Launchers of compiled kernels: `cpu` (ctypes; a CUDA launcher comes later)."""
