"""The gate's decision table of a report: per-row decisions from the samples, as a DataFrame.

``sample_arrays`` turns the samples (``results.read_samples``' frame) into NaN-padded arrays
per side; ``decide_samples`` is the fixed-runs analysis over them with the columns the
reports show (decision, change, interval, p, level, mde, runs needed).
"""

from __future__ import annotations

import numpy as np

from benchgate.stats.decisions import DEFAULT_ALPHA, INCONCLUSIVE, Decisions, decide
from benchgate.stats.defaults import AUTO_MAX_RUNS
from benchgate.stats.resolution import Coarsening, reachable, runs_to_reach, trusted_variance
from benchgate.stats.yuenwelch import (
    DEFAULT_INCONCLUSIVE_ABOVE,
    DEFAULT_POWER,
    DEFAULT_UNCHANGED_CONFIDENCE,
    GATE_TEST,
    Stats,
    gate_statistics,
    regression_floor,
    runs_needed,
    subset,
    unchanged_level,
)


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
    if not keys:
        return keys, np.zeros((0, 0)), np.zeros((0, 0))
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


def sitting_out(rows: int) -> Stats:
    """The statistics of ``rows`` rows without samples."""
    nothing = np.full((rows, 1), np.nan)
    return gate_statistics(nothing, nothing)


def undecided_decisions(rows: int) -> Decisions:
    """Decisions of rows no look has seen: inconclusive, nothing known."""
    nan = np.full(rows, np.nan)
    codes = np.full(rows, INCONCLUSIVE, dtype=np.int8)
    return Decisions(
        codes,
        nan,
        nan,
        nan,
        nan,
        np.zeros(rows, bool),
        nan,
        nan,
        np.zeros(rows),
        np.zeros(rows),
        nan,
        nan,
        np.full(rows, -1),
        sitting_out(rows),
    )


def noise_sigma(st: Stats) -> np.ndarray:
    """Each row's per-sample noise in percent from trusted data only: the base side's robust variance (log scale:
    a ratio), so that a head cannot make a row look noisier (a duet row: its pairs' spread)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma = np.sqrt(np.asarray(st.var_base, dtype=float))
        return 100 * (sigma if st.log else sigma / st.scale_base)


def decision_frame(keys, result: Decisions, needed: np.ndarray, noise: tuple | None = None):
    """The decision table of ``result`` (one row per key): the columns ``decide_samples`` documents."""
    import pandas as pd

    nan = np.full(len(keys), np.nan)
    sigma, noisy_mde = noise if noise is not None else (nan, nan)
    gated = nan if result.gated_at is None else result.gated_at
    coarse = np.zeros(len(keys), dtype=bool) if result.coarse is None else result.coarse

    return pd.DataFrame(
        {
            "filename": [key[0] for key in keys],
            "configuration": [key[1] for key in keys],
            "decision": result.names,
            "change": result.change,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "ci_level": result.level,
            "gate_p": result.p_value,
            "mde": result.mde,
            "sigma": sigma,
            "noisy_mde": noisy_mde,
            "runs_needed": np.where(result.decision == INCONCLUSIVE, needed, np.nan),
            "resolution": result.resolution,
            "gated_at": gated,
            "coarse": coarse,
        }
    )


def undecided_runs(
    result: Decisions,
    min_effect: np.ndarray | float,
    inconclusive_above: float,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
) -> np.ndarray:
    """Per inconclusive row, the runs a side after which it would be decided (NaN: none up to 10,000; elsewhere).

    Said in the terms of its resolution: the count at which its bound would rule out its target
    (``resolution.runs_to_reach``: a conservative sigma, t quantiles); a row whose estimate is beyond
    its target can only be decided by a rejection, projected from its estimate (``runs_needed``).
    Only more runs than the row has count.
    """
    current = result.current
    rows = result.decision == INCONCLUSIVE
    runs = np.fmin(current.n_base, current.n_head)
    target = np.broadcast_to(regression_floor(min_effect, inconclusive_above), rows.shape)
    reach = np.full(rows.shape, np.nan)
    if rows.any():
        picked = subset(current, rows)
        level = unchanged_level(unchanged_confidence, result.level, 1.0)[rows]
        reach[rows] = runs_to_reach(picked, target[rows], level, runs[rows])
    rejection = runs_needed(
        current,
        result.level,
        min_effect,
        inconclusive_above,
        rows=rows & np.isnan(reach),
        above=runs,
        unchanged_confidence=unchanged_confidence,
    )
    return np.where(np.isnan(reach), rejection, reach)


def decision_table(
    keys,
    result: Decisions,
    min_effect: np.ndarray | float,
    inconclusive_above: float,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
    *,
    max_runs: int = AUTO_MAX_RUNS,
    last_share: float = 1.0,
    prior_var: np.ndarray | None = None,
):
    """``decision_frame`` of ``result``, with the runs each undecided row would need and its noise.

    ``sigma``: the row's per-sample noise (percent, trusted: main's history where ``prior_var`` knows it,
    else the base's); ``noisy_mde``: the resolution it would reach with ``max_runs`` runs a side at that
    noise and an estimate of 0 (``last_share``: the unchanged risk's share there).
    """
    needed = undecided_runs(result, min_effect, inconclusive_above, unchanged_confidence)
    current = result.current
    level = unchanged_level(unchanged_confidence, result.level, last_share)
    noisy_mde = reachable(current, trusted_variance(current, prior_var), float(max_runs), level, 0.5)
    sigma = noise_sigma(current)
    if prior_var is not None and current.log:  # the noise that gated the row is the one the reports show
        sigma = np.where(np.isfinite(prior_var), 100 * np.sqrt(prior_var), sigma)
    return decision_frame(keys, result, needed, (sigma, noisy_mde))


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
    unchanged_confidence: float = DEFAULT_UNCHANGED_CONFIDENCE,
    coarsening: Coarsening | None = None,
):
    """The fixed-runs decision table: one row per key with the JSON's new fields.

    Columns: filename, configuration, decision (a DECISIONS name), change, ci_low,
    ci_high (percent), ci_level (the Holm-consistent level of the interval), gate_p (the
    test's p-value), mde (percent, the regression found with probability ``power``), sigma
    and noisy_mde (``decision_table``) and runs_needed (runs a side to decide an inconclusive
    row, NaN otherwise or when 10,000 would not do), resolution (the smallest regression its evidence rules
    out), gated_at (the one it must rule out to be unchanged) and coarse (gated at more than its target,
    ``coarsening``). ``alpha`` and ``min_effect`` may be given per key.
    """
    keys, base, head = sample_arrays(samples, keys)
    if not keys:
        return decision_frame([], undecided_decisions(0), np.zeros(0))
    alpha = np.asarray(alpha, dtype=float)
    min_effect = np.asarray(min_effect, dtype=float)
    result = decide(
        base,
        head,
        alpha,
        test=test,
        correction=correction,
        min_effect=min_effect,
        inconclusive_above=inconclusive_above,
        power=power,
        unchanged_confidence=unchanged_confidence,
        coarsening=coarsening,
    )
    prior_var = None if coarsening is None else coarsening.trusted_var
    return decision_table(keys, result, min_effect, inconclusive_above, unchanged_confidence, prior_var=prior_var)
