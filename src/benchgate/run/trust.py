"""Which runs have an untrusted head, and the sandbox their benchmark processes start in (docs/security.md)."""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchgate import sandbox
from benchgate.build import worktrees
from benchgate.build.cache import default_cache_dir
from benchgate.errors import BenchgateError, InputError

# A benchmark process still running after half an hour is stuck (or keeping the machine busy on purpose).
DEFAULT_PROCESS_TIMEOUT = 1800.0
# Node's test/common/tmpdir (used by fs benchmarks) writes under $NODE_TEST_DIR instead of the read-only checkout.
BENCHMARK_ENV = {"NODE_TEST_DIR": "/tmp"}


def untrusted_head(options: Any) -> bool:
    """Whether the head of this run (``run.plan.RunOptions``) is untrusted code."""
    if options.trusted and options.untrusted_head:
        raise InputError("--trusted and --untrusted-head contradict each other; choose one")
    if options.repo is not None:
        return not options.trusted
    if options.trusted:
        raise InputError("--trusted only applies with --repo (given binaries are trusted unless --untrusted-head)")
    return options.untrusted_head


def record(untrusted: bool, found: sandbox.Sandbox | None, previous: dict | None = None) -> dict:
    """run.json's ``sandbox``; a resumed run that ran unsandboxed before stays marked unsandboxed."""
    if not untrusted:
        return sandbox.unsandboxed_record("the head is trusted", untrusted_head=False)
    if previous and previous.get("untrusted_head") and previous.get("used") is False:
        return previous
    return sandbox.Confinement(found).record()


def repository_paths(repo: Path) -> list[Path]:
    """The Node checkout, its git directory and all its worktrees: nothing of them is the benchmark's business."""
    try:
        return [repo, worktrees.git_common_dir(repo), *worktrees.list_worktrees(repo)]
    except BenchgateError:
        return [repo]


def confinement(
    found: sandbox.Sandbox | None,
    *,
    binaries: Iterable[str | Path],
    benchmark_dir: Path | None,
    output: Path,
    caches: Iterable[Path | None] = (),
    repo_paths: Iterable[Path] = (),
) -> sandbox.Confinement:
    """How the untrusted run's processes start: confined by ``found`` (None: --no-sandbox, credentials dropped);
    ``repo_paths`` (``repository_paths``, git asked once per run) are hidden, but for what the run reads."""
    if found is None:
        return sandbox.Confinement(None)
    read_only = [Path(path) for path in binaries]
    if benchmark_dir is not None:
        # The checkout is the working directory (Node's benchmarks read ../test/fixtures); the benchmark
        # directory itself too, in case the checkout is a hidden directory such as a home.
        read_only += [benchmark_dir.parent, benchmark_dir]
    exposed = {os.path.realpath(path) for path in read_only}
    # The head's worktree is one of the repository's worktrees: hidden with the others unless it is the checkout.
    others = [path for path in repo_paths if os.path.realpath(path) not in exposed]
    hidden = [output, default_cache_dir(), *(path for path in caches if path is not None), *others]
    mounts = sandbox.Mounts(read_only=tuple(read_only), hidden=tuple(hidden))
    return sandbox.Confinement(found, mounts, extra_env=BENCHMARK_ENV)
