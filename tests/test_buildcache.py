"""The binary cache on its own: keys, verified entries, atomic stores, LRU eviction, locks."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from benchgate.build import cache as buildcache
from benchgate.build.cache import BinaryCache, CacheLimit, cache_key, parse_size
from benchgate.errors import InputError


def make_binary(directory: Path, content: bytes = b"#!/bin/sh\necho fixture\n" * 64, name: str = "node") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(content)
    path.chmod(0o755)
    return path


def age(cache: BinaryCache, key: str, seconds_ago: float) -> None:
    """Set an entry's LRU clock."""
    stamp = time.time() - seconds_ago
    os.utime(cache.entries_dir / key / buildcache.LAST_USED_FILE, (stamp, stamp))


def test_key_depends_on_every_input_not_on_their_order() -> None:
    inputs = {"sha": "a" * 40, "configure": ["./configure"], "compilers": {"CC": "gcc 12"}}
    assert cache_key(inputs) == cache_key(dict(reversed(list(inputs.items()))))
    for name, other in (("sha", "b" * 40), ("configure", ["./configure", "--debug"]), ("compilers", {"CC": "gcc 13"})):
        assert cache_key({**inputs, name: other}) != cache_key(inputs)


def test_stored_entry_is_verified_and_records_its_sha256(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache")
    log = tmp_path / "build.log"
    log.write_text("make: done\n")
    entry = cache.store("k1", make_binary(tmp_path / "out"), {"sha": "abc"}, log)
    found, reason = cache.validate("k1")
    assert reason == "" and found == entry
    assert entry.sha256 == buildcache.file_sha256(entry.binary)
    assert os.access(entry.binary, os.X_OK)
    assert entry.log is not None and entry.log.read_text() == "make: done\n"
    assert found.metadata["sha"] == "abc"
    assert [path.name for path in cache.entries_dir.iterdir()] == ["k1"]  # no staging left behind


def _truncate(binary: Path) -> None:
    binary.write_bytes(binary.read_bytes()[:10])


def _flip_a_byte(binary: Path) -> None:
    data = bytearray(binary.read_bytes())
    data[-2] ^= 0xFF
    binary.write_bytes(bytes(data))


CORRUPTIONS = {
    "truncated": (_truncate, "truncated"),
    "not executable": (lambda binary: binary.chmod(0o644), "not executable"),
    "binary missing": (lambda binary: binary.unlink(), "missing"),
    "same size, other bytes": (_flip_a_byte, "sha256"),
    "no completion marker": (lambda binary: (binary.parent / buildcache.COMPLETE_MARKER).unlink(), "incomplete"),
    "unreadable metadata": (lambda binary: (binary.parent / buildcache.ENTRY_FILE).write_text("{"), "unreadable"),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_damaged_entry_is_never_used(tmp_path: Path, corruption: str) -> None:
    cache = BinaryCache(tmp_path / "cache")
    entry = cache.store("k1", make_binary(tmp_path / "out"), {})
    damage, expected_reason = CORRUPTIONS[corruption]
    damage(entry.binary)
    found, reason = cache.validate("k1")
    assert found is None
    assert expected_reason in reason


def test_store_interrupted_before_the_marker_leaves_no_complete_entry(tmp_path: Path, monkeypatch) -> None:
    cache = BinaryCache(tmp_path / "cache")
    real_fsync = buildcache._fsync_path

    def crash_on_marker(path: Path) -> None:
        if path.name.startswith(f".{buildcache.COMPLETE_MARKER}"):
            raise KeyboardInterrupt
        real_fsync(path)

    monkeypatch.setattr(buildcache, "_fsync_path", crash_on_marker)
    with pytest.raises(KeyboardInterrupt):
        cache.store("k1", make_binary(tmp_path / "out"), {})
    assert (cache.entries_dir / "k1").exists()  # renamed into place, but ...
    found, reason = cache.validate("k1")
    assert found is None and "incomplete" in reason
    assert cache.complete_entries() == []
    cache.evict()  # ... the next eviction pass clears what nobody is building
    assert not (cache.entries_dir / "k1").exists()


def test_store_interrupted_while_copying_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    cache = BinaryCache(tmp_path / "cache")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(buildcache.shutil, "copyfile", crash)
    with pytest.raises(KeyboardInterrupt):
        cache.store("k1", make_binary(tmp_path / "out"), {})
    assert list(cache.entries_dir.iterdir()) == []


def test_lru_eviction_by_count_keeps_recently_used(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache", CacheLimit(max_entries=2, max_bytes=None))
    for number, key in enumerate(("a", "b", "c")):
        cache.store(key, make_binary(tmp_path / key), {})
        age(cache, key, 100 - number)  # a oldest, c newest
    cache.touch(cache.validate("a")[0])  # a used just now: b is now the least recently used
    assert cache.evict(keep=frozenset({"c"})) == ["b"]
    assert sorted(entry.key for entry in cache.complete_entries()) == ["a", "c"]
    assert not (cache.entries_dir / "b").exists()


def test_lru_eviction_by_size(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache", CacheLimit(max_entries=None, max_bytes=2500))
    for number, key in enumerate(("a", "b", "c")):
        cache.store(key, make_binary(tmp_path / key, content=b"x" * 1000), {})
        age(cache, key, 100 - number)
    assert cache.evict() == ["a"]
    assert sum(entry.size for entry in cache.complete_entries()) <= 2500


def test_eviction_skips_an_entry_another_job_holds(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache", CacheLimit(max_entries=1, max_bytes=None))
    for number, key in enumerate(("a", "b", "c")):
        cache.store(key, make_binary(tmp_path / key), {})
        age(cache, key, 100 - number)
    with cache.lock("a"):  # another job is reading or rebuilding a
        evicted = cache.evict(keep=frozenset({"c"}))
    assert evicted == ["b"]
    assert cache.validate("a")[0] is not None


def test_lock_makes_the_second_holder_wait(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache")
    events: list[str] = []
    waited = threading.Event()

    def second() -> None:
        with cache.lock("k", on_wait=waited.set):
            events.append("second holds")

    with cache.lock("k"):
        thread = threading.Thread(target=second)
        thread.start()
        assert waited.wait(5)
        time.sleep(0.1)
        events.append("first releases")
    thread.join(5)
    assert events == ["first releases", "second holds"]


def test_sizes_and_limits() -> None:
    assert parse_size("20G") == 20 * 10**9
    assert parse_size("2GiB") == 2 * 2**30
    assert parse_size("512") == 512
    with pytest.raises(InputError, match="cannot read size"):
        parse_size("lots")
    with pytest.raises(InputError):
        CacheLimit(max_entries=0)


def test_eviction_skips_an_entry_in_use_until_released(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path / "cache", CacheLimit(max_entries=1, max_bytes=None))
    for number, key in enumerate(("a", "b")):
        cache.store(key, make_binary(tmp_path / key), {})
        age(cache, key, 100 - number)
    held = cache.hold("a")  # a job is benchmarking with a's binary
    assert cache.evict(keep=frozenset({"b"})) == []
    held.close()
    assert cache.evict(keep=frozenset({"b"})) == ["a"]


def test_cache_dir_from_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHGATE_CACHE", str(tmp_path / "elsewhere"))
    assert buildcache.default_cache_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv("BENCHGATE_CACHE")
    assert buildcache.default_cache_dir() == Path.home() / ".cache" / "benchgate"
