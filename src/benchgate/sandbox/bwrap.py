"""bubblewrap (``bwrap``): probing it once, the command line that confines one untrusted process, and reading
what such a process wrote without being led out of its tree. Why each flag and check: docs/security.md."""

from __future__ import annotations

import functools
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.errors import InputError
from benchgate.sandbox.policy import Mounts, confined_env, mount_args, private_home, strip_credentials

# Which bwrap to use (default: the one on PATH); tests point it at a missing or failing one.
BWRAP_ENV = "BENCHGATE_BWRAP"
# Inherited file descriptors (the benchmark IPC channel) stay open through bwrap, at the same number.
NAMESPACE_ARGS = (
    "--unshare-user",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)
_BASE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
_PROBE_TIMEOUT = 30
_APT = "(apt-get install bubblewrap)"
_FIX = "or pass --no-sandbox to run the pull request's code without isolation"


class SandboxUnavailable(InputError):
    """No sandbox can be made here: untrusted code is refused (exit 2) unless --no-sandbox."""


@dataclass(frozen=True)
class Sandbox:
    """A bwrap that was seen to create a sandbox on this machine."""

    tool: str  # absolute path of the bwrap executable
    version: str  # e.g. "0.8.0"
    disable_userns: bool = True  # bwrap >= 0.8: no further user namespaces inside

    def command(self, argv: Sequence[str], *mounts: str) -> list[str]:
        """bwrap's command line: the namespaces, ``/`` read-only, then ``mounts`` (and --chdir) for ``argv``."""
        userns = ["--disable-userns"] if self.disable_userns else []
        return [self.tool, *NAMESPACE_ARGS, *userns, *_BASE_MOUNTS, *mounts, "--", *argv]

    def record(self) -> dict:
        """How run.json and the build record say that the untrusted code was sandboxed."""
        return {"used": True, "untrusted_head": True, "tool": "bwrap", "version": self.version}


def unsandboxed_record(reason: str, *, untrusted_head: bool) -> dict:
    """run.json's ``sandbox`` of a run whose head ran without it: trusted, or ``--no-sandbox``."""
    return {"used": False, "untrusted_head": untrusted_head, "reason": reason}


def _unavailable(why: str) -> SandboxUnavailable:
    return SandboxUnavailable(f"cannot sandbox the untrusted head: {why} {_FIX}")


@functools.lru_cache(maxsize=8)
def _probe(name: str) -> Sandbox:
    found = shutil.which(name)
    if found is None:
        raise _unavailable(f"bubblewrap is not installed (no {name!r} found); install it {_APT}")
    tool = os.path.realpath(found)
    run = functools.partial(
        subprocess.run, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL
    )
    try:
        completed = run([tool, "--version"])
    except (OSError, subprocess.TimeoutExpired) as error:
        raise _unavailable(f"{tool} --version failed ({error});") from None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", completed.stdout)
    if completed.returncode != 0 or not match:
        shown = (completed.stdout or completed.stderr).strip()[:80]
        raise _unavailable(f"{tool} is not bubblewrap ('--version' printed {shown!r}); install bubblewrap {_APT}")
    version = match.group(0)
    sandbox = Sandbox(tool=tool, version=version, disable_userns=(int(match[1]), int(match[2])) >= (0, 8))
    try:
        completed = run(
            sandbox.command([shutil.which("true") or "/bin/true"], "--tmpfs", "/tmp"),
            env={"PATH": os.environ.get("PATH", os.defpath)},
        )
        failed = completed.returncode != 0
        why = " ".join(completed.stderr.split())[:200] or f"exit status {completed.returncode}"
    except (OSError, subprocess.TimeoutExpired) as error:
        failed, why = True, str(error)
    if failed:
        raise _unavailable(
            f"bwrap {version} could not create a sandbox ({why}); enable unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1 and user.max_user_namespaces=10000; on Ubuntu 23.10+ also "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return sandbox


def probe() -> Sandbox:
    """This machine's sandbox, probed once per process (``bwrap ... true``); SandboxUnavailable (exit 2, one line
    saying how to fix it) when bwrap is missing or cannot create namespaces here."""
    return _probe(os.environ.get(BWRAP_ENV) or "bwrap")


@dataclass(frozen=True)
class Confinement:
    """How one kind of untrusted process starts: in ``sandbox``, or (None: --no-sandbox) only without credentials.
    ``keep_env`` names more variables that pass (CC, CCACHE_*); ``extra_env`` is set whatever the host's says."""

    sandbox: Sandbox | None
    mounts: Mounts = Mounts()
    keep_env: tuple[str, ...] = ()
    extra_env: Mapping[str, str] = field(default_factory=dict)

    def wrap(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], extra_env: Mapping[str, str] | None = None
    ) -> tuple[list[str], dict[str, str]]:
        """The command line and environment that start ``argv`` (in ``cwd``) confined."""
        extra = {**self.extra_env, **(extra_env or {})}
        if self.sandbox is None:
            return list(argv), {**strip_credentials(env), **extra}
        home = private_home(env)
        mounts = mount_args(self.mounts, env=env, home=home)
        command = self.sandbox.command(argv, *mounts, "--chdir", os.path.realpath(cwd))
        return command, confined_env(env, keep=self.keep_env, home=home, extra=extra)

    def record(self, reason: str = "--no-sandbox") -> dict:
        """run.json's ``sandbox`` for processes started by this confinement."""
        return self.sandbox.record() if self.sandbox else unsandboxed_record(reason, untrusted_head=True)


# Reading what a sandboxed process left. A hostile build controls every file in its worktree: its "binary"
# may be a symlink to the cached base binary or a secret, a FIFO that blocks the reader, or sit under a
# directory that is a symlink to /. So the resolved path must stay inside the tree, and the file is opened
# without following a last symlink, without blocking, and must be a regular file. By then every process of
# the sandbox is gone (its PID namespace ended), so nothing can swap the file between check and copy.


class UnsafePath(ValueError):
    """A path a sandboxed process left that benchgate will not read (the message says why)."""


def _open_regular(root: Path, relative: str | Path) -> tuple[int, os.stat_result]:
    real_root = os.path.realpath(root)
    target = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, target]) != real_root:
        raise UnsafePath(f"{relative} leads outside its tree (to {target})")
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UnsafePath(f"{relative} does not exist") from None
    except OSError as error:
        raise UnsafePath(f"{relative} cannot be opened ({error.strerror})") from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise UnsafePath(f"{relative} is not a regular file")
    return fd, status


def copy_out(root: Path, relative: str | Path, destination: Path) -> Path:
    """Copy the regular file ``root/relative`` to ``destination`` (mode 0755 when it was executable)."""
    fd, status = _open_regular(root, relative)
    with os.fdopen(fd, "rb") as source, open(destination, "wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)
    os.chmod(destination, 0o755 if status.st_mode & 0o111 else 0o644)
    return destination


def read_inside(root: Path, relative: str | Path, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``root/relative``; b"" when it is missing."""
    try:
        fd, _ = _open_regular(root, relative)
    except UnsafePath:
        if not os.path.lexists(os.path.join(root, relative)):
            return b""
        raise
    with os.fdopen(fd, "rb") as source:
        return source.read(limit)
