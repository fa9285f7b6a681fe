"""The store's tables (SQLAlchemy Core), one definition for SQLite and PostgreSQL, and their version.

``SCHEMA_VERSION`` is written in ``meta`` when the store is created; a store of another version is upgraded by
``UPGRADES`` (in the same transaction) or refused with one line, never read with the wrong columns. ``runs``
holds one trusted run (``digest``, results.csv and run.json hashed, makes a second record of it a no-op),
``rows`` its summary per side and benchmark row, ``samples`` every sample as results.csv held it.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

SCHEMA_VERSION = 1
# version -> the step that upgrades a store of that version to version + 1 (none yet: 1 is the first).
UPGRADES: dict[int, Callable[[Connection], None]] = {}

metadata = MetaData()

meta = Table(
    "benchgate_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(256), nullable=False),
)

runs = Table(
    "benchgate_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest", String(64), nullable=False),
    Column("commit", String(64), nullable=False),
    Column("parent", String(64)),
    Column("branch", String(256), nullable=False),
    Column("date", String(32), nullable=False),  # ISO-8601 UTC, 2026-01-02T03:04:05Z: sorts as text
    Column("base_version", String(64)),
    Column("head_version", String(64)),
    Column("base_flags", Text, nullable=False),
    Column("head_flags", Text, nullable=False),
    Column("runner", String(16), nullable=False),
    Column("runner_facts", Text, nullable=False),  # JSON: run.json's environment (the fingerprint's source)
    Column("settings", Text, nullable=False),  # JSON: runs, seed, schedule, selection, options
    Column("source", String(32), nullable=False),  # how the head was obtained: build, dist, npm, local
    Column("recorded_at", String(32), nullable=False),
    Column("sample_count", Integer, nullable=False),
    UniqueConstraint("digest", name="benchgate_runs_digest"),
)
Index("benchgate_runs_order", runs.c.branch, runs.c.date)

rows = Table(
    "benchgate_rows",
    metadata,
    Column("run_id", Integer, primary_key=True),
    Column("row", Integer, primary_key=True),  # the row's number within the run
    Column("side", String(4), nullable=False),  # base or head
    Column("filename", String(512), nullable=False),
    Column("configuration", String(512), nullable=False),
    Column("samples", Integer, nullable=False),
    Column("mean_rate", Float, nullable=False),
    Column("trimmed_mean", Float, nullable=False),
    Column("log_spread", Float, nullable=False),  # standard deviation of the log rates (0 for one sample)
    ForeignKeyConstraint(["run_id"], ["benchgate_runs.id"], ondelete="CASCADE"),
)
Index("benchgate_rows_series", rows.c.filename, rows.c.configuration)

samples = Table(
    "benchgate_samples",
    metadata,
    Column("run_id", Integer, primary_key=True),
    Column("row", Integer, primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("rate", Float, nullable=False),
    Column("time_ns", BigInteger),  # the time column in whole nanoseconds; NULL where results.csv has none
    ForeignKeyConstraint(["run_id", "row"], ["benchgate_rows.run_id", "benchgate_rows.row"], ondelete="CASCADE"),
)

TABLES = (meta, runs, rows, samples)
