"""A throw-away PostgreSQL cluster (initdb + pg_ctl) on a unix socket in a temporary directory.

Used by ``.ci/run`` (``python3 tests/pgcluster.py start DIR`` prints the URL, ``stop DIR`` stops it)
and by the ``postgres_url`` fixture when CI did not export ``BENCHGATE_TEST_POSTGRES``, so a developer
with Debian's ``postgresql`` package gets the PostgreSQL tests too. PostgreSQL refuses to run as root:
as root the cluster belongs to the ``postgres`` user the package creates. Standard library only.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

DATABASE = "benchgate"


def binaries() -> Path | None:
    """The directory holding initdb and pg_ctl (Debian keeps them out of PATH), or None."""
    on_path = shutil.which("initdb")
    if on_path:
        resolved = Path(on_path).resolve().parent  # Debian links initdb into PATH, but not createdb
        if (resolved / "pg_ctl").exists() and (resolved / "createdb").exists():
            return resolved
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _as_owner(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def url(directory: Path) -> str:
    """The SQLAlchemy URL of the cluster in ``directory``."""
    return f"postgresql+psycopg://postgres@/{DATABASE}?host={directory / 'socket'}"


def start(directory: Path) -> str:
    """Create and start a cluster in ``directory``; returns its URL. Raises RuntimeError when it cannot."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL binaries (Debian package postgresql)")
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError("running as root and there is no postgres user to run the server") from None
    directory.mkdir(parents=True, exist_ok=True)
    data, socket = directory / "data", directory / "socket"
    socket.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        for path in (directory, socket):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    steps = [
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(directory / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses='' -c unix_socket_directories={socket} -c fsync=off -c max_connections=40",
            "start",
        ],
        [str(bin_dir / "createdb"), "-h", str(socket), "-U", "postgres", DATABASE],
    ]
    for step in steps:
        completed = subprocess.run(_as_owner(step), capture_output=True, text=True, timeout=120, cwd="/")
        if completed.returncode != 0:
            tail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"{Path(step[0]).name} failed: {tail[0]}")
    return url(directory)


def stop(directory: Path) -> None:
    """Stop the cluster in ``directory`` (immediately: it is thrown away) if it runs."""
    bin_dir = binaries()
    if bin_dir is None or not (directory / "data" / "postmaster.pid").exists():
        return
    command = [str(bin_dir / "pg_ctl"), "-D", str(directory / "data"), "-m", "immediate", "-w", "stop"]
    subprocess.run(_as_owner(command), capture_output=True, timeout=120, cwd="/")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit("usage: pgcluster.py start|stop DIR")
    target = Path(sys.argv[2]).resolve()
    if sys.argv[1] == "stop":
        stop(target)
        sys.exit(0)
    try:
        print(start(target))
    except RuntimeError as error:
        sys.exit(f"pgcluster: {error}")
