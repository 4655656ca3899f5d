"""The compilation cache's store, key and command line, without compiling.

The store: entries round-trip; a flipped byte (header or payload), a cut
file, a foreign or garbage file are each a miss with exactly one
`CacheWarning` and are removed; least recently used entries are evicted
under the cap; the environment variables. The key: every field changes it,
comments, whitespace and index names do not. `tc-cache` in-process and as a
command.
"""

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import tcdialect
from tcdialect.arguments import ArgSpec, Signature
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.backend.registry import get_backend
from tcdialect.cache import key as cache_key
from tcdialect.cache.cli import TcCacheMain
from tcdialect.cache.store import (
    CacheStore,
    CacheWarning,
    encode_entry,
    key_digest,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""
KEY = {"format": 1, "entry": "f", "sizes": {"N": 4}}


def store_at(path: Path, max_bytes: int = 1 << 20) -> CacheStore:
    return CacheStore(path, max_bytes)


def expect_one_warning(store: CacheStore, key: dict[str, Any], match: str) -> None:
    """`store.get(key)` misses with one `CacheWarning` matching `match`, and
    the entry is gone."""
    with pytest.warns(CacheWarning, match=match) as record:
        assert store.get(key) is None
    assert len(record) == 1
    assert not store.path_of(key).exists()


# --------------------------------------------------------------------- store


def test_put_then_get_round_trips(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    assert store.get(KEY) is None
    assert store.put(KEY, b"\x00code\xff", {"signature": [1]}, {"tried": []})
    entry = store.get(KEY)
    assert entry is not None
    assert entry.payload == b"\x00code\xff"
    assert (entry.key, entry.meta, entry.tuning) == (
        KEY,
        {"signature": [1]},
        {"tried": []},
    )
    assert entry.path.name == key_digest(KEY) + ".tce"
    assert [p.name for p in store.paths()] == [entry.path.name]
    assert store.get({**KEY, "entry": "g"}) is None


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda p: flip(p, -1), "payload checksum"),
        (lambda p: flip(p, 60), "header checksum"),
        (lambda p: flip(p, 0), "not a tcdialect cache entry"),
        (lambda p: p.write_bytes(p.read_bytes()[:-3]), "payload of"),
        (lambda p: p.write_bytes(p.read_bytes()[:50]), "truncated header"),
        (lambda p: p.write_bytes(b""), "truncated"),
        (lambda p: p.write_bytes(b"garbage" * 20), "not a tcdialect"),
        (
            lambda p: p.write_bytes(encode_entry({"other": "key"}, b"code")),
            "another key",
        ),
        (
            lambda p: p.write_bytes(
                p.read_bytes().replace(b'"format":1', b'"format":9')
            ),
            "header checksum",
        ),
    ],
    ids=[
        "payload-byte",
        "header-byte",
        "magic-byte",
        "cut-payload",
        "cut-header",
        "empty",
        "garbage",
        "foreign-key",
        "edited-header",
    ],
)
def test_a_damaged_entry_is_a_miss_with_one_warning(
    tmp_path: Path, damage: Any, match: str
) -> None:
    store = store_at(tmp_path)
    store.put(KEY, b"object code " * 10, {"signature": {}})
    damage(store.path_of(KEY))
    expect_one_warning(store, KEY, match)
    # written again and damaged again: a miss, but no second warning
    store.put(KEY, b"object code " * 10)
    damage(store.path_of(KEY))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.get(KEY) is None
    store.put(KEY, b"object code")
    found = store.get(KEY)
    assert found is not None and found.payload == b"object code"


def test_an_entry_of_another_format_is_a_miss(tmp_path: Path) -> None:
    from tcdialect.cache import store as store_module

    store = store_at(tmp_path)
    path = store.path_of(KEY)
    old = store_module.FORMAT
    store_module.FORMAT = 0
    try:
        path.write_bytes(encode_entry(KEY, b"code"))
    finally:
        store_module.FORMAT = old
    expect_one_warning(store, KEY, "entry format 0")


def test_an_unwritable_directory_is_a_warning_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    store = store_at(tmp_path / "file" / "cache")
    with pytest.warns(CacheWarning, match="cannot write to the cache"):
        assert not store.put(KEY, b"code")
    assert store.get(KEY) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per directory, not per entry
        assert not store.put({"another": "key"}, b"code")


