"""Reading what a sandboxed process wrote, from outside the sandbox, without being led out of its tree.

A hostile build controls every file in its worktree: its "binary" may be a symlink to the
trusted base binary in the cache, to a secret, a FIFO that blocks the reader, or sit under a
directory that is a symlink to ``/``. Outside the sandbox such a path would be followed with
benchgate's own access. So: the path is resolved and must stay inside the tree, and the file
is opened without following a last symlink, without blocking, and must be a regular file.
By then every process of the sandbox is gone (its PID namespace ended), so nothing can swap
the file between the check and the copy.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path


class UnsafePath(ValueError):
    """A path a sandboxed process left that benchgate will not read (the message says why)."""


def contained_path(root: Path, relative: str | Path) -> Path:
    """``root / relative`` with every symlink resolved; UnsafePath when that leads outside ``root``."""
    real_root = os.path.realpath(root)
    target = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, target]) != real_root:
        raise UnsafePath(f"{relative} leads outside its tree (to {target})")
    return Path(target)


def _open_regular(root: Path, relative: str | Path) -> tuple[int, os.stat_result]:
    target = contained_path(root, relative)
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
    executable = status.st_mode & 0o111
    os.chmod(destination, 0o755 if executable else 0o644)
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
