"""The storage adapter: a SQLAlchemy engine for a store URL, its schema check, and one-line errors.

SQLite by default (a file on the runner), PostgreSQL by URL (``postgresql+psycopg://...``) for runners
that share one. Writes run in one transaction each: SQLite's starts with ``BEGIN IMMEDIATE`` (the
writer takes the file's lock before reading, so two recorders queue instead of failing half-way),
PostgreSQL's takes a transaction-scoped advisory lock before creating the schema. Everything the
engine raises becomes ``StoreUnavailable`` (unreachable, locked) or ``StoreCorrupt`` (not a store,
damaged, another schema) with the URL's password hidden. The analysis never imports this module's
engine details: it reads ``Series`` (``benchgate.history.reading``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, exc, inspect, select, text
from sqlalchemy.engine import make_url

from benchgate.errors import InputError, StoreCorrupt, StoreUnavailable
from benchgate.history import storeschema

LOCK_TIMEOUT = 30.0  # seconds a writer waits for another writer's lock before giving up
CONNECT_TIMEOUT = 10  # seconds to reach a PostgreSQL server
_ADVISORY_KEY = 0x6265_6E63_6867  # "benchg": serializes schema creation on a shared PostgreSQL


@dataclass(frozen=True)
class Store:
    """An open store: its engine and the URL to show (password hidden)."""

    engine: Engine
    shown: str
    sqlite_path: Path | None  # the file of a SQLite store, None for a server


WRITE = "benchgate_write"  # the execution option that marks a connection as a writer's


def _sqlite_immediate(engine: Engine) -> None:
    """Let SQLAlchemy, not pysqlite, begin transactions (the documented recipe); a writer's begin IMMEDIATE."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # Readers begin DEFERRED (a shared lock when they read), so they never hold up a writer's queue.
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")


def open_store(url: str, *, lock_timeout: float = LOCK_TIMEOUT, must_exist: bool = False) -> Store:
    """The store at ``url``; ``must_exist`` (readers) refuses a SQLite file that is not there yet."""
    try:
        parsed = make_url(url)
    except exc.ArgumentError:
        raise InputError(f"not a database URL: {url[:80]!r} (sqlite:///FILE or postgresql+psycopg://...)") from None
    shown = parsed.render_as_string(hide_password=True)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            raise InputError(f"{shown}: a SQLite store must be a file (sqlite:///path/to/history.db)")
        path = Path(database)
        if must_exist and not path.is_file():
            raise StoreUnavailable("no history store here (nothing has been recorded yet)", where=shown)
        if not path.parent.is_dir():
            raise StoreUnavailable(f"the directory {str(path.parent)!r} does not exist", where=shown)
        engine = create_engine(parsed, connect_args={"timeout": lock_timeout})
        _sqlite_immediate(engine)
        return Store(engine, shown, path)
    if backend == "postgresql":
        if parsed.get_driver_name() in ("psycopg2", "default") and parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")  # the driver benchgate installs
        try:
            engine = create_engine(
                parsed,
                connect_args={
                    "connect_timeout": CONNECT_TIMEOUT,
                    "options": f"-c lock_timeout={int(lock_timeout * 1000)}",
                },
            )
        except (exc.NoSuchModuleError, ModuleNotFoundError) as error:
            raise InputError(f"{shown}: no driver for this URL: {error}") from None
        return Store(engine, shown, None)
    raise InputError(f"{shown}: the history store must be sqlite:///FILE or postgresql+psycopg://...")


def _first_line(error: BaseException) -> str:
    original = getattr(error, "orig", None) or error
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    return lines[0] if lines else type(original).__name__


