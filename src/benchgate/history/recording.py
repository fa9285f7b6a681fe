"""``record_run``: one run directory into the store in one transaction, a no-op for a run already there; it holds
the write lock from its first statement, so concurrent recorders queue, and a killed one is rolled back."""

from __future__ import annotations

import itertools
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
    every = (
        {"run_id": run_id, "row": number, "seq": seq, "rate": rate, "time_ns": time_ns}
        for number, row in enumerate(rows)
        for seq, (rate, time_ns) in enumerate(zip(row.rates, row.times_ns, strict=True))
    )
    while batch := list(itertools.islice(every, _BATCH)):
        connection.execute(db.samples.insert(), batch)


def _insert(connection: Connection, store: db.Store, entry: RunEntry, keep: int) -> tuple[int, bool]:
    """Inside the write transaction: the run (its id, whether new), rows, samples; then the branch's ``keep`` newest
    runs (``keep`` > 0) stay."""
    db.prepare(connection, store, write=True)
    existing = _existing(connection, entry.digest)
    if existing is not None:
        return int(existing), False
    values = {column.name: getattr(entry, column.name) for column in db.runs.c if hasattr(entry, column.name)}
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
        runs = db.runs
        branch = select(runs.c.id).where(runs.c.branch == entry.branch)
        kept = branch.order_by(runs.c.date.desc(), runs.c.id.desc()).limit(keep).scalar_subquery()
        old = [row.id for row in connection.execute(branch.where(runs.c.id.not_in(kept)))]
        for table in (db.samples, db.rows):
            connection.execute(table.delete().where(table.c.run_id.in_(old)))
        connection.execute(runs.delete().where(runs.c.id.in_(old)))
    return run_id, True


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
    """Store the run in ``run_dir`` (``read_entry``) in one transaction, a no-op when its digest is stored; InputError
    (the run), StoreUnavailable or StoreCorrupt (the store), nothing half-written."""
    entry = read_entry(Path(run_dir), commit=commit, date=date, branch=branch)
    store = db.open_store(store_url, lock_timeout=lock_timeout)
    try:
        with db.errors_translated(store):
            try:
                with store.engine.connect() as connection, connection.execution_options(**{db.WRITE: True}).begin():
                    run_id, created = _insert(connection, store, entry, keep)
            except exc.IntegrityError:
                # Another recorder committed the same run between our check and our insert.
                with store.engine.connect() as connection:
                    existing = _existing(connection, entry.digest)
                if existing is None:
                    raise
                run_id, created = int(existing), False
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
