"""The gate's decision per comparison: a test, a change with its interval, and what it means.

compare.R's columns (stars, accuracy) stay what ``stats.compare_samples`` computes on raw
rates. This module adds what the gate decides with, as pure functions over numpy arrays:

- a **test** per comparison (``TESTS``), computed from the samples of each side as
  NaN-padded arrays of shape ``(..., rows, n)``; the gate's is ``GATE_TEST``, Yuen's
  trimmed-mean Welch test on log rates (20 % trimmed from 10 samples a side on, plain
  Welch on log rates below), chosen by tests/perf/simulate_gate.py (see the
  design notes of issue 10);
- the **change** (percent, head vs base) with a two-sided interval at the Holm-consistent
  level of its row: a row Holm rejects at step k gets ``alpha / (m - k + 1)``, every other
  row ``alpha / (m - r)`` (r rows rejected), so the interval excludes 0 exactly when Holm
  rejects the row; with nothing rejected every interval is at Bonferroni's ``alpha / m``;
- the **decision** (``DECISIONS``): regression, improvement, unchanged, inconclusive,
  incomplete, constant; the **mde** (smallest regression this data detects with
  probability ``power`` at the row's level) and the **runs needed** to decide a row;
- the **verdict** over the decisions: fail, inconclusive (never a pass), pass.

A fixed-runs analysis is the one-look case of the sequential design (benchgate.stats.sequential):
``decide_looks`` takes one ``Stats`` per look and the alpha-spending weight of each look.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import special

TESTS = ("welch_raw", "welch_log", "yuen_log", "yuen10_log", "either")
GATE_TEST = "yuen_log"
TRIM = {"yuen_log": 0.2, "yuen10_log": 0.1}
# Below this many samples a side the trimmed tests trim nothing (Welch on log rates): with 20 % trimming
# five samples leave df ~ 4, whose t quantile at the gate's per-row levels (~1e-6) is ~40 times sigma.
TRIM_FROM = 10
# Yuen's statistic has a heavier far tail than t with the Satterthwaite df: on normal data its rate of
# p < 1e-5 is 1.2-1.5 times nominal (n = 10..42 a side) and ~2.6 times at 2.5e-6 (n = 30), the gate's
# per-row level. Shrinking the df by this factor brings it to 0.3-0.7 times nominal at 1e-5, falling further
# at smaller levels (measured with 2-6 million null rows per n; see the design notes of issue 10).
YUEN_DF_FACTOR = 0.8
DECISIONS = ("regression", "improvement", "unchanged", "inconclusive", "incomplete", "constant")
REGRESSION, IMPROVEMENT, UNCHANGED, INCONCLUSIVE, INCOMPLETE, CONSTANT = range(6)
VERDICTS = ("pass", "fail", "inconclusive")
DEFAULT_ALPHA = 0.001
DEFAULT_INCONCLUSIVE_ABOVE = 10.0  # percent: with min-effect 0, an interval reaching this regression is undecided
DEFAULT_POWER = 0.8  # of the mde


@dataclass(frozen=True)
class Stats:
    """One test's statistics per row (arrays of one shape, ``(..., rows)``).

    ``delta`` is the head minus base location (log scale: log ratio; raw scale: rate
    difference), ``se`` its standard error, ``df`` the Welch–Satterthwaite degrees of
    freedom, ``scale_base`` the base location on the raw scale (raw tests express the
    change as a fraction of it). ``var_base``/``var_head`` are per-sample variances such
    that the squared standard error of a side with n samples would be ``var / n``: they
    project the interval to more runs. ``companion`` is the second test of ``either``.
    """

    test: str
    delta: np.ndarray
    se: np.ndarray
    df: np.ndarray
    n_base: np.ndarray
    n_head: np.ndarray
    scale_base: np.ndarray
    var_base: np.ndarray
    var_head: np.ndarray
    constant: np.ndarray
    companion: Stats | None = None

    @property
    def log(self) -> bool:
        return self.test != "welch_raw"

    @property
    def incomplete(self) -> np.ndarray:
        return (self.n_base < 2) | (self.n_head < 2)

    @property
    def p_value(self) -> np.ndarray:
        """Two-sided p-value (``either``: Bonferroni over its two tests, 2 × the smaller p)."""
        if self.companion is not None:
            return np.minimum(1.0, 2 * np.fmin(_p_value(self), _p_value(self.companion)))
        return _p_value(self)

    @property
    def change(self) -> np.ndarray:
        """The estimated change in percent (positive: the head is faster)."""
        return _to_percent(self, self.delta)


def subset(st: Stats, rows: np.ndarray) -> Stats:
    """The statistics of the rows where ``rows`` is True, flattened to one axis."""
    fields = ("delta", "se", "df", "n_base", "n_head", "scale_base", "var_base", "var_head", "constant")
    picked = {name: np.asarray(getattr(st, name))[rows] for name in fields}
    companion = None if st.companion is None else subset(st.companion, rows)
    return Stats(test=st.test, companion=companion, **picked)


def _p_value(st: Stats) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = st.delta / st.se
        p = 2 * special.stdtr(st.df, -np.abs(t))
    zero_se = st.se == 0
    p = np.where(zero_se, np.where(st.delta == 0, 1.0, 0.0), p)
    return np.where(st.incomplete, np.nan, p)


def _to_percent(st: Stats, delta: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return 100 * np.expm1(delta) if st.log else 100 * delta / st.scale_base


def _mask(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    valid = ~np.isnan(x)
    return valid, valid.sum(axis=-1)


def _mean_var(x: np.ndarray, valid: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance over the valid entries of the last axis (two passes, as R does)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(valid, x, 0.0).sum(axis=-1) / n
        deviation = np.where(valid, x - mean[..., None], 0.0)
        mean = mean + deviation.sum(axis=-1) / n
        deviation = np.where(valid, x - mean[..., None], 0.0)
        var = (deviation * deviation).sum(axis=-1) / (n - 1)
    return mean, var


def _side(
    x: np.ndarray, trim: float, trim_from: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Location, squared standard error, df contribution (h - 1) and sample count of one side."""
    valid, n = _mask(x)
    trim_from = TRIM_FROM if trim_from is None else trim_from
    if trim == 0:
        mean, var = _mean_var(x, valid, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            return mean, var / n, n - 1.0, n
    # Yuen (1974): trimmed mean, winsorized variance, d = (n - 1) s_w^2 / (h (h - 1)), h = n - 2g.
    ordered = np.sort(x, axis=-1)  # NaN last
    g = np.where(n >= trim_from, np.floor(trim * n + 1e-9), 0).astype(np.int64)
    last = np.maximum(n - g - 1, 0)
    low = np.take_along_axis(ordered, np.minimum(g, ordered.shape[-1] - 1)[..., None], axis=-1)
    high = np.take_along_axis(ordered, np.minimum(last, ordered.shape[-1] - 1)[..., None], axis=-1)
    winsorized = np.clip(ordered, low, high)
    mean_w, var_w = _mean_var(winsorized, valid, n)
    h = n - 2 * g
    with np.errstate(divide="ignore", invalid="ignore"):
        trimmed = (mean_w * n - g * (low[..., 0] + high[..., 0])) / h
        d = (n - 1) * var_w / (h * (h - 1.0))
    return trimmed, d, h - 1.0, n


def _mad_variance(x: np.ndarray) -> np.ndarray:
    """(1.4826 × median absolute deviation)², a variance that ignores up to half the samples being outliers."""
    valid, n = _mask(x)
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], np.nan)
    ordered = np.sort(x, axis=-1)
    width = x.shape[-1] - 1

    def median(values: np.ndarray) -> np.ndarray:
        low = np.take_along_axis(values, np.clip((n - 1) // 2, 0, width)[..., None], axis=-1)[..., 0]
        high = np.take_along_axis(values, np.clip(n // 2, 0, width)[..., None], axis=-1)[..., 0]
        return (low + high) / 2

    center = median(ordered)
    spread = median(np.sort(np.abs(x - center[..., None]), axis=-1))
    return np.where(n > 0, (1.4826 * spread) ** 2, np.nan)


def _constant(x: np.ndarray) -> np.ndarray:
    """Rows whose samples are all equal (False for rows without samples)."""
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1], dtype=bool)
    valid = ~np.isnan(x)
    return np.where(valid, x, -np.inf).max(axis=-1) == np.where(valid, x, np.inf).min(axis=-1)


def gate_statistics(base: np.ndarray, head: np.ndarray, test: str = GATE_TEST) -> Stats:
    """``test``'s statistics for every row of ``base``/``head`` (rates, NaN-padded ``(..., rows, n)``).

    The two arrays may have different last-axis lengths. Rows with fewer than two samples
    on a side are ``incomplete`` (NaN statistics). Rows whose samples are constant on both
    sides are ``constant``: standard error 0, p = 0 when the locations differ, else 1.
    A trimmed test whose winsorized variances are both 0 on data that is not constant
    falls back to Welch on log rates for that row.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    base = np.asarray(base, dtype=float)
    head = np.asarray(head, dtype=float)
    if test == "either":
        raw = gate_statistics(base, head, "welch_raw")
        return replace(gate_statistics(base, head, "welch_log"), test="either", companion=raw)
    raw_scale = test == "welch_raw"
    with np.errstate(divide="ignore", invalid="ignore"):
        x = base if raw_scale else np.log(base)
        y = head if raw_scale else np.log(head)
    trim = TRIM.get(test, 0.0)
    loc_x, d_x, f_x, n_x = _side(x, trim)
    loc_y, d_y, f_y, n_y = _side(y, trim)
    constant = _constant(base) & _constant(head)
    # Per-sample variances for projections to more runs: what the trimmed test will see there, trimmed
    # from the first sample and no more than the MAD says, so early outliers do not make a row look hopeless.
    if trim:
        robust_x = np.fmin(_side(x, trim, 0)[1], _mad_variance(x) / np.maximum(n_x, 1))
        robust_y = np.fmin(_side(y, trim, 0)[1], _mad_variance(y) / np.maximum(n_y, 1))
    else:
        robust_x, robust_y = d_x, d_y
    if trim:
        degenerate = (d_x + d_y == 0) & ~constant
        if degenerate.any():
            plain_x, plain_y = _side(x, 0.0), _side(y, 0.0)
            loc_x, d_x, f_x = (np.where(degenerate, a, b) for a, b in zip(plain_x[:3], (loc_x, d_x, f_x), strict=True))
            loc_y, d_y, f_y = (np.where(degenerate, a, b) for a, b in zip(plain_y[:3], (loc_y, d_y, f_y), strict=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        se2 = d_x + d_y
        df = se2 * se2 / (d_x * d_x / f_x + d_y * d_y / f_y)
        se = np.sqrt(se2)
    if trim:
        trimmed = (n_x >= TRIM_FROM) | (n_y >= TRIM_FROM)
        df = np.where(trimmed, df * YUEN_DF_FACTOR, df)
    incomplete = (n_x < 2) | (n_y < 2)
    delta = np.where(n_x * n_y > 0, loc_y - loc_x, np.nan)
    se = np.where(incomplete, np.nan, np.where(constant, 0.0, se))
    df = np.where(incomplete | constant, np.nan, df)
    with np.errstate(invalid="ignore"):
        scale = np.where(n_x > 0, loc_x if raw_scale else np.exp(loc_x), np.nan)
    return Stats(
        test=test,
        delta=delta,
        se=se,
        df=df,
        n_base=n_x,
        n_head=n_y,
        scale_base=scale,
        var_base=robust_x * n_x,
        var_head=robust_y * n_y,
        constant=constant & ~incomplete,
    )


def _quantile(df: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Two-sided t quantile ``qt(1 - level/2, df)``; the normal one where df is infinite."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(df), -special.ndtri(level / 2), special.stdtrit(df, 1 - level / 2))


def change_interval(st: Stats, level: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval of the change in percent at ``level`` (e.g. 0.001 for 99.9 %).

    Log tests: ``100 (exp(delta ± q se) - 1)``, the ratio of (trimmed) geometric means.
    ``welch_raw``: ``100 (delta ± q se) / mean(base)``, compare.R's improvement ± accuracy.
    ``either``: the intersection of both tests' intervals at ``level / 2`` each (it excludes
    0 exactly when either test rejects at ``level / 2``).
    """
    level = np.asarray(level, dtype=float)
    if st.companion is not None:
        low_a, high_a = change_interval(replace(st, companion=None), level / 2)
        low_b, high_b = change_interval(st.companion, level / 2)
        return np.fmax(low_a, low_b), np.fmin(high_a, high_b)
    with np.errstate(invalid="ignore"):
        half = np.where(st.se == 0, 0.0, _quantile(st.df, level) * st.se)
    return _to_percent(st, st.delta - half), _to_percent(st, st.delta + half)


def holm_levels(p: np.ndarray, alpha: np.ndarray | float, correction: str = "holm") -> tuple[np.ndarray, np.ndarray]:
    """Which rows the correction rejects, and each row's Holm-consistent interval level.

    Along the last axis (one report per leading index), NaN p-values are not counted.
    Holm: a row rejected at step k gets level ``alpha/(m-k+1)``, every other row
    ``alpha/(m-r)`` with r the rows rejected at its own alpha (``alpha`` may differ per row,
    as per-benchmark rules make it). So ``p < level`` exactly when the row is rejected.
    ``correction="none"``: rejected when ``p < alpha``, level ``alpha``.
    """
    p = np.asarray(p, dtype=float)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), p.shape)
    if correction == "none":
        return p < alpha, alpha.copy()
    if correction != "holm":
        raise ValueError(f"correction must be holm or none, not {correction!r}")
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
    rejected_count = np.empty(flat_alpha.shape, dtype=np.int64)
    for index in range(flat_running.shape[0]):
        rejected_count[index] = np.searchsorted(flat_running[index], flat_alpha[index], side="left")
    rejected_count = rejected_count.reshape(p.shape)
    rejected = valid & (rank < rejected_count)
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(rejected, alpha / (m - rank), alpha / np.maximum(m - rejected_count, 1))
    return rejected, np.where(valid, level, alpha)


