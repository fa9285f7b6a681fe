"""Compiler identity (part of the binary cache key) and ccache wiring for builds.

ccache runs with its directory inside the benchgate cache. Trusted builds (the base
branch) may write it; untrusted builds (PR heads) run with ``CCACHE_READONLY=1`` so a PR
cannot plant object files that later builds would link. Each build gets its own
``CCACHE_STATSLOG`` so hit statistics are per build even when jobs run side by side.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

_WRAPPERS = {"ccache", "sccache"}
# Environment variables that change what the compiler produces, hence part of the cache key.
COMPILER_ENV = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")


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

    @property
    def hit_rate(self) -> float | None:
        cacheable = self.hits + self.misses
        return self.hits / cacheable if cacheable else None

    def as_dict(self) -> dict:
        return {**asdict(self), "hit_rate": self.hit_rate}

    def summary(self) -> str:
        rate = "n/a" if self.hit_rate is None else f"{self.hit_rate:.0%}"
        mode = "read-only" if self.read_only else "read-write"
        return f"ccache ({mode}): {self.hits} hits, {self.misses} misses ({rate}), {self.writes} writes"


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
    for variable, default in (("CC", "cc"), ("CXX", "c++")):
        command = _compiler_command(env, variable, default)
        resolved = shutil.which(command[0], path=env.get("PATH"))
        if resolved is None:
            identity[variable] = {"command": command, "path": None, "version": None}
            continue
        real = os.path.realpath(resolved)
        identity[variable] = {"command": command, "path": real, "version": _version_line(real, os.stat(real).st_mtime)}
    identity["flags"] = {name: env[name] for name in COMPILER_ENV if env.get(name)}
    return identity


def ccache_env(
    env: Mapping[str, str],
    *,
    ccache: str,
    ccache_dir: Path,
    base_dir: Path,
    stats_log: Path,
    read_only: bool,
    max_size: str,
) -> dict[str, str]:
    """``env`` with CC/CXX wrapped by ccache and ccache pointed at ``ccache_dir``."""
    result = dict(env)
    for variable, default in (("CC", "cc"), ("CXX", "c++")):
        result[variable] = shlex.join([ccache, *_compiler_command(env, variable, default)])
    result["CCACHE_DIR"] = str(ccache_dir)
    result["CCACHE_MAXSIZE"] = max_size
    result["CCACHE_STATSLOG"] = str(stats_log)
    # Every build has its own worktree path; relative paths and an unhashed cwd let them share hits.
    result["CCACHE_BASEDIR"] = str(base_dir)
    result["CCACHE_NOHASHDIR"] = "1"
    if read_only:
        result["CCACHE_READONLY"] = "1"
    else:
        result.pop("CCACHE_READONLY", None)
        result.pop("CCACHE_DISABLE", None)
    return result


def parse_stats_log(text: str, *, read_only: bool) -> CcacheStats:
    """Count the per-compilation outcomes in a ccache stats log's text (one ``# file`` line per call)."""
    counts: Counter[str] = Counter()
    calls = 0
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            calls += 1
        elif line:
            counts[line] += 1
    direct, preprocessed = counts["direct_cache_hit"], counts["preprocessed_cache_hit"]
    hits, misses = direct + preprocessed, counts["cache_miss"]
    return CcacheStats(
        calls=calls,
        hits=hits,
        direct_hits=direct,
        preprocessed_hits=preprocessed,
        misses=misses,
        writes=counts["local_storage_write"],
        uncacheable=max(calls - hits - misses, 0),
        read_only=read_only,
    )
