"""A PR comment row's history: main's run-to-run spread there, and whether main itself moved recently.
Context for a reader only, never evidence: the gate decides from the PR's own samples."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchgate.history.model import ChangePoint, Series

LAST_RUNS = 20  # K: main's spread is over its last K runs
RECENT_COMMITS = 10  # N: a change point within main's last N runs is "moved recently"


@dataclass(frozen=True)
class RowHistory:
    """Main's history of one benchmark row (the longest of its series when several runners or flags)."""

    filename: str
    configuration: str
    series: Series | None  # None: main has no run of this row
    runs: int  # how many of main's last runs the spread is over
    spread: float  # percent: the standard deviation of the runs' log trimmed means, as a percentage
    moved: ChangePoint | None  # the latest change point within the last RECENT_COMMITS runs


def row_history(
    all_series: Sequence[Series],
    changes: Sequence[ChangePoint],
    filename: str,
    configuration: str,
    *,
    branch: str = "main",
    last: int = LAST_RUNS,
    recent: int = RECENT_COMMITS,
) -> RowHistory:
    """The history of the row ``filename configuration`` on ``branch``."""
    row = (filename, configuration, branch)
    candidates = [one for one in all_series if (one.key.filename, one.key.configuration, one.key.branch) == row]
    if not candidates:
        return RowHistory(filename, configuration, None, 0, math.nan, None)
    series = max(candidates, key=lambda one: (len(one.points), one.key))
    tail = series.points[-last:]
    logs = [math.log(point.trimmed_mean) for point in tail if point.trimmed_mean > 0]
    spread = math.expm1(statistics.stdev(logs)) * 100 if len(logs) > 1 else math.nan
    start = len(series.points) - recent
    moved = [change for change in changes if change.key == series.key and change.index >= start]
    return RowHistory(filename, configuration, series, len(tail), spread, moved[-1] if moved else None)
