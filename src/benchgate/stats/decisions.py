"""The gate's decision per comparison: Holm-consistent levels, intervals, decisions and the verdict.
A fixed-runs analysis is the one-look case of the sequential design; docs/statistics.md has the rules."""

from dataclasses import dataclass

import numpy as np

from benchgate.stats.defaults import DEFAULT_INCONCLUSIVE_ABOVE, DEFAULT_POWER, DEFAULT_UNCHANGED_CONFIDENCE
from benchgate.stats.resolution import Coarsening, gated_at
from benchgate.stats.yuenwelch import Stats, combine, regression_floor, subset, unchanged_level

DECISIONS = ("regression", "improvement", "unchanged", "inconclusive", "incomplete", "constant")
REGRESSION, IMPROVEMENT, UNCHANGED, INCONCLUSIVE, INCOMPLETE, CONSTANT = range(6)
DEFAULT_ALPHA = 0.001


def holm_levels(p: np.ndarray, alpha: np.ndarray | float, correction: str = "holm") -> tuple[np.ndarray, np.ndarray]:
    """Which rows the correction rejects along the last axis, and each row's Holm-consistent level.
    A row rejected at step k gets ``alpha / (m - k + 1)``, the others ``alpha / (m - r)``; NaN p-values do not count."""
    p = np.asarray(p, dtype=float)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), p.shape)
    if correction == "none":
        return p < alpha, alpha.copy()
    valid = ~np.isnan(p)
    m = valid.sum(axis=-1, keepdims=True)
    order = np.argsort(np.where(valid, p, np.inf), axis=-1, kind="stable")
    ordered = np.take_along_axis(p, order, axis=-1)
    steps = np.arange(p.shape[-1])
    factors = (m - steps).astype(float)
    with np.errstate(invalid="ignore"):
        running = np.fmax.accumulate(np.where(steps < m, factors * ordered, np.inf), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(steps, order.shape).copy(), axis=-1)
    # r(alpha_i): the number of leading steps whose running max is below this row's alpha.
    flat_running = running.reshape(-1, p.shape[-1])
    flat_alpha = alpha.reshape(-1, p.shape[-1])
    counts = [np.searchsorted(row, level, side="left") for row, level in zip(flat_running, flat_alpha, strict=True)]
    rejected_count = np.array(counts, dtype=np.int64).reshape(p.shape)
    rejected = valid & (rank < rejected_count)
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(rejected, alpha / (m - rank), alpha / np.maximum(m - rejected_count, 1))
    return rejected, np.where(valid, level, alpha)


@dataclass(frozen=True)
class Decisions:
    """What ``decide_looks`` concludes per row (arrays of shape ``(..., rows)``)."""

    decision: np.ndarray  # int codes into DECISIONS
    change: np.ndarray  # percent, the last look's estimate
    ci_low: np.ndarray  # percent: the interval the decision rests on (see decide_looks)
    ci_high: np.ndarray
    p_value: np.ndarray  # sequential p-value: min over looks of p / weight (fixed runs: the test's p)
    rejected: np.ndarray  # by the correction
    level: np.ndarray  # Holm-consistent level (before the look's weight)
    mde: np.ndarray  # percent, at the level of the row's last look
    fixed_low: np.ndarray  # percent: the last look's interval at the row's whole level
    fixed_high: np.ndarray
    current: Stats  # the statistics of each row's last look
    unchanged_low: np.ndarray  # percent: the one-sided bound ``unchanged`` is judged by
    gated_at: np.ndarray  # percent: the regression each row must rule out to be unchanged
    coarse: np.ndarray  # rows gated coarser than their target (benchgate.stats.resolution)

    @property
    def resolution(self) -> np.ndarray:
        """Each row's resolution (percent): the smallest regression its evidence rules out (``-unchanged_low``)."""
        return -np.asarray(self.unchanged_low, dtype=float)

    @property
    def names(self) -> np.ndarray:
        return np.asarray(DECISIONS, dtype=object)[self.decision]


def _accumulate(looks: list[Stats], weights: np.ndarray) -> tuple[np.ndarray, Stats, np.ndarray]:
    """Sequential p-values, each row's last statistics and the index of its last look (-1: none)."""
    p_seq, current, last = np.nan, looks[0], np.full(np.shape(looks[0].delta), -1)
    for k, st in enumerate(looks):
        present = (np.asarray(st.n_base) + np.asarray(st.n_head)) > 0  # a row that sat out has no samples
        with np.errstate(divide="ignore", invalid="ignore"):
            p_seq = np.fmin(p_seq, st.p_value / weights[k])
        # A row's statistics are those of the last look it took part in.
        current = combine(lambda new, old, at=present: np.where(at, new, old), st, current)
        last = np.where(present, k, last)
    return np.minimum(p_seq, 1.0), current, last


