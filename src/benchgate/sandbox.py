"""The sandbox (bubblewrap, ``bwrap``) that code from an untrusted head runs in: what a sandboxed process sees
(``/`` read-only, with private, hidden and exposed paths; an environment allowlist), probing bwrap once, the command
line that confines one untrusted process, and reading what such a process wrote without being led out of its tree.
Only ``benchgate.errors`` is imported. Why each flag, mount and check: docs/security.md."""

import functools
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.errors import InputError

ALLOWED_ENV = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM"})
ALLOWED_ENV_PREFIXES = ("LC_",)
# The unsandboxed fallback (--no-sandbox) still keeps anything that looks like a credential away.
# BENCHGATE_HISTORY is the history store's URL (a PostgreSQL one may hold a password).
CREDENTIAL_ENV = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|^ACTIONS_|^BENCHGATE_HISTORY$", re.IGNORECASE
)
# Homes and /run (Unix sockets of the host's services: docker, dbus, systemd; a read-only mount does not stop
# connect()) are never shown.
HIDDEN_SYSTEM_PATHS = ("/home", "/root", "/run", "/var/run")
# Readable by their owner, root: hidden in case benchgate itself runs as root (see README, Security).
HIDDEN_SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/ssl/private")
PRIVATE_PATHS = ("/tmp", "/var/tmp")
# The runner's directories: its work tree (every checkout and artifact of every job), its temp.
RUNNER_DIRECTORIES = ("RUNNER_WORKSPACE", "GITHUB_WORKSPACE", "RUNNER_TEMP")
# Colon-separated extra paths an administrator wants hidden too.
HIDE_ENV = "BENCHGATE_SANDBOX_HIDE"
# The history store (benchgate history): a SQLite file and its journals, or a PostgreSQL socket directory.
HISTORY_ENV = "BENCHGATE_HISTORY"
_SQLITE_URL = re.compile(r"^sqlite(\+\w+)?:///([^?]+)")
_SOCKET_HOST = re.compile(r"[?&]host=(/[^&]+)")
# Hiding one of these (or an ancestor) would leave nothing to run: such a request is ignored.
_SYSTEM_DIRECTORIES = ("/usr", "/bin", "/lib", "/etc", "/sbin")

_PRIVATE, _HIDDEN, _WRITABLE, _READ_ONLY = "private", "hidden", "writable", "read-only"


@dataclass(frozen=True)
class Mounts:
    """What one sandboxed process may read or write, or must not see, beyond the standard rules."""

    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def _inside(path: str, ancestor: str) -> bool:
    return path == ancestor or path.startswith(ancestor.rstrip("/") + "/")


def _covers_system(real: str) -> bool:
    """Whether ``real`` is ``/`` or holds a system directory: never hidden or made private."""
    return any(_inside(system, real) for system in ("/", *_SYSTEM_DIRECTORIES))


def private_home(env: Mapping[str, str]) -> str | None:
    """The sandbox's $HOME: the host's home path, made an empty private tmpfs (None when unusable)."""
    home = env.get("HOME")
    real = _real(home) if home and os.path.isabs(home) else None
    return real if real and os.path.isdir(real) and not _covers_system(real) else None


def standard_hidden(env: Mapping[str, str]) -> list[str]:
    """Paths no sandboxed process sees: homes, /run, the runner's directories, the venv, secret files."""
    hidden = [*HIDDEN_SYSTEM_PATHS, *HIDDEN_SECRET_FILES, *(env[name] for name in RUNNER_DIRECTORIES if env.get(name))]
    # A self-hosted runner's own directory (its .credentials, logs, _work): the parent of ``_work``.
    work = Path(_real(env["RUNNER_WORKSPACE"])).parent if env.get("RUNNER_WORKSPACE") else None
    if work and work.name == "_work":
        hidden.append(str(work.parent))
    if sys.prefix != sys.base_prefix:  # benchgate's own virtual environment (the action's, in a job)
        hidden.append(sys.prefix)
    hidden += [item for item in env.get(HIDE_ENV, "").split(os.pathsep) if item]
    return hidden + history_store_paths(env.get(HISTORY_ENV, ""))


def history_store_paths(url: str) -> list[str]:
    """What of the history store at ``url`` lives in the filesystem: the PR's code must not read or write it."""
    sqlite = _SQLITE_URL.match(url)
    if sqlite:
        database = sqlite.group(2)
        return [database + suffix for suffix in ("", "-journal", "-wal", "-shm")]
    return [match.group(1) for match in _SOCKET_HOST.finditer(url)]  # a unix socket's directory


