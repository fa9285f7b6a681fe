"""A pull request's build: what its sandbox shows, and what benchgate (outside it) takes out afterwards: the
worktree's ``.git`` link put back, ccache's statistics, and the binary, copied without following anything
that leads out of the worktree (docs/security.md)."""

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from benchgate import sandbox
from benchgate.build import worktrees
from benchgate.build.buildsettings import COMPILER_ENV, CcacheStats
from benchgate.build.cache import BinaryCache

# Inside the (writable) worktree: the one place a sandboxed ccache can append its statistics to.
STATS_LOG = ".benchgate-ccache-stats"
STATS_LOG_LIMIT = 16 * 2**20
# Variables the build's configure and compilers read, as far as the cache key covers them.
BUILD_ENV = ("CC", "CXX", *COMPILER_ENV)
CCACHE_ENV = tuple(f"CCACHE_{name}" for name in ("DIR", "MAXSIZE", "STATSLOG", "BASEDIR", "NOHASHDIR", "READONLY"))


def confinement(
    use_sandbox: bool, hide: tuple[Path, ...], cache: BinaryCache, worktree: Path, repo: Path, ccache_dir: Path | None
) -> sandbox.Confinement:
    """How the untrusted build's steps start: in the sandbox (SandboxUnavailable when impossible), or without
    it (--no-sandbox) only without credential variables. It writes only its worktree, and sees no cache."""
    if not use_sandbox:
        return sandbox.Confinement(None)
    found = sandbox.probe()
    others = [path for path in worktrees.list_worktrees(repo) if path.resolve() != worktree.resolve()]
    hidden = (cache.root, repo, worktrees.git_common_dir(repo), *others, *hide)
    read_only, extra = (), {}
    if ccache_dir is not None:
        ccache_dir.mkdir(parents=True, exist_ok=True)  # bound read-only: it must exist to be bound
        read_only, extra = (ccache_dir,), {"CCACHE_TEMPDIR": "/tmp/ccache"}  # the read-only ccache's scratch
    mounts = sandbox.Mounts(read_only=read_only, writable=(worktree,), hidden=hidden)
    return sandbox.Confinement(found, mounts, keep_env=BUILD_ENV + CCACHE_ENV, extra_env=extra)


def log_note(record: dict | None) -> str:
    """How the build log's header says where the build ran."""
    if record is None:
        return "sandbox=none (trusted)"
    if record.get("used"):
        return f"sandbox=bwrap {record.get('version')}"
    return "sandbox=none (--no-sandbox: only credential variables removed)"


def read_stats(stats_log: Path, *, read_only: bool) -> CcacheStats:
    """ccache's statistics of the build, read as untrusted (a sandboxed build may have made it anything)."""
    try:
        text = sandbox.read_inside(stats_log.parent, stats_log.name, STATS_LOG_LIMIT).decode(errors="replace")
    except sandbox.UnsafePath:
        text = ""
    return CcacheStats.parse(text, read_only=read_only)


@contextmanager
def git_link_kept(worktree: Path) -> Iterator[None]:
    """Put back the worktree's ``.git`` file after untrusted code ran in the worktree, however it ended: the
    build could have pointed it at a git directory whose config runs a command (core.fsmonitor, say) on the
    next ``git`` that benchgate runs there, outside the sandbox."""
    dot_git = worktree / ".git"
    link = dot_git.read_bytes()
    try:
        yield
    finally:
        if dot_git.is_dir() and not dot_git.is_symlink():
            shutil.rmtree(dot_git)
        elif dot_git.exists() or dot_git.is_symlink():
            dot_git.unlink()
        dot_git.write_bytes(link)


def binary_copier(worktree: Path, binary_path: str) -> Callable[[Path, Path], object]:
    """How the cache copies the built binary out of the worktree: ``sandbox.UnsafePath`` when it is missing,
    leads outside the worktree (a symlink to the cached base binary, say) or is no executable file."""

    def copy(_: Path, destination: Path) -> None:
        if not sandbox.copy_out(worktree, binary_path, destination).stat().st_mode & 0o100:
            raise sandbox.UnsafePath(f"{binary_path} is not executable")

    return copy
