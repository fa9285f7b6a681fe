"""The store: its tables (one SQLAlchemy Core definition for SQLite and PostgreSQL), the engine for a URL, the
schema version's check (another is upgraded by a writer or refused, never misread), and engine errors as one line
(StoreUnavailable, StoreCorrupt; the URL's password hidden). Writers lock first (docs/history.md). Reading: one
``Series`` per benchmark row (head sides, in date order), and main's spreads for a prior."""

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import Connection, Engine, exc
from sqlalchemy.engine import make_url

from benchgate.errors import InputError, StoreCorrupt, StoreUnavailable
from benchgate.history.model import RELEASES_BRANCH, Point, Series, SeriesKey

SCHEMA_VERSION = 1
# version -> the step that upgrades a store of that version to version + 1 (none yet: 1 is the first).
UPGRADES: dict[int, Callable[[Connection], None]] = {}

metadata = sa.MetaData()

meta = sa.Table(
    "benchgate_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(256), nullable=False),
)

# A run (``digest``: results.csv and run.json hashed, so a second record of it is a no-op), its summary per side and
# benchmark row, and every sample as results.csv held it.
runs = sa.Table(
    "benchgate_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("commit", sa.String(64), nullable=False),
    sa.Column("parent", sa.String(64)),
    sa.Column("branch", sa.String(256), nullable=False),
    sa.Column("date", sa.String(32), nullable=False),  # ISO-8601 UTC, 2026-01-02T03:04:05Z: sorts as text
    sa.Column("base_version", sa.String(64)),
    sa.Column("head_version", sa.String(64)),
    sa.Column("base_flags", sa.Text, nullable=False),
    sa.Column("head_flags", sa.Text, nullable=False),
    sa.Column("runner", sa.String(16), nullable=False),
    sa.Column("runner_facts", sa.Text, nullable=False),  # JSON: run.json's environment (the fingerprint's source)
    sa.Column("settings", sa.Text, nullable=False),  # JSON: runs, seed, schedule, selection, options
    sa.Column("source", sa.String(32), nullable=False),  # how the head was obtained: build, dist, npm, local
    sa.Column("recorded_at", sa.String(32), nullable=False),
    sa.Column("sample_count", sa.Integer, nullable=False),
    sa.UniqueConstraint("digest", name="benchgate_runs_digest"),
)
sa.Index("benchgate_runs_order", runs.c.branch, runs.c.date)

rows = sa.Table(
    "benchgate_rows",
    metadata,
    sa.Column("run_id", sa.Integer, primary_key=True),
    sa.Column("row", sa.Integer, primary_key=True),  # the row's number within the run
    sa.Column("side", sa.String(4), nullable=False),  # base or head
    sa.Column("filename", sa.String(512), nullable=False),
    sa.Column("configuration", sa.String(512), nullable=False),
    sa.Column("samples", sa.Integer, nullable=False),
    sa.Column("mean_rate", sa.Float, nullable=False),
    sa.Column("trimmed_mean", sa.Float, nullable=False),
    sa.Column("log_spread", sa.Float, nullable=False),  # standard deviation of the log rates (0 for one sample)
    sa.ForeignKeyConstraint(["run_id"], ["benchgate_runs.id"], ondelete="CASCADE"),
)
sa.Index("benchgate_rows_series", rows.c.filename, rows.c.configuration)

