"""The history store stays outside the sandbox: a PR's code can neither read nor write the SQLite file
(nor its journal) nor reach a PostgreSQL socket that $BENCHGATE_HISTORY names, and never gets the URL."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import rundirs
from sandboxing import fresh_probe, needs_bwrap  # noqa: F401 - fresh_probe is a fixture

from benchgate import sandbox
from benchgate.history.recording import record_run
from benchgate.history.store import series
from benchgate.sandbox import Confinement, Mounts, history_store_paths, strip_credentials


def _confined(script: str, env: dict[str, str], exposed: Path) -> subprocess.CompletedProcess:
    """``script`` in the sandbox, with ``exposed`` bound in writable (as a build's own worktree is)."""
    mounts = Mounts(writable=(exposed,))
    argv, child_env = Confinement(sandbox.probe(), mounts).wrap(["sh", "-c", script], cwd=Path("/"), env=env)
    return subprocess.run(argv, env=child_env, capture_output=True, text=True, timeout=60)


def test_the_store_paths_of_a_url():
    assert history_store_paths("sqlite:////srv/history/h.db") == [
        "/srv/history/h.db",
        "/srv/history/h.db-journal",
        "/srv/history/h.db-wal",
        "/srv/history/h.db-shm",
    ]
    assert history_store_paths("postgresql+psycopg://u@/db?host=/srv/pg&sslmode=disable") == ["/srv/pg"]
    assert history_store_paths("postgresql+psycopg://u:pw@db.example:5432/db") == []  # the network is unshared
    assert "BENCHGATE_HISTORY" not in strip_credentials({"BENCHGATE_HISTORY": "postgresql://u:pw@h/db", "A": "1"})


@needs_bwrap
def test_a_sandboxed_process_cannot_read_or_write_the_store(tmp_path):
    # The store sits in a directory the sandbox exposes writable, so only the store's own rule hides it
    # (under /tmp, a home or the clone's directory it would be hidden anyway: the sandbox's /tmp is private).
    visible_dir = tmp_path / "exposed"
    visible_dir.mkdir()
    store = visible_dir / "history.db"
    url = f"sqlite:///{store}"
    record_run(rundirs.write_run(tmp_path / "run", rundirs.REGRESSION), url)
    socket_dir = visible_dir / "pgsocket"
    socket_dir.mkdir()
    (socket_dir / ".s.PGSQL.5432").write_text("stand-in")
    before = store.read_bytes()
    control = _confined(f"wc -c < {store}; ls -A {socket_dir} | wc -l", dict(os.environ), visible_dir)
    assert control.stdout.split() == [str(len(before)), "1"], control  # without the variable both are shown
    env = {**os.environ, "BENCHGATE_HISTORY": url}
    seen = _confined(
        f'(wc -c < {store}) 2>/dev/null || echo unreadable; echo "url=$BENCHGATE_HISTORY"; '
        f"(echo x >> {store}) 2>/dev/null && echo wrote",
        env,
        visible_dir,
    )
    assert seen.stdout.split() in (["unreadable", "url="], ["0", "url="]), seen  # no data, no URL, no write
    env = {**os.environ, "BENCHGATE_HISTORY": f"postgresql+psycopg://u@/db?host={socket_dir}"}
    assert _confined(f"ls -A {socket_dir} | wc -l", env, visible_dir).stdout.split() == ["0"]
    assert store.read_bytes() == before and len(series(url)) == 3
