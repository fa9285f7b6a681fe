"""``bisect --change ID``: the two runs around a stored change point, and the row it moved, from the store."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from benchgate.errors import InputError


@dataclass(frozen=True)
class ChangeEnds:
    """What a change point gives the bisection: its commits, and the row as run's selection."""

    before: str
    after: str
    categories: tuple[str, ...]
    filters: tuple[str, ...]
    set_args: tuple[str, ...]


def row_selection(filename: str, configuration: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The category, --filter (the name within it, as compare.js matches) and --set values that select one row."""
    try:
        words = shlex.split(configuration)
    except ValueError:
        words = configuration.split()
    category, _, name = filename.partition("/")
    return (category,), (name or category,), tuple(word for word in words if "=" in word)


def change_ends(change_id: str, store: str | None) -> ChangeEnds:
    """The change point ``change_id`` of ``history changes --format json`` in ``store``; InputError if absent."""
    from benchgate.config.historysettings import history_settings, resolve_store
    from benchgate.history.changepoints import find_changes
    from benchgate.history.reading import series

    url = resolve_store(store, history_settings(()))
    points = [point for point in find_changes(series(url)).points if point.id == change_id]
    if not points:
        raise InputError(f"--change {change_id}: no such change point (see `benchgate history changes --format json`)")
    if not (point := points[0]).before_commit:
        raise InputError(f"--change {change_id}: the change is at the series' first run; nothing before it")
    categories, filters, set_args = row_selection(point.key.filename, point.key.configuration)
    return ChangeEnds(point.before_commit, point.commit, categories, filters, set_args)
