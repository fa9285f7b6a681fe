"""Binary cache: built Node binaries keyed by commit SHA and every input that changes the binary (layout and
rules: docs/building.md); an entry's ``COMPLETE`` marker is written last, ``last-used``'s mtime is its LRU clock."""

import contextlib
import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from benchgate.build import worktrees
from benchgate.errors import InputError

CACHE_ENV = "BENCHGATE_CACHE"
# Bumped whenever the key's inputs or the entry layout change, so old entries stop matching.
KEY_FORMAT = 1
COMPLETE_MARKER = "COMPLETE"
ENTRY_FILE = "entry.json"
LAST_USED_FILE = "last-used"
LOG_FILE = "build.log"
STAGING_PREFIX = ".tmp-"
# A staging directory older than this belongs to a process that died mid-store.
STALE_STAGING_SECONDS = 600
KEPT_LOGS = 200

_SIZE_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_SIZE_UNITS.update({f"{unit}I": 2 ** (10 * power) for power, unit in enumerate("KMGT", start=1)})


def default_cache_dir() -> Path:
    """The cache root: ``$BENCHGATE_CACHE`` when set, else ``~/.cache/benchgate``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "benchgate"


def parse_size(text: str) -> int:
    """Parse ``500M``, ``20G``, ``2GiB`` or a plain byte count into bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT][iI]?)?[bB]?\s*", text)
    if not match:
        raise InputError(f"cannot read size {text!r}: expected a number with an optional K, M, G or T suffix")
    number, unit = match.groups()
    return int(float(number) * _SIZE_UNITS[(unit or "").upper()])


@dataclass(frozen=True)
class CacheLimit:
    """Bounds of the binary cache; the least recently used entries go first. None means unbounded."""

    max_entries: int | None = 10
    max_bytes: int | None = 20 * 2**30

    def __post_init__(self) -> None:
        for name, limit, least in (("max_entries", "entry", "at least 1"), ("max_bytes", "size", "positive")):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(f"cache {name.replace('_', ' ')} must be a whole number, not {value!r}")
            if value is not None and value < 1:
                raise InputError(f"cache {limit} limit must be {least}, not {value}")