def translate(store: Store, error: exc.SQLAlchemyError) -> Exception:
    """The one-line error for what the engine raised."""
    reason = _first_line(error)
    lowered = reason.lower()
    if "locked" in lowered or "lock timeout" in lowered or "could not obtain lock" in lowered:
        return StoreUnavailable(f"the store is locked by another writer and stayed locked: {reason}", where=store.shown)
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreCorrupt(f"the store is damaged or not a database: {reason}", where=store.shown)
    if isinstance(error, exc.OperationalError | exc.InterfaceError) or "connect" in lowered:
        return StoreUnavailable(f"cannot reach the store: {reason}", where=store.shown)
    if isinstance(error, exc.DatabaseError):
        return StoreCorrupt(f"the store does not hold what benchgate wrote: {reason}", where=store.shown)
    return StoreUnavailable(reason, where=store.shown)


@contextlib.contextmanager
def errors_translated(store: Store) -> Iterator[None]:
    """Engine errors out of the block as one-line benchgate errors; the transaction, if any, rolled back."""
    try:
        yield
    except exc.SQLAlchemyError as error:
        raise translate(store, error) from None


def _stored_version(connection: Connection, store: Store) -> int | None:
    """The schema version in ``meta``; None for an empty database; refuses a database that is something else."""
    tables = set(inspect(connection).get_table_names())
    ours = {table.name for table in storeschema.TABLES}
    if not tables & ours:
        if tables and store.sqlite_path is not None:
            others = ", ".join(sorted(tables)[:5])
            raise StoreCorrupt(f"not a benchgate history store (it has other tables: {others})", where=store.shown)
        return None
    if storeschema.meta.name not in tables:
        raise StoreCorrupt("a benchgate store without its version table", where=store.shown)
    value = connection.execute(
        select(storeschema.meta.c.value).where(storeschema.meta.c.key == "schema_version")
    ).scalar()
    if value is None or not str(value).isdigit():
        raise StoreCorrupt(f"the store's schema version is {value!r}, not a number", where=store.shown)
    return int(value)


def check_version(connection: Connection, store: Store, version: int | None, *, upgrade: bool) -> None:
    """Refuse a store this benchgate cannot read; with ``upgrade`` (writers), upgrade an older one in place."""
    if version is None or version == storeschema.SCHEMA_VERSION:
        return
    if version > storeschema.SCHEMA_VERSION:
        raise StoreCorrupt(
            f"written by a newer benchgate (schema {version}; this one reads up to {storeschema.SCHEMA_VERSION}): "
            "upgrade benchgate",
            where=store.shown,
        )
    missing = [step for step in range(version, storeschema.SCHEMA_VERSION) if step not in storeschema.UPGRADES]
    if missing:
        raise StoreCorrupt(
            f"schema {version} is older than this benchgate can upgrade (it reads {storeschema.SCHEMA_VERSION}); "
            "record into a new store",
            where=store.shown,
        )
    if not upgrade:
        raise StoreCorrupt(
            f"schema {version} needs an upgrade to {storeschema.SCHEMA_VERSION}: "
            "record a run with this benchgate first",
            where=store.shown,
        )
    for step in range(version, storeschema.SCHEMA_VERSION):
        storeschema.UPGRADES[step](connection)
    connection.execute(
        storeschema.meta.update()
        .where(storeschema.meta.c.key == "schema_version")
        .values(value=str(storeschema.SCHEMA_VERSION))
    )


def prepare_for_writing(connection: Connection, store: Store) -> None:
    """Inside a write transaction: create the schema in an empty store, or check (and upgrade) the one there."""
    if store.sqlite_path is None:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_KEY})
    version = _stored_version(connection, store)
    check_version(connection, store, version, upgrade=True)
    if version is None:
        storeschema.metadata.create_all(connection)
        connection.execute(
            storeschema.meta.insert().values(key="schema_version", value=str(storeschema.SCHEMA_VERSION))
        )


def check_for_reading(connection: Connection, store: Store) -> bool:
    """Whether the store holds benchgate's tables (False: an empty database); refuses what cannot be read."""
    version = _stored_version(connection, store)
    check_version(connection, store, version, upgrade=False)
    return version is not None
