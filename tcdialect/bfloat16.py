"""bfloat16 values as NumPy arrays: the representation every tcdialect API uses.

NumPy has no bfloat16 dtype (and tcdialect adds no dependency that has one),
so a `bfloat16` tensor crosses the API as a NumPy **uint16** array holding the
bit patterns: the upper 16 bits of the float32 of the same value (sign, the
8 exponent bits, 7 fraction bits). Inputs declared `bfloat16` must be such
arrays (a float array is rejected, naming the argument; a Python scalar for a
0-d input is converted with `to_bfloat16`), and `bfloat16` outputs are
returned as such arrays::

    >>> bits = to_bfloat16(np.array([1.0, 0.1, -2.5], np.float32))
    >>> bits
    array([16256, 15821, 49184], dtype=uint16)
    >>> from_bfloat16(bits)
    array([ 1.        ,  0.10009766, -2.5       ], dtype=float32)

Rounding is to nearest, ties to even; a value beyond the largest bfloat16
rounds to infinity, a NaN stays a (quiet) NaN of the same sign. Values that
are not float32 are converted to float32 first (so float64 data is rounded
twice, as compiled code converts float64 to bfloat16 through float32).

Arrays of `ml_dtypes.bfloat16` (the dtype of JAX and TensorFlow) are taken
too wherever a `bfloat16` tensor is expected, as inputs and as `out=`
arrays: they are viewed as uint16 (`as_bits`, no copy). `ml_dtypes` stays
optional: such arrays are told by their dtype (`is_ml_bfloat16`), without
importing it. A kernel call whose inputs include such arrays returns its
new `bfloat16` outputs as such arrays too (`ml_dtypes_result`), views of
the uint16 results::

    >>> import ml_dtypes
    >>> x = np.array([1.0, 0.1], ml_dtypes.bfloat16)
    >>> as_bits(x)
    array([16256, 15821], dtype=uint16)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["as_bits", "from_bfloat16", "round_to_bfloat16", "to_bfloat16"]

Array = np.ndarray[Any, Any]

#: The bfloat16 dtype stand-in: arrays of this dtype hold bfloat16 bits.
STORAGE = np.dtype(np.uint16)


def to_bfloat16(x: ArrayLike) -> Array:
    """The bfloat16 bit patterns (uint16) of `x`, rounded to nearest even."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    # Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even;
    # it cannot overflow 32 bits for a non-NaN (the largest is -inf).
    rounded = (bits + (0x7FFF + ((bits >> 16) & 1))) >> 16
    quiet = (bits >> 16) | 0x0040
    return np.where(nan, quiet, rounded).astype(np.uint16)


def from_bfloat16(bits: ArrayLike) -> Array:
    """The float32 values of bfloat16 bit patterns (exact)."""
    b = np.asarray(bits)
    if b.dtype != STORAGE:
        raise TypeError(f"bfloat16 bit patterns must be uint16, not {b.dtype}")
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_to_bfloat16(x: ArrayLike) -> Array:
    """`x` rounded to bfloat16 precision, as float32 (the reference
    interpreter's form of bfloat16 values in a computation)."""
    return from_bfloat16(to_bfloat16(x))


def is_ml_bfloat16(dt: np.dtype[Any]) -> bool:
    """Whether `dt` is `ml_dtypes.bfloat16` (told without importing ml_dtypes)."""
    return dt.itemsize == 2 and dt.kind == "V" and dt.name == "bfloat16"


def as_bits(x: Array) -> Array:
    """`x` as uint16 bit patterns: a view of an `ml_dtypes.bfloat16` array,
    else `x` itself."""
    return x.view(np.uint16) if is_ml_bfloat16(x.dtype) else x


def ml_bfloat16_dtype(arrays: Iterable[Any]) -> np.dtype[Any] | None:
    """The dtype of the first `ml_dtypes.bfloat16` NumPy array of `arrays`."""
    for x in arrays:
        if isinstance(x, np.ndarray) and is_ml_bfloat16(x.dtype):
            return x.dtype
    return None


def ml_dtypes_result(
    outputs: Sequence[Array], bfloat16: Sequence[bool], dtype: np.dtype[Any] | None
) -> list[Array]:
    """`outputs` with the `bfloat16` ones (uint16 bit patterns) viewed as
    `dtype` (`ml_dtypes.bfloat16`, from the call's inputs), when not None."""
    if dtype is None:
        return list(outputs)
    return [o.view(dtype) if bf else o for o, bf in zip(outputs, bfloat16)]
