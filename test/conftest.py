"""Session-wide settings of the pytest suite.

The persistent compilation cache (`tcdialect.cache`) is off for the whole
suite and points at a temporary directory: tests never read or write the
user's cache, and a test that expects the pipeline to run (a failing pass,
a compile counted) runs it. The cache's own tests turn it on in a directory
of their own with the `cache_dir` fixture; subprocesses inherit the
variables.
"""

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_CACHE_DIR = tempfile.mkdtemp(prefix="tcdialect-test-cache-")
os.environ["TCDIALECT_CACHE_DIR"] = _CACHE_DIR
os.environ["TCDIALECT_CACHE"] = "0"
atexit.register(shutil.rmtree, _CACHE_DIR, True)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The cache on, in an empty directory of this test, with zeroed counters
    and no compiled code in memory."""
    import tcdialect
    from tcdialect.cache import STATS

    directory = tmp_path / "cache"
    monkeypatch.setenv("TCDIALECT_CACHE", "1")
    monkeypatch.setenv("TCDIALECT_CACHE_DIR", str(directory))
    monkeypatch.delenv("TCDIALECT_CACHE_MAX_BYTES", raising=False)
    tcdialect.clear_cache()
    STATS.reset()
    yield directory
    tcdialect.clear_cache()