samples = sa.Table(
    "benchgate_samples",
    metadata,
    sa.Column("run_id", sa.Integer, primary_key=True),
    sa.Column("row", sa.Integer, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("rate", sa.Float, nullable=False),
    sa.Column("time_ns", sa.BigInteger),  # the time column in whole nanoseconds; NULL where results.csv has none
    sa.ForeignKeyConstraint(["run_id", "row"], ["benchgate_rows.run_id", "benchgate_rows.row"], ondelete="CASCADE"),
)

TABLES = (meta, runs, rows, samples)
POINT_FIELDS = [field.name for field in fields(Point)]

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
        engine = sa.create_engine(parsed, connect_args={"timeout": lock_timeout})

        # SQLAlchemy, not pysqlite, begins transactions (the documented recipe): a writer's BEGIN IMMEDIATE.
        @sa.event.listens_for(engine, "connect")
        def _connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            dbapi_connection.isolation_level = None

        @sa.event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            # Readers begin DEFERRED (a shared lock when they read), so they never hold up a writer's queue.
            connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")

        return Store(engine, shown, path)
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")  # the driver benchgate installs
        arguments = {"connect_timeout": CONNECT_TIMEOUT, "options": f"-c lock_timeout={int(lock_timeout * 1000)}"}
        try:
            engine = sa.create_engine(parsed, connect_args=arguments)
        except (exc.NoSuchModuleError, ModuleNotFoundError) as error:
            raise InputError(f"{shown}: no driver for this URL: {error}") from None
        return Store(engine, shown, None)
    raise InputError(f"{shown}: the history store must be sqlite:///FILE or postgresql+psycopg://...")


def _translated(error: exc.SQLAlchemyError, shown: str) -> StoreUnavailable | StoreCorrupt:
    """An engine error as a one-line benchgate error, by its first line."""
    original = getattr(error, "orig", None) or error
    reason = next((line.strip() for line in str(original).splitlines() if line.strip()), type(original).__name__)
    lowered = reason.lower()
    if "locked" in lowered or "lock timeout" in lowered or "could not obtain lock" in lowered:
        return StoreUnavailable(f"the store is locked by another writer and stayed locked: {reason}", where=shown)
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreCorrupt(f"the store is damaged or not a database: {reason}", where=shown)
    if isinstance(error, exc.OperationalError | exc.InterfaceError) or "connect" in lowered:
        return StoreUnavailable(f"cannot reach the store: {reason}", where=shown)
    if isinstance(error, exc.DatabaseError):
        return StoreCorrupt(f"the store does not hold what benchgate wrote: {reason}", where=shown)
    return StoreUnavailable(reason, where=shown)


def prepare(connection: Connection, store: Store, *, write: bool) -> bool:
    """Check the schema (a writer creates or upgrades it); whether benchgate's tables are there (False: empty)."""
    if write and store.sqlite_path is None:
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_KEY})
    tables = set(sa.inspect(connection).get_table_names())
    if not tables & {table.name for table in TABLES}:
        if tables and store.sqlite_path is not None:
            others = ", ".join(sorted(tables)[:5])
            raise StoreCorrupt(f"not a benchgate history store (it has other tables: {others})", where=store.shown)
        if write:
            metadata.create_all(connection)
            connection.execute(meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
        return write
    if meta.name not in tables:
        raise StoreCorrupt("a benchgate store without its version table", where=store.shown)
    value = connection.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    if value is None or not str(value).isdigit():
        raise StoreCorrupt(f"the store's schema version is {value!r}, not a number", where=store.shown)
    version, problem = int(value), None
    if version > SCHEMA_VERSION:
        problem = f"written by a newer benchgate (schema {version}; this one reads up to {SCHEMA_VERSION}): upgrade"
        problem += " benchgate"
    elif any(step not in UPGRADES for step in range(version, SCHEMA_VERSION)):
        problem = f"schema {version} is older than this benchgate can upgrade (it reads {SCHEMA_VERSION}); "
        problem += "record into a new store"
    elif version < SCHEMA_VERSION and not write:
        problem = f"schema {version} needs an upgrade to {SCHEMA_VERSION}: record a run with this benchgate first"
    if problem is not None:
        raise StoreCorrupt(problem, where=store.shown)
    if version < SCHEMA_VERSION:
        for step in range(version, SCHEMA_VERSION):
            UPGRADES[step](connection)
        connection.execute(meta.update().where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
    return True


@contextlib.contextmanager
def transaction(
    store_url: str, *, write: bool = False, lock_timeout: float = LOCK_TIMEOUT
) -> Iterator[tuple[Connection | None, Store]]:
    """One transaction on the store at ``store_url`` (a writer's holds the lock from its start), its schema checked
    (a writer creates or upgrades it), errors as one line; the connection (None: nothing recorded yet) and store."""
    store = open_store(store_url, lock_timeout=lock_timeout, must_exist=not write)
    try:
        with store.engine.connect() as connection, connection.execution_options(**{WRITE: write}).begin():
            yield (connection if prepare(connection, store, write=write) else None), store
    except exc.SQLAlchemyError as error:  # the transaction is rolled back
        raise _translated(error, store.shown) from None
    finally:
        store.engine.dispose()


def series(
    store_url: str,
    filter: str | None = None,
    *,
    branch: str | None = None,
    files: Iterable[str] | None = None,
    runner: str | None = None,
    node_flags: str | None = None,
) -> list[Series]:
    """Every series whose ``filename configuration`` contains ``filter``, of ``branch``'s runs (of ``files``,
    ``runner`` and ``node_flags`` only): a point per head side, in date order, and on ``releases`` a run's base
    release too when it is no point yet (the oldest one)."""
    columns = ("head_flags", "runner", "branch", "commit", "parent", "date", "base_version")
    query = sa.select(rows, *(runs.c[name] for name in columns), runs.c.head_version.label("node_version"))
    release_base = (
        (runs.c.branch == RELEASES_BRANCH) & runs.c.parent.is_not(None) & (runs.c.base_flags == runs.c.head_flags)
    )
    query = query.where((rows.c.side == "head") | release_base)
    if filter:
        query = query.where((rows.c.filename + " " + rows.c.configuration).contains(filter, autoescape=True))
    for column, value in (("branch", branch), ("runner", runner), ("head_flags", node_flags)):
        if value is not None:  # filtered in SQL: a run's prior reads its own runner's and flags' rows only
            query = query.where(runs.c[column] == value)
    if files is not None:
        query = query.where(rows.c.filename.in_(sorted(set(files))))
    query = query.join(runs, runs.c.id == rows.c.run_id).order_by(runs.c.date, runs.c.id, rows.c.side)
    points: dict[SeriesKey, list[Point]] = {}
    with transaction(store_url) as (connection, _):
        stored = connection.execute(query).all() if connection else []
    for row in stored:
        key = SeriesKey(row.filename, row.configuration, row.head_flags, row.runner, row.branch)
        mine = points.setdefault(key, [])
        point = {name: row._mapping[name] for name in POINT_FIELDS}
        point.update(run_id=str(row.run_id), node_version=row.node_version or "")
        if row.side == "base":  # a release measured only as a base (the oldest): its series' first point
            if any(earlier.commit == row.parent for earlier in mine):
                continue
            point.update(commit=row.parent, parent=None, node_version=row.base_version or "")
        mine.append(Point(**point))
    return [Series(key, tuple(found)) for key, found in sorted(points.items())]


def main_spreads(
    store_url: str, files: Iterable[str], *, runner: str, node_flags: str
) -> dict[tuple[str, str], list[float]]:
    """Per row of ``files``, the ``log_spread`` of each matching run of main, oldest first (a prior's input)."""
    mine = series(store_url, branch="main", files=files, runner=runner, node_flags=node_flags)
    return {(one.key.filename, one.key.configuration): [point.log_spread for point in one.points] for one in mine}
