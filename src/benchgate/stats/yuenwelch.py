"""The gate's test statistics over NaN-padded rates ``(..., rows, n)``; intervals in percent of the change.
``GATE_TEST``: Yuen's trimmed Welch test on log rates, chosen by tests/perf/simulate_gate.py among candidates.py's."""

from dataclasses import dataclass, fields, replace
from functools import cached_property

import numpy as np
from scipy import special

from benchgate.stats.defaults import DEFAULT_POWER, GATE_TEST

TRIM = {"welch_log": 0.0, "yuen_log": 0.2}  # each test's trimmed share (tests/perf/candidates.py adds its own)
TESTS = tuple(TRIM)
# Below this many samples a side the trimmed tests trim nothing (Welch on log rates): with 20 % trimming
# five samples leave df ~ 4, whose t quantile at the gate's per-row levels (~1e-6) is ~40 times sigma.
TRIM_FROM = 10
# Yuen's statistic has a heavier far tail than t with the Satterthwaite df (p < 1e-5 at 1.2-1.5 times nominal on
# normal data); this df factor brings it to 0.3-0.7 times (2-6 million null rows per n; issue 10's design notes).
YUEN_DF_FACTOR = 0.8


@dataclass(frozen=True)
class Stats:
    """One test's statistics per row (arrays ``(..., rows)``): ``delta`` head minus base (log ratio, or rates).
    ``var_base``/``var_head``: per-sample variances that project to more runs."""

    test: str
    delta: np.ndarray
    se: np.ndarray
    df: np.ndarray
    n_base: np.ndarray
    n_head: np.ndarray
    var_base: np.ndarray
    var_head: np.ndarray
    constant: np.ndarray

    @property
    def incomplete(self) -> np.ndarray:
        return (self.n_base < 2) | (self.n_head < 2)

    @cached_property  # a replay's every look asks again for each earlier look's
    def p_value(self) -> np.ndarray:
        """Two-sided p-value."""
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.delta / self.se
            p = 2 * special.stdtr(self.df, -np.abs(t))
        p = np.where(self.se == 0, np.where(self.delta == 0, 1.0, 0.0), p)
        return np.where(self.incomplete, np.nan, p)

    @property
    def change(self) -> np.ndarray:
        """The estimated change in percent (positive: the head is faster)."""
        return self.percent(self.delta)

    def interval(self, level: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """Two-sided interval of the change (percent) at ``level``."""
        with np.errstate(invalid="ignore"):
            half = np.where(self.se == 0, 0.0, _quantile(self.df, level) * self.se)
        return self.percent(self.delta - half), self.percent(self.delta + half)

    def mde(self, level: np.ndarray | float, power: float = DEFAULT_POWER) -> np.ndarray:
        """The smallest regression (percent, positive) a two-sided test at ``level`` detects with ``power``."""
        with np.errstate(invalid="ignore"):
            x = np.where(self.se == 0, 0.0, (_quantile(self.df, level) + special.stdtrit(self.df, power)) * self.se)
        return -self.percent(-x)

    def percent(self, delta: np.ndarray) -> np.ndarray:
        """``delta`` (the test's units) as a change in percent."""
        with np.errstate(over="ignore", invalid="ignore"):
            return 100 * np.expm1(delta)

    def projected(self, runs: np.ndarray | float, level: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """The interval (percent) at ``level`` with ``runs`` samples a side, estimate and per-sample variances kept."""
        runs, trim = np.asarray(runs, dtype=float), TRIM.get(self.test, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            d_x, d_y = self.var_base / runs, self.var_head / runs
            trimmed = runs >= TRIM_FROM
            h = runs - 2 * np.where(trimmed, np.floor(trim * runs + 1e-9), 0)
            df = (d_x + d_y) ** 2 / (d_x * d_x / (h - 1) + d_y * d_y / (h - 1))
            df = np.where(trimmed & (trim > 0), df * YUEN_DF_FACTOR, df)
            half = _quantile(df, level) * np.sqrt(d_x + d_y)
        return self.percent(self.delta - half), self.percent(self.delta + half)


def combine(function, *parts: Stats) -> Stats:
    """``function`` of the parts' per-row arrays, field by field."""
    names = [item.name for item in fields(parts[0]) if item.name != "test"]
    return replace(parts[0], **{name: function(*(getattr(st, name) for st in parts)) for name in names})


def subset(st: Stats, rows: np.ndarray) -> Stats:
    """The statistics of the rows ``rows`` picks (a boolean mask or row indices), flattened to one axis."""
    return combine(lambda values: np.asarray(values)[rows], st)


@dataclass(frozen=True)
class _Sample:
    """One side's samples (NaN-padded), sorted once for every statistic that needs the order."""

    x: np.ndarray
    ordered: np.ndarray  # sorted along the last axis, NaN last
    valid: np.ndarray
    n: np.ndarray


def _prepare(x: np.ndarray) -> _Sample:
    valid = ~np.isnan(x)
    return _Sample(x, np.sort(x, axis=-1), valid, valid.sum(axis=-1))


def _mean_var(x: np.ndarray, valid: np.ndarray, n: np.ndarray, refine: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance over the valid entries of the last axis (two passes; ``refine``: the mean refined
    by the mean residual, as R does)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(valid, x, 0.0).sum(axis=-1) / n
        deviation = np.where(valid, x - mean[..., None], 0.0)
        if refine:
            mean = mean + deviation.sum(axis=-1) / n
            deviation = np.where(valid, x - mean[..., None], 0.0)
        var = (deviation * deviation).sum(axis=-1) / (n - 1)
    return mean, var


def yuen(
    values: np.ndarray, ordered: np.ndarray, valid: np.ndarray, n: np.ndarray, trim: float, trim_from: int, refine=True
) -> tuple[np.ndarray, ...]:
    """Yuen (1974) along the last axis (NaN-padded ``values``, ``ordered`` sorted): the trimmed mean, its squared
    standard error ``(n - 1) s_w^2 / (h (h - 1))`` from the winsorized variance, and ``h = n - 2g``."""
    g = np.where(n >= trim_from, np.floor(trim * n + 1e-9), 0).astype(np.int64)
    width = max(ordered.shape[-1] - 1, 0)
    low = np.take_along_axis(ordered, np.clip(g, 0, width)[..., None], axis=-1)
    high = np.take_along_axis(ordered, np.clip(n - g - 1, 0, width)[..., None], axis=-1)
    mean_w, var_w = _mean_var(np.clip(values, low, high), valid, n, refine)
    h = n - 2 * g
    with np.errstate(divide="ignore", invalid="ignore"):
        return (mean_w * n - g * (low[..., 0] + high[..., 0])) / h, (n - 1) * var_w / (h * (h - 1.0)), h


def _side(side: _Sample, trim: float, trim_from: int = TRIM_FROM) -> tuple[np.ndarray, ...]:
    """Location, squared standard error, df contribution (h - 1) and sample count of one side."""
    n = side.n
    if trim == 0:
        mean, var = _mean_var(side.x, side.valid, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            return mean, var / n, n - 1.0, n
    trimmed, d, h = yuen(side.ordered, side.ordered, side.valid, n, trim, trim_from)
    return trimmed, d, h - 1.0, n


def _mad_variance(side: _Sample) -> np.ndarray:
    """(1.4826 × median absolute deviation)², a variance that ignores up to half the samples being outliers."""
    x, n = side.x, side.n
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], np.nan)
    width = x.shape[-1] - 1

    def median(values: np.ndarray) -> np.ndarray:
        low = np.take_along_axis(values, np.clip((n - 1) // 2, 0, width)[..., None], axis=-1)[..., 0]
        high = np.take_along_axis(values, np.clip(n // 2, 0, width)[..., None], axis=-1)[..., 0]
        return (low + high) / 2

    center = median(side.ordered)
    spread = median(np.sort(np.abs(x - center[..., None]), axis=-1))
    return np.where(n > 0, (1.4826 * spread) ** 2, np.nan)


def _constant(side: _Sample) -> np.ndarray:
    """Rows whose samples are all equal (False for rows without samples)."""
    ordered, n = side.ordered, side.n
    if ordered.shape[-1] == 0:
        return np.zeros(ordered.shape[:-1], dtype=bool)
    top = np.take_along_axis(ordered, np.maximum(n - 1, 0)[..., None], axis=-1)[..., 0]
    return (n > 0) & (ordered[..., 0] == top)


def gate_statistics(base: np.ndarray, head: np.ndarray, test: str = GATE_TEST) -> Stats:
    """``test``'s statistics for every row of ``base``/``head`` (rates, NaN-padded, last axes may differ).
    A trimmed test whose winsorized variances are both 0 on data that is not constant is Welch on log rates there."""
    base, head = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    # A side without any sample (e.g. a head label absent from the CSV) is one column of padding.
    base = base if base.shape[-1] else np.full((*base.shape[:-1], 1), np.nan)
    head = head if head.shape[-1] else np.full((*head.shape[:-1], 1), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        x, y = np.log(base), np.log(head)
    trim = TRIM[test]
    side_x, side_y = _prepare(x), _prepare(y)
    loc_x, d_x, f_x, n_x = _side(side_x, trim)
    loc_y, d_y, f_y, n_y = _side(side_y, trim)
    # Constant rates have constant logs; the few rows whose logs look constant are checked on the rates,
    # since two different rates can round to one logarithm.
    constant = _constant(side_x) & _constant(side_y)
    for rates in (base, head):
        picked = rates[constant]
        constant[constant] = np.nanmin(picked, axis=-1) == np.nanmax(picked, axis=-1)
    # Per-sample variances for projections to more runs: what the trimmed test will see there, trimmed
    # from the first sample and no more than the MAD says, so early outliers do not make a row look hopeless.
    robust_x, robust_y = d_x, d_y
    if trim:
        robust_x = np.fmin(_side(side_x, trim, 0)[1], _mad_variance(side_x) / np.maximum(n_x, 1))
        robust_y = np.fmin(_side(side_y, trim, 0)[1], _mad_variance(side_y) / np.maximum(n_y, 1))
        degenerate = (d_x + d_y == 0) & ~constant
        if degenerate.any():
            plain_x, plain_y = _side(side_x, 0.0), _side(side_y, 0.0)
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
    return Stats(
        test=test,
        delta=delta,
        se=se,
        df=df,
        n_base=n_x,
        n_head=n_y,
        var_base=robust_x * n_x,
        var_head=robust_y * n_y,
        constant=constant & ~incomplete,
    )


def _quantile(df: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Two-sided t quantile ``qt(1 - level/2, df)``; the normal one where df is infinite."""
    df, level = np.broadcast_arrays(np.asarray(df, dtype=float), np.asarray(level, dtype=float))
    infinite = np.isinf(df)
    with np.errstate(invalid="ignore"):
        if not infinite.any():  # the usual case: no second special function over every row
            return special.stdtrit(df, 1 - level / 2)
        return np.where(infinite, -special.ndtri(level / 2), special.stdtrit(df, 1 - level / 2))


def regression_floor(min_effect: np.ndarray | float, inconclusive_above: np.ndarray | float) -> np.ndarray:
    """The regression (percent) a row must rule out for ``unchanged``: its min-effect, else inconclusive-above."""
    return np.where(np.asarray(min_effect, dtype=float) > 0, min_effect, inconclusive_above)


def unchanged_level(
    confidence: float | None, level: np.ndarray | float, weight: np.ndarray | float = 1.0
) -> np.ndarray:
    """The two-sided level of ``unchanged``'s one-sided bound at ``confidence`` (None: ``level``), ``weight`` spent."""
    if confidence is None:
        return np.asarray(level, dtype=float)
    return np.broadcast_to(2 * (1 - confidence / 100) * np.asarray(weight, dtype=float), np.shape(level))


RUN_COUNTS = np.unique(np.round(np.geomspace(2, 10_000, 400)))  # the run counts a side projections try


def first_runs(counts, shape: tuple, decided, above: np.ndarray | float = 0.0) -> np.ndarray:
    """Per row, the first of ``counts`` above ``above`` at which ``decided(index, runs)`` holds (NaN: none)."""
    out = np.full(shape, np.nan)
    for index, runs in enumerate(counts):
        with np.errstate(invalid="ignore"):
            out[np.isnan(out) & (runs > above) & decided(index, runs)] = runs
        if not np.isnan(out).any():
            break
    return out
