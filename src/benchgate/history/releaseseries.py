"""Releases as series for the site: a point per release of ``benchgate versions``' steps (read as the store
would), and a change point where a step's compare.R test starred the row (its improvement, confidence 1 - p)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchgate.history.model import ChangePoint, Point, Series, SeriesKey
from benchgate.history.recording import RELEASES_BRANCH, read_entry

STARRED = ("*", "**", "***")


@dataclass(frozen=True)
class ReleaseStep:
    """A finished step: its releases, its run directory and compare.R's table of it."""

    base: str
    head: str
    directory: Path
    compared: pd.DataFrame  # filename, configuration, confidence, improvement, p_value per row


def _point(step: ReleaseStep, version: str, row: dict[str, Any], date: str, parent: str | None) -> Point:
    run, name = f"{step.base}..{step.head}:{row['side']}", f"v{version}"  # a release's commit is its version
    measured = (row[column] for column in ("mean_rate", "trimmed_mean", "log_spread", "samples"))
    return Point(run, name, parent, RELEASES_BRANCH, date, name, *measured)


def release_series(steps: Sequence[ReleaseStep]) -> tuple[list[Series], list[ChangePoint]]:
    """Every row's series over the releases, and the steps compare.R starred as its change points."""
    points: dict[SeriesKey, list[Point]] = {}
    changes: list[ChangePoint] = []
    for number, step in enumerate(steps):
        entry = read_entry(step.directory, commit=f"v{step.head}", branch=RELEASES_BRANCH)
        flags, runner, date = (entry.values[column] for column in ("head_flags", "runner", "date"))
        for row in entry.rows:
            key = SeriesKey(row["filename"], row["configuration"], flags, runner, RELEASES_BRANCH)
            mine = points.setdefault(key, [])
            if row["side"] == "head":
                mine.append(_point(step, step.head, row, date, f"v{step.base}"))
            elif number == 0:
                mine.insert(0, _point(step, step.base, row, date, None))
        starred = step.compared[step.compared["confidence"].astype(str).isin(STARRED)]
        for found in starred.itertuples(index=False):
            key = SeriesKey(str(found.filename), str(found.configuration), flags, runner, RELEASES_BRANCH)
            index = next((i for i, p in enumerate(points.get(key, [])) if p.commit == f"v{step.head}"), None)
            if index is None or index == 0 or not math.isfinite(found.improvement):
                continue  # a row whose older release measured nothing (a failure) has no step to mark
            before, after = points[key][index - 1].mean_rate, points[key][index].mean_rate
            change, sure = float(found.improvement), 1.0 - float(found.p_value)
            changes.append(ChangePoint(key, index, f"v{step.head}", date, change, before, after, sure))
    return [Series(key, tuple(found)) for key, found in sorted(points.items())], changes
