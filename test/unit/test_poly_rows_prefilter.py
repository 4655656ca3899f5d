"""`gpu_mapping._rows_may_fill`, the prefilter of the row fusion: a bound on
each statement's instances from its domain's bounding box (never counted
point by point: Kronecker3's 2^34 instances took 14 s to count), False for
domains whose extents are known only at run time or that are empty."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import islpy as isl

from tcdialect.poly.gpu_mapping import MAX_THREADS, GpuMapping, _rows_may_fill

MAPPING = GpuMapping()
#: the fewest instances a statement may have for the prefilter to pass
LEAST = -(-MAPPING.fill // MAX_THREADS)


def _scop(*domains: str) -> Any:
    statements = {
        f"S{i}": SimpleNamespace(domain=isl.Set(d)) for i, d in enumerate(domains)
    }
    return SimpleNamespace(statements=statements)


def test_a_huge_box_passes_without_counting() -> None:
    big = "{ S[m, a, b, c, d, e, f] : 0 <= m < 256 and 0 <= a, b, c, e, f < 64 and 0 <= d < 16 }"
    assert _rows_may_fill(_scop(big), MAPPING)


def test_each_statement_needs_the_rows() -> None:
    enough = f"{{ S[i, j] : 0 <= i < {LEAST} and 0 <= j < 4 }}"
    few = f"{{ S[i] : 0 <= i < {LEAST - 1} }}"
    assert _rows_may_fill(_scop(enough), MAPPING)
    assert not _rows_may_fill(_scop(enough, few), MAPPING)
    # a diagonal's box holds more points than it does: the bound passes
    # where counting would not (`_fuse_rows` decides on the real rows)
    diagonal = f"{{ S[i, j] : 0 <= i < {LEAST - 1} and j = i }}"
    assert _rows_may_fill(_scop(diagonal), MAPPING)


def test_run_time_sizes_and_empty_domains_do_not_pass() -> None:
    assert not _rows_may_fill(_scop("[N] -> { S[i] : 0 <= i < N }"), MAPPING)
    assert not _rows_may_fill(_scop("{ S[i] : 0 <= i < 0 }"), MAPPING)
    # a parameter the domain does not use is no obstacle
    assert _rows_may_fill(_scop(f"[N] -> {{ S[i] : 0 <= i < {LEAST} }}"), MAPPING)
