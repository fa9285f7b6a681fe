"""Each comparison's resolution, and the resolution it is gated at.

A comparison's **resolution** is the smallest regression its evidence rules out: minus the one-sided
bound ``unchanged`` is judged by (``decisions.decide_looks``' ``unchanged_low``, at
``unchanged-confidence``, its risk spent over the looks). A row is ``unchanged`` when its resolution is
below the regression it is gated at; "what this run could not have seen" and the runs a row needs are
said in the same terms.

The resolution a row is **gated at** is its target (``inconclusive-above``, 10 %, or its min-effect)
unless its noise could not reach that by the runs it is planned to get (max-runs; a fixed run: its runs).
Then it is gated at the best resolution it can reach (``reachable``), up to ``max-resolution`` (25 %);
a row that cannot reach even that is gated at its target, as before (and holds the verdict when
undecided). ``reachable`` is the regression a row rules out with probability ``RESOLUTION_POWER`` when
nothing changed, at the noise of **trusted data only**: the base side's samples (both sides assumed as
noisy), or main's history on the same runner, never the head's, so that a pull request cannot make a row
noisy enough to be gated more loosely. A duet run's paired statistics mix both sides: without history
its rows are gated at their target.

The runs-to-decide projection (``runs_to_reach``) asks the same question of more runs: the run count at
which the row's resolution would reach its target with probability ``PROJECTION_POWER``, from a
conservative sigma (its upper ``SIGMA_CONFIDENCE`` bound from the base's samples) and t quantiles, so
that few runs do not promise too much (tests/perf/simulate_gate.py measures how often a row rerun at
the projected count is decided).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from benchgate.stats.defaults import DEFAULT_MAX_RESOLUTION
from benchgate.stats.yuenwelch import TRIM, TRIM_FROM, YUEN_DF_FACTOR, Stats

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
    """How rows that cannot reach their target are gated: the ceiling, the runs they are planned to get.

    ``runs``: the runs a side at the plan's end (None: each row's base samples, a fixed run);
    ``share``: the unchanged risk's share at that look; ``trusted_var``: per row, a per-sample
    variance of log rates from main's history (NaN: use the base's samples).
    """

    max_resolution: float | None = DEFAULT_MAX_RESOLUTION  # None: strict, every row at its target
    runs: float | None = None
    share: float = 1.0
    trusted_var: np.ndarray | None = None


def trusted_variance(st: Stats, prior: np.ndarray | None = None, confidence: float | None = None) -> np.ndarray:
    """Each row's per-sample variance from trusted data: ``prior`` (history) where known, else the base's
    (``confidence``: its upper bound at that confidence, ``conservative_variance``)."""
    if st.test.startswith(PAIRED_PREFIX):
        own = np.full(np.shape(st.delta), np.nan)
    else:
        own = np.asarray(st.var_base) if confidence is None else conservative_variance(st, confidence)
    if prior is None:
        return np.asarray(own, dtype=float)
    prior = np.broadcast_to(np.asarray(prior, dtype=float), np.shape(own))
    return np.where(np.isfinite(prior), prior, own)


def _se_df(st: Stats, var: np.ndarray, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard error and df of the gate's test with ``runs`` samples a side of per-sample variance ``var``."""
    trim = 0.0 if st.test.startswith(PAIRED_PREFIX) else TRIM.get(st.test, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        trimmed = runs >= TRIM_FROM
        h = runs - 2 * np.where(trimmed, np.floor(trim * runs + 1e-9), 0)
        df = 2 * (h - 1.0)  # Welch-Satterthwaite with equal variances and counts
        df = np.where(trimmed & (trim > 0), df * YUEN_DF_FACTOR, df)
        return np.sqrt(2 * var / runs), df


def _half_width(st: Stats, var, runs, level, power: float) -> np.ndarray:
    """``(t_level + t_power) × se`` in the test's units, with ``runs`` samples a side of per-sample variance ``var``."""
    se, df = _se_df(st, np.asarray(var, dtype=float), np.asarray(runs, dtype=float))
    with np.errstate(invalid="ignore"):
        return (special.stdtrit(df, 1 - np.asarray(level, dtype=float) / 2) + special.stdtrit(df, power)) * se


def _regression_percent(st: Stats, x: np.ndarray) -> np.ndarray:
    """The regression (percent, positive) a fall of ``x`` in the test's units is (log ratio, or raw rate)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return -100 * np.expm1(-x) if st.log else 100 * x / np.asarray(st.scale_base)


def reachable(
    st: Stats, var: np.ndarray, runs: np.ndarray | float, level: np.ndarray | float, power: float = RESOLUTION_POWER
) -> np.ndarray:
    """The regression (percent) a row with per-sample variance ``var`` a side rules out with probability ``power``
    at ``runs`` a side when nothing changed, by the bound at the two-sided ``level`` (``unchanged_level``)."""
    return _regression_percent(st, _half_width(st, var, runs, level, power))


def gated_at(
    st: Stats, floor: np.ndarray, level: np.ndarray, coarsening: Coarsening | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the resolution it is gated at, whether that is coarser than its target, and its reachable one.

    ``floor``: each row's target; ``level``: its unchanged bound's two-sided level at the plan's end.
    The reachable resolution is the one a row reaches with probability ``RESOLUTION_POWER`` at its
    trusted sigma's upper ``GATE_SIGMA_CONFIDENCE`` bound; a row gated coarser than its target is gated
    there, or at the ceiling when that is further, as long as it reaches the ceiling half the time at its
    sigma. Strict (``coarsening`` None or no ceiling): every row at its target.
    """
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

    ``observed`` (a projection, which decides nothing): at least what the test's own standard error says
    per sample, since the robust variance of very few samples can be near 0 whatever the noise.
    """
    n = np.asarray(st.n_base, dtype=float)
    var = np.asarray(st.var_base, dtype=float)
    if observed:
        with np.errstate(invalid="ignore"):
            var = np.fmax(var, np.asarray(st.se, dtype=float) ** 2 * np.fmin(n, np.asarray(st.n_head)) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = (n - 1) / special.chdtri(n - 1, confidence)
    return var * np.where(n > 1, factor, np.nan)


def runs_to_reach(
    st: Stats,
    floor: np.ndarray,
    level: np.ndarray,
    above: np.ndarray,
    candidates: np.ndarray | None = None,
    shares: np.ndarray | None = None,
) -> np.ndarray:
    """Per row, the fewest runs a side above ``above`` at which it would rule out ``floor`` (percent) with
    probability ``PROJECTION_POWER``, its estimate (never above 0) and its conservative sigma (NaN: none up to
    the last candidate). ``level``: the bound's two-sided level (``shares``: its share at each candidate)."""
    candidates = np.unique(np.round(np.geomspace(2, 10_000, 400))) if candidates is None else np.asarray(candidates)
    var = conservative_variance(st, observed=True)
    estimate = np.fmin(np.asarray(st.delta, dtype=float), 0.0)  # a faster head is not counted on
    floor = np.asarray(floor, dtype=float)
    out = np.full(np.shape(st.delta), np.nan)
    for index, runs in enumerate(candidates):
        level_here = np.asarray(level) * (1.0 if shares is None else shares[index])
        ruled_out = _regression_percent(st, _half_width(st, var, float(runs), level_here, PROJECTION_POWER) - estimate)
        with np.errstate(invalid="ignore"):
            done = np.isnan(out) & (runs > above) & (ruled_out < floor)
        out[done] = runs
        if not np.isnan(out).any():
            break
    return out


PRIOR_RUNS = 10  # main's most recent runs on the same runner fingerprint that give a row's prior sigma
PRIOR_MIN_RUNS = 3  # fewer stored runs than this: the row falls back to the base's samples


def prior_variance(spreads: list[list[float]] | tuple, recent: int = PRIOR_RUNS) -> np.ndarray:
    """Per row, the per-sample variance of log rates main's history gives (NaN: too few runs, use the base's).

    ``spreads[i]``: row i's stored ``log_spread`` (the standard deviation of its log rates in one run; the
    history's ``Point.log_spread``) of main's runs on this runner fingerprint, oldest first. The median of the
    last ``recent`` squared spreads: one noisy run among them does not set the row's gate. The gate's test
    sees about this variance per sample (its trimmed variance is within 5 % of it at 30 normal samples).
    """
    out = np.full(len(spreads), np.nan)
    for index, row in enumerate(spreads):
        values = np.asarray(row, dtype=float)[-recent:]
        values = values[np.isfinite(values) & (values > 0)]
        if len(values) >= PRIOR_MIN_RUNS:
            out[index] = float(np.median(values**2))
    return out


def prior_for(keys, known) -> np.ndarray | None:
    """Per key ``(filename, configuration)``, its prior variance in ``known`` (a mapping; NaN: none, the base's
    samples decide); None when ``known`` is empty, so that a run without history is decided as before."""
    if not known:
        return None
    return np.array([known.get((str(f), str(c)), np.nan) for f, c in keys], dtype=float)
