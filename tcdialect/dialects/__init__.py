"""The dialects tcdialect defines, registered lazily by name.

`get_all_dialects()` maps a dialect name to a factory that imports the dialect
only when it is first needed (as `xdsl.dialects.get_all_dialects` does), so
that `tc-opt` starts fast however many dialects the project grows. Loading
dialects changes nothing else: to read back the hexadecimal dense float
elements xDSL prints, parse with `dense_hex.DenseHexParser`.
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Return a mapping from dialect name to a factory returning the dialect."""

    def get_affine() -> Dialect:
        # Replaces xDSL's `affine`: same ops, MLIR's syntax for memory accesses.
        from tcdialect.dialects.affine import Affine

        return Affine

    def get_llvm() -> Dialect:
        # Replaces xDSL's `llvm`: same ops plus MLIR's `llvm.atomicrmw`.
        from tcdialect.dialects.llvm import LLVM

        return LLVM

    def get_memref() -> Dialect:
        # Replaces xDSL's `memref`: same ops plus MLIR's `memref.prefetch`.
        from tcdialect.dialects.memref import MemRef

        return MemRef

    def get_gpu() -> Dialect:
        # Replaces xDSL's `gpu`: MLIR 22's op shapes (`gpu.kernel` attribute).
        from tcdialect.dialects.gpu import GPU

        return GPU

    def get_nvvm() -> Dialect:
        from tcdialect.dialects.nvvm import NVVM

        return NVVM

    def get_tc() -> Dialect:
        from tcdialect.dialects.tc import TC

        return TC

    def get_tcrt() -> Dialect:
        from tcdialect.dialects.tcrt import TCRT

        return TCRT

    return {
        "affine": get_affine,
        "gpu": get_gpu,
        "llvm": get_llvm,
        "memref": get_memref,
        "nvvm": get_nvvm,
        "tc": get_tc,
        "tcrt": get_tcrt,
    }
