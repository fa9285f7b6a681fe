"""Change points of stored series: ruptures' PELT proposes the splits, Student's t-test keeps the real ones.

The runs' log trimmed means, scaled by their run-to-run noise, are split by PELT (L1 cost: one slow run is no
segment); then, as Apache Otava merges Hunter's candidates, the split whose sides differ least is dropped while
its t-test has p >= MAX_PVALUE. Why this and not Otava: docs/history.md (tests/perf/compare_change_points.py).
"""

from collections.abc import Sequence

import numpy as np
import ruptures
from scipy import special

from benchgate.history.model import ChangePoint, Series

MIN_SEGMENT = 4  # runs on each side of a change: three slow runs in a row are not a new level
MIN_POINTS = 2 * MIN_SEGMENT  # fewer stored runs and a series has no change point
# Chosen with tests/perf/compare_change_points.py (docs/history.md): PELT only proposes (a low penalty), the
# t-test decides; at 3e-4, 20-run A/A series get a change point no more often than with Otava at 1e-4, and
# 10 % steps are found as often (1e-3 finds more, but flags 0.5 % of A/A series at 1.2 % noise, 3 times Otava).
PENALTY = 4.0
MAX_PVALUE = 3e-4


def _noise(logs: np.ndarray) -> float:
    """The run-to-run standard deviation: the MAD of neighbouring differences, over sqrt(2)."""
    differences = np.diff(logs)
    spread = 1.4826 * float(np.median(np.abs(differences - np.median(differences)))) / np.sqrt(2)
    return spread if spread > 0 else float(np.std(logs)) or 1.0


def _pvalue(logs: np.ndarray, start: int, split: int, end: int) -> float:
    """Student's two-sided p (pooled variance) for logs[start:split] against logs[split:end]; by hand with
    ``stdtr``, as ``scipy.stats.ttest_ind``'s checks cost more than the test on 20 values."""
    left, right = logs[start:split], logs[split:end]
    df = len(left) + len(right) - 2
    pooled = (np.sum((left - left.mean()) ** 2) + np.sum((right - right.mean()) ** 2)) / df
    difference = abs(left.mean() - right.mean())
    if pooled == 0:  # no spread on either side: a t-test has nothing to weigh
        return 1.0 if difference == 0 else 0.0
    t = difference / np.sqrt(pooled * (1 / len(left) + 1 / len(right)))
    return float(2 * special.stdtr(df, -t))


def split_indices(values: Sequence[float], *, max_pvalue: float = MAX_PVALUE) -> list[tuple[int, float]]:
    """Where ``values`` (positive, oldest first) change level: (index of the first value after, p), in order."""
    logs = np.log(np.asarray(values, dtype=float))
    if len(logs) < MIN_POINTS:
        return []
    scaled = (logs - np.median(logs)) / _noise(logs)
    bounds = [0, *ruptures.Pelt(model="l1", min_size=MIN_SEGMENT, jump=1).fit(scaled).predict(pen=PENALTY)]
    while len(bounds) > 2:
        pvalues = [_pvalue(logs, *bounds[index - 1 : index + 2]) for index in range(1, len(bounds) - 1)]
        weakest = int(np.argmax(pvalues))
        if pvalues[weakest] < max_pvalue:
            return [(bounds[index + 1], pvalue) for index, pvalue in enumerate(pvalues)]
        del bounds[weakest + 1]
    return []


def change_points(series: Series) -> list[ChangePoint]:
    """The change points of one series, oldest first (none with fewer than MIN_POINTS points)."""
    values = [point.trimmed_mean for point in series.points]
    splits = split_indices(values)
    bounds = [0, *(index for index, _ in splits), len(values)]
    points = []
    for number, (index, pvalue) in enumerate(splits):
        before = float(np.mean(values[bounds[number] : index]))
        after = float(np.mean(values[index : bounds[number + 2]]))
        change = (after / before - 1) * 100 if before else float("nan")
        first, previous = series.points[index], series.points[index - 1].commit if index else ""
        points.append(
            ChangePoint(
                series.key, index, first.commit, first.date, change, before, after, max(0.0, 1 - pvalue), previous
            )
        )
    return points


def find_changes(all_series: Sequence[Series]) -> list[ChangePoint]:
    """Change points of every series, oldest first within each."""
    return [point for series in all_series for point in change_points(series)]
