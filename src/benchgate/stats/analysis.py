"""The one analysis: ``analyze(run_data, policy) -> Analysis``: compare.R's table, each row decided by the gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from benchgate.stats import adaptivetable
from benchgate.stats.decisions import format_change
from benchgate.stats.gate import DECISION_COLUMNS, THRESHOLDS, GatePolicy, RowRules, row_rules
from benchgate.stats.paired import PAIRED_TEST
from benchgate.stats.welch import COMPARISON_COLUMNS, compare_samples
from benchgate.stats.yuenwelch import GATE_TEST, regression_floor

if TYPE_CHECKING:
    import pandas as pd

    from benchgate.results.runrecord import RunSummary

COMPARE_R_TEST = "compare.R"  # gate_test of the rows compare.R's p-value rule decided


class Verdict(StrEnum):
    """What the statistics say of a run (``outcome.Outcome`` adds accepted and error)."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"


ANALYSIS_COLUMNS = (
    *COMPARISON_COLUMNS,
    *("gating", "gate_reason", "ignored", *DECISION_COLUMNS, "noisy", "coarse", "undecided", "min_effect", "gate_test"),
)


@dataclass(frozen=True)
class RunData:
    """What a run measured: its samples, an adaptive run's ``shards`` (its looks, replayed), a duet run's ``pairs``
    (decided on them), and run.json's ``prior`` (per key, main's history variance), so that every analysis gates
    each row as the run did."""

    samples: pd.DataFrame
    shards: Sequence = ()
    pairs: tuple | None = None
    prior: Mapping[tuple[str, str], float] | None = None

    @classmethod
    def load(cls, arguments: list[str]) -> tuple[RunData, RunSummary]:
        """Run directories or CSVs read as one run (``results.rundirs.load``): ``(RunData, RunSummary)``."""
        from benchgate.results import rundirs

        samples, run, shards = rundirs.load(list(arguments))
        return cls(samples, shards, run.pairs, run.prior), run


@dataclass(frozen=True)
class Analysis:
    """The analysed run: ``table`` has ``ANALYSIS_COLUMNS`` (one row per comparison), whatever decided."""

    table: pd.DataFrame
    policy: GatePolicy
    samples: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def verdict(self) -> Verdict:
        return verdict(self.table)

    @property
    def untested(self) -> str | None:
        return untested_reason(self.table)


def analyze(run_data: RunData, policy: GatePolicy) -> Analysis:
    """compare.R's table of ``run_data``'s samples, each row decided as ``run_data`` and ``policy`` say: by an
    adaptive run's replayed looks, else by its samples (a duet run's: its pairs)."""
    comparisons = compare_samples(run_data.samples)
    if policy.rule == "compare-r":
        return Analysis(compare_r_table(comparisons, policy), policy, run_data.samples)
    keys = list(zip(comparisons["filename"], comparisons["configuration"], strict=True))
    # main's history (``prior``) gates each row as the run recorded it
    if run_data.shards:
        decided = adaptivetable.decide_shards(list(run_data.shards), keys, policy, run_data.prior)
    else:
        decided = adaptivetable.decide_samples(run_data.samples, keys, policy, run_data.pairs, run_data.prior)
    test = PAIRED_TEST if run_data.pairs is not None else GATE_TEST  # a duet run: decided on its pairs
    return Analysis(decisions_table(comparisons, policy, decided, test), policy, run_data.samples)


