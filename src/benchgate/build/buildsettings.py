"""How Node binaries are built: configure and build commands, the binary path, cache bounds, the compilers
(part of the cache key) and ccache's wiring. Defaults follow Node's BUILDING.md; see docs/building.md."""

from __future__ import annotations

import functools
import os
import platform
import re
import shlex
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from benchgate.build.cache import CacheLimit, parse_size
from benchgate.errors import InputError

DEFAULT_BUILD_COMMAND = "make -j$(nproc)"
# A build of Node takes one to two hours on a small runner; a build still going after four is stuck
# (or a pull request keeping the machine busy), and is killed with everything it started.
DEFAULT_BUILD_TIMEOUT = 4 * 3600.0
_WRAPPERS = {"ccache", "sccache"}
# Environment variables that change what the compiler produces, hence part of the cache key.
COMPILER_ENV = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")
_COMPILERS = (("CC", "cc"), ("CXX", "c++"))


@dataclass(frozen=True)
class BuildSettings:
    """How binaries are built, a field per key of the ``build:`` section. ``configure_command`` gets ``--ninja``
    (when ``ninja`` is True, or None and ninja is installed) and ``configure_flags``; an empty one skips
    configuring. Strings run with ``sh -c``. None: ccache and ninja when installed, an unbounded cache."""

    configure_flags: tuple[str, ...] = ()
    build_command: tuple[str, ...] | str = DEFAULT_BUILD_COMMAND
    binary_path: str = "out/Release/node"
    configure_command: tuple[str, ...] | str = ("./configure",)
    ninja: bool | None = None
    ccache: bool | None = None
    cache_max_entries: int | None = CacheLimit.max_entries
    cache_max_size: str | int | None = CacheLimit.max_bytes
    ccache_max_size: str = "10G"
    timeout: float | None = DEFAULT_BUILD_TIMEOUT  # seconds for the whole build (configure and build command)
    jobs: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.configure_flags, str):
            try:
                object.__setattr__(self, "configure_flags", tuple(shlex.split(self.configure_flags)))
            except ValueError as error:
                raise InputError(f"configure flags {self.configure_flags!r}: {error}") from None
        for name in ("configure_flags", "build_command", "configure_command"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, value := tuple(value))
            if not isinstance(value, str) and not (isinstance(value, tuple) and all(isinstance(x, str) for x in value)):
                raise InputError(f"{name.replace('_', '-')} must be a string or a list of strings, not {value!r}")
        if not self.build_command:
            raise InputError("build command is empty")
        for name in ("ninja", "ccache"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, not {getattr(self, name)!r}")
        for name, kind, what in (("jobs", int, "integer"), ("timeout", int | float, "number of seconds")):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kind) or value <= 0):
                raise InputError(f"{name} must be a positive {what}, not {value!r}")
        size = self.ccache_max_size
        if not isinstance(size, str) or not re.fullmatch(r"\d+(\.\d+)?\s*([kMGT]i?)?", size):
            raise InputError(f"ccache max size must look like 10G or 500M, not {size!r}")
        path = self.binary_path
        if not isinstance(path, str) or not path or Path(path).is_absolute() or ".." in Path(path).parts:
            raise InputError(f"binary path {path!r} must be relative to the checkout, without '..'")
        self.cache_limit  # noqa: B018 - its bounds are checked now, not at the first build

    @property
    def cache_limit(self) -> CacheLimit:
        """The binary cache's bounds; a size is bytes or text such as ``20G``."""
        size = self.cache_max_size
        return CacheLimit(self.cache_max_entries, parse_size(size) if isinstance(size, str) else size)

    @classmethod
    def from_mapping(cls, config: Mapping[str, object]) -> BuildSettings:
        """Settings from the ``build:`` section's mapping (keys with - or _; ``cache-dir`` is build_ref's)."""
        values = {str(name).replace("-", "_"): value for name, value in config.items()}
        values.pop("cache_dir", None)
        known = sorted(item.name for item in fields(cls))
        if unknown := sorted(set(values) - set(known)):
            raise InputError(f"unknown build setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return cls(**values)

    def configure_argv(self) -> list[str] | None:
        """The configure step as argv, or None when configuring is skipped."""
        if not self.configure_command:
            return None
        extra = list(self.configure_flags)
        ninja = self.ninja if self.ninja is not None else shutil.which("ninja") is not None
        if ninja and "--ninja" not in extra:
            extra.insert(0, "--ninja")
        if isinstance(self.configure_command, str):
            return ["sh", "-c", " ".join([self.configure_command, shlex.join(extra)]).strip()]
        return [*self.configure_command, *extra]

    def build_argv(self) -> list[str]:
        """The build step as argv; ``jobs`` replaces the default command's ``$(nproc)``."""
        command = self.build_command
        if command == DEFAULT_BUILD_COMMAND and self.jobs is not None:
            command = f"make -j{self.jobs}"
        return ["sh", "-c", command] if isinstance(command, str) else list(command)

    def key_inputs(self, env: Mapping[str, str]) -> dict:
        """Everything besides the SHA that changes the binary."""
        return {
            "configure": self.configure_argv(),
            # The command as configured: the job count of make -j does not change the binary.
            "build": replace(self, jobs=None).build_argv(),
            "binary_path": self.binary_path,
            "compilers": compiler_identity(env),
            "machine": platform.machine(),
        }

    def ccache_env(
        self, env: Mapping[str, str], ccache: str, ccache_dir: Path, stats_log: Path, *, read_only: bool
    ) -> dict[str, str]:
        """``env`` with CC/CXX wrapped by ccache, ccache pointed at ``ccache_dir`` and its statistics at ``stats_log``
        (in the worktree, whose root is ccache's base directory)."""
        result = dict(env)
        for variable, default in _COMPILERS:
            result[variable] = shlex.join([ccache, *_compiler_command(env, variable, default)])
        # Every build has its own worktree path: relative paths (BASEDIR) and an unhashed cwd let them share hits.
        result |= {"CCACHE_DIR": str(ccache_dir), "CCACHE_MAXSIZE": self.ccache_max_size}
        result |= {"CCACHE_STATSLOG": str(stats_log), "CCACHE_BASEDIR": str(stats_log.parent), "CCACHE_NOHASHDIR": "1"}
        if read_only:
            result["CCACHE_READONLY"] = "1"
        else:
            result.pop("CCACHE_READONLY", None)
            result.pop("CCACHE_DISABLE", None)
        return result


def _compiler_command(env: Mapping[str, str], variable: str, default: str) -> list[str]:
    words = shlex.split(env.get(variable) or default)
    while words and Path(words[0]).name in _WRAPPERS:
        words = words[1:]
    return words or [default]


@functools.lru_cache(maxsize=16)
def _version_line(path: str, mtime: float) -> str:
    # mtime is part of the memo key so an upgraded compiler is noticed within one process too.
    try:
        completed = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"
    lines = (completed.stdout or completed.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def compiler_identity(env: Mapping[str, str]) -> dict:
    """The C and C++ compilers a build would use (command, resolved path, version) and flag variables."""
    identity: dict = {}
    for variable, default in _COMPILERS:
        command = _compiler_command(env, variable, default)
        resolved = shutil.which(command[0], path=env.get("PATH"))
        real = os.path.realpath(resolved) if resolved else None
        version = _version_line(real, os.stat(real).st_mtime) if real else None
        identity[variable] = {"command": command, "path": real, "version": version}
    identity["flags"] = {name: env[name] for name in COMPILER_ENV if env.get(name)}
    return identity


@dataclass(frozen=True)
class CcacheStats:
    """ccache counters of one build, read from its stats log."""

    calls: int
    hits: int
    direct_hits: int
    preprocessed_hits: int
    misses: int
    writes: int
    uncacheable: int
    read_only: bool
    hit_rate: float | None  # hits among the cacheable calls (None: there were none)

    @classmethod
    def parse(cls, text: str, *, read_only: bool) -> CcacheStats:
        """Count the per-compilation outcomes in a ccache stats log's text (one ``# file`` line per call)."""
        lines = [line.strip() for line in text.splitlines()]
        calls = sum(line.startswith("#") for line in lines)
        counts = Counter(line for line in lines if line and not line.startswith("#"))
        direct, preprocessed = counts["direct_cache_hit"], counts["preprocessed_cache_hit"]
        hits, misses, writes = direct + preprocessed, counts["cache_miss"], counts["local_storage_write"]
        uncacheable = max(calls - hits - misses, 0)
        rate = hits / (hits + misses) if hits + misses else None
        return cls(calls, hits, direct, preprocessed, misses, writes, uncacheable, read_only, rate)

    def summary(self) -> str:
        rate = "n/a" if self.hit_rate is None else f"{self.hit_rate:.0%}"
        mode = "read-only" if self.read_only else "read-write"
        return f"ccache ({mode}): {self.hits} hits, {self.misses} misses ({rate}), {self.writes} writes"
