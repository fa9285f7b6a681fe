"""Each comparison's resolution and the resolution it is gated at (docs/statistics.md, "Resolution").
Only trusted noise (the base's samples or main's history, never the head's) decides how coarsely a row is gated."""

from dataclasses import dataclass

import numpy as np
from scipy import special

from benchgate.stats.defaults import DEFAULT_MAX_RESOLUTION
from benchgate.stats.yuenwelch import RUN_COUNTS, TRIM, TRIM_FROM, YUEN_DF_FACTOR, Stats, first_runs

# The chance that a row at zero change reaches the resolution it is gated at: a report of 400 rows passes
# A/A at Node's noise only if few rows fail to (tests/perf/simulate_gate.py, docs/statistics.md).
RESOLUTION_POWER = 0.999
PROJECTION_POWER = 0.8  # "about N runs a side would decide it": with this probability at that count
SIGMA_CONFIDENCE = 0.8  # the projection's sigma: this upper confidence bound of the base's (chi-square)
# The gate's: a few base samples underestimate sigma as often as not, and a row gated at a resolution its
# noise cannot reach holds the verdict; an upper bound keeps that rare (the head never enters it)
GATE_SIGMA_CONFIDENCE = 0.99
PAIRED_PREFIX = "paired"  # benchgate.stats.paired's tests, whose variances mix both sides


@dataclass(frozen=True)
class Coarsening:
    """How rows that cannot reach their target are gated (``runs``: a side at the plan's end, None: the base's).
    ``share``: the unchanged risk's share at that look; ``trusted_var``: per-row history variance (NaN: none)."""

    max_resolution: float | None = DEFAULT_MAX_RESOLUTION  # None: strict, every row at its target
    runs: float | None = None
    share: float = 1.0
    trusted_var: np.ndarray | None = None


def trusted_variance(st: Stats, prior: np.ndarray | None = None, confidence: float | None = None) -> np.ndarray:
    """Each row's per-sample variance from ``prior`` (history) where known, else the base's (at ``confidence``)."""
    if st.test.startswith(PAIRED_PREFIX):
        own = np.full(np.shape(st.delta), np.nan)
    else:
        own = np.asarray(st.var_base) if confidence is None else conservative_variance(st, confidence)
    if prior is None:
        return np.asarray(own, dtype=float)
    prior = np.broadcast_to(np.asarray(prior, dtype=float), np.shape(own))
    return np.where(np.isfinite(prior), prior, own)


def _half_width(st: Stats, var, runs, level, power: float) -> np.ndarray:
    """``(t_level + t_power) × se`` in the test's units, with ``runs`` samples a side of per-sample variance ``var``."""
    var, runs = np.asarray(var, dtype=float), np.asarray(runs, dtype=float)
    trim = TRIM.get(st.test, 0.0)  # 0 for the paired tests
    with np.errstate(divide="ignore", invalid="ignore"):
        trimmed = runs >= TRIM_FROM
        h = runs - 2 * np.where(trimmed, np.floor(trim * runs + 1e-9), 0)
        df = 2 * (h - 1.0)  # Welch-Satterthwaite with equal variances and counts
        df = np.where(trimmed & (trim > 0), df * YUEN_DF_FACTOR, df)
        se = np.sqrt(2 * var / runs)
    with np.errstate(invalid="ignore"):
        return (special.stdtrit(df, 1 - np.asarray(level, dtype=float) / 2) + special.stdtrit(df, power)) * se


def reachable(
    st: Stats, var: np.ndarray, runs: np.ndarray | float, level: np.ndarray | float, power: float = RESOLUTION_POWER
) -> np.ndarray:
    """The regression (percent) ruled out with probability ``power`` at ``runs`` a side of ``var``, nothing changed."""
    return -st.percent(-_half_width(st, var, runs, level, power))  # a fall of that width, in percent


def gated_at(
    st: Stats, floor: np.ndarray, level: np.ndarray, coarsening: Coarsening | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the resolution it is gated at (``floor``: its target), whether coarser, and its reach (at the upper
    ``GATE_SIGMA_CONFIDENCE`` bound of trusted sigma; gated there, capped, if it reaches the ceiling half the time)."""
    floor = np.asarray(floor, dtype=float)
    if coarsening is None or coarsening.max_resolution is None:
        return floor, np.zeros(floor.shape, dtype=bool), np.full(floor.shape, np.nan)
    runs = st.n_base if coarsening.runs is None else coarsening.runs
    ceiling = coarsening.max_resolution
    reach = reachable(st, trusted_variance(st, coarsening.trusted_var, GATE_SIGMA_CONFIDENCE), runs, level)
    median = reachable(st, trusted_variance(st, coarsening.trusted_var), runs, level, 0.5)
    with np.errstate(invalid="ignore"):
        coarse = (reach > floor) & (median <= ceiling) & (ceiling > floor) & ~np.asarray(st.constant)
    return np.where(coarse, np.fmin(reach, ceiling), floor), coarse, reach


def conservative_variance(st: Stats, confidence: float = SIGMA_CONFIDENCE, *, observed: bool = False) -> np.ndarray:
    """The base's per-sample variance scaled to its upper ``confidence`` bound: ``(n - 1) / chi2_(1-c)(n - 1)``.
    ``observed`` (projections): at least the test's own se per sample (few samples' robust variance can be ~0)."""
    n = np.asarray(st.n_base, dtype=float)
    var = np.asarray(st.var_base, dtype=float)
    if observed:
        with np.errstate(invalid="ignore"):
            var = np.fmax(var, np.asarray(st.se, dtype=float) ** 2 * np.fmin(n, np.asarray(st.n_head)) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = (n - 1) / special.chdtri(n - 1, confidence)
    return var * np.where(n > 1, factor, np.nan)


def runs_to_reach(st: Stats, floor: np.ndarray, level: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Per row, the fewest runs a side above ``above`` ruling out ``floor`` (``PROJECTION_POWER``, estimate <= 0)."""
    var = conservative_variance(st, observed=True)
    estimate = np.fmin(np.asarray(st.delta, dtype=float), 0.0)  # a faster head is not counted on
    floor = np.asarray(floor, dtype=float)

    def reached(_, runs) -> np.ndarray:
        half = _half_width(st, var, float(runs), np.asarray(level), PROJECTION_POWER)
        return -st.percent(estimate - half) < floor

    return first_runs(RUN_COUNTS, np.shape(st.delta), reached, above)


PRIOR_RUNS = 10  # main's most recent runs on the same runner fingerprint that give a row's prior sigma
PRIOR_MIN_RUNS = 3  # fewer stored runs than this: the row falls back to the base's samples


def prior_variance(spreads: list[list[float]] | tuple, recent: int = PRIOR_RUNS) -> np.ndarray:
    """Per row, the median (one noisy run does not set the gate) of main's last ``recent`` squared ``log_spread``."""
    out = np.full(len(spreads), np.nan)
    for index, row in enumerate(spreads):
        values = np.asarray(row, dtype=float)[-recent:]
        values = values[np.isfinite(values) & (values > 0)]
        if len(values) >= PRIOR_MIN_RUNS:
            out[index] = float(np.median(values**2))
    return out


def prior_for(keys, known) -> np.ndarray | None:
    """Per key, its prior variance in the mapping ``known`` (NaN: none); None when ``known`` is empty."""
    if not known:
        return None
    return np.array([known.get((str(f), str(c)), np.nan) for f, c in keys], dtype=float)
