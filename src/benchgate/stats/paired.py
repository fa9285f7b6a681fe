"""The gate's test for a duet run (``--pairing duet``): a paired, trimmed test on the per-pair log ratios.

In a duet, base and head of one configuration and iteration ran at the same moment on two
disjoint CPU sets, so interference that hit the machine then (a neighbour, a frequency drop)
hit both. The log ratio ``d = log(head rate) - log(base rate)`` of each pair cancels it; what is
left is each side's own noise and the outliers of either side. ``paired_statistics`` is the
Tukey–McLaughlin one-sample trimmed t-test on ``d``: the 20 % trimmed mean of the ratios
(from ``PAIRED_TRIM_FROM`` pairs on; below that the plain mean, as the unpaired gate test does), its
winsorized standard error ``sqrt((n - 1) s_w^2 / (h (h - 1)))`` with ``h = n - 2g`` kept, and
``h - 1`` degrees of freedom shrunk by ``PAIRED_DF_FACTOR`` (as Yuen's are: the trimmed statistic's
far tail is heavier than t's). Chosen by tests/perf/simulate_gate.py's duet mode (model in
tests/perf/duet_model.py) against the gate's targets, over the plain paired t on log ratios,
which one slow sample of either side moves.

The result is a ``yuenwelch.Stats`` like the unpaired test's, so ``decisions.decide_looks``
(Holm, intervals, decisions, mde) is unchanged. Rows without two pairs (a file run alone, or
whose pairs were dropped) fall back to the unpaired gate test on their samples.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from benchgate.stats.decisions import DEFAULT_ALPHA, decide_looks
from benchgate.stats.defaults import DEFAULT_UNCHANGED_CONFIDENCE
from benchgate.stats.yuenwelch import (
    DEFAULT_INCONCLUSIVE_ABOVE,
    DEFAULT_POWER,
    STAT_FIELDS,
    Stats,
    gate_statistics,
)

PAIRED_TEST = "paired_cpu_trimmed_log"
PAIRED_TESTS = ("paired_t_log", "paired_trimmed_log", PAIRED_TEST)
PAIRED_TRIM = 0.2
PAIRED_DF_FACTOR = 0.8
# Trimmed from 20 pairs on, not from 10 as each side of the unpaired test: a paired test has n - 1 df, not about
# 2n - 2, and trimming 10-19 pairs left too few at the gate's per-row level (simulated at 10 pairs: power at 1 %
# noise 0.9 % trimmed, 50.7 % plain, no more false fails; the same from 20 pairs on).
PAIRED_TRIM_FROM = 20
# A CPU-set assignment's median is aligned only from this many pairs of it on: with 2-4, two outliers in one
# assignment are its median, aligning moves them onto the others and leaves no spread (a false change; simulated
# at --runs auto's first looks, 5-9 pairs). Below, the assignment's speed difference is noise of either sign.
PAIRED_ALIGN_FROM = 5


def _mean_var(x: np.ndarray, valid: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(valid, x, 0.0).sum(axis=-1) / n
        deviation = np.where(valid, x - mean[..., None], 0.0)
        return mean, (deviation * deviation).sum(axis=-1) / (n - 1)


def _trimmed(d: np.ndarray, valid: np.ndarray, n: np.ndarray, trim: float, trim_from: int = PAIRED_TRIM_FROM):
    """Trimmed mean, squared standard error and df of ``d`` along the last axis (NaN-padded)."""
    g = np.where(n >= trim_from, np.floor(trim * n + 1e-9), 0).astype(np.int64)
    ordered = np.sort(d, axis=-1)
    width = max(d.shape[-1] - 1, 0)
    low = np.take_along_axis(ordered, np.clip(g, 0, width)[..., None], axis=-1)
    high = np.take_along_axis(ordered, np.clip(n - g - 1, 0, width)[..., None], axis=-1)
    mean_w, var_w = _mean_var(np.clip(d, low, high), valid, n)
    h = n - 2 * g
    with np.errstate(divide="ignore", invalid="ignore"):
        location = (mean_w * n - g * (low[..., 0] + high[..., 0])) / h
        se2 = (n - 1) * var_w / (h * (h - 1.0))
    df = np.where(g > 0, (h - 1.0) * PAIRED_DF_FACTOR, h - 1.0)
    return location, se2, df


def _nan_reduce(function, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``function`` (nanmedian, nanmin, ...) over the masked entries of the last axis; NaN for none, quietly."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(np.where(mask, x, np.nan), axis=-1)


def _median(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _nan_reduce(np.nanmedian, x, mask)


def _aligned(d: np.ndarray, valid: np.ndarray, strata: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d`` with each CPU-set assignment's median moved to the median of the assignments' medians.

    A speed difference between the CPU sets shifts the ratios of one assignment up and of the other
    down; aligning the assignments' medians removes that shift and keeps each ratio's own deviation,
    so the trimmed test then trims the outliers of all pairs together. Returns the aligned ratios and
    the number of assignments aligned per row (1 where there was nothing to align).
    """
    labels = np.unique(strata[valid]).tolist()
    medians, present = [], []
    for label in labels:
        mask = valid & (strata == label)
        present.append(mask.sum(axis=-1) >= PAIRED_ALIGN_FROM)
        medians.append(_median(d, mask))
    if len(labels) < 2:
        return d, np.ones(d.shape[:-1])
    medians_array = np.stack(medians)
    usable = np.stack(present)
    count = usable.sum(axis=0)
    with np.errstate(invalid="ignore"):
        center = _median(np.moveaxis(medians_array, 0, -1), np.moveaxis(usable, 0, -1))
    aligned = d.copy()
    for index, label in enumerate(labels):
        mask = valid & (strata == label) & (count >= 2)[..., None] & usable[index][..., None]
        aligned = np.where(mask, d - (medians_array[index] - center)[..., None], aligned)
    return aligned, np.where(count >= 2, count, 1)


