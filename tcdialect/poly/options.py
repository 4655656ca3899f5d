"""The scheduler's option values, checked without islpy: fusion strategies
and tile sizes (`tcdialect.poly.schedule` uses them; the targets' options
classes validate with them, so that options are made without loading the
scheduler, as a kernel loaded from the cache is)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tcdialect.diagnostics import TCError

FUSIONS: tuple[str, ...] = ("max", "preserve3coincident", "min")
"""isl's fusion strategies, as TC names them."""

MAX_TILE = 2**31 - 1


def tile_sizes(tile: Any) -> tuple[int, ...] | None:
    """`tile` (None, or a tuple or list of integers, NumPy's included) as a
    tuple of ints in [0, MAX_TILE]; anything else is a `TCError`."""
    if tile is None:
        return None
    if not isinstance(tile, tuple | list) or not all(
        isinstance(t, int | np.integer) and not isinstance(t, bool | np.bool_)
        for t in tile
    ):
        raise TCError(
            f"tile sizes must be a tuple of integers >= 0 (one per band member, "
            f"e.g. (32, 32, 0)), not {tile!r}"
        )
    out = tuple(int(t) for t in tile)
    if any(t < 0 or t > MAX_TILE for t in out):
        raise TCError(
            f"tile sizes must be integers >= 0 and <= {MAX_TILE}, not {tile!r}"
        )
    return out


def check_fusion(fusion: str) -> None:
    """A `TCError` unless `fusion` is one of `FUSIONS`."""
    if fusion not in FUSIONS:
        raise TCError(
            f"unknown fusion strategy '{fusion}' (expected one of {', '.join(FUSIONS)})"
        )