def test_least_recently_used_entries_are_evicted(tmp_path: Path) -> None:
    store = store_at(tmp_path, max_bytes=10_000)
    keys = [{"n": i} for i in range(4)]
    for i, k in enumerate(keys[:3]):
        store.put(k, bytes(3000))
        os.utime(store.path_of(k), (1000 + i, 1000 + i))  # used in order 0, 1, 2
    size = store.path_of(keys[0]).stat().st_size
    assert 3 * size <= 10_000 < 4 * size
    assert store.get(keys[0]) is not None  # now the most recently used
    store.put(keys[3], bytes(3000))
    assert not store.path_of(keys[1]).exists()  # the least recently used
    for k in (keys[0], keys[2], keys[3]):
        assert store.path_of(k).exists()
    assert store.total_bytes() <= 10_000
    # one entry larger than the cap is kept (the others go)
    store.put({"big": 1}, bytes(20_000))
    assert [p.name for p in store.paths()] == [key_digest({"big": 1}) + ".tce"]


def test_clear_and_prune(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    for i in range(3):
        store.put({"n": i}, bytes(1000))
    (tmp_path / ".stale.tmp").write_bytes(b"x")
    os.utime(tmp_path / ".stale.tmp", (0, 0))
    (tmp_path / ".fresh.tmp").write_bytes(b"x")  # a writer's, now
    flip(store.path_of({"n": 0}), -1)
    report = store.prune(max_bytes=1200)
    assert report.invalid == [store.path_of({"n": 0}).name]
    assert report.temporaries == 1 and len(report.evicted) == 1
    assert len(store.paths()) == 1 and (tmp_path / ".fresh.tmp").exists()
    assert store.clear() == 1
    assert store.paths() == [] and not (tmp_path / ".fresh.tmp").exists()


def test_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TCDIALECT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TCDIALECT_CACHE", "1")
    monkeypatch.setenv("TCDIALECT_CACHE_MAX_BYTES", "12345")
    store = CacheStore.from_env()
    assert store is not None
    assert (store.directory, store.max_bytes) == (tmp_path, 12345)
    monkeypatch.setenv("TCDIALECT_CACHE_MAX_BYTES", "lots")
    with pytest.warns(CacheWarning, match="TCDIALECT_CACHE_MAX_BYTES"):
        store = CacheStore.from_env()
    assert store is not None and store.max_bytes == 1 << 30
    for off in ("0", "off", "false"):
        monkeypatch.setenv("TCDIALECT_CACHE", off)
        assert CacheStore.from_env() is None
    monkeypatch.delenv("TCDIALECT_CACHE_DIR")
    monkeypatch.delenv("TCDIALECT_CACHE_MAX_BYTES")
    import platformdirs

    monkeypatch.setenv("TCDIALECT_CACHE", "1")
    store = CacheStore.from_env()
    assert store is not None
    assert store.directory == Path(platformdirs.user_cache_dir("tcdialect"))


# ----------------------------------------------------------------------- key


def key_of(source: str, **changes: Any) -> dict[str, Any]:
    kernel = tcdialect.define(source, options=changes.pop("options", None))
    args: dict[str, Any] = dict(
        defop=kernel.defop,
        entry=kernel.entry,
        dtypes=[str(t.element_type) for t in kernel.defop.input_types],
        sizes={"M": 4, "K": 5, "N": 6},
        backend=kernel.backend,
        info=kernel.backend.generic_info(),
        options=kernel.options,
    )
    args.update(changes)
    return cache_key.kernel_key(**args)


def test_comments_whitespace_and_index_names_do_not_change_the_key() -> None:
    base = key_of(MATMUL)
    same = """# a comment
    def   matmul(float(M, K) A,
               float(K, N) B) -> (C)   # the output
    {
        C(i, j) +=! A(i, kk) * B(kk, j)   # renamed indices
    }
    """
    assert key_of(same) == base
    assert key_digest(key_of(same)) == key_digest(base)


@pytest.mark.parametrize(
    "change",
    [
        {"source": MATMUL.replace("float(M, K) A", "double(M, K) A")},  # dtype
        {"source": MATMUL.replace("A,", "X,").replace("A(", "X(")},  # tensor name
        {"source": MATMUL.replace("+=!", "max=!")},  # what it computes
        {"sizes": {"M": 4, "K": 5, "N": 7}},
        {"sizes": None},  # generic
        {"info": get_backend("cpu").generic_info().with_(features=("+avx512f",))},
        {"info": get_backend("cpu").generic_info().with_(name="skylake")},
        {"info": get_backend("cpu").generic_info().with_(cores=64)},
        {"options": CpuOptions(threads=1)},
        {"options": CpuOptions(tile=(32, 32))},
        {"entry": "other"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_every_field_changes_the_key(change: dict[str, Any]) -> None:
    source = change.pop("source", MATMUL)
    assert key_digest(key_of(source, **change)) != key_digest(key_of(MATMUL))


def test_versions_change_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    base = key_digest(key_of(MATMUL))
    versions = key_of(MATMUL)["versions"]
    assert set(versions) >= {
        "tcdialect",
        "tcdialect-source",
        "xdsl",
        "islpy",
        "llvmlite",
        "llvm",
    }
    assert versions["tcdialect-source"] == cache_key.source_digest()
    backend = get_backend("cpu")
    for name in ("llvm", "tcdialect-source", "xdsl"):
        changed = {**versions, name: "other"}
        monkeypatch.setattr(cache_key, "code_versions", lambda b, c=changed: c)
        assert key_digest(key_of(MATMUL)) != base
    monkeypatch.undo()
    monkeypatch.setattr(
        type(backend), "cache_versions", lambda self: {"llvm": "99.0.0"}
    )
    assert key_digest(key_of(MATMUL)) != base


def test_an_edited_source_file_changes_the_source_digest(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    before = cache_key.tree_digest(str(tmp_path))
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert cache_key.tree_digest(str(tmp_path)) != before
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    assert cache_key.tree_digest(str(tmp_path)) == before
    (tmp_path / "notes.txt").write_text("not code")
    assert cache_key.tree_digest(str(tmp_path)) == before


def test_signature_round_trips_through_json() -> None:
    sig = Signature(
        (
            ArgSpec("input", "A", (0, 1)),
            ArgSpec("output", "C"),
            ArgSpec("error", "error"),
            ArgSpec("size", "N"),
        ),
        ("A",),
    )
    assert cache_key.signature_from_json(cache_key.signature_json(sig)) == sig
    for bad in (None, {}, {"args": [["nope", "A", []]], "checked": []}, {"args": 1}):
        assert cache_key.signature_from_json(bad) is None


# ----------------------------------------------------------------------- CLI


def run_cli(store: CacheStore, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = TcCacheMain(out, err).run(["--dir", str(store.directory), *args])
    return status, out.getvalue(), err.getvalue()


def test_the_command_line(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    key = {"target": "cpu", "entry": "matmul", "sizes": {"M": 4, "N": 2}}
    store.put(key, b"code", {"signature": {}}, {"best": 1.5})
    store.put({"target": "cpu", "entry": "g", "sizes": "generic"}, b"code")
    flip(store.path_of({"target": "cpu", "entry": "g", "sizes": "generic"}), -1)
    status, out, _ = run_cli(store, "list")
    assert status == 0
    assert "cpu  matmul  M=4,N=2" in out and "invalid: payload checksum" in out
    status, out, _ = run_cli(store, "info")
    assert "entries:   1 (1 invalid)" in out and str(tmp_path) in out
    status, out, _ = run_cli(store, "info", key_digest(key)[:10])
    assert status == 0 and '"entry": "matmul"' in out and '"best": 1.5' in out
    status, _, err = run_cli(store, "info", "zzzz")
    assert status == 1 and "no entry with digest 'zzzz'" in err
    status, out, _ = run_cli(store, "prune")
    assert "removed 1 invalid" in out and len(store.paths()) == 1
    status, out, _ = run_cli(store, "clear")
    assert "removed 1 entries" in out and store.paths() == []


def test_the_command_runs_as_a_program(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.put({"target": "cpu", "entry": "f", "sizes": "generic"}, b"code")
    done = subprocess.run(
        [sys.executable, "-m", "tcdialect.tools.tc_cache", "list"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "TCDIALECT_CACHE_DIR": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "cpu  f  generic" in done.stdout
