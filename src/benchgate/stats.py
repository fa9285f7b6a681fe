"""The statistics of Node's benchmark/compare.R, as pure functions over DataFrames.

For every (filename, configuration): the improvement of the mean rate, Welch's
two-sided t-test (R's ``t.test`` default), compare.R's confidence stars and its
accuracy columns, plus a Holm-adjusted p-value over the whole report.

Where compare.R is fragile we do better, on purpose:
- fewer than 2 samples on a side: NA stars and accuracy, like compare.R, and the
  row is flagged ``incomplete``;
- zero variance on both sides (R's t.test stops with "data are essentially
  constant" and compare.R prints nothing): equal means give p = 1, different
  means give p = 0, accuracy 0, and the table goes on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from benchgate.results import BASE, HEAD

STAR_LEVELS = (("***", 0.001), ("**", 0.01), ("*", 0.05))
RISKS = {"*": 0.05, "**": 0.01, "***": 0.001}
# R's t.test refuses data whose standard error is below this fraction of the means.
_ESSENTIALLY_CONSTANT = 10 * np.finfo(float).eps

COMPARISON_COLUMNS = [
    "filename",
    "configuration",
    "n_base",
    "n_head",
    "mean_base",
    "mean_head",
    "improvement",
    "t_statistic",
    "df",
    "p_value",
    "p_adjusted",
    "confidence",
    "accuracy_1",
    "accuracy_2",
    "accuracy_3",
    "incomplete",
]


def stars(p_values: np.ndarray) -> np.ndarray:
    """compare.R's confidence column for raw p-values ("NA" where the p-value is NaN)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, "", dtype=object)
    out[p < 0.05] = "*"
    out[p < 0.01] = "**"
    out[p < 0.001] = "***"
    out[np.isnan(p)] = "NA"
    return out


def holm_adjust(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, as R's ``p.adjust(p, "holm")`` (NaN stays NaN, not counted)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return adjusted
    order = valid[np.argsort(p[valid], kind="mergesort")]
    m = order.size
    factors = m - np.arange(m)
    stepped = np.maximum.accumulate(np.minimum(1.0, factors * p[order]))
    adjusted[order] = stepped
    return adjusted


def compare_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per (filename, configuration) with compare.R's statistics, sorted as compare.R sorts.

    ``samples`` has the columns of ``results.read_samples``. The result has
    COMPARISON_COLUMNS; improvement and accuracy are in percent, NaN where
    compare.R prints NA.
    """
    grouped = samples.groupby(["filename", "configuration", "side"], sort=False, observed=True)["rate"]
    summary = grouped.agg(["count", "mean", "var"]).unstack("side")
    table = pd.DataFrame(index=summary.index)
    for side in (BASE, HEAD):
        for stat in ("count", "mean", "var"):
            column = (stat, side)
            table[f"{stat}_{side}"] = summary[column] if column in summary.columns else np.nan
    table = table.reset_index()

    n_base = table["count_base"].fillna(0).to_numpy(dtype=float)
    n_head = table["count_head"].fillna(0).to_numpy(dtype=float)
    mean_base = table["mean_base"].to_numpy(dtype=float)
    mean_head = table["mean_head"].to_numpy(dtype=float)
    var_base = table["var_base"].to_numpy(dtype=float)
    var_head = table["var_head"].to_numpy(dtype=float)

    with np.errstate(divide="ignore", invalid="ignore"):
        improvement = (mean_head - mean_base) / mean_base * 100
        complete = (n_base > 1) & (n_head > 1)
        se_base = var_base / n_base
        se_head = var_head / n_head
        shared_se = np.sqrt(se_base + se_head)
        df = (se_base + se_head) ** 2 / (se_base**2 / (n_base - 1) + se_head**2 / (n_head - 1))
        t_statistic = (mean_head - mean_base) / shared_se
        p_value = 2 * scipy_stats.t.sf(np.abs(t_statistic), df)

        constant = complete & (shared_se < _ESSENTIALLY_CONSTANT * np.maximum(np.abs(mean_base), np.abs(mean_head)))
        same = constant & (mean_base == mean_head)
        t_statistic[constant] = np.where(same[constant], 0.0, np.sign(mean_head - mean_base)[constant] * np.inf)
        p_value[constant] = np.where(same[constant], 1.0, 0.0)
        df[constant] = n_base[constant] + n_head[constant] - 2

        accuracy = {}
        for index, risk in enumerate(RISKS.values(), start=1):
            quantile = scipy_stats.t.ppf(1 - risk / 2, df)
            value = quantile * shared_se / mean_base * 100
            value[constant] = 0.0
            value[~complete] = np.nan
            accuracy[index] = value

    for array in (t_statistic, df, p_value):
        array[~complete] = np.nan

    result = pd.DataFrame(
        {
            "filename": table["filename"],
            "configuration": table["configuration"],
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
            "accuracy_1": accuracy[1],
            "accuracy_2": accuracy[2],
            "accuracy_3": accuracy[3],
            "incomplete": ~complete,
        }
    )
    # compare.R groups on paste(filename, configuration) and prints in that order (C collation).
    names = (result["filename"] + " " + result["configuration"]).to_numpy(dtype=str)
    order = np.argsort(names, kind="mergesort")
    return result.iloc[order].reset_index(drop=True)
