"""bubblewrap (``bwrap``): probing it once, and the command line that confines one untrusted process.

Every process that runs code from an untrusted head starts as::

    bwrap --unshare-user --unshare-ipc --unshare-pid --unshare-net --unshare-uts --unshare-cgroup-try
          --die-with-parent --new-session --cap-drop ALL --disable-userns
          --ro-bind / / --dev /dev --proc /proc  [policy.mount_args: private, hidden, exposed paths]
          --chdir CWD -- ARGV...

with the environment from ``policy.confined_env``. Why each flag: README ("Security") and
``/work/notes/sandbox.md``. Inherited file descriptors (the benchmark IPC channel) stay open
through bwrap, at the same number.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.errors import InputError
from benchgate.sandbox.policy import Mounts, confined_env, mount_args, private_home, strip_credentials

# Which bwrap to use (default: the one on PATH); tests point it at a missing or failing one.
BWRAP_ENV = "BENCHGATE_BWRAP"
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
_FIX = "or pass --no-sandbox to run the pull request's code without isolation"


class SandboxUnavailable(InputError):
    """No sandbox can be made here: untrusted code is refused (exit 2) unless --no-sandbox."""


@dataclass(frozen=True)
class Sandbox:
    """A bwrap that was seen to create a sandbox on this machine."""

    tool: str  # absolute path of the bwrap executable
    version: str  # e.g. "0.8.0"
    disable_userns: bool = True  # bwrap >= 0.8: no further user namespaces inside

    def namespace_args(self) -> list[str]:
        return [*NAMESPACE_ARGS, *(["--disable-userns"] if self.disable_userns else [])]

    def command(
        self, argv: Sequence[str], *, mounts: Mounts, cwd: Path, env: Mapping[str, str], home: str | None
    ) -> list[str]:
        """bwrap's command line running ``argv`` in ``cwd`` with ``mounts`` (``home``: ``private_home(env)``)."""
        return [
            self.tool,
            *self.namespace_args(),
            *_BASE_MOUNTS,
            *mount_args(mounts, env=env, home=home),
            "--chdir",
            os.path.realpath(cwd),
            "--",
            *argv,
        ]

    def record(self) -> dict:
        """How run.json and the build record say that the untrusted code was sandboxed."""
        return {"used": True, "untrusted_head": True, "tool": "bwrap", "version": self.version}


def unsandboxed_record(reason: str, *, untrusted_head: bool) -> dict:
    """run.json's ``sandbox`` of a run whose head ran without it: trusted, or ``--no-sandbox``."""
    return {"used": False, "untrusted_head": untrusted_head, "reason": reason}


def _version(tool: str) -> str:
    try:
        completed = subprocess.run(
            [tool, "--version"], capture_output=True, text=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        message = f"cannot sandbox the untrusted head: {tool} --version failed ({error}); {_FIX}"
        raise SandboxUnavailable(message) from None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", completed.stdout)
    if completed.returncode != 0 or not match:
        shown = (completed.stdout or completed.stderr).strip()[:80]
        raise SandboxUnavailable(
            f"cannot sandbox the untrusted head: {tool} is not bubblewrap ('--version' printed {shown!r}); "
            f"install bubblewrap (apt-get install bubblewrap) {_FIX}"
        )
    return match.group(0)


@functools.lru_cache(maxsize=8)
def _probe(name: str) -> Sandbox:
    tool = shutil.which(name)
    if tool is None:
        raise SandboxUnavailable(
            f"cannot sandbox the untrusted head: bubblewrap is not installed (no {name!r} found); "
            f"install it (apt-get install bubblewrap) {_FIX}"
        )
    tool = os.path.realpath(tool)
    version = _version(tool)
    major, minor = (int(part) for part in version.split(".")[:2])
    sandbox = Sandbox(tool=tool, version=version, disable_userns=(major, minor) >= (0, 8))
    true = shutil.which("true") or "/bin/true"
    argv = [tool, *sandbox.namespace_args(), *_BASE_MOUNTS, "--tmpfs", "/tmp", "--", true]
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    try:
        completed = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL, env=env
        )
        failed = completed.returncode != 0
        why = " ".join(completed.stderr.split())[:200] or f"exit status {completed.returncode}"
    except (OSError, subprocess.TimeoutExpired) as error:
        failed, why = True, str(error)
    if failed:
        raise SandboxUnavailable(
            f"cannot sandbox the untrusted head: bwrap {version} could not create a sandbox ({why}); "
            "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and "
            "user.max_user_namespaces=10000; on Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0) "
            + _FIX
        )
    return sandbox


def probe() -> Sandbox:
    """The sandbox of this machine, probed once per process with a trivial ``bwrap ... true``.

    Raises SandboxUnavailable (exit 2, one line saying how to fix it) when bwrap is missing
    or cannot create namespaces here (user namespaces disabled, a container without them).
    """
    return _probe(os.environ.get(BWRAP_ENV) or "bwrap")


@dataclass(frozen=True)
class Confinement:
    """How one kind of untrusted process starts: in ``sandbox``, or (None: --no-sandbox) only without credentials.

    ``keep_env`` names variables that pass the allowlist (the build's CC, CFLAGS, CCACHE_*);
    ``extra_env`` is set inside the sandbox whatever the host's environment says.
    """

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
        command = self.sandbox.command(argv, mounts=self.mounts, cwd=cwd, env=env, home=home)
        return command, confined_env(env, keep=self.keep_env, home=home, extra=extra)

    def record(self, reason: str = "--no-sandbox") -> dict:
        """run.json's ``sandbox`` for processes started by this confinement."""
        if self.sandbox is None:
            return unsandboxed_record(reason, untrusted_head=True)
        return self.sandbox.record()
