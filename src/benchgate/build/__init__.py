"""Node binaries: built from git refs in worktrees (the head's in ``benchgate.sandbox``), kept in the binary
cache, or fetched as official releases. The design: docs/building.md."""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "builder": ("SideBuildError", "HeadBuildError", "BaseBuildError", "BuildResult", "build_ref", "log_tail"),
    "buildsettings": ("DEFAULT_BUILD_COMMAND", "BuildSettings"),
    "worktrees": ("resolve_commit", "merge_base"),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
