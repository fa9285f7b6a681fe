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

from dataclasses import dataclass

import numpy as np

from benchgate.stats.gatetests import (  # noqa: F401 - re-exported: the decisions' public API
    DEFAULT_INCONCLUSIVE_ABOVE,
    DEFAULT_POWER,
    GATE_TEST,
    TESTS,
    TRIM,
    TRIM_FROM,
    YUEN_DF_FACTOR,
    Stats,
    change_interval,
    decidable,
    gate_statistics,
    mde,
    runs_needed,
    subset,
)

DECISIONS = ("regression", "improvement", "unchanged", "inconclusive", "incomplete", "constant")
REGRESSION, IMPROVEMENT, UNCHANGED, INCONCLUSIVE, INCOMPLETE, CONSTANT = range(6)
VERDICTS = ("pass", "fail", "inconclusive")
DEFAULT_ALPHA = 0.001


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
