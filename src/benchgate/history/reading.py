"""Reading the store: the head side of every stored run, one ``Series`` per benchmark row, node flags, runner and
branch, points in date order; and main's spreads for a prior."""

from __future__ import annotations

from dataclasses import fields

from sqlalchemy import select

from benchgate.history import store as db
from benchgate.history.model import Point, Series, SeriesKey

POINT_FIELDS = [field.name for field in fields(Point)]


def series(
    store_url: str, filter: str | None = None, *, branch: str | None = None, since: str | None = None
) -> list[Series]:
    """Every series whose ``filename configuration`` contains ``filter``, sorted by key, of ``branch``'s runs (None:
    all) from ``since`` (``YYYY-MM-DDTHH:MM:SSZ``) on; none from an empty store, StoreUnavailable for no file."""
    runs, rows = db.runs, db.rows
    query = (
        select(rows, *(runs.c[name] for name in ("head_flags", "runner", "branch", "commit", "parent", "date")))
        .add_columns(runs.c.head_version.label("node_version"))
        .join(runs, runs.c.id == rows.c.run_id)
        .where(rows.c.side == "head")
        .order_by(runs.c.date, runs.c.id)
    )
    if filter:
        query = query.where((rows.c.filename + " " + rows.c.configuration).contains(filter, autoescape=True))
    if branch is not None:
        query = query.where(runs.c.branch == branch)
    if since is not None:
        query = query.where(runs.c.date >= since)
    points: dict[SeriesKey, list[Point]] = {}
    with db.reading(store_url) as connection:
        for row in connection.execute(query) if connection else ():
            key = SeriesKey(row.filename, row.configuration, row.head_flags, row.runner, row.branch)
            point = {name: row._mapping[name] for name in POINT_FIELDS}
            point.update(run_id=str(row.run_id), node_version=row.node_version or "")
            points.setdefault(key, []).append(Point(**point))
    return [Series(key, tuple(found)) for key, found in sorted(points.items())]


def main_spreads(
    store_url: str, files, *, runner: str, node_flags: str, branch: str = "main"
) -> dict[tuple[str, str], list[float]]:
    """Per row (filename, configuration) of ``files``, the ``log_spread`` of each stored run of ``branch`` on
    ``runner`` whose head ran with ``node_flags``, oldest first (a prior's input: ``stats.resolution``)."""
    runs, rows = db.runs, db.rows
    query = (
        select(rows.c.filename, rows.c.configuration, rows.c.log_spread)
        .join(runs, runs.c.id == rows.c.run_id)
        .where(rows.c.side == "head", runs.c.branch == branch, runs.c.runner == runner)
        .where(runs.c.head_flags == node_flags, rows.c.filename.in_(sorted(set(files))))
        .order_by(runs.c.date, runs.c.id)
    )
    found: dict[tuple[str, str], list[float]] = {}
    with db.reading(store_url) as connection:
        for row in connection.execute(query) if connection else ():
            found.setdefault((row.filename, row.configuration), []).append(float(row.log_spread))
    return found
