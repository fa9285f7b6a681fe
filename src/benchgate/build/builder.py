"""Build a Node binary from a git ref, in its own worktree, reusing the binary cache (docs/building.md)."""

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, BinaryIO, NoReturn, TextIO

from benchgate import sandbox
from benchgate.build import untrusted, worktrees
from benchgate.build.buildsettings import BuildSettings, CcacheStats
from benchgate.build.cache import BinaryCache, CacheEntry, cache_key, default_cache_dir
from benchgate.build.worktrees import resolve_commit
from benchgate.errors import BuildError, InputError

SIDES = ("base", "head")
_EXCERPT_LINE = re.compile(r"^\s*\d*\s*\|")


class SideBuildError(BuildError):
    """A failed build of one side; ``infrastructure`` tells the gate how to report it."""

    infrastructure = False

    def __init__(self, message: str, *, side: str, ref: str, sha: str, log: Path | None) -> None:
        self.side, self.ref, self.sha, self.log = side, ref, sha, log
        super().__init__(message)


class HeadBuildError(SideBuildError):
    """The PR head does not build: the PR fails the gate."""


class BaseBuildError(SideBuildError):
    """The base does not build: an infrastructure error, not a verdict on the PR."""

    infrastructure = True


@dataclass(frozen=True)
class BuildResult:
    """A built (or cached) binary of one side."""

    binary: Path
    sha: str
    ref: str
    side: str
    key: str
    cached: bool
    log: Path | None
    worktree: Path
    duration: float
    trusted: bool
    binary_sha256: str
    ccache: CcacheStats | None = None
    ccache_mode: str = "disabled"
    sandbox: dict | None = None  # how the untrusted build ran (run.json's sandbox record); None when trusted
    # Shared lock keeping the entry (binary and worktree) from eviction while this process uses it.
    in_use: IO[bytes] | None = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        """Let eviction remove this binary again (otherwise that happens when the process ends)."""
        if self.in_use is not None:
            self.in_use.close()

    def record(self) -> dict:
        """The build's entry for run.json."""
        record = {item.name: getattr(self, item.name) for item in fields(self) if item.name != "in_use"}
        record |= {
            "binary": str(self.binary),
            "log": str(self.log) if self.log else None,
            "worktree": str(self.worktree),
        }
        record |= {"cache_key": record.pop("key"), "duration_seconds": round(record.pop("duration"), 3)}
        return record | {"ccache": asdict(self.ccache) if self.ccache else None}


def build_ref(
    repo: Path,
    ref: str,
    *,
    side: str,
    settings: BuildSettings | None = None,
    cache_dir: Path | None = None,
    trusted: bool = True,
    echo: TextIO | None = None,
    use_sandbox: bool = True,
    hide: tuple[Path, ...] = (),
) -> BuildResult:
    """Build (or reuse) the binary of ``ref``; HeadBuildError/BaseBuildError on failure. ``trusted=False`` (a PR)
    builds in ``benchgate.sandbox`` (``hide``: more paths it hides; ``use_sandbox=False``: --no-sandbox) with a
    read-only ccache. ``echo`` receives the build output as it happens."""
    started = time.monotonic()
    settings = settings or BuildSettings()
    repo = Path(repo).resolve()
    sha = resolve_commit(repo, ref)
    cache = BinaryCache((Path(cache_dir) if cache_dir else default_cache_dir()).resolve(), settings.cache_limit)
    env = dict(os.environ)  # untrusted steps get less: see untrusted.confinement
    # Trust is part of the key: a binary built from PR code (which could also have rewritten its own
    # entry) lives under another key than the trusted build of the same commit, and is never served to it.
    key = cache_key({"sha": sha, "trusted": trusted, **settings.key_inputs(env)})
    # The full key in the name lets cleanup tell which entry (and lock) a worktree belongs to.
    worktree = cache.root / "worktrees" / f"{sha[:12]}-{key}"
    job = BuildJob(cache, repo, ref, sha, key, side, settings, env, worktree, trusted, started, echo, use_sandbox, hide)

    waiting = f"benchgate: waiting for another job building {ref} ({sha[:12]}, key {key[:12]})"
    with cache.lock(key, on_wait=lambda: print(waiting, file=sys.stderr)):
        entry, reason = cache.validate(key)
        if entry is not None:
            cache.touch(entry)
            job.checkout()
            stats = entry.metadata.get("ccache")  # of the build that made the entry: nothing was compiled now
            return job.result(
                entry,
                cached=True,
                log=entry.log,
                ccache=CcacheStats(**stats) if stats else None,
                ccache_mode="not used (binary cache hit)",
                sandbox=entry.metadata.get("sandbox"),
            )
        if reason != "missing":
            print(f"benchgate: cached {side} binary for {sha[:12]} unusable, rebuilding: {reason}", file=sys.stderr)
            cache.remove(key)
        result = job.build()
    cache.tidy(repo, keep=key)
    return result


