"""The CUDA runtime: PTX loaded and launched on an NVIDIA GPU through pycuda.

`driver` holds everything that touches the driver (the only module of
tcdialect that imports pycuda); `launcher` the `cuda` target's `Launcher`.
Importing this package imports neither.
"""