def decisions_table(
    comparisons: pd.DataFrame,
    policy: GatePolicy,
    decided: Mapping,
    gate_test: str = GATE_TEST,
    rules: RowRules | None = None,
) -> pd.DataFrame:
    """``comparisons`` with the gate's columns from ``decided`` (a table or columns, one row each, in order; a column
    it lacks is NaN); ``gate_test``: what decided; ``rules``: the rows' ``row_rules`` if the caller has them."""
    result = comparisons.copy()
    for column in DECISION_COLUMNS:
        result[column] = np.asarray(decided[column]) if column in decided else np.nan
    rules = row_rules(result["filename"], policy) if rules is None else rules
    judged = np.asarray(rules.judged, dtype=bool)
    effect = np.asarray(rules.min_effect, dtype=float)  # a rule's own, else the policy's
    decision = result["decision"].to_numpy(dtype=object)
    gating = judged & (decision == "regression")
    if gate_test == COMPARE_R_TEST:  # its regressions gate from the minimum effect on
        gating &= np.abs(result["change"].to_numpy(dtype=float)) >= effect
    reasons = np.full(len(result), "", dtype=object)
    for index in np.flatnonzero(gating):
        reasons[index] = _reason(result.iloc[index], rules.threshold[index], policy.correction, gate_test)
        reasons[index] += f", |effect| >= {effect[index]:g} %" if effect[index] > 0 else ""
    floor = regression_floor(effect, policy.inconclusive_above)
    sigma = result["sigma"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        # Gated at more than its target: its trusted noise could not reach it.
        result["coarse"] = judged & (result["gated_at"].to_numpy(dtype=float) > floor)
        # Too noisy to gate: no runs up to max-runs could rule out its floor at its noise, or beyond its budget.
        beyond = sigma > np.asarray(rules.max_sigma, dtype=float)
        noisy = (result["noisy_mde"].to_numpy(dtype=float) >= floor) | beyond
    inconclusive = judged & (decision == "inconclusive")
    result["gating"] = gating
    result["gate_reason"] = reasons
    result["ignored"] = np.asarray(rules.ignored, dtype=bool)
    result["noisy"] = inconclusive & noisy
    result["undecided"] = inconclusive & ~beyond
    result["min_effect"] = effect
    result["gate_test"] = gate_test
    return result[list(ANALYSIS_COLUMNS)]


def _reason(row: pd.Series, threshold: str, correction: str, gate_test: str) -> str:
    """Why a row gates: its change, and the p-value below its level."""
    if gate_test == COMPARE_R_TEST:
        p_name = "Holm-adjusted p" if correction == "holm" else "p"
        level = f"{THRESHOLDS[threshold]:g} ({threshold})"
        return f"{row['change']:.2f} % regression, {p_name} = {row['gate_p']:.3g} < {level}"
    where = "after Holm correction" if correction == "holm" else "without correction"
    return (
        f"{format_change(row['change'], row['ci_low'], row['ci_high'])} regression: {gate_test} p = "
        f"{row['gate_p']:.3g} < {row['ci_level']:.3g}, the {threshold} level {where}"
    )


_ACCURACY_AT = {"*": "accuracy_1", "**": "accuracy_2", "***": "accuracy_3", "off": "accuracy_3"}


def compare_r_table(comparisons: pd.DataFrame, policy: GatePolicy) -> pd.DataFrame:
    """compare.R's p-value rule: a judged row gates when improvement < 0, its (Holm-adjusted) p-value is below its
    level and |improvement| at least its minimum effect; no power estimate, so no row is undecided or noisy."""
    rules = row_rules(comparisons["filename"], policy)
    p_values = comparisons["p_adjusted" if policy.correction == "holm" else "p_value"].to_numpy(dtype=float)
    improvement = comparisons["improvement"].to_numpy(dtype=float)
    level = np.asarray(rules.alpha, dtype=float)
    half = np.array([comparisons[_ACCURACY_AT[t]].iloc[i] for i, t in enumerate(rules.threshold)], dtype=float)
    significant = p_values < level
    decision = np.where(significant & (improvement < 0), "regression", "unchanged").astype(object)
    decision[significant & (improvement > 0)] = "improvement"
    for flag in ("constant", "incomplete"):  # a constant row's p is 0 or 1 (welch): significant ones keep theirs
        decision[comparisons[flag].to_numpy(dtype=bool) & (decision == "unchanged")] = flag
    interval = dict(ci_low=improvement - half, ci_high=improvement + half, ci_level=level)
    decided = dict(decision=decision, change=improvement, gate_p=p_values, **interval)
    return decisions_table(comparisons, policy, decided, COMPARE_R_TEST, rules)


def untested_reason(table: pd.DataFrame) -> str | None:
    """Why the gate could test nothing (every comparison not ignored lacks 2 samples a side); None when one was."""
    considered = table[~table["ignored"]]
    if not len(considered) or not bool(considered["incomplete"].all()):
        return None
    for side in ("head", "base"):
        if int(considered[f"n_{side}"].sum()) == 0:
            return f"no comparison could be tested: the {side} has no samples ({len(considered)} comparisons)"
    return (
        f"no comparison could be tested: all {len(considered)} have fewer than 2 samples on a side "
        "(the t-test needs at least 2 runs per binary)"
    )


def verdict(table: pd.DataFrame) -> Verdict:
    """FAIL when a row gates or nothing could be tested, else INCONCLUSIVE when a judged row is undecided."""
    if bool(table["gating"].any()) or untested_reason(table) is not None:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE if bool(table["undecided"].any()) else Verdict.PASS
