"""What a sandboxed process sees: ``/`` read-only, with private, hidden and exposed paths (docs/security.md).

Mounts go from the shallowest path to the deepest, so the most specific rule wins: a binary inside the hidden
cache is readable, a cache inside an exposed checkout hidden again. Environment variables pass an allowlist.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

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
# The same path asked for twice: hiding wins over exposing, a private home over a hidden /root.
_PRECEDENCE = {_PRIVATE: 4, _HIDDEN: 3, _WRITABLE: 2, _READ_ONLY: 1}


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
            if not os.path.isabs(real) or _PRECEDENCE[kind] <= _PRECEDENCE.get(wanted.get(real, ""), 0):
                continue
            if kind in (_HIDDEN, _PRIVATE) and _covers_system(real):
                continue  # never hide the system itself (a misconfigured RUNNER_WORKSPACE=/, say)
            wanted[real] = kind
    args: list[str] = []
    done: list[tuple[str, str]] = []  # (path, kind) of every mount made, shallowest first
    remount: list[str] = []
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