def mount_args(mounts: Mounts, *, env: Mapping[str, str], home: str | None) -> list[str]:
    """bwrap's mount options after ``--ro-bind / /``: private, hidden and exposed paths, deepest last.

    A path is only mounted where that changes something (each mount costs start-up time). Hidden tmpfs
    are remounted read-only last, once everything inside is bound.
    """
    wanted: dict[str, str] = {}
    # The runner's tool cache (compilers, node, wrk) is shown even inside a hidden directory.
    tools = [env["RUNNER_TOOL_CACHE"]] if env.get("RUNNER_TOOL_CACHE") else []
    # The same path asked for twice: the later kind wins, so hiding wins over exposing, a private home over a
    # hidden /root.
    for paths, kind in (
        (tools, _READ_ONLY),
        (mounts.read_only, _READ_ONLY),
        (mounts.writable, _WRITABLE),
        (standard_hidden(env), _HIDDEN),
        (mounts.hidden, _HIDDEN),
        ((*PRIVATE_PATHS, *([home] if home else [])), _PRIVATE),
    ):
        for path in paths:
            real = _real(path)
            if kind in (_HIDDEN, _PRIVATE) and _covers_system(real):
                continue  # never hide the system itself (a misconfigured RUNNER_WORKSPACE=/, say)
            wanted[real] = kind  # realpath: absolute
    args: list[str] = []
    done: list[tuple[str, str]] = []  # (path, kind) of every mount made, shallowest first
    remount: list[str] = []
    # Shallowest first, so the most specific rule wins: a binary inside the hidden cache is readable, a cache
    # inside an exposed checkout hidden again.
    for path in sorted(wanted, key=lambda item: (item.count("/") - (item == "/"), item)):
        kind = wanted[path]
        above = next((done_kind for done_path, done_kind in reversed(done) if _inside(path, done_path)), _READ_ONLY)
        if kind == _PRIVATE:
            if not os.path.isdir(path):
                continue
            # A private directory is mounted even inside a hidden one (a home under /home): it must be writable.
            args += ["--perms", "1777" if path in PRIVATE_PATHS else "0700", "--tmpfs", path]
        elif kind == _HIDDEN:
            # Inside a private tmpfs the host's directory is invisible already; it is still mounted as an empty
            # read-only one, so a write to it fails there as it does everywhere else (not into the private tmpfs).
            if above == _HIDDEN or not os.path.lexists(path):
                continue  # already invisible, or nothing there to hide
            if os.path.isdir(path):
                args += ["--tmpfs", path]
                remount.append(path)
            else:
                args += ["--ro-bind", "/dev/null", path]
        elif not os.path.exists(path) or (kind == _READ_ONLY and above == _READ_ONLY):
            continue  # nothing to expose, or already visible read-only
        else:
            args += ["--bind" if kind == _WRITABLE else "--ro-bind", path, path]
        done.append((path, kind))
    for path in remount:
        args += ["--remount-ro", path]
    return args


def confined_env(
    env: Mapping[str, str], *, keep: Iterable[str] = (), home: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowlist of ``env`` and ``keep``'s names (no tokens, NODE_OPTIONS, LD_PRELOAD ...), then ``extra``."""
    kept = ALLOWED_ENV | set(keep)
    result = {name: value for name, value in env.items() if name in kept or name.startswith(ALLOWED_ENV_PREFIXES)}
    return {**result, "HOME": home or "/tmp", "TMPDIR": "/tmp", **(extra or {})}


def strip_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the variables that look like credentials (the unsandboxed fallback)."""
    return {name: value for name, value in env.items() if not CREDENTIAL_ENV.search(name)}


# Which bwrap to use (default: the one on PATH); tests point it at a missing or failing one.
BWRAP_ENV = "BENCHGATE_BWRAP"
# Inherited file descriptors (the benchmark IPC channel) stay open through bwrap, at the same number.
_NAMESPACES = ("user", "ipc", "pid", "net", "uts", "cgroup-try")
NAMESPACE_ARGS = (
    *(f"--unshare-{name}" for name in _NAMESPACES),
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


def _run(argv: list[str], **options) -> tuple[subprocess.CompletedProcess[str] | None, str]:
    """One probe command's result, or (None, why it could not run)."""
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL, **options
        ), ""
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, str(error)


@functools.lru_cache(maxsize=8)
def _probe(name: str) -> Sandbox:
    found = shutil.which(name)
    if found is None:
        raise _unavailable(f"bubblewrap is not installed (no {name!r} found); install it {_APT}")
    tool = os.path.realpath(found)
    completed, why = _run([tool, "--version"])
    if completed is None:
        raise _unavailable(f"{tool} --version failed ({why});")
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", completed.stdout)
    if completed.returncode != 0 or not match:
        shown = (completed.stdout or completed.stderr).strip()[:80]
        raise _unavailable(f"{tool} is not bubblewrap ('--version' printed {shown!r}); install bubblewrap {_APT}")
    version = match.group(0)
    sandbox = Sandbox(tool=tool, version=version, disable_userns=(int(match[1]), int(match[2])) >= (0, 8))
    completed, why = _run(
        sandbox.command([shutil.which("true") or "/bin/true"], "--tmpfs", "/tmp"),
        env={"PATH": os.environ.get("PATH", os.defpath)},
    )
    if completed is None or completed.returncode != 0:
        why = why or " ".join(completed.stderr.split())[:200] or f"exit status {completed.returncode}"
        raise _unavailable(
            f"bwrap {version} could not create a sandbox ({why}); enable unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1 and user.max_user_namespaces=10000; on Ubuntu 23.10+ also "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return sandbox


def probe() -> Sandbox:
    """This machine's sandbox, probed once per process; SandboxUnavailable (saying how to fix it) when there is none."""
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

    def record(self) -> dict:
        """run.json's ``sandbox`` for processes started by this confinement."""
        return self.sandbox.record() if self.sandbox else unsandboxed_record("--no-sandbox", untrusted_head=True)


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
