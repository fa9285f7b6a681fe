"""Git plumbing for builds: refs, merge bases, and detached worktrees under the cache directory (never the
user's working tree: they share the repository's objects, not its files)."""

import contextlib
import re
import shutil
import subprocess
from pathlib import Path

from benchgate.errors import InputError

FULL_SHA = re.compile(r"[0-9a-f]{40}")  # a full commit SHA as git and GitHub write it (lowercase)
# Hooks of the user's repository have no business running inside our build worktrees.
_GIT = ("git", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in ``cwd``; with ``check`` a failure becomes an InputError naming the command and git's message."""
    try:
        completed = subprocess.run(
            [*_GIT, "-C", str(cwd), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise InputError("git is not installed (needed to build from refs)") from None
    if check and completed.returncode != 0:
        reason = completed.stderr.strip() or f"exit status {completed.returncode}"
        raise InputError(f"git {' '.join(args)} failed in {cwd}: {reason}")
    return completed


def git_common_dir(repo: Path) -> Path:
    """The repository's shared .git directory; InputError when ``repo`` is not a git repository."""
    if not Path(repo).is_dir():
        raise InputError(f"repository {repo} does not exist or is not a directory")
    completed = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
    if completed.returncode != 0:
        raise InputError(f"{repo} is not a git repository: {completed.stderr.strip()}")
    return Path(completed.stdout.strip())


def resolve_commit(repo: Path, ref: str) -> str:
    """The full commit SHA ``ref`` names in ``repo``; InputError when it names no commit."""
    if not ref or ref.startswith("-"):
        raise InputError(f"invalid git ref {ref!r}")
    git_common_dir(repo)
    completed = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if completed.returncode != 0:
        raise InputError(f"ref {ref!r} is not a commit in {repo} (fetch it first?)")
    return completed.stdout.strip()


def merge_base(repo: Path, head_ref: str, base_branch: str) -> str:
    """The merge-base commit of ``head_ref`` and ``base_branch`` (tried as given, then as ``origin/<branch>``)."""
    head = resolve_commit(repo, head_ref)
    for candidate in (base_branch, f"origin/{base_branch}"):
        with contextlib.suppress(InputError):
            base = resolve_commit(repo, candidate)
            break
    else:
        raise InputError(f"base branch {base_branch!r} is neither a local nor an origin/ branch in {repo}")
    completed = git(repo, "merge-base", base, head, check=False)
    if completed.returncode != 0:
        shallow = git(repo, "rev-parse", "--is-shallow-repository", check=False).stdout.strip() == "true"
        hint = " (a shallow clone: fetch with full history, e.g. fetch-depth: 0)" if shallow else ""
        raise InputError(f"{head_ref!r} and {base_branch!r} have no common ancestor in {repo}{hint}")
    return completed.stdout.strip()


def ensure_worktree(repo: Path, path: Path, sha: str) -> None:
    """A detached worktree of ``repo`` at ``sha`` in ``path``, reused when it already is one (caller locks)."""
    head = git(path, "rev-parse", "--verify", "--quiet", "HEAD", check=False) if (path / ".git").exists() else None
    if head is not None and head.stdout.strip() == sha:
        return
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "prune")
    # Twice: a job killed during `git worktree add` leaves the path registered and locked ("initializing"),
    # which prune keeps and a single --force refuses; the caller's lock says no other job is adding it.
    git(repo, "worktree", "add", "--detach", "--force", "--force", str(path), sha)


def clean_worktree(path: Path) -> None:
    """Return the worktree to its pristine checkout: build outputs and any edits are removed."""
    git(path, "reset", "--hard", "--quiet")
    git(path, "clean", "-ffdxq")


def list_worktrees(repo: Path) -> list[Path]:
    """Every worktree of ``repo`` (its main checkout first), as git lists them."""
    listing = git(repo, "worktree", "list", "--porcelain", check=False).stdout
    return [Path(line.split(" ", 1)[1]) for line in listing.splitlines() if line.startswith("worktree ")]


def remove_worktree(path: Path) -> None:
    """Delete worktree ``path`` and let its repository (named in ``path/.git``) forget it."""
    common_dir = None
    # A linked worktree's .git file says "gitdir: <common dir>/worktrees/<name>".
    with contextlib.suppress(OSError, ValueError, IndexError):
        common_dir = Path((path / ".git").read_text().split("gitdir:", 1)[1].strip()).parent.parent
    shutil.rmtree(path, ignore_errors=True)
    if common_dir is not None and common_dir.is_dir():
        git(common_dir, "worktree", "prune", check=False)
