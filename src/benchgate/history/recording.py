"""``record_run``: one run directory into the store in one transaction, a no-op for a run already there.

The transaction holds the store's write lock from its first statement, so concurrent recorders run one after the
other and the same run recorded twice at once is stored once; a recorder killed mid-way is rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, exc, select

from benchgate.history import store as db
from benchgate.history.runentry import RowSummary, RunEntry, read_entry

_BATCH = 5000  # samples per INSERT: bounded memory for a run of a million samples


@dataclass(frozen=True)
class RecordResult:
    """What a record did: the run's id in the store, and whether it was new (False: already stored)."""

    run_id: int
    created: bool
    commit: str
    branch: str
    date: str
    rows: int  # head-side benchmark rows: the points this run adds to its series
    samples: int
    store: str  # the store's URL, password hidden

    def describe(self) -> str:
        """One line for the terminal."""
        what = "recorded" if self.created else "already recorded (nothing written)"
        return (
            f"{what}: run {self.run_id}, commit {self.commit[:12]} on {self.branch} at {self.date}, "
            f"{self.rows} rows, {self.samples} samples, in {self.store}"
        )


def _existing(connection: Connection, digest: str) -> int | None:
    return connection.execute(select(db.runs.c.id).where(db.runs.c.digest == digest)).scalar()


def _insert_samples(connection: Connection, run_id: int, rows: tuple[RowSummary, ...]) -> None:
    batch: list[dict] = []
    for number, row in enumerate(rows):
        for seq, (rate, time_ns) in enumerate(zip(row.rates, row.times_ns, strict=True)):
            batch.append({"run_id": run_id, "row": number, "seq": seq, "rate": rate, "time_ns": time_ns})
            if len(batch) == _BATCH:
                connection.execute(db.samples.insert(), batch)
                batch = []
    if batch:
        connection.execute(db.samples.insert(), batch)


def _prune(connection: Connection, branch: str, keep: int) -> None:
    """Delete the branch's runs but its ``keep`` newest (by date)."""
    newest = select(db.runs.c.id).where(db.runs.c.branch == branch)
    kept = newest.order_by(db.runs.c.date.desc(), db.runs.c.id.desc()).limit(keep)
    old = [row.id for row in connection.execute(newest.where(db.runs.c.id.not_in(kept.scalar_subquery())))]
    for table in (db.samples, db.rows):
        connection.execute(table.delete().where(table.c.run_id.in_(old)))
    connection.execute(db.runs.delete().where(db.runs.c.id.in_(old)))


def insert_run(store: db.Store, entry: RunEntry, *, keep: int = 0) -> tuple[int, bool]:
    """Store ``entry`` in one transaction (``keep`` > 0: then only the branch's newest ``keep`` runs stay there);
    its run id and whether it was new (a stored digest is a no-op)."""
    with db.errors_translated(store):
        try:
            with store.engine.connect() as connection, connection.execution_options(**{db.WRITE: True}).begin():
                db.prepare(connection, store, write=True)
                existing = _existing(connection, entry.digest)
                if existing is not None:
                    return int(existing), False
                values = {
                    column.name: getattr(entry, column.name) for column in db.runs.c if hasattr(entry, column.name)
                }
                values["recorded_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                run_id = int(connection.execute(db.runs.insert().values(**values)).inserted_primary_key[0])
                columns = [field.name for field in fields(RowSummary) if field.name in db.rows.c]
                summaries = [
                    {"run_id": run_id, "row": number, **{name: getattr(row, name) for name in columns}}
                    for number, row in enumerate(entry.rows)
                ]
                connection.execute(db.rows.insert(), summaries)
                _insert_samples(connection, run_id, entry.rows)
                if keep > 0:
                    _prune(connection, entry.branch, keep)
                return run_id, True
        except exc.IntegrityError:
            # Another recorder committed the same run between our check and our insert.
            with store.engine.connect() as connection:
                existing = _existing(connection, entry.digest)
            if existing is None:
                raise
            return int(existing), False


def record_run(
    run_dir: Path,
    store_url: str,
    *,
    commit: str | None = None,
    date: str | None = None,
    branch: str | None = None,
    keep: int = 0,
    lock_timeout: float = db.LOCK_TIMEOUT,
) -> RecordResult:
    """Store the run in ``run_dir`` (``read_entry``) with ``insert_run``; InputError (the run), StoreUnavailable or
    StoreCorrupt (the store), nothing half-written."""
    entry = read_entry(Path(run_dir), commit=commit, date=date, branch=branch)
    store = db.open_store(store_url, lock_timeout=lock_timeout)
    try:
        run_id, created = insert_run(store, entry, keep=keep)
    finally:
        store.engine.dispose()
    return RecordResult(
        run_id=run_id,
        created=created,
        commit=entry.commit,
        branch=entry.branch,
        date=entry.date,
        rows=sum(1 for row in entry.rows if row.side == "head"),
        samples=entry.sample_count,
        store=store.shown,
    )
