"""After each build: evict least recently used entries with their worktrees, remove orphans, prune logs."""

from __future__ import annotations

import contextlib
from pathlib import Path

from benchgate.build import worktrees
from benchgate.build.cache import BinaryCache, CacheEntry

KEPT_LOGS = 200


def tidy(cache: BinaryCache, repo: Path, *, keep: str) -> None:
    """Bring the cache within its limits (never evicting ``keep``), then clear what builds left behind."""
    common_dir = worktrees.git_common_dir(repo)
    cache.evict(keep=frozenset({keep}), on_remove=lambda evicted: remove_entry_worktree(cache, evicted, common_dir))
    remove_orphan_worktrees(cache)
    prune_logs(cache.root / "logs")


def remove_entry_worktree(cache: BinaryCache, entry: CacheEntry, common_dir: Path) -> None:
    """Remove the worktree of an evicted entry (only one under the cache's worktrees/)."""
    worktree = entry.metadata.get("worktree")
    if worktree and Path(worktree).parent == cache.root / "worktrees":
        recorded = entry.metadata.get("git_common_dir")
        worktrees.remove_worktree(Path(worktree), Path(recorded) if recorded else common_dir)


def remove_orphan_worktrees(cache: BinaryCache) -> None:
    """Remove worktrees whose entry is gone (interrupted or abandoned builds) when no job is using them."""
    directory = cache.root / "worktrees"
    if not directory.is_dir():
        return
    complete = {entry.key for entry in cache.complete_entries()}
    for worktree in directory.iterdir():
        key = worktree.name.partition("-")[2]
        if not key or key in complete:
            continue
        with cache.try_lock(key) as free, cache.try_lock(f"{key}.in-use") as unused:
            if free and unused and key not in {entry.key for entry in cache.complete_entries()}:
                worktrees.remove_worktree(worktree, None)


def prune_logs(logs: Path, keep: int = KEPT_LOGS) -> None:
    """Keep the newest ``keep`` build logs."""
    if not logs.is_dir():
        return
    dated = []
    for path in logs.glob("*.log"):
        with contextlib.suppress(FileNotFoundError):
            dated.append((path.stat().st_mtime, path))
    for _, old in sorted(dated)[:-keep]:
        with contextlib.suppress(FileNotFoundError):
            old.unlink()
