"""The history's data model, shared by the store, the analysis, the site and the PR comment: a series per
benchmark row, its points, the change points found in it, and a PR row's context (``row_history``: for a reader
only, never evidence: the gate decides from the PR's own samples). No I/O, no numpy."""

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import astuple, dataclass

RELEASES_BRANCH = "releases"  # official releases' runs: a series of releases never mixes with main's


@dataclass(frozen=True, order=True)
class SeriesKey:
    """What makes one series: a benchmark row, the node flags it ran with, and the runner it ran on."""

    filename: str
    configuration: str  # as results.csv and compare.R print it: ``len=256 n=10000``
    node_flags: str  # the head side's node arguments joined by spaces ('' for none)
    runner: str  # the runner fingerprint's short id (same CPU model, count and governor)
    branch: str = "main"  # ``releases`` for official releases, so that a release series and main's never mix

    def label(self) -> str:
        """The row's name as compare.R prints it: ``filename configuration``."""
        return f"{self.filename} {self.configuration}".strip()


@dataclass(frozen=True)
class Point:
    """One trusted run's head side in one series; rates in operations per second (higher is faster)."""

    run_id: str
    commit: str
    parent: str | None
    branch: str
    date: str  # ISO-8601, UTC
    node_version: str
    mean_rate: float
    trimmed_mean: float  # 20 %-trimmed
    log_spread: float  # the standard deviation of the log rates
    samples: int


@dataclass(frozen=True)
class Series:
    """A series' points in commit order (oldest first)."""

    key: SeriesKey
    points: tuple[Point, ...]


@dataclass(frozen=True)
class ChangePoint:
    """A change in a series."""

    key: SeriesKey
    index: int  # the position of the first point after it
    commit: str
    date: str
    change: float  # percent of the mean before (negative: slower, as compare.R's improvement)
    mean_before: float
    mean_after: float
    confidence: float  # how sure the method is, from 0 to 1 (1 - its p-value)
    before_commit: str = ""  # the last run's commit before the change ('' when unknown)

    @property
    def id(self) -> str:
        """A stable id: the same series and the same two runs around the change give the same id."""
        return "cp-" + digest(*astuple(self.key), self.before_commit, self.commit)


def digest(*parts: str) -> str:
    """A short stable hash of ``parts``: change points' ids, the site's page names and anchors."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


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
    last: int = LAST_RUNS,
    recent: int = RECENT_COMMITS,
) -> RowHistory:
    """The history of the row ``filename configuration`` on main."""
    row = (filename, configuration, "main")
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
