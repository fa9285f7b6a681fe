"""Change points of stored series, found by Apache Otava (``otava.analysis.compute_change_points``).

Otava is Hunter's e-divisive means (Matteson and James) over sliding windows, with a Student t-test
deciding which candidate splits are real; why Otava and not signal-processing-algorithms is in
docs/history.md (tests/perf/compare_change_points.py measures both on the same series). Each point's
value is its run's 20 %-trimmed mean of the head's rates, so one slow sample does not move it. Pure
analysis: series in, ChangePoint out; the store is not imported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchgate.errors import InputError
from benchgate.history.model import ChangePoint, Series, SeriesKey

MIN_POINTS = 8  # fewer stored runs than this and a step cannot be told from noise at MAX_PVALUE
# Otava's default 0.001 flags 2.8 % of 20-run A/A series (the t-test does not count the e-divisive's choice
# of the best split); 1e-4 flags 0.2 % and still finds every 12 % step, 70 % of 3 % steps at 1.2 % noise
# (tests/perf/compare_change_points.py --otava-pvalue, docs/history.md).
MAX_PVALUE = 1e-4
WINDOW = 50  # Otava's default window


@dataclass(frozen=True)
class Changes:
    """Every change point found, and the series too short to look at."""

    points: tuple[ChangePoint, ...]
    too_short: tuple[SeriesKey, ...]
    looked_at: int


def _compute():  # type: ignore[no-untyped-def]
    try:
        from otava.analysis import compute_change_points
    except ImportError:
        raise InputError(
            "change points need Apache Otava, which is not installed: pip install --no-deps 'apache-otava>=0.8' "
            "(docs/history.md)"
        ) from None
    return compute_change_points


def change_points(series: Series, *, max_pvalue: float = MAX_PVALUE) -> list[ChangePoint]:
    """The change points of one series (at least MIN_POINTS points), oldest first."""
    values = [point.trimmed_mean for point in series.points]
    found, _ = _compute()(values, window_len=WINDOW, max_pvalue=max_pvalue)
    changes = []
    for candidate in found:
        stats = candidate.stats
        before, after = float(stats.mean_1), float(stats.mean_2)
        first = series.points[candidate.index]
        changes.append(
            ChangePoint(
                key=series.key,
                index=int(candidate.index),
                commit=first.commit,
                date=first.date,
                change=(after / before - 1) * 100 if before else float("nan"),
                mean_before=before,
                mean_after=after,
                confidence=max(0.0, 1.0 - float(stats.pvalue)),
                before_commit=series.points[candidate.index - 1].commit if candidate.index else "",
            )
        )
    return sorted(changes, key=lambda change: change.index)


def find_changes(all_series: Sequence[Series], *, max_pvalue: float = MAX_PVALUE) -> Changes:
    """Change points of every series long enough; the others are listed as too short."""
    points: list[ChangePoint] = []
    too_short = []
    for series in all_series:
        if len(series.points) < MIN_POINTS:
            too_short.append(series.key)
            continue
        points.extend(change_points(series, max_pvalue=max_pvalue))
    return Changes(tuple(points), tuple(too_short), len(all_series) - len(too_short))
