"""``record_run``: one run directory into the store in one transaction, a no-op for a run already there (its digest);
it holds the write lock from its first statement, so concurrent recorders queue, and a killed one is rolled back.
The run is read through ``benchgate.results`` (untrusted: every field checked), refused unless a trusted measurement.
``release_series``: ``benchgate versions``' steps recorded into a scratch store and read back as its release series,
a change point where a step's compare.R test starred the row (its improvement, confidence 1 - p)."""

import hashlib
import json
import math
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sqlalchemy import Connection, select

from benchgate.errors import InputError
from benchgate.history import store as db
from benchgate.history.model import RELEASES_BRANCH, ChangePoint, Series, digest
from benchgate.results import rundirs, runrecord

_RELEASE_SOURCES = ("dist", "npm")
_FINGERPRINT_FACTS = ("cpu_model", "cpu_count", "governor")
_SETTINGS = ("runs", "seed", "schedule", "selection", "options", "design")
_FULL_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_COMMIT = re.compile(r"^([0-9a-f]{7,64}|v?[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]{0,40})$")
TRIM = 0.2
KEYS = ["side", "filename", "configuration"]  # a summary per side and benchmark row
_BATCH = 5000  # samples per INSERT: bounded memory for a run of a million samples


@dataclass(frozen=True)
class RunEntry:
    """Everything the store keeps of one run, by column: its ``benchgate_runs`` values (not ``id`` and
    ``recorded_at``, known when stored), its ``benchgate_rows`` and ``benchgate_samples`` (not ``run_id``)."""

    values: dict[str, Any]
    rows: tuple[dict[str, Any], ...]  # the row's number is its position
    samples: pd.DataFrame  # row, seq, rate, time_ns