@dataclass(frozen=True)
class BuildJob:
    """One side's build, resolved: what to check out where, how to build it and where to store it."""

    cache: BinaryCache
    repo: Path
    ref: str
    sha: str
    key: str  # the binary cache's key (commit, settings, trust)
    side: str
    settings: BuildSettings
    env: Mapping[str, str]
    worktree: Path
    trusted: bool  # the base: built unconfined, and may write the compiler cache
    started: float  # time.monotonic() when the build was asked for
    echo: TextIO | None  # where the build's output is echoed as well as logged
    use_sandbox: bool  # False: --no-sandbox
    hide: tuple[Path, ...]  # more paths an untrusted build's sandbox hides (a run's --output)

    def error(self, message: str, log: Path | None) -> SideBuildError:
        """The head's failure fails the PR; the base's is an infrastructure error."""
        error_class = HeadBuildError if self.side == "head" else BaseBuildError
        return error_class(message, side=self.side, ref=self.ref, sha=self.sha, log=log)

    def fail(self, log: Path, what: str) -> NoReturn:
        """Raise the failed build's error, its worktree removed."""
        worktrees.remove_worktree(self.worktree)
        where = f"{self.side} build of {self.ref} ({self.sha[:12]})"
        raise self.error(f"{where} failed: {what}; log {log}; last lines:\n{log_tail(log)}", log)

    def checkout(self) -> None:
        """The worktree at the job's commit (git's worktree list is locked: jobs share the repository)."""
        common_dir = worktrees.git_common_dir(self.repo)
        with self.cache.lock(f"git-{hashlib.sha256(str(common_dir).encode()).hexdigest()[:16]}"):
            worktrees.ensure_worktree(self.repo, self.worktree, self.sha)

    def result(self, entry: CacheEntry, **fields: Any) -> BuildResult:
        """The result of this job with the binary of ``entry``, held in use (the caller holds the key lock)."""
        fields |= {name: getattr(self, name) for name in ("sha", "ref", "side", "key", "worktree", "trusted")}
        duration = time.monotonic() - self.started
        return BuildResult(
            entry.binary, in_use=self.cache.hold(self.key), duration=duration, binary_sha256=entry.sha256, **fields
        )

    def build(self) -> BuildResult:
        """Check out, configure and build into the binary cache (its log beside it)."""
        ccache = shutil.which("ccache") if self.settings.ccache is not False else None
        if self.settings.ccache and ccache is None:
            raise InputError("ccache was requested but is not installed")
        ccache_dir = self.cache.root / "ccache"
        confined = None
        if not self.trusted:  # no sandbox, no untrusted build: refused before anything is checked out
            confined = untrusted.confinement(
                self.use_sandbox, self.hide, self.cache, self.worktree, self.repo, ccache_dir if ccache else None
            )
        logs = self.cache.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        log_path = logs / f"{self.side}-{self.sha[:12]}-{self.key[:12]}-{stamp}-{os.getpid()}.log"
        try:
            self.checkout()
            worktrees.clean_worktree(self.worktree)
        except InputError as error:  # the ref resolved, so this is the machine (disk, permissions), not the input
            where = f"{self.side} checkout of {self.ref} ({self.sha[:12]}) in {self.worktree}"
            raise self.error(f"{where} failed: {error.message}", None) from None
        # Only trusted builds (the base branch) may write the compiler cache.
        mode = ("read-write" if self.trusted else "read-only") if ccache else "disabled"
        sandbox_record = confined.record() if confined else None
        # In the worktree, for every build: the one place a sandboxed ccache can write its statistics.
        stats_log = self.worktree / untrusted.STATS_LOG
        env = dict(self.env)
        if ccache:
            env = self.settings.ccache_env(env, ccache, ccache_dir, stats_log, read_only=not self.trusted)
        stats = None
        try:
            with open(log_path, "wb") as log:
                log.write(
                    f"# benchgate build: side={self.side} ref={self.ref} sha={self.sha} key={self.key}\n"
                    f"# worktree={self.worktree} trusted={self.trusted} ccache={mode} "
                    f"{untrusted.log_note(sandbox_record)}\n".encode()
                )
                with untrusted.git_link_kept(self.worktree) if confined else contextlib.nullcontext():
                    failure = self.run_steps(log, env, confined)
                if ccache:
                    stats = untrusted.read_stats(stats_log, read_only=not self.trusted)
                    log.write(f"# {stats.summary()}\n".encode())
            if failure is not None:
                self.fail(log_path, failure)
            # trusted is in the key too: an untrusted build never shares an entry with a trusted one.
            metadata = {name: getattr(self, name) for name in ("sha", "ref", "side", "trusted")}
            metadata |= {
                "worktree": str(self.worktree),
                "original_log": str(log_path),
                "configure": self.settings.configure_argv(),
                "build": self.settings.build_argv(),
                "binary_path": self.settings.binary_path,
                "ccache": asdict(stats) if stats else None,
                "sandbox": sandbox_record,
            }
            # An untrusted build's worktree is the PR's: only a regular file inside it is copied out (of every build).
            copy = untrusted.binary_copier(self.worktree, self.settings.binary_path)
            try:
                entry = self.cache.store(self.key, self.worktree / self.settings.binary_path, metadata, log_path, copy)
            except sandbox.UnsafePath as error:
                self.fail(log_path, f"the build produced no executable {self.settings.binary_path} ({error})")
        finally:
            with contextlib.suppress(OSError):  # in a sandboxed build's worktree it may be anything
                stats_log.unlink()
        # Build outputs are in the cache now; the worktree keeps only the sources (benchmark/ for the runner).
        worktrees.clean_worktree(self.worktree)
        return self.result(entry, cached=False, log=log_path, ccache=stats, ccache_mode=mode, sandbox=sandbox_record)

    def run_steps(self, log: BinaryIO, env: dict[str, str], confined: sandbox.Confinement | None) -> str | None:
        """Configure, then the build command, each logged; what failed, or None."""
        # The timeout bounds the whole build (configure and build command together).
        deadline = time.monotonic() + self.settings.timeout if self.settings.timeout else None
        for argv in (self.settings.configure_argv(), self.settings.build_argv()):
            if not argv:
                continue
            log.write(f"$ {shlex.join(argv)}\n".encode())
            log.flush()
            command, step_env = confined.wrap(argv, cwd=self.worktree, env=env) if confined else (argv, env)
            remaining = max(deadline - time.monotonic(), 0.001) if deadline is not None else None
            status = run_step(command, self.worktree, step_env, log, self.echo, remaining)
            if status != 0:
                return f"`{shlex.join(argv)}` {'timed out' if status is None else f'exited with status {status}'}"
        return None


