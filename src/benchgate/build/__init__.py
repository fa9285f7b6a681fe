"""Node binaries: built from git refs in worktrees, cached, or fetched as official releases.

- ``builder``: ``build_ref`` (resolve, look up the cache, configure and build, store).
- ``cache``: the binary cache, its key, locks and eviction; ``buildsettings``: how to build.
- ``steps``: one build command, killed with its process tree; ``compilercache``: ccache wiring.
- ``worktrees``: git plumbing; ``releases``: official binaries and checks of local ones.
- ``housekeeping``: eviction with worktrees, orphans and old logs after a build.
- ``untrusted``: a pull request's build in ``benchgate.sandbox``, and what is taken out of it.
"""

from benchgate._lazy import exports

_MODULES = {
    "builder": (
        "SIDES",
        "LOG_TAIL_LINES",
        "SideBuildError",
        "HeadBuildError",
        "BaseBuildError",
        "BuildResult",
        "build_ref",
        "log_tail",
    ),
    "cache": (
        "CACHE_ENV",
        "KEY_FORMAT",
        "COMPLETE_MARKER",
        "ENTRY_FILE",
        "LAST_USED_FILE",
        "LOG_FILE",
        "STAGING_PREFIX",
        "STALE_STAGING_SECONDS",
        "default_cache_dir",
        "parse_size",
        "CacheLimit",
        "cache_key",
        "CacheEntry",
        "BinaryCache",
    ),
    "compilercache": (
        "COMPILER_ENV",
        "CcacheStats",
        "find_ccache",
        "compiler_identity",
        "ccache_env",
        "read_stats_log",
        "parse_stats_log",
    ),
    "housekeeping": (
        "KEPT_LOGS",
        "tidy",
        "remove_entry_worktree",
        "remove_orphan_worktrees",
        "prune_logs",
    ),
    "releases": (
        "DEFAULT_DIST_URL",
        "SOURCES",
        "NodeBinary",
        "inspect_binary",
        "normalize_version",
        "platform_arch",
        "Release",
        "fetch_from_dist",
        "fetch_from_npm",
        "fetch_release",
        "release_binary",
    ),
    "buildsettings": (
        "DEFAULT_BUILD_COMMAND",
        "DEFAULT_BUILD_TIMEOUT",
        "BuildSettings",
    ),
    "steps": ("run_step",),
    "untrusted": (
        "STATS_LOG",
        "STATS_LOG_LIMIT",
        "BUILD_ENV",
        "CCACHE_ENV",
        "Sandboxing",
        "confinement",
        "log_note",
        "stats_log_path",
        "read_stats",
        "git_link_kept",
        "copied_binary",
    ),
    "worktrees": (
        "FULL_SHA",
        "git",
        "git_common_dir",
        "repo_id",
        "resolve_commit",
        "merge_base",
        "worktree_head",
        "ensure_worktree",
        "clean_worktree",
        "list_worktrees",
        "read_git_link",
        "restore_git_link",
        "remove_worktree",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
