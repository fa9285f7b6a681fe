"""The statistics of Node's benchmark/compare.R over DataFrames, following R step by step to every printed digit.
Where compare.R is fragile (under 2 samples, constant data, names that paste alike) we do better: docs/statistics.md."""

import numpy as np
import pandas as pd
from scipy import special

RISKS = {"*": 0.05, "**": 0.01, "***": 0.001}
# R's t.test refuses data whose standard error is below this fraction of the larger mean.
_ESSENTIALLY_CONSTANT = 10 * np.finfo(float).eps

COMPARISON_COLUMNS = [
    *("filename", "configuration", "n_base", "n_head", "mean_base", "mean_head", "improvement", "t_statistic", "df"),
    *("p_value", "p_adjusted", "confidence", "accuracy_1", "accuracy_2", "accuracy_3", "incomplete", "constant"),
]


def stars(p_values: np.ndarray) -> np.ndarray:
    """compare.R's confidence column for raw p-values ("NA" where the p-value is NaN)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, "", dtype=object)
    for label, level in RISKS.items():  # the smallest level last, so that it wins
        out[p < level] = label
    out[np.isnan(p)] = "NA"
    return out


def holm_adjust(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, as R's ``p.adjust(p, "holm")``: NaN stays NaN and is not counted."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    factors = order.size - np.arange(order.size)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(factors * p[order]))
    return adjusted


def _two_pass_moments(cell: np.ndarray, rate: np.ndarray, cells: int) -> tuple[np.ndarray, ...]:
    """Count, mean and sample variance per cell, computed like R's mean() and var() (two passes)."""
    count = np.bincount(cell, minlength=cells).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(cell, weights=rate, minlength=cells) / count
        # R refines the mean with the mean residual; it matters for large rates with a small spread.
        mean = mean + np.bincount(cell, weights=rate - mean[cell], minlength=cells) / count
        deviation = rate - mean[cell]
        variance = np.bincount(cell, weights=deviation * deviation, minlength=cells) / (count - 1)
    variance[count < 2] = np.nan
    return count, mean, variance


def compare_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per (filename, configuration) of the samples with ``COMPARISON_COLUMNS`` (NaN where compare.R prints
    NA), ordered by ``filename + " " + configuration`` in code-point order, as compare.R under the C locale."""
    codes, pairs = pd.MultiIndex.from_arrays([samples["filename"], samples["configuration"]]).factorize()
    filenames, configurations = [str(pair[0]) for pair in pairs], [str(pair[1]) for pair in pairs]
    groups = len(filenames)
    side = samples["side"].cat.codes.to_numpy().astype(np.int64) if len(samples) else np.zeros(0, np.int64)
    count, mean, variance = _two_pass_moments(codes * 2 + side, samples["rate"].to_numpy(dtype=float), 2 * groups)
    n_base, n_head = count[0::2], count[1::2]
    mean_base, mean_head = mean[0::2], mean[1::2]
    var_base, var_head = variance[0::2], variance[1::2]

    complete = (n_base > 1) & (n_head > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        improvement = (mean_head - mean_base) / mean_base * 100
        # R's t.test.default, with x = "new" (its factor levels sort "new" before "old").
        stderr_head = np.sqrt(var_head / n_head)
        stderr_base = np.sqrt(var_base / n_base)
        stderr = np.sqrt(stderr_head**2 + stderr_base**2)
        df = stderr**4 / (stderr_head**4 / (n_head - 1) + stderr_base**4 / (n_base - 1))
        t_statistic = (mean_head - mean_base) / stderr
        p_value = 2 * special.stdtr(df, -np.abs(t_statistic))
        constant = complete & (stderr < _ESSENTIALLY_CONSTANT * np.maximum(np.abs(mean_base), np.abs(mean_head)))
        difference = np.sign(mean_head - mean_base)
        t_statistic[constant] = np.where(difference[constant] == 0, 0.0, difference[constant] * np.inf)
        p_value[constant] = np.where(difference[constant] == 0, 1.0, 0.0)
        df[constant] = np.nan
        accuracy = {}
        for index, risk in enumerate(RISKS.values(), start=1):
            value = special.stdtrit(df, 1 - risk / 2) * stderr / mean_base * 100
            value[constant] = 0.0
            accuracy[f"accuracy_{index}"] = value
    for array in (t_statistic, df, p_value, *accuracy.values()):
        array[~complete] = np.nan

    result = pd.DataFrame(
        {
            "filename": filenames,
            "configuration": configurations,
            "n_base": n_base.astype(int),
            "n_head": n_head.astype(int),
            "mean_base": mean_base,
            "mean_head": mean_head,
            "improvement": improvement,
            "t_statistic": t_statistic,
            "df": df,
            "p_value": p_value,
            "p_adjusted": holm_adjust(p_value),
            "confidence": stars(p_value),
            **accuracy,
            "incomplete": ~complete,
            "constant": constant,
        },
        columns=COMPARISON_COLUMNS,
    )
    order = sorted(range(groups), key=lambda i: (f"{filenames[i]} {configurations[i]}", filenames[i]))
    return result.iloc[order].reset_index(drop=True)
