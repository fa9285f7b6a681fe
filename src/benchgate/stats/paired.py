"""The gate's test for a duet run (``--pairing duet``): a trimmed one-sample t-test on per-pair log ratios.
``PAIRED_TEST`` aligns each CPU-set assignment's median first (docs/statistics.md, "duet"); ``test_statistics``."""

import warnings

import numpy as np

from benchgate.stats.yuenwelch import Stats, _constant, _mad_variance, _prepare, combine, gate_statistics, yuen

PAIRED_TEST = "paired_cpu_trimmed_log"
PAIRED_TRIM = 0.2
PAIRED_DF_FACTOR = 0.8
# Trimmed from 20 pairs on, not 10: a paired test has n - 1 df, not about 2n - 2, and trimming 10-19 pairs left too
# few at the gate's per-row level (simulated at 10 pairs and 1 % noise: power 0.9 % trimmed, 50.7 % plain).
PAIRED_TRIM_FROM = 20
# An assignment's median is aligned only from this many of its pairs on: with 2-4, two outliers are its median and
# aligning moves them onto the others, leaving no spread (a false change at --runs auto's first looks).
PAIRED_ALIGN_FROM = 5


def _trimmed(d: np.ndarray, valid: np.ndarray, n: np.ndarray, trim: float, trim_from: int = PAIRED_TRIM_FROM):
    """Trimmed mean, squared standard error and df of ``d`` along the last axis (NaN-padded; the mean unrefined)."""
    location, se2, h = yuen(d, np.sort(d, axis=-1), valid, n, trim, trim_from, refine=False)
    return location, se2, np.where(h < n, (h - 1.0) * PAIRED_DF_FACTOR, h - 1.0)


def _nan_reduce(function, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``function`` (nanmedian, nanmin, ...) over the masked entries of the last axis; NaN for none, quietly."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(np.where(mask, x, np.nan), axis=-1)


def _aligned(d: np.ndarray, valid: np.ndarray, strata: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d`` with each CPU-set assignment's median moved to the median of their medians (removing a speed
    difference between the CPU sets), and the number of assignments aligned per row (1: none)."""
    labels = np.unique(strata[valid]).tolist()
    if len(labels) < 2:
        return d, np.ones(d.shape[:-1])
    masks = [valid & (strata == label) for label in labels]
    usable = np.stack([mask.sum(axis=-1) >= PAIRED_ALIGN_FROM for mask in masks])
    medians = np.stack([_nan_reduce(np.nanmedian, d, mask) for mask in masks])
    count = usable.sum(axis=0)
    center = _nan_reduce(np.nanmedian, np.moveaxis(medians, 0, -1), np.moveaxis(usable, 0, -1))
    aligned = d.copy()
    for mask, median, use in zip(masks, medians, usable, strict=True):
        moved = mask & (count >= 2)[..., None] & use[..., None]
        aligned = np.where(moved, d - (median - center)[..., None], aligned)
    return aligned, np.where(count >= 2, count, 1)


def paired_statistics(
    base: np.ndarray, head: np.ndarray, strata: np.ndarray | None = None, trim: float = PAIRED_TRIM
) -> Stats:
    """``PAIRED_TEST``'s statistics per row from NaN-padded paired rates ``(..., rows, pairs)``, ``strata`` each
    pair's CPU-set assignment (None: no aligning); ``var_base``/``var_head`` each hold half the per-pair (robust)
    variance. ``trim`` is for tests/perf/candidates.py's paired candidates."""
    base, head = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.log(head) - np.log(base)
    valid = ~np.isnan(d)
    n = valid.sum(axis=-1)
    aligned_count, raw = np.ones(n.shape), d
    if strata is not None:
        d, aligned_count = _aligned(d, valid, np.asarray(strata))
    location, se2, df = _trimmed(d, valid, n, trim)
    df = df - (aligned_count - 1) * np.where(n >= PAIRED_TRIM_FROM, PAIRED_DF_FACTOR, 1.0)  # one df per aligned level
    plain = _trimmed(d, valid, n, 0.0)
    # Winsorizing can leave no spread on data that has some (most ratios equal): the plain paired t then.
    degenerate = (se2 == 0) & (plain[1] > 0)
    location, se2, df = (np.where(degenerate, a, b) for a, b in zip(plain, (location, se2, df), strict=True))
    # The per-pair variance for projections (as yuenwelch.gate_statistics'): trimmed from the first pair, at most the
    # MAD's, so one early outlier does not make a row look hopeless; before aligning, whose few-pair medians are noise.
    robust_se2 = se2
    if trim:
        mad_se2 = _mad_variance(_prepare(raw)) / np.maximum(n, 1)
        robust_se2 = np.fmin(np.fmin(se2, _trimmed(raw, valid, n, trim, 1)[1]), mad_se2)
        robust_se2 = np.where(robust_se2 > 0, robust_se2, se2)
    incomplete = n < 2
    constant = _constant(_prepare(base)) & _constant(_prepare(head)) & ~incomplete
    se = np.where(incomplete, np.nan, np.where(constant, 0.0, np.sqrt(se2)))
    half = np.where(incomplete, np.nan, robust_se2 * n / 2)
    return Stats(
        test=PAIRED_TEST,
        delta=np.where(n > 0, location, np.nan),
        se=se,
        df=np.where(incomplete | constant, np.nan, df),
        n_base=n,
        n_head=n.copy(),
        var_base=half,
        var_head=half.copy(),
        constant=constant,
    )


def test_statistics(test: str, base: np.ndarray, head: np.ndarray, pairs: tuple | None = None) -> Stats:
    """``test``'s statistics of NaN-padded rates: ``PAIRED_TEST`` takes ``pairs``, the paired rates and CPU-set
    assignments (``adaptivetable.pair_arrays``): per row, the paired test where it has 2 pairs, else the unpaired
    gate test on all its samples."""
    if test != PAIRED_TEST:
        return gate_statistics(base, head, test)
    in_pairs = paired_statistics(*pairs)
    paired_rows = in_pairs.n_base >= 2
    return combine(lambda a, b: np.where(paired_rows, a, b), in_pairs, gate_statistics(base, head))
