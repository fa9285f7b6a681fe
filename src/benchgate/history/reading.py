"""Reading series out of the store: the head side of every stored run, one ``Series`` per benchmark row,
node flags, runner and branch, points in date order."""

from __future__ import annotations

from sqlalchemy import Select, select

from benchgate.history import storeschema
from benchgate.history.model import Point, Series, SeriesKey
from benchgate.history.store import check_for_reading, errors_translated, open_store


def _query(filter: str | None, branch: str | None, since: str | None) -> Select:
    runs, rows = storeschema.runs, storeschema.rows
    query = (
        select(
            rows.c.filename,
            rows.c.configuration,
            runs.c.head_flags,
            runs.c.runner,
            runs.c.branch,
            runs.c.id,
            runs.c.commit,
            runs.c.parent,
            runs.c.date,
            runs.c.head_version,
            rows.c.mean_rate,
            rows.c.trimmed_mean,
            rows.c.log_spread,
            rows.c.samples,
        )
        .join(runs, runs.c.id == rows.c.run_id)
        .where(rows.c.side == "head")
        .order_by(runs.c.date, runs.c.id)
    )
    if filter:
        label = rows.c.filename + " " + rows.c.configuration
        query = query.where(label.contains(filter, autoescape=True))
    if branch is not None:
        query = query.where(runs.c.branch == branch)
    if since is not None:
        query = query.where(runs.c.date >= since)
    return query


def series(
    store_url: str, filter: str | None = None, *, branch: str | None = None, since: str | None = None
) -> list[Series]:
    """Every series in the store whose ``filename configuration`` contains ``filter``, sorted by key.

    ``branch`` keeps one branch's runs (``main``, ``releases``); ``since`` (``YYYY-MM-DDTHH:MM:SSZ``)
    the runs from that date on. An empty store gives no series; a missing SQLite file is StoreUnavailable.
    """
    store = open_store(store_url, must_exist=True)
    points: dict[SeriesKey, list[Point]] = {}
    try:
        with errors_translated(store), store.engine.connect() as connection:
            if not check_for_reading(connection, store):
                return []
            for row in connection.execute(_query(filter, branch, since)):
                key = SeriesKey(row.filename, row.configuration, row.head_flags, row.runner, row.branch)
                points.setdefault(key, []).append(
                    Point(
                        run_id=str(row.id),
                        commit=row.commit,
                        parent=row.parent,
                        branch=row.branch,
                        date=row.date,
                        node_version=row.head_version or "",
                        mean_rate=row.mean_rate,
                        trimmed_mean=row.trimmed_mean,
                        log_spread=row.log_spread,
                        samples=row.samples,
                    )
                )
    finally:
        store.engine.dispose()
    return [Series(key, tuple(found)) for key, found in sorted(points.items())]


def main_spreads(
    store_url: str, files, *, runner: str, node_flags: str, branch: str = "main"
) -> dict[tuple[str, str], list[float]]:
    """Per row (filename, configuration) of ``files``, the ``log_spread`` of each stored run of ``branch`` on
    ``runner`` whose head ran with ``node_flags``, oldest first (a prior's input: ``stats.resolution``)."""
    runs, rows = storeschema.runs, storeschema.rows
    query = (
        select(rows.c.filename, rows.c.configuration, rows.c.log_spread)
        .join(runs, runs.c.id == rows.c.run_id)
        .where(rows.c.side == "head", runs.c.branch == branch, runs.c.runner == runner)
        .where(runs.c.head_flags == node_flags, rows.c.filename.in_(sorted(set(files))))
        .order_by(runs.c.date, runs.c.id)
    )
    found: dict[tuple[str, str], list[float]] = {}
    store = open_store(store_url, must_exist=True)
    try:
        with errors_translated(store), store.engine.connect() as connection:
            if check_for_reading(connection, store):
                for row in connection.execute(query):
                    found.setdefault((row.filename, row.configuration), []).append(float(row.log_spread))
    finally:
        store.engine.dispose()
    return found
