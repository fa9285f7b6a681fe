"""Node binaries: built from git refs in worktrees, cached, or fetched as official releases.

- ``builder``: ``build_ref`` (resolve, look up the cache, configure and build, store).
- ``cache``: the binary cache, its key, locks and eviction; ``buildsettings``: how to build.
- ``steps``: one build command, killed with its process tree; ``compilercache``: ccache wiring.
- ``worktrees``: git plumbing; ``releases``: official binaries and checks of local ones.
- ``housekeeping``: eviction with worktrees, orphans and old logs after a build.
- ``untrusted``: a pull request's build in ``benchgate.sandbox``, and what is taken out of it.
"""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "builder": ("SideBuildError", "HeadBuildError", "BaseBuildError", "BuildResult", "build_ref", "log_tail"),
    "buildsettings": ("DEFAULT_BUILD_COMMAND", "BuildSettings"),
    "worktrees": ("resolve_commit", "merge_base"),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
