"""``record_run``: one run directory into the store, for ``benchgate history record`` and ``benchgate versions``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchgate.history.runentry import read_entry
from benchgate.history.store import LOCK_TIMEOUT, open_store
from benchgate.history.writing import insert_run


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


def record_run(
    run_dir: Path,
    store_url: str,
    *,
    commit: str | None = None,
    date: str | None = None,
    branch: str | None = None,
    keep: int = 0,
    lock_timeout: float = LOCK_TIMEOUT,
) -> RecordResult:
    """Store the run in ``run_dir`` (results.csv + run.json of `benchgate run`) in one transaction.

    ``commit``, ``date`` and ``branch`` default to run.json's (``read_entry``); a pull request's head is refused
    unless ``branch`` is given. A run already stored is a no-op. ``keep`` > 0 keeps the branch's newest ``keep``
    runs. Raises InputError (the run), StoreUnavailable or StoreCorrupt (the store); nothing half-written.
    """
    entry = read_entry(Path(run_dir), commit=commit, date=date, branch=branch)
    store = open_store(store_url, lock_timeout=lock_timeout)
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