def iso_date(value: str, where: str) -> str:
    """An ISO-8601 date or time as UTC ``YYYY-MM-DDTHH:MM:SSZ`` (a date alone is its midnight, UTC)."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"not an ISO-8601 date: {value[:40]!r}", where=where) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def runner_fingerprint(environment: dict[str, Any]) -> str:
    """A short id of the runner: same CPU model, CPU count and governor, same id."""
    return digest("|".join(str(environment.get(name, "unknown")) for name in _FINGERPRINT_FACTS))


def summarize(samples: pd.DataFrame) -> tuple[tuple[dict[str, Any], ...], pd.DataFrame]:
    """Per side and row (in results.csv's order): count, mean rate, 20 %-trimmed mean, spread of log rates; and the
    samples numbered by that row (``row``) and within it (``seq``). The reader has checked every rate is positive."""
    rates = samples["rate"].astype(float)
    groups = samples.assign(rate=rates, log=np.log(rates)).groupby(KEYS, sort=False, observed=True)
    summaries = groups.agg(
        samples=("rate", "size"),
        mean_rate=("rate", "mean"),
        trimmed_mean=("rate", lambda group: stats.trim_mean(group, TRIM)),
        log_spread=("log", "std"),  # NaN for one sample: 0
    )
    rows = summaries.fillna({"log_spread": 0.0}).reset_index().astype({key: str for key in KEYS})
    numbered = {"row": groups.ngroup(), "seq": groups.cumcount(), "rate": rates}
    return tuple(rows.to_dict("records")), pd.DataFrame({**numbered, "time_ns": samples["time_ns"]})


def read_entry(
    run_dir: Path, *, commit: str | None = None, date: str | None = None, branch: str | None = None
) -> RunEntry:
    """``run_dir`` checked for the store (InputError: must not be stored); defaults: the head's SHA, start, ref."""
    where = str(run_dir)
    if not run_dir.is_dir():
        raise InputError("not a run directory", where=where)
    record_path = run_dir / "run.json"
    if not record_path.is_file():
        raise InputError("no run.json here: only a run directory of `benchgate run` can be recorded", where=where)
    samples, summary, _ = rundirs.load([where])
    record = runrecord.load_run_record(record_path)
    if summary.build_failure is not None:
        raise InputError(f"nothing was measured: the {summary.build_failure.side} did not build", where=where)
    if not summary.complete:
        raise InputError("the run is incomplete (interrupted or failed): resume it before recording", where=where)
    if summary.sandbox is not None and summary.sandbox.untrusted_head is True and branch is None:
        raise InputError(
            "the head is a pull request's code (sandbox.untrusted_head): not recorded unless --branch names its branch",
            where=where,
        )
    if len(samples) == 0:
        raise InputError("the run has no samples", where=where)
    if commit is not None and not _COMMIT.match(commit):
        raise InputError(f"not a commit SHA or a release version: {commit[:70]!r}", where="--commit")
    head = summary.head
    # run.json names an official binary's source "release:npm" or "release:dist" (build.releases)
    release = (head.source or "").removeprefix("release:") in _RELEASE_SOURCES and head.version is not None
    head_commit = commit or head.sha or (str(head.version) if release else None)  # a release's point: its version
    if head_commit is None:
        raise InputError("the run names no head commit (run.json binaries.head.sha); give --commit", where=where)
    if branch is None:
        ref = head.ref if head.source == "build" else None  # a local binary's ref is its path
        branch = RELEASES_BRANCH if release else (ref if ref and ref != "HEAD" and not _FULL_SHA.match(ref) else "main")
    when = date or record.started_at or record.ended_at
    if when is None:
        raise InputError("the run has no date (run.json started_at); give --date", where=where)
    facts = {key: value for key, value in (record.environment or {}).items() if key != "warnings"}
    settings = {key: value for key, value in record.to_json().items() if key in _SETTINGS}
    rows, numbered = summarize(samples)
    values = {
        "digest": hashlib.sha256(
            b"".join(path.read_bytes() + b"\0" for path in (run_dir / "results.csv", record_path))
        ).hexdigest(),
        "commit": head_commit,
        "parent": summary.base.sha or (summary.base.version if release else None),
        "branch": branch[:256],
        "date": iso_date(when, where if date is None else "--date"),
        "base_version": summary.base.version,
        "head_version": head.version,
        "base_flags": " ".join(summary.base.node_args),
        "head_flags": " ".join(head.node_args),
        "runner": runner_fingerprint(facts),
        "runner_facts": json.dumps(facts, sort_keys=True)[:65536],
        "settings": json.dumps(settings, sort_keys=True)[:65536],
        "source": (head.source or "local")[:32],
        "sample_count": len(numbered),
    }
    return RunEntry(values, rows, numbered)


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


def _insert_samples(connection: Connection, run_id: int, samples: pd.DataFrame) -> None:
    for start in range(0, len(samples), _BATCH):
        batch = samples[start : start + _BATCH].astype(object)
        connection.execute(
            db.samples.insert(), batch.where(batch.notna(), None).assign(run_id=run_id).to_dict("records")
        )


def _insert(connection: Connection, entry: RunEntry, keep: int) -> tuple[int, bool]:
    """In the write transaction: the run (its id, whether new), rows, samples; then the branch's ``keep`` newest.
    The writer holds the store's lock, so no other one stores the same run after this check."""
    existing = connection.execute(select(db.runs.c.id).where(db.runs.c.digest == entry.values["digest"])).scalar()
    if existing is not None:
        return int(existing), False
    recorded_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_id = int(
        connection.execute(db.runs.insert().values(**entry.values, recorded_at=recorded_at)).inserted_primary_key[0]
    )
    summaries = [{"run_id": run_id, "row": number, **row} for number, row in enumerate(entry.rows)]
    connection.execute(db.rows.insert(), summaries)
    _insert_samples(connection, run_id, entry.samples)
    if keep > 0:
        runs = db.runs
        branch = select(runs.c.id).where(runs.c.branch == entry.values["branch"])
        kept = branch.order_by(runs.c.date.desc(), runs.c.id.desc()).limit(keep).scalar_subquery()
        old = [row.id for row in connection.execute(branch.where(runs.c.id.not_in(kept)))]
        for column in (db.samples.c.run_id, db.rows.c.run_id, runs.c.id):  # no cascade: SQLite's foreign keys are off
            connection.execute(column.table.delete().where(column.in_(old)))
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
    """Store the run in ``run_dir`` in one transaction (a no-op when its digest is stored); nothing half-written."""
    entry = read_entry(Path(run_dir), commit=commit, date=date, branch=branch)
    with db.transaction(store_url, write=True, lock_timeout=lock_timeout) as (connection, store):
        run_id, created = _insert(connection, entry, keep)
    return RecordResult(
        run_id=run_id,
        created=created,
        commit=entry.values["commit"],
        branch=entry.values["branch"],
        date=entry.values["date"],
        rows=sum(1 for row in entry.rows if row["side"] == "head"),
        samples=entry.values["sample_count"],
        store=store.shown,
    )


STARRED = ("*", "**", "***")


def release_series(steps: Sequence[tuple[str, Path, pd.DataFrame]]) -> tuple[list[Series], list[ChangePoint]]:
    """Every row's series over the releases, and the steps compare.R starred as its change points; a finished
    step is its newer release, its run directory and compare.R's table of it (filename, configuration,
    confidence, improvement, p_value per row)."""
    with tempfile.TemporaryDirectory(prefix="benchgate-releases-") as scratch:
        store = f"sqlite:///{Path(scratch) / 'releases.db'}"
        for head, directory, _ in steps:
            record_run(directory, store, commit=f"v{head}", branch=RELEASES_BRANCH)
        found = db.series(store, branch=RELEASES_BRANCH)
    changes = []
    for head, _, compared in steps:
        release, starred = f"v{head}", compared[compared["confidence"].astype(str).isin(STARRED)]
        rows = {(str(row.filename), str(row.configuration)): row for row in starred.itertuples(index=False)}
        for one in found:
            row = rows.get((one.key.filename, one.key.configuration))
            index = next((i for i, point in enumerate(one.points) if point.commit == release), 0)
            if row is None or index == 0 or not math.isfinite(row.improvement):
                continue  # a row whose older release measured nothing (a failure) has no step to mark
            before, after = one.points[index - 1], one.points[index]
            change, sure = float(row.improvement), 1.0 - float(row.p_value)
            changes.append(
                ChangePoint(
                    one.key, index, release, after.date, change, before.mean_rate, after.mean_rate, sure, before.commit
                )
            )
    return found, changes
