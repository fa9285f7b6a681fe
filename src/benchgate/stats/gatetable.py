"""The gate's decision table of a report's samples: per-side (or per-pair) arrays, decisions, a DataFrame."""

from __future__ import annotations

import numpy as np

from benchgate.stats.decisions import DEFAULT_ALPHA, INCONCLUSIVE, Decisions, decide_looks
from benchgate.stats.defaults import AUTO_MAX_RUNS
from benchgate.stats.paired import duet_statistics
from benchgate.stats.resolution import Coarsening, reachable, runs_to_reach, trusted_variance
from benchgate.stats.yuenwelch import (
    DEFAULT_INCONCLUSIVE_ABOVE,
    DEFAULT_UNCHANGED_CONFIDENCE,
    GATE_TEST,
    Stats,
    gate_statistics,
    regression_floor,
    runs_needed,
    subset,
    unchanged_level,
)


def key_rows(samples, keys) -> np.ndarray:
    """Each sample's row: the index of its (filename, configuration) in ``keys`` (-1: not one of them)."""
    row_of = {(str(f), str(c)): index for index, (f, c) in enumerate(keys)}
    pairs = zip(
        samples["filename"].to_numpy(dtype=object), samples["configuration"].to_numpy(dtype=object), strict=True
    )
    return np.array([row_of.get((str(f), str(c)), -1) for f, c in pairs], dtype=np.int64)


def _padded(rows: np.ndarray, values: np.ndarray, count: int, fill=np.nan, width: int = 0) -> np.ndarray:
    """``values`` laid out ``(count, widest row)``, each row's entries in their order, ``fill`` as padding."""
    counts = np.bincount(rows, minlength=count)
    order = np.argsort(rows, kind="stable")
    position = np.empty(len(rows), dtype=np.int64)
    position[order] = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    out = np.full((count, max(int(counts.max()) if len(rows) else 0, width)), fill, dtype=np.asarray(values).dtype)
    out[rows, position] = values
    return out


def sample_arrays(samples, keys=None) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """``(keys, base, head)``: each key's rates per side, NaN-padded ``(rows, n)`` (keys default: as they appear)."""
    if keys is None:
        keys = list(dict.fromkeys(zip(samples["filename"].tolist(), samples["configuration"].tolist(), strict=True)))
    keys = [(str(f), str(c)) for f, c in keys]
    if not keys:
        return keys, np.zeros((0, 0)), np.zeros((0, 0))
    rows = key_rows(samples, keys)
    sides = samples["side"].astype(str).to_numpy(dtype=object)
    rates = samples["rate"].to_numpy(dtype=float)
    chosen = [(sides == side) & (rows >= 0) for side in ("base", "head")]
    base, head = (_padded(rows[mask], rates[mask], len(keys)) for mask in chosen)
    return keys, base, head


def pair_arrays(
    samples, base_index: np.ndarray, head_index: np.ndarray, keys, strata: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each key's paired rates (pairs: rows of ``samples``) NaN-padded ``(rows, pairs)``, and ``strata`` (-1 pads)."""
    base_index, head_index = np.asarray(base_index, dtype=np.int64), np.asarray(head_index, dtype=np.int64)
    strata = np.zeros(len(base_index), dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    rows = key_rows(samples, keys)[base_index]
    kept = rows >= 0
    rows, rates = rows[kept], samples["rate"].to_numpy(dtype=float)
    # One column of padding when nothing is paired.
    base, head = (_padded(rows, rates[index[kept]], len(keys), width=1) for index in (base_index, head_index))
    return base, head, _padded(rows, strata[kept], len(keys), -1, width=1)


def sitting_out(rows: int) -> Stats:
    """The statistics of ``rows`` rows without samples."""
    nothing = np.full((rows, 1), np.nan)
    return gate_statistics(nothing, nothing)


def undecided_decisions(rows: int) -> Decisions:
    """Decisions of rows no look has seen: inconclusive, nothing known."""
    nan, no, codes = np.full(rows, np.nan), np.zeros(rows, dtype=bool), np.full(rows, INCONCLUSIVE, dtype=np.int8)
    return Decisions(codes, nan, nan, nan, nan, no, nan, nan, nan, nan, sitting_out(rows), nan, nan, no)


def noise_sigma(st: Stats) -> np.ndarray:
    """Each row's per-sample noise (percent) from the base side's robust variance only, which the head cannot move."""
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma = np.sqrt(np.asarray(st.var_base, dtype=float))
        return 100 * (sigma if st.log else sigma / st.scale_base)


def undecided_runs(
    result: Decisions,
    min_effect: np.ndarray | float,
    inconclusive_above: float,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
) -> np.ndarray:
    """Per inconclusive row, the runs a side after which it would be decided: its bound reaching its target
    (``resolution.runs_to_reach``), else rejected (``runs_needed``); NaN: none up to 10,000, or decided."""
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
    """The decision table of ``result``, one row per key; ``noisy_mde``: the resolution reached at ``max_runs`` with
    the trusted noise (``sigma``, history's where known) and an estimate of 0 (``last_share``: the risk spent)."""
    import pandas as pd

    needed = undecided_runs(result, min_effect, inconclusive_above, unchanged_confidence)
    current = result.current
    level = unchanged_level(unchanged_confidence, result.level, last_share)
    sigma = noise_sigma(current)
    if prior_var is not None and current.log:  # the noise that gated the row is the one the reports show
        sigma = np.where(np.isfinite(prior_var), 100 * np.sqrt(prior_var), sigma)
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
            "noisy_mde": reachable(current, trusted_variance(current, prior_var), float(max_runs), level, 0.5),
            "runs_needed": np.where(result.decision == INCONCLUSIVE, needed, np.nan),
            "resolution": result.resolution,
            "gated_at": result.gated_at,
            "coarse": result.coarse,
        }
    )


def decide_samples(
    samples,
    keys=None,
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    pairs: tuple | None = None,
    test: str = GATE_TEST,
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    unchanged_confidence: float = DEFAULT_UNCHANGED_CONFIDENCE,
    coarsening: Coarsening | None = None,
    **options,
):
    """The fixed-runs decision table, one row per key (``alpha``, ``min_effect`` per key or one).
    ``pairs``: a duet run's (base rows, head rows, CPU-set assignment per pair), decided on the pairs."""
    keys, base, head = sample_arrays(samples, keys)
    if not keys:
        return decision_table([], undecided_decisions(0), min_effect, inconclusive_above, unchanged_confidence)
    if pairs is None:
        st = gate_statistics(base, head, test)
    else:
        strata = pairs[2] if len(pairs) > 2 else None
        base_pairs, head_pairs, assignment = pair_arrays(samples, pairs[0], pairs[1], keys, strata)
        st = duet_statistics(base_pairs, head_pairs, base, head, strata=assignment)
    shared = dict(
        min_effect=np.asarray(min_effect, dtype=float),
        inconclusive_above=inconclusive_above,
        unchanged_confidence=unchanged_confidence,
    )
    result = decide_looks([st], [1.0], np.asarray(alpha, dtype=float), coarsening=coarsening, **shared, **options)
    return decision_table(keys, result, prior_var=None if coarsening is None else coarsening.trusted_var, **shared)