def run_step(
    argv: list[str], cwd: Path, env: dict[str, str], log: BinaryIO, echo: TextIO | None, timeout: float | None
) -> int | None:
    """Run one build step with output to ``log`` (and ``echo``); its status, None on timeout. On interrupt,
    SIGTERM or timeout the whole process tree is killed, so an abandoned build leaves nothing running."""
    timed_out = threading.Event()
    main = threading.current_thread() is threading.main_thread()  # only it may set signal handlers
    # SIGTERM raises KeyboardInterrupt as Ctrl-C does, so it unwinds through the kill below too.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler) if main else None
    timer = None
    try:
        # Own session: on interrupt or timeout the whole tree (make and its compilers) is killed, not just make.
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

        def kill() -> None:
            timed_out.set()  # read only when the build ended without an exception: then only the timer called this
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                log.write(line)
                if echo is not None:
                    echo.write(line.decode(errors="replace"))
            status = process.wait()
        except BaseException:
            kill()
            process.wait()
            raise
    finally:
        if timer:
            timer.cancel()
        if main:
            signal.signal(signal.SIGTERM, previous)
    return None if timed_out.is_set() else status


def log_tail(log: Path, lines: int = 8) -> str:
    """The last non-empty lines of a build log, each clipped, joined with newlines."""
    try:
        text = log.read_bytes()[-64 * 1024 :].decode(errors="replace")
    except OSError:
        return ""
    kept = [
        line.strip()[:240]
        for line in text.splitlines()
        # Our own header lines and gcc's source excerpts ("15 |   code", "|   ^") say nothing new.
        if line.strip() and not line.startswith("# ") and not _EXCERPT_LINE.match(line)
    ]
    return "\n".join(kept[-lines:])
