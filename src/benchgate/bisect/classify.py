"""Where a probe's rows lie between the two ends: like the earlier end, like the later, between (docs/bisect.md).

Rates (``{row: [rate, ...]}``) with the gate's test (``stats.yuenwelch``); a probe's change from the earlier end
as a share of the step between the ends is its *position* (0: like the earlier end, 1: like the later)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchgate.stats.yuenwelch import gate_statistics

EARLIER, LATER, BETWEEN, UNDECIDED = "earlier", "later", "between", "undecided"
DEFAULT_LEVEL = 0.01  # two-sided, per comparison, before Bonferroni over the stepped rows
DEFAULT_TOLERANCE = 1 / 3  # a probe is like an end when its share of the step is ruled out above a third
Samples = dict[str, list[float]]


def _arrays(rows: list[str], *sides: Samples) -> list[np.ndarray]:
    """NaN-padded ``(rows, n)`` arrays of each side's rates, rows in ``rows``' order."""
    arrays = []
    for side in sides:
        array = np.full((len(rows), max([len(side.get(row, ())) for row in rows] + [1])), np.nan)
        for index, row in enumerate(rows):
            array[index, : len(side.get(row, ()))] = side.get(row, ())
        arrays.append(array)
    return arrays


def _log_interval(base: np.ndarray, head: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The change of head vs base per row as a log ratio, with its two-sided interval at ``level``."""
    st = gate_statistics(base, head)
    low, high = st.interval(level)
    with np.errstate(invalid="ignore"):
        return st.delta, np.log1p(low / 100), np.log1p(high / 100)


def _by_row(rows: list[str], values: np.ndarray) -> dict[str, float]:
    return dict(zip(rows, map(float, values), strict=True))


def _percent(rows: list[str], log_ratios: np.ndarray) -> dict[str, float]:
    return _by_row(rows, 100 * np.expm1(log_ratios))


@dataclass(frozen=True)
class Step:
    """The step between the two ends: which rows moved, by how much (log ratio) and its interval."""

    rows: tuple[str, ...]  # every row measured at both ends
    stepped: tuple[str, ...]  # the rows whose interval excludes 0 by at least min_effect
    change: dict[str, float]  # percent, later vs earlier, per row
    low: dict[str, float]
    high: dict[str, float]
    log_step: dict[str, float]


def find_step(earlier: Samples, later: Samples, *, level: float = DEFAULT_LEVEL, min_effect: float = 0.0) -> Step:
    """The rows that changed between the ends (Bonferroni over the rows), with their changes in percent."""
    rows = sorted(set(earlier) & set(later))
    if not rows:
        return Step((), (), {}, {}, {}, {})
    base, head = _arrays(rows, earlier, later)
    delta, low, high = _log_interval(base, head, level / len(rows))
    moved = ((low > 0) | (high < 0)) & (np.abs(delta) >= np.log1p(min_effect / 100))
    return Step(
        rows=tuple(rows),
        stepped=tuple(row for row, keep in zip(rows, moved, strict=True) if keep),
        change=_percent(rows, delta),
        low=_percent(rows, low),
        high=_percent(rows, high),
        log_step=_by_row(rows, delta),
    )


@dataclass(frozen=True)
class Placement:
    """One probe against the ends: its class, and per stepped row its position and the interval of it."""

    cls: str
    rows: dict[str, str]  # row -> class
    position: dict[str, float]  # row -> share of the step reached (0 earlier, 1 later)
    low: dict[str, float]
    high: dict[str, float]
    change: dict[str, float]  # percent vs the earlier end

    @property
    def share(self) -> float:
        """The mean position over the stepped rows."""
        return float(np.mean(list(self.position.values()))) if self.position else float("nan")


def place(
    probe: Samples,
    earlier: Samples,
    later: Samples,
    step: Step,
    *,
    level: float = DEFAULT_LEVEL,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Placement:
    """Class a probe's stepped rows against both ends; the probe is ``undecided`` when any row is,
    ``earlier``/``later`` when all rows are, else ``between`` (rows moving at different commits too)."""
    rows = list(step.stepped)
    if not rows:
        return Placement(UNDECIDED, {}, {}, {}, {}, {})
    first, last, probed = _arrays(rows, earlier, later, probe)
    each = level / (2 * len(rows))  # two comparisons per row
    from_first, low_first, high_first = _log_interval(first, probed, each)
    _, low_last, high_last = _log_interval(last, probed, each)
    size = np.array([step.log_step[row] for row in rows])
    allowed = tolerance * np.abs(size)
    differs_first = (low_first > 0) | (high_first < 0)
    differs_last = (low_last > 0) | (high_last < 0)
    like_first = (low_first > -allowed) & (high_first < allowed)
    like_last = (low_last > -allowed) & (high_last < allowed)
    classes = np.where(
        differs_first & differs_last,
        BETWEEN,
        np.where(like_first & ~differs_first, EARLIER, np.where(like_last & ~differs_last, LATER, UNDECIDED)),
    )
    kinds = set(classes.tolist())
    cls = UNDECIDED if UNDECIDED in kinds else kinds.pop() if len(kinds) == 1 else BETWEEN
    ends = np.sort(np.stack([low_first / size, high_first / size]), axis=0)
    return Placement(
        cls=cls,
        rows=dict(zip(rows, classes.tolist(), strict=True)),
        position=_by_row(rows, from_first / size),
        low=_by_row(rows, ends[0]),
        high=_by_row(rows, ends[1]),
        change=_percent(rows, from_first),
    )


def nearest(placement: Placement, tolerance: float = DEFAULT_TOLERANCE) -> str:
    """The class an undecided probe is taken as once its runs are spent: by its point estimate."""
    share = placement.share  # NaN (no stepped row): like the earlier end
    return EARLIER if not np.isfinite(share) or share < tolerance else LATER if share > 1 - tolerance else BETWEEN


def same_level(first: Samples, second: Samples, step: Step, *, level: float = DEFAULT_LEVEL) -> bool:
    """Two probes both between the ends: True unless some stepped row differs between them."""
    rows = list(step.stepped)
    if not rows:
        return True
    one, two = _arrays(rows, first, second)
    _, low, high = _log_interval(one, two, level / len(rows))
    return not bool(np.any((low > 0) | (high < 0)))