def cache_key(inputs: Mapping[str, object]) -> str:
    """The cache key: sha256 over the canonical JSON of everything that changes the binary."""
    canonical = json.dumps({"key_format": KEY_FORMAT, **inputs}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """A complete, verified cache entry."""

    key: str
    directory: Path
    binary: Path
    sha256: str
    size: int
    metadata: dict = field(default_factory=dict, compare=False)

    @property
    def log(self) -> Path | None:
        path = self.directory / LOG_FILE
        return path if path.exists() else None


def _mtime(path: Path) -> float:
    """``path``'s modification time; 0 when it is gone (another job removed it)."""
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class BinaryCache:
    """The binary cache under ``root`` (its entries in ``entries``: built binaries, or official releases).
    Callers hold ``lock(key)`` around validate/store/remove of a key."""

    def __init__(self, root: Path, limit: CacheLimit | None = None, entries: str = "binaries") -> None:
        self.root = Path(root)
        self.limit = limit or CacheLimit()
        self.entries_dir = self.root / entries
        self.locks_dir = self.root / "locks"
        for directory in (self.entries_dir, self.locks_dir):
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise InputError(f"cannot create cache directory {directory}: {error.strerror}") from None

    @contextlib.contextmanager
    def lock(self, name: str, *, on_wait: Callable[[], None] | None = None, wait: bool = True) -> Iterator[bool]:
        """Hold the exclusive lock ``name`` (a key or ``cache``), waiting unless ``wait=False``; yields whether held."""
        with open(self.locks_dir / f"{name}.lock", "a+b") as handle:  # closing the descriptor releases the flock
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not wait:
                    yield False
                    return
                if on_wait:
                    on_wait()
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield True

    @contextlib.contextmanager
    def unused(self, key: str) -> Iterator[bool]:
        """Whether no job builds, stores or uses the entry for ``key``; if so, that stays true inside the block."""
        with self.lock(key, wait=False) as free, self.lock(f"{key}.in-use", wait=False) as unheld:
            yield free and unheld

    def hold(self, key: str) -> IO[bytes]:
        """Mark the entry for ``key`` as in use (a shared lock that eviction respects) until the file is closed."""
        handle = open(self.locks_dir / f"{key}.in-use.lock", "a+b")  # noqa: SIM115 - the caller closes it
        fcntl.flock(handle, fcntl.LOCK_SH)
        return handle

    def validate(self, key: str) -> tuple[CacheEntry | None, str]:
        """Check the entry for ``key``; returns (entry, "") or (None, why it cannot be used)."""
        directory = self.entries_dir / key
        if not directory.is_dir():
            return None, "missing"
        marker = directory / COMPLETE_MARKER
        if not marker.is_file():
            return None, "incomplete (no completion marker: an interrupted build or store)"
        try:
            metadata = json.loads((directory / ENTRY_FILE).read_text())
            recorded_sha256, recorded_size = metadata["sha256"], int(metadata["size"])
            binary = directory / metadata["binary_name"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            return None, f"unreadable {ENTRY_FILE} ({error})"
        if metadata.get("key") != key or marker.read_text().strip() != recorded_sha256:
            return None, "entry metadata does not match its key or completion marker"
        if not binary.is_file():
            return None, f"binary {binary.name} missing"
        status = binary.stat()
        if status.st_size != recorded_size:
            return None, f"binary truncated or changed (size {status.st_size}, recorded {recorded_size})"
        if not status.st_mode & 0o100 or not os.access(binary, os.X_OK):
            return None, "binary not executable"
        if file_sha256(binary) != recorded_sha256:
            return None, "binary sha256 does not match the recorded one"
        return CacheEntry(key, directory, binary, recorded_sha256, recorded_size, metadata), ""

    def store(
        self,
        key: str,
        binary: Path,
        metadata: Mapping[str, object],
        log: Path | None = None,
        copy: Callable[[Path, Path], object] | None = None,
    ) -> CacheEntry:
        """Copy ``binary`` (with ``copy``, default shutil.copyfile) into the entry for ``key``: staged, renamed into
        place, completion marker last."""
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.entries_dir))
        final = self.entries_dir / key
        try:
            staged_binary = staging / binary.name
            (copy or shutil.copyfile)(binary, staged_binary)
            os.chmod(staged_binary, 0o755)
            _fsync_path(staged_binary)
            digest, size = file_sha256(staged_binary), staged_binary.stat().st_size
            if log is not None and log.exists():
                shutil.copyfile(log, staging / LOG_FILE)
            record = {**metadata, "key": key, "binary_name": binary.name, "sha256": digest, "size": size}
            record["stored_at"] = time.time()
            (staging / ENTRY_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
            _fsync_path(staging / ENTRY_FILE)
            self.remove(key)  # an invalid or incomplete leftover; the caller holds the key lock
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        # The marker goes last and atomically: an entry without it is never used.
        marker_tmp = final / f".{COMPLETE_MARKER}.tmp"
        marker_tmp.write_text(digest + "\n")
        _fsync_path(marker_tmp)
        os.rename(marker_tmp, final / COMPLETE_MARKER)
        _fsync_path(final)
        entry = CacheEntry(key, final, final / binary.name, digest, size, record)
        self.touch(entry)
        return entry

    def touch(self, entry: CacheEntry) -> None:
        """Mark ``entry`` as just used (the LRU clock)."""
        (entry.directory / LAST_USED_FILE).touch()  # an existing file gets the time now

    def remove(self, key: str) -> None:
        """Remove the entry for ``key`` (caller holds the key lock)."""
        directory = self.entries_dir / key
        if not directory.exists():
            return
        # Drop the marker first, then move the directory out of the way, so no reader sees a half-deleted entry.
        with contextlib.suppress(FileNotFoundError):
            (directory / COMPLETE_MARKER).unlink()
        trash = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX + "trash-", dir=self.entries_dir))
        os.rename(directory, trash / "entry")
        shutil.rmtree(trash, ignore_errors=True)

    def complete_entries(self) -> list[CacheEntry]:
        """Entries that carry a completion marker (not re-hashed), least recently used first."""
        entries = []
        for directory in self.entries_dir.iterdir():
            if directory.name.startswith(".") or not (directory / COMPLETE_MARKER).is_file():
                continue
            try:
                metadata = json.loads((directory / ENTRY_FILE).read_text())
                binary = directory / metadata["binary_name"]
                size = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
            except (OSError, ValueError, KeyError):
                continue
            entries.append(CacheEntry(directory.name, directory, binary, metadata.get("sha256", ""), size, metadata))
        return sorted(entries, key=lambda entry: _mtime(entry.directory / LAST_USED_FILE))

    def evict(self, *, keep: frozenset[str] = frozenset()) -> list[str]:
        """Remove least recently used entries until within the limit, and leftovers (stale staging directories,
        incomplete entries nobody builds); returns the evicted keys. Skips ``keep`` and locked or held entries."""
        evicted: list[str] = []
        with self.lock("cache"):
            now = time.time()
            for directory in self.entries_dir.iterdir():
                if directory.name.startswith(STAGING_PREFIX):
                    if now - _mtime(directory) > STALE_STAGING_SECONDS:
                        shutil.rmtree(directory, ignore_errors=True)
                elif not (directory / COMPLETE_MARKER).exists():
                    with self.lock(directory.name, wait=False) as taken:
                        if taken and not (directory / COMPLETE_MARKER).exists():
                            shutil.rmtree(directory, ignore_errors=True)
            entries = self.complete_entries()
            count, total = len(entries), sum(entry.size for entry in entries)
            for entry in entries:
                if count <= (self.limit.max_entries or math.inf) and total <= (self.limit.max_bytes or math.inf):
                    break  # within the limit (None: unbounded; a limit is never 0)
                if entry.key in keep:
                    continue
                with self.unused(entry.key) as unused:
                    if not unused:
                        continue
                    self.remove(entry.key)
                evicted.append(entry.key)
                count -= 1
                total -= entry.size
        return evicted

    def tidy(self, repo: Path, *, keep: str) -> None:
        """After a build: evict (never ``keep``), remove unused worktrees whose entry is gone, keep the newest logs."""
        self.evict(keep=frozenset({keep}))
        for worktree in (self.root / "worktrees").glob("*"):
            key = worktree.name.partition("-")[2]
            if not key or (self.entries_dir / key / COMPLETE_MARKER).exists():
                continue
            with self.unused(key) as unused:
                if unused and not (self.entries_dir / key / COMPLETE_MARKER).exists():
                    worktrees.remove_worktree(worktree)
        for old in sorted((self.root / "logs").glob("*.log"), key=_mtime)[:-KEPT_LOGS]:
            old.unlink(missing_ok=True)
