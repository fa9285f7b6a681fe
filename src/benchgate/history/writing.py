"""Writing one run into the store: one transaction, a no-op for a run already there.

The transaction holds the store's write lock from its first statement (SQLite ``BEGIN IMMEDIATE``, PostgreSQL
an advisory lock), so concurrent recorders run one after the other and the same run recorded twice at once
is stored once. A recorder killed mid-way leaves an uncommitted transaction, which the engine rolls back.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

from sqlalchemy import Connection, exc, select

from benchgate.history import storeschema
from benchgate.history.runentry import RowSummary, RunEntry
from benchgate.history.store import WRITE, Store, errors_translated, prepare_for_writing

_BATCH = 5000  # samples per INSERT: bounded memory for a run of a million samples


def _existing(connection: Connection, digest: str) -> int | None:
    return connection.execute(select(storeschema.runs.c.id).where(storeschema.runs.c.digest == digest)).scalar()


def _insert_run(connection: Connection, entry: RunEntry) -> int:
    values = {column.name: getattr(entry, column.name) for column in storeschema.runs.c if hasattr(entry, column.name)}
    values["recorded_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return int(connection.execute(storeschema.runs.insert().values(**values)).inserted_primary_key[0])


def _insert_rows(connection: Connection, run_id: int, rows: tuple[RowSummary, ...]) -> None:
    columns = [field.name for field in fields(RowSummary) if field.name in storeschema.rows.c]
    values = [
        {"run_id": run_id, "row": number, **{name: getattr(row, name) for name in columns}}
        for number, row in enumerate(rows)
    ]
    connection.execute(storeschema.rows.insert(), values)


def _insert_samples(connection: Connection, run_id: int, rows: tuple[RowSummary, ...]) -> None:
    batch: list[dict] = []
    for number, row in enumerate(rows):
        for seq, (rate, time_ns) in enumerate(zip(row.rates, row.times_ns, strict=True)):
            batch.append({"run_id": run_id, "row": number, "seq": seq, "rate": rate, "time_ns": time_ns})
            if len(batch) == _BATCH:
                connection.execute(storeschema.samples.insert(), batch)
                batch = []
    if batch:
        connection.execute(storeschema.samples.insert(), batch)


def _prune(connection: Connection, branch: str, keep: int) -> int:
    """Delete the branch's runs but its ``keep`` newest (by date); how many went."""
    runs = storeschema.runs
    newest = select(runs.c.id).where(runs.c.branch == branch).order_by(runs.c.date.desc(), runs.c.id.desc())
    kept = {row.id for row in connection.execute(newest.limit(keep))}
    old = [row.id for row in connection.execute(select(runs.c.id).where(runs.c.branch == branch)) if row.id not in kept]
    for table in (storeschema.samples, storeschema.rows):
        connection.execute(table.delete().where(table.c.run_id.in_(old)))
    connection.execute(runs.delete().where(runs.c.id.in_(old)))
    return len(old)


def insert_run(store: Store, entry: RunEntry, *, keep: int = 0) -> tuple[int, bool]:
    """Store ``entry`` in one transaction; (its run id, whether it was new). A stored digest is a no-op.

    ``keep`` > 0 keeps only that many runs of the entry's branch (the newest), in the same transaction.
    """
    with errors_translated(store):
        try:
            with store.engine.connect() as connection, connection.execution_options(**{WRITE: True}).begin():
                prepare_for_writing(connection, store)
                existing = _existing(connection, entry.digest)
                if existing is not None:
                    return int(existing), False
                run_id = _insert_run(connection, entry)
                _insert_rows(connection, run_id, entry.rows)
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