def _repeated_interval(looks: list[Stats], weights: np.ndarray, level: np.ndarray, rows: np.ndarray):
    """Repeated confidence intervals (Jennison & Turnbull 1989) of ``rows``: the looks' at ``level × weight``,
    intersected (where they do not overlap, the last look's)."""
    shape = level.shape
    low, high = np.full(shape, -np.inf), np.full(shape, np.inf)
    last_low, last_high = np.full(shape, np.nan), np.full(shape, np.nan)
    for k, st in enumerate(looks):
        usable = rows & ((st.n_base + st.n_head) > 0) & ~st.incomplete
        look_low, look_high = subset(st, usable).interval(level[usable] * weights[k])
        low[usable] = np.fmax(low[usable], look_low)
        high[usable] = np.fmin(high[usable], look_high)
        last_low[usable], last_high[usable] = look_low, look_high
    empty = low > high
    low, high = np.where(empty, last_low, low), np.where(empty, last_high, high)
    # A look's interval may reach ±inf (a few runs at a tiny level); only a row no look could test is NaN.
    tested = rows & ~np.isnan(last_low) & ~np.isnan(last_high)
    return np.where(tested, low, np.nan), np.where(tested, high, np.nan)


def decide_looks(
    looks: list[Stats],
    weights: np.ndarray | list[float],
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
    with_mde: bool = True,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
    unchanged_weights: np.ndarray | list[float] | None = None,
    coarsening: Coarsening | None = None,
) -> Decisions:
    """Decisions from the statistics of every look so far (one ``Stats`` per look; docs/statistics.md's rules).
    ``weights[k]``: the level's share spent at look k (fixed runs: ``[1.0]``); ``unchanged_weights``: the unchanged
    risk's (default ``weights``); ``with_mde=False`` leaves ``mde`` NaN."""
    weights = np.asarray(weights, dtype=float)
    p_seq, current, last = _accumulate(looks, weights)
    rejected, level = holm_levels(p_seq, alpha, correction)
    shape = p_seq.shape
    rows, last_look = ~current.incomplete, np.maximum(last, 0)
    picked = subset(current, rows)
    fixed_low, fixed_high, bound, mdes = (np.full(shape, np.nan) for _ in range(4))
    fixed_low[rows], fixed_high[rows] = picked.interval(level[rows])  # each row's at its whole level
    if unchanged_confidence is None:  # the old rule's bound ``unchanged`` is judged by: ``fixed_low`` itself
        bound = fixed_low
    else:  # the one-sided lower bound (percent) ``unchanged`` is judged by
        shares = weights if unchanged_weights is None else np.asarray(unchanged_weights, dtype=float)
        bound[rows] = picked.interval(unchanged_level(unchanged_confidence, level, shares[last_look])[rows])[0]
    if with_mde:
        mdes[rows] = picked.mde((level * weights[last_look])[rows], power)
    rci_low, rci_high = _repeated_interval(looks, weights, level, rejected & rows)
    low, high = np.where(rejected, rci_low, fixed_low), np.where(rejected, rci_high, fixed_high)
    change = current.change
    tested = ~np.isnan(low) & ~np.isnan(high)  # an interval reaching ±inf still tested the row
    min_effect = np.broadcast_to(np.asarray(min_effect, dtype=float), shape)
    target = regression_floor(min_effect, inconclusive_above)
    share_at_end = 1.0 if coarsening is None else coarsening.share
    floor, coarse, _ = gated_at(current, target, unchanged_level(unchanged_confidence, level, share_at_end), coarsening)
    decision = np.full(shape, INCONCLUSIVE, dtype=np.int8)
    with np.errstate(invalid="ignore"):
        decision[bound > -floor] = UNCHANGED
        decision[rejected & (low > 0) & (change >= min_effect)] = IMPROVEMENT
        decision[rejected & (high < 0) & (change <= -min_effect)] = REGRESSION
    decision[current.constant & (change == 0)] = CONSTANT
    decision[current.incomplete | ~tested & ~current.constant] = INCOMPLETE
    rejected &= tested  # a row no look could test is not rejected
    return Decisions(
        decision, change, low, high, p_seq, rejected, level, mdes, fixed_low, fixed_high, current, bound, floor, coarse
    )


def _percent(value: float) -> str:
    # Intervals of a few runs can reach 1e+100 % (or overflow to inf): three significant digits from 100,000 %.
    return f"{value:.1f}" if abs(value) < 1e5 else f"{value:.3g}"


def format_change(change: float, low: float, high: float) -> str:
    """``-12.3 % [-14.1, -10.5]`` (one decimal; 3 significant digits from 100,000 %; ``n/a`` when untested)."""
    if not np.isfinite(change):
        return "n/a"
    if np.isnan(low) or np.isnan(high):
        return f"{_percent(change)} %"
    return f"{_percent(change)} % [{_percent(low)}, {_percent(high)}]"
