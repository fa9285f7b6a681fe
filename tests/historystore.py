"""pytest fixtures for the history store: ``store_url`` runs a test against SQLite and against PostgreSQL.

The PostgreSQL server is the one ``.ci/run`` started (``BENCHGATE_TEST_POSTGRES``, a URL; unreachable
there is a failure, not a skip), else a throw-away cluster this session starts itself
(``pgcluster``) when Debian's binaries are installed; the PostgreSQL cases skip, with the reason, only
when no server can be started. Each test gets a database of its own, dropped afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pgcluster
import pytest

ENGINES = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server's database the tests may create databases from."""
    given = os.environ.get("BENCHGATE_TEST_POSTGRES")
    if given:
        yield given
        return
    directory = Path(tempfile.mkdtemp(prefix="benchgate-pg-"))
    directory.chmod(0o755)  # the postgres user (when the tests run as root) must reach the socket
    try:
        url = pgcluster.start(directory / "cluster")
    except (RuntimeError, OSError) as error:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"no PostgreSQL server could be started: {error}")
    try:
        yield url
    finally:
        pgcluster.stop(directory / "cluster")
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the server; dropped after the test."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # noqa: BLE001 - the server CI promised must be there
        admin.dispose()
        pytest.fail(f"the PostgreSQL server at {make_url(postgres_server).render_as_string()} is unusable: {error}")
    try:
        yield make_url(postgres_server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=ENGINES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL for an empty store, once per engine."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    return request.getfixturevalue("postgres_url")