def paired_statistics(
    base: np.ndarray, head: np.ndarray, test: str = PAIRED_TEST, strata: np.ndarray | None = None
) -> Stats:
    """``test``'s statistics per row from paired rates: ``base[..., i]`` and ``head[..., i]`` are one pair.

    Both arrays have the shape ``(..., rows, pairs)``, NaN where a row has fewer pairs. ``strata``
    (same shape, integers) is each pair's CPU-set assignment: ``PAIRED_TEST`` first aligns the
    assignments' medians (``_aligned``), so a speed difference between the CPU sets cancels, then
    trims the aligned ratios together.
    A row with fewer than 2 pairs is incomplete; rows whose rates are constant on both sides are
    constant. ``var_base``/``var_head`` each hold half the per-pair (robust) variance, so the projections
    to more runs (``yuenwelch.runs_needed``, the futility rule) see the paired standard error.
    """
    if test not in PAIRED_TESTS:
        raise ValueError(f"paired test must be one of {', '.join(PAIRED_TESTS)}, not {test!r}")
    base = np.asarray(base, dtype=float)
    head = np.asarray(head, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.log(head) - np.log(base)
    valid = ~np.isnan(d)
    n = valid.sum(axis=-1)
    trim = 0.0 if test == "paired_t_log" else PAIRED_TRIM
    aligned_count, raw = np.ones(n.shape), d
    if test == PAIRED_TEST and strata is not None:
        d, aligned_count = _aligned(d, valid, np.asarray(strata))
    location, se2, df = _trimmed(d, valid, n, trim)
    df = df - (aligned_count - 1) * np.where(n >= PAIRED_TRIM_FROM, PAIRED_DF_FACTOR, 1.0)  # one df per aligned level
    plain_location, plain_se2, plain_df = _trimmed(d, valid, n, 0.0)
    # Winsorizing can leave no spread on data that has some (most ratios equal): the plain paired t then.
    degenerate = (se2 == 0) & (plain_se2 > 0)
    location = np.where(degenerate, plain_location, location)
    se2 = np.where(degenerate, plain_se2, se2)
    df = np.where(degenerate, plain_df, df)
    side_constant = [
        (n > 0) & (_nan_reduce(np.nanmin, x, valid) == _nan_reduce(np.nanmax, x, valid))
        if x.shape[-1]
        else np.zeros(n.shape, bool)
        for x in (base, head)
    ]
    # The per-pair variance for projections to more pairs (the futility rule of --runs auto, runs_needed): as the
    # unpaired test's, trimmed from the first pair and no more than the MAD says, so that one early outlier
    # does not make a row look hopeless before the test trims (yuenwelch.gate_statistics does the same). Taken
    # on the ratios before aligning: with a few pairs per CPU-set assignment the medians aligned are noise,
    # which more pairs remove.
    robust_se2 = se2
    if trim:
        center = _median(raw, valid)
        spread = _median(np.abs(raw - center[..., None]), valid)
        with np.errstate(divide="ignore", invalid="ignore"):
            mad_se2 = (1.4826 * spread) ** 2 / np.maximum(n, 1)
        robust_se2 = np.fmin(np.fmin(se2, _trimmed(raw, valid, n, trim, 1)[1]), mad_se2)
        robust_se2 = np.where(robust_se2 > 0, robust_se2, se2)
    incomplete = n < 2
    constant = side_constant[0] & side_constant[1] & ~incomplete
    se = np.where(incomplete, np.nan, np.where(constant, 0.0, np.sqrt(se2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.exp(_nan_reduce(np.nanmean, np.log(base), valid)) if base.shape[-1] else n * np.nan
    half = np.where(incomplete, np.nan, robust_se2 * n / 2)
    return Stats(
        test=test,
        delta=np.where(n > 0, location, np.nan),
        se=se,
        df=np.where(incomplete | constant, np.nan, df),
        n_base=n,
        n_head=n.copy(),
        scale_base=np.where(n > 0, scale, np.nan),
        var_base=half,
        var_head=half.copy(),
        constant=constant,
    )


def combined_statistics(paired: Stats, unpaired: Stats, use_paired: np.ndarray) -> Stats:
    """Per row, the paired statistics where ``use_paired``, the unpaired test's elsewhere (one ``Stats``)."""
    values = {name: np.where(use_paired, getattr(paired, name), getattr(unpaired, name)) for name in STAT_FIELDS}
    return replace(paired, **values)


def decide_pairs(
    base_pairs: np.ndarray,
    head_pairs: np.ndarray,
    base: np.ndarray,
    head: np.ndarray,
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    strata: np.ndarray | None = None,
    test: str = PAIRED_TEST,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
    with_mde: bool = True,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
):
    """A fixed-runs analysis of a duet run: the paired test where a row has 2 pairs, else the unpaired one.

    ``base_pairs``/``head_pairs`` are the paired rates per row (``paired_statistics``); ``base``/``head``
    every sample of the row, paired or not (the unpaired fallback). Holm runs over all rows together.
    """
    paired = paired_statistics(base_pairs, head_pairs, test, strata)
    unpaired = gate_statistics(base, head)
    st = combined_statistics(paired, unpaired, paired.n_base >= 2)
    return decide_looks(
        [st],
        [1.0],
        alpha,
        correction=correction,
        min_effect=min_effect,
        inconclusive_above=inconclusive_above,
        power=power,
        with_mde=with_mde,
        unchanged_confidence=unchanged_confidence,
    )


def pair_arrays(
    samples, base_index: np.ndarray, head_index: np.ndarray, keys, strata: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paired rates of each key (filename, configuration) as NaN-padded ``(rows, pairs)`` arrays.

    ``base_index``/``head_index`` are the rows of ``samples`` (``results.read_samples``' frame) of
    each pair's base and head sample (``results.pairs.pair_indices``); pairs keep their order.
    ``strata`` (an integer per pair, its CPU-set assignment) comes back in the same layout, -1 as padding.
    """
    strata = np.zeros(len(base_index), dtype=np.int64) if strata is None else np.asarray(strata, dtype=np.int64)
    filenames = samples["filename"].to_numpy(dtype=object)
    configurations = samples["configuration"].to_numpy(dtype=object)
    rates = samples["rate"].to_numpy(dtype=float)
    row_of = {(str(f), str(c)): index for index, (f, c) in enumerate(keys)}
    rows = np.array(
        [row_of.get((str(filenames[i]), str(configurations[i])), -1) for i in base_index.tolist()], dtype=np.int64
    )
    kept = rows >= 0
    rows, base_index, head_index, strata = rows[kept], base_index[kept], head_index[kept], strata[kept]
    counts = np.bincount(rows, minlength=len(keys)) if len(keys) else np.zeros(0, np.int64)
    width = max(int(counts.max()) if len(rows) else 0, 1)  # one column of padding when nothing is paired
    order = np.argsort(rows, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(keys) else np.zeros(0, np.int64)
    position = np.empty(len(rows), dtype=np.int64)
    position[order] = np.arange(len(rows)) - np.repeat(starts, counts)
    base, head = np.full((len(keys), width), np.nan), np.full((len(keys), width), np.nan)
    base[rows, position] = rates[base_index]
    head[rows, position] = rates[head_index]
    assignment = np.full((len(keys), width), -1, dtype=np.int64)
    assignment[rows, position] = strata
    return base, head, assignment


def decide_paired_samples(
    samples,
    pairs: tuple,
    keys,
    alpha: np.ndarray | float = DEFAULT_ALPHA,
    *,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = DEFAULT_POWER,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
):
    """``gatetable.decide_samples`` for a duet run: the same decision table, decided on the pairs.

    ``pairs`` is (base rows, head rows, CPU-set assignment per pair) as ``results.rundirs.load`` gives it.
    """
    from benchgate.stats import gatetable

    keys, base, head = gatetable.sample_arrays(samples, keys)
    if not keys:
        return gatetable.decision_frame([], gatetable.undecided_decisions(0), np.zeros(0))
    strata = pairs[2] if len(pairs) > 2 else None
    base_pairs, head_pairs, assignment = pair_arrays(samples, np.asarray(pairs[0]), np.asarray(pairs[1]), keys, strata)
    min_effect = np.asarray(min_effect, dtype=float)
    result = decide_pairs(
        base_pairs,
        head_pairs,
        base,
        head,
        np.asarray(alpha, dtype=float),
        strata=assignment,
        correction=correction,
        min_effect=min_effect,
        inconclusive_above=inconclusive_above,
        power=power,
        unchanged_confidence=unchanged_confidence,
    )
    return gatetable.decision_table(keys, result, min_effect, inconclusive_above, unchanged_confidence)
