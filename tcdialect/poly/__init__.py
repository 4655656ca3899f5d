"""The polyhedral layer: affine IR to the isl model (`scop`); the scheduler comes later."""

from tcdialect.poly.scop import (
    Dependences,
    Reduction,
    Scop,
    Statement,
    dependences,
    extract_scop,
    reduction_loops,
)

__all__ = [
    "Dependences",
    "Reduction",
    "Scop",
    "Statement",
    "dependences",
    "extract_scop",
    "reduction_loops",
]