def mde(st: Stats, level: np.ndarray | float, power: float = DEFAULT_POWER) -> np.ndarray:
    """The smallest regression (percent, positive) a two-sided test at ``level`` detects with ``power``.

    ``(qt(1 - level/2, df) + qt(power, df)) × se``, as a log ratio (a fall to
    ``exp(-x)``) or as a fraction of the base mean for ``welch_raw``. NaN when incomplete.
    """
    level = np.asarray(level, dtype=float)
    if st.companion is not None:  # either: its log test at half the level
        st, level = replace(st, companion=None), level / 2
    with np.errstate(invalid="ignore"):
        x = np.where(st.se == 0, 0.0, (_quantile(st.df, level) + special.stdtrit(st.df, power)) * st.se)
    return -_to_percent(st, -x)


def _projected(st: Stats, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard error and df with ``runs`` samples a side, the per-sample variances unchanged."""
    trim = TRIM.get(st.test, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_x = st.var_base / runs
        d_y = st.var_head / runs
        trimmed = runs >= TRIM_FROM
        h = runs - 2 * np.where(trimmed, np.floor(trim * runs + 1e-9), 0)
        df = (d_x + d_y) ** 2 / (d_x * d_x / (h - 1) + d_y * d_y / (h - 1))
        df = np.where(trimmed & (trim > 0), df * YUEN_DF_FACTOR, df)
    return np.sqrt(d_x + d_y), df


def decidable(
    st: Stats,
    runs: np.ndarray,
    level: np.ndarray,
    min_effect: np.ndarray | float,
    inconclusive_above: np.ndarray | float,
) -> np.ndarray:
    """Would the row be decided with ``runs`` samples a side at ``level``, its estimate and spread unchanged?"""
    if st.companion is not None:  # either: its log test at half the level
        st, level = replace(st, companion=None), np.asarray(level) / 2
    se, df = _projected(st, runs)
    half = _quantile(df, np.asarray(level, dtype=float)) * se
    low = _to_percent(st, st.delta - half)
    high = _to_percent(st, st.delta + half)
    change = st.change
    min_effect = np.asarray(min_effect, dtype=float)
    floor = np.where(min_effect > 0, min_effect, inconclusive_above)
    significant = (low > 0) | (high < 0)
    return (significant & (np.abs(change) >= min_effect)) | (low > -floor)


def runs_needed(
    st: Stats,
    level: np.ndarray | float,
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: np.ndarray | float = DEFAULT_INCONCLUSIVE_ABOVE,
    *,
    candidates: np.ndarray | None = None,
    levels: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Runs a side after which the row would be decided, assuming its estimate and spread stay (NaN: none).

    ``candidates`` are the run counts to try (default 2 to 10,000), ``levels`` the share
    of ``level`` spent at each (default: all of it, one fixed-runs analysis with that many
    runs; a sequential design passes its remaining looks and their weights). Only
    ``rows`` (default: every row with an estimate) are computed.
    """
    candidates = np.unique(np.round(np.geomspace(2, 10_000, 400))) if candidates is None else np.asarray(candidates)
    shape = np.shape(st.delta)
    out = np.full(shape, np.nan)
    pending = ~np.isnan(st.delta)
    if rows is not None:
        pending &= np.asarray(rows, dtype=bool)
    if not pending.any():
        return out
    picked = subset(st, pending)
    level_picked = np.broadcast_to(np.asarray(level, dtype=float), shape)[pending]
    min_picked = np.broadcast_to(np.asarray(min_effect, dtype=float), shape)[pending]
    floor_picked = np.broadcast_to(np.asarray(inconclusive_above, dtype=float), shape)[pending]
    found = np.full(picked.delta.shape, np.nan)
    open_ = np.ones(picked.delta.shape, dtype=bool)
    for index, runs in enumerate(candidates):
        at = level_picked if levels is None else level_picked * levels[index]
        ok = open_ & decidable(picked, np.asarray(float(runs)), at, min_picked, floor_picked)
        found[ok] = runs
        open_ &= ~ok
        if not open_.any():
            break
    out[pending] = found
    return out


@dataclass(frozen=True)
class Decisions:
    """What ``decide_looks`` concludes per row (arrays of shape ``(..., rows)``)."""

    decision: np.ndarray  # int codes into DECISIONS
    change: np.ndarray  # percent, the last look's estimate
    ci_low: np.ndarray  # percent
    ci_high: np.ndarray
    p_value: np.ndarray  # sequential p-value: min over looks of p / weight (fixed runs: the test's p)
    rejected: np.ndarray  # by the correction
    level: np.ndarray  # Holm-consistent level (before the look's weight)
    mde: np.ndarray  # percent, at the last look's level
    n_base: np.ndarray
    n_head: np.ndarray

    @property
    def names(self) -> np.ndarray:
        return np.asarray(DECISIONS, dtype=object)[self.decision]

    def settled(self) -> np.ndarray:
        """Rows nothing more would change: decided, incomplete or constant (not inconclusive)."""
        return self.decision != INCONCLUSIVE


def decide_looks(
    looks: list[Stats],
    weights: np.ndarray | list[float],
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
    cache: dict | None = None,
    with_mde: bool = True,
) -> Decisions:
    """Decisions from the statistics of every look so far (one ``Stats`` per look, no samples where a row sat out).

    ``weights[k]`` is the share of each row's level spent at look k (fixed runs: ``[1.0]``;
    a sequential design: its alpha-spending increments, summing to at most 1). The
    sequential p-value of a row is ``min_k p_k / weights[k]`` (Bonferroni over looks: valid
    whatever the dependence between looks and whatever the stopping rule); Holm runs over
    those; the interval is the intersection over looks of each look's interval at
    ``level × weights[k]``, so it excludes 0 exactly when the row is rejected.

    Decision, in order: incomplete (fewer than 2 samples a side at the last look);
    constant (constant data, equal means); regression (rejected, interval below 0, change
    ≤ -min_effect); improvement (rejected, interval above 0, change ≥ min_effect);
    unchanged (the interval rules out a regression of min_effect, or of
    ``inconclusive_above`` when min_effect is 0); otherwise inconclusive.

    ``cache`` (a dict kept by the caller across looks of one run) only saves work: each
    look's p-values and intervals are recomputed only for rows whose level changed.
    ``with_mde=False`` leaves ``mde`` NaN (cheaper, for intermediate looks).
    """
    weights = np.asarray(weights, dtype=float)
    if len(looks) == 0 or len(looks) > len(weights):
        raise ValueError("need one weight per look, and at least one look")
    cache = {} if cache is None else cache
    p_seq = None
    for k, st in enumerate(looks):
        if ("p", k) not in cache:
            cache[("p", k)] = st.p_value
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = cache[("p", k)] / weights[k]
        p_seq = ratio if p_seq is None else np.fmin(p_seq, ratio)
    assert p_seq is not None
    p_seq = np.minimum(p_seq, 1.0)
    rejected, level = holm_levels(p_seq, alpha, correction)
    shape = p_seq.shape
    low = np.full(shape, -np.inf)
    high = np.full(shape, np.inf)
    change = np.full(shape, np.nan)
    n_base = np.zeros(shape)
    n_head = np.zeros(shape)
    constant = np.zeros(shape, dtype=bool)
    last_low = np.full(shape, np.nan)
    last_high = np.full(shape, np.nan)
    last_look = np.full(shape, -1)
    for k, st in enumerate(looks):
        present = (st.n_base + st.n_head) > 0  # a row that sat out a look (its file had stopped) has no samples
        usable = present & ~st.incomplete
        at = level * weights[k]
        if ("ci", k) in cache:
            used, look_low, look_high = cache[("ci", k)]
            stale = usable & (used != at)
        else:
            look_low, look_high = np.full(shape, np.nan), np.full(shape, np.nan)
            stale = usable
        if stale.any():
            look_low, look_high = look_low.copy(), look_high.copy()
            look_low[stale], look_high[stale] = change_interval(subset(st, stale), at[stale])
        cache[("ci", k)] = (at, look_low, look_high)
        low = np.where(usable, np.fmax(low, look_low), low)
        high = np.where(usable, np.fmin(high, look_high), high)
        last_low = np.where(usable, look_low, last_low)
        last_high = np.where(usable, look_high, last_high)
        last_look = np.where(usable, k, last_look)
        change = np.where(present, st.change, change)
        n_base = np.where(present, st.n_base, n_base)
        n_head = np.where(present, st.n_head, n_head)
        constant = np.where(present, st.constant, constant)
    mdes = np.full(shape, np.nan)
    if with_mde:
        for k, st in enumerate(looks):
            rows = last_look == k
            if rows.any():
                mdes[rows] = mde(subset(st, rows), (level * weights[k])[rows], power)
    empty = low > high  # the looks' intervals disagree (a coverage failure): keep the last look's
    low = np.where(empty, last_low, low)
    high = np.where(empty, last_high, high)
    tested = np.isfinite(low) & np.isfinite(high)
    low = np.where(tested, low, np.nan)
    high = np.where(tested, high, np.nan)
    min_effect = np.broadcast_to(np.asarray(min_effect, dtype=float), shape)
    floor = np.where(min_effect > 0, min_effect, inconclusive_above)
    decision = np.full(shape, INCONCLUSIVE, dtype=np.int8)
    decision[low > -floor] = UNCHANGED
    decision[rejected & (low > 0) & (change >= min_effect)] = IMPROVEMENT
    decision[rejected & (high < 0) & (change <= -min_effect)] = REGRESSION
    decision[constant & (change == 0)] = CONSTANT
    decision[(n_base < 2) | (n_head < 2) | ~tested & ~constant] = INCOMPLETE
    return Decisions(decision, change, low, high, p_seq, rejected & tested, level, mdes, n_base, n_head)


def decide(
    base: np.ndarray,
    head: np.ndarray,
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    test: str = GATE_TEST,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
    with_mde: bool = True,
) -> Decisions:
    """A fixed-runs analysis: one look with all the samples, the whole level spent on it."""
    st = gate_statistics(base, head, test)
    return decide_looks(
        [st], [1.0], alpha, correction=correction, min_effect=min_effect,
        inconclusive_above=inconclusive_above, power=power, with_mde=with_mde,
    )  # fmt: skip


def verdict(decision: np.ndarray, ignored: np.ndarray | None = None) -> str:
    """``fail`` when a row regresses, else ``inconclusive`` when a row is, else ``pass`` (one report)."""
    decision = np.asarray(decision)
    if ignored is not None:
        decision = decision[~np.asarray(ignored, dtype=bool)]
    if (decision == REGRESSION).any():
        return "fail"
    if (decision == INCONCLUSIVE).any():
        return "inconclusive"
    return "pass"


def verdicts(decision: np.ndarray) -> np.ndarray:
    """``verdict`` along the last axis for many reports at once: 0 pass, 1 fail, 2 inconclusive."""
    fail = (decision == REGRESSION).any(axis=-1)
    undecided = (decision == INCONCLUSIVE).any(axis=-1)
    return np.where(fail, 1, np.where(undecided, 2, 0))


def format_change(change: float, low: float, high: float) -> str:
    """``-12.3 % [-14.1, -10.5]`` (one decimal; ``n/a`` when untested)."""
    if not np.isfinite(change):
        return "n/a"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{change:.1f} %"
    return f"{change:.1f} % [{low:.1f}, {high:.1f}]"


def sample_arrays(samples, keys=None) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """The rates of each (filename, configuration), per side in file order, as NaN-padded arrays.

    ``samples`` has the columns of ``results.read_samples`` (filename, configuration,
    side with categories base/head, rate). ``keys`` orders the rows (e.g. the comparison
    table's ``zip(filename, configuration)``); default: order of first appearance.
    Returns ``(keys, base, head)`` with arrays of shape ``(rows, max samples of that side)``.
    """
    filenames = samples["filename"].to_numpy(dtype=object)
    configurations = samples["configuration"].to_numpy(dtype=object)
    sides = np.asarray(samples["side"].astype(str).to_numpy(dtype=object))
    rates = samples["rate"].to_numpy(dtype=float)
    pairs = list(zip(filenames.tolist(), configurations.tolist(), strict=True))
    if keys is None:
        keys = list(dict.fromkeys(pairs))
    keys = [(str(f), str(c)) for f, c in keys]
    row_of = {key: index for index, key in enumerate(keys)}
    rows = np.array([row_of.get(pair, -1) for pair in pairs], dtype=np.int64)
    arrays = []
    for side in ("base", "head"):
        chosen = (sides == side) & (rows >= 0)
        side_rows = rows[chosen]
        counts = np.bincount(side_rows, minlength=len(keys))
        width = int(counts.max()) if len(side_rows) else 0
        order = np.argsort(side_rows, kind="stable")
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        position = np.empty(len(side_rows), dtype=np.int64)
        position[order] = np.arange(len(side_rows)) - np.repeat(starts, counts)
        out = np.full((len(keys), width), np.nan)
        out[side_rows, position] = rates[chosen]
        arrays.append(out)
    return keys, arrays[0], arrays[1]


def decide_samples(
    samples,
    keys=None,
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    test: str = GATE_TEST,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
):
    """The fixed-runs decision table: one row per key with the JSON's new fields.

    Columns: filename, configuration, decision (a DECISIONS name), change, ci_low,
    ci_high (percent), gate_p (the test's p-value), level (the interval's level), mde
    (percent, at ``power``) and runs_needed (runs a side to decide an inconclusive row, NaN
    otherwise or when 10,000 would not do).
    """
    import pandas as pd

    keys, base, head = sample_arrays(samples, keys)
    st = gate_statistics(base, head, test)
    result = decide_looks(
        [st], [1.0], alpha, correction=correction, min_effect=min_effect,
        inconclusive_above=inconclusive_above, power=power,
    )  # fmt: skip
    needed = runs_needed(st, result.level, min_effect, inconclusive_above)
    needed = np.where(result.decision == INCONCLUSIVE, needed, np.nan)
    return pd.DataFrame(
        {
            "filename": [key[0] for key in keys],
            "configuration": [key[1] for key in keys],
            "decision": result.names,
            "change": result.change,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "gate_p": result.p_value,
            "level": result.level,
            "mde": result.mde,
            "runs_needed": needed,
        }
    )
