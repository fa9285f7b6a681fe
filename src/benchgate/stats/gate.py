"""The gate: which comparisons fail a pull request, which are undecided, and why.

With the samples (every benchgate command), each row gets the gate's decision
(``benchgate.stats.decisions``: Yuen's trimmed test on log rates, Holm over the report at the
threshold's level): a row gates when it is a ``regression`` of at least the minimum effect,
and is undecided when ``inconclusive`` (its interval cannot rule out a regression of
``inconclusive_above``, 10 %, or of the minimum effect). Without samples (a bare
comparison table, as some tests build), the row gates by compare.R's own numbers instead:
improvement < 0, p-value after the correction below the threshold's level, |improvement| at
least the minimum effect. Per-benchmark rules (by glob on the file name) may change the
threshold or minimum effect of some rows, or ignore them.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchgate.stats.defaults import DEFAULT_INCONCLUSIVE_ABOVE, DEFAULT_MAX_RESOLUTION, DEFAULT_UNCHANGED_CONFIDENCE

if TYPE_CHECKING:  # pandas and numpy cost ~0.4 s to import; the runner loads this module before any benchmark
    import pandas as pd

THRESHOLDS = {"*": 0.05, "**": 0.01, "***": 0.001, "off": None}
CORRECTIONS = ("holm", "none")
MAX_MIN_EFFECT = 1000.0  # percent; the configuration's cap too
MIN_RUNS = 2  # Welch's t-test needs two samples a side
MAX_RUNS = 1000  # samples per side and configuration: a bound on what one label or option may ask for
DISPLAY_LEVEL = 0.001  # the decisions shown under --threshold off (they gate nothing)
DECISION_COLUMNS = (
    "decision",
    "change",
    "ci_low",
    "ci_high",
    "ci_level",
    "gate_p",
    "mde",
    "sigma",
    "noisy_mde",
    "resolution",  # percent: the smallest regression the row's evidence rules out (benchgate.stats.resolution)
    "gated_at",  # percent: the regression it must rule out to be unchanged (coarser than its target: "coarse")
    "runs_needed",
)
UNCHANGED_CONFIDENCES = MIN_UNCHANGED_CONFIDENCE, MAX_UNCHANGED_CONFIDENCE = 50.0, 99.999  # percent, the range


@dataclass(frozen=True)
class GateRule:
    """A per-benchmark override, matched by glob on the benchmark file name."""

    pattern: str
    threshold: str | None = None
    min_effect: float | None = None
    ignore: bool = False
    max_sigma: float | None = None  # percent: a noise budget of its own (see GatePolicy.noisy_max_sigma)


@dataclass(frozen=True)
class GatePolicy:
    """Everything that decides whether a row gates."""

    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    rules: tuple[GateRule, ...] = field(default_factory=tuple)
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE
    unchanged_confidence: float = DEFAULT_UNCHANGED_CONFIDENCE  # percent, the one-sided bound of ``unchanged``
    # percent: an undecided row noisier than this (per-sample sigma) is too noisy to gate and does not hold
    # the verdict inconclusive; None (the default) keeps every undecided row holding it
    noisy_max_sigma: float | None = None
    # percent: a row whose base-side noise cannot reach its target (inconclusive-above or min-effect) by max-runs
    # is gated at the best resolution it can reach, up to this (benchgate.stats.resolution); None: noisy: strict
    max_resolution: float | None = DEFAULT_MAX_RESOLUTION

    def __post_init__(self) -> None:
        if self.threshold not in THRESHOLDS:
            raise ValueError(f"threshold must be one of {', '.join(THRESHOLDS)}, not {self.threshold!r}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {self.correction!r}")
        if not (0 <= self.min_effect <= MAX_MIN_EFFECT):
            # inf (or 1e9) would turn the gate off without saying so; --threshold off is the way to do that.
            raise ValueError(f"min-effect must be a percentage from 0 to {MAX_MIN_EFFECT:g}, not {self.min_effect!r}")
        if not (0 < self.inconclusive_above <= MAX_MIN_EFFECT):
            raise ValueError(
                f"inconclusive-above must be a percentage above 0, at most {MAX_MIN_EFFECT:g}, "
                f"not {self.inconclusive_above!r}"
            )
        if not (MIN_UNCHANGED_CONFIDENCE <= self.unchanged_confidence <= MAX_UNCHANGED_CONFIDENCE):
            raise ValueError(
                f"unchanged-confidence must be a percentage from {MIN_UNCHANGED_CONFIDENCE:g} to "
                f"{MAX_UNCHANGED_CONFIDENCE:g}, not {self.unchanged_confidence!r}"
            )
        if self.noisy_max_sigma is not None and not (0 < self.noisy_max_sigma <= MAX_MIN_EFFECT):
            raise ValueError(f"noisy max-sigma must be a percentage above 0, not {self.noisy_max_sigma!r}")
        if self.max_resolution is not None and not (0 < self.max_resolution <= MAX_MIN_EFFECT):
            raise ValueError(
                f"max-resolution must be a percentage above 0, at most {MAX_MIN_EFFECT:g}, not {self.max_resolution!r}"
            )

    def coarsening(self, runs: float | None = None, share: float = 1.0):
        """How rows that cannot reach their target are gated (None: strict); ``runs``: a side at the plan's end."""
        from benchgate.stats.resolution import Coarsening

        return None if self.max_resolution is None else Coarsening(self.max_resolution, runs, share)


def _rule_for(filename: str, rules: tuple[GateRule, ...]) -> GateRule | None:
    # The last matching rule wins, so later, more specific entries in the config override earlier ones.
    found = None
    for rule in rules:
        if fnmatch.fnmatchcase(filename, rule.pattern):
            found = rule
    return found


@dataclass(frozen=True)
class RowRules:
    """What the policy and its rules say for each row of a table (lists in the table's order)."""

    threshold: list[str]
    min_effect: list[float]
    ignored: list[bool]
    max_sigma: list[float] | None = None  # per row, NaN: no noise budget

    @property
    def alpha(self) -> list[float]:
        """The level each row is decided at (``--threshold off``: the *** level, for display)."""
        return [THRESHOLDS[threshold] or DISPLAY_LEVEL for threshold in self.threshold]

    @property
    def judged(self) -> list[bool]:
        """Rows whose decision counts: not ignored and not under a threshold of ``off``."""
        pairs = zip(self.threshold, self.ignored, strict=True)
        return [not ignored and THRESHOLDS[threshold] is not None for threshold, ignored in pairs]


def row_rules(filenames, policy: GatePolicy) -> RowRules:
    """Each row's threshold, minimum effect and whether a rule ignores it."""
    thresholds, effects, ignored, sigmas = [], [], [], []
    budget = float("nan") if policy.noisy_max_sigma is None else policy.noisy_max_sigma
    for filename in filenames:
        rule = _rule_for(str(filename), policy.rules)
        thresholds.append((rule.threshold if rule else None) or policy.threshold)
        effects.append(rule.min_effect if rule is not None and rule.min_effect is not None else policy.min_effect)
        ignored.append(bool(rule and rule.ignore))
        sigmas.append(rule.max_sigma if rule is not None and rule.max_sigma is not None else budget)
    return RowRules(thresholds, effects, ignored, sigmas)


def decide_rows(comparisons: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> pd.DataFrame:
    """The gate's decision per row of ``comparisons`` from the samples (a fixed-runs analysis), in its order."""
    from benchgate.stats import gatetable

    rules = row_rules(comparisons["filename"], policy)
    keys = list(zip(comparisons["filename"], comparisons["configuration"], strict=True))
    return gatetable.decide_samples(
        samples,
        keys,
        alpha=rules.alpha,
        correction=policy.correction,
        min_effect=rules.min_effect,
        inconclusive_above=policy.inconclusive_above,
        unchanged_confidence=policy.unchanged_confidence,
        coarsening=policy.coarsening(),
    )


def decide_adaptive_rows(comparisons: pd.DataFrame, shards: list, policy: GatePolicy) -> pd.DataFrame:
    """The gate's decision per row of ``comparisons`` from adaptive runs (``results.rundirs.load``).

    The recorded looks are replayed and checked (``benchgate.stats.adaptivetable``); the levels
    and minimum effects are this policy's, per row.
    """
    from benchgate.stats import adaptivetable

    rules = row_rules(comparisons["filename"], policy)
    keys = list(zip(comparisons["filename"], comparisons["configuration"], strict=True))
    return adaptivetable.decide_shards(
        shards,
        keys,
        rules.alpha,
        correction=policy.correction,
        min_effect=rules.min_effect,
        inconclusive_above=policy.inconclusive_above,
        unchanged_confidence=policy.unchanged_confidence,
        max_resolution=policy.max_resolution,
    )


def decide_paired_rows(comparisons: pd.DataFrame, samples: pd.DataFrame, pairs, policy: GatePolicy) -> pd.DataFrame:
    """The gate's decision per row of a duet run (``--pairing duet``): the paired test on ``pairs``."""
    from benchgate.stats import paired

    rules = row_rules(comparisons["filename"], policy)
    keys = list(zip(comparisons["filename"], comparisons["configuration"], strict=True))
    return paired.decide_paired_samples(
        samples,
        pairs,
        keys,
        rules.alpha,
        correction=policy.correction,
        min_effect=rules.min_effect,
        inconclusive_above=policy.inconclusive_above,
        unchanged_confidence=policy.unchanged_confidence,
    )


def apply_gate(
    comparisons: pd.DataFrame,
    policy: GatePolicy,
    samples: pd.DataFrame | None = None,
    *,
    decided: pd.DataFrame | None = None,
    shards: list | None = None,
    pairs: tuple | None = None,
) -> pd.DataFrame:
    """A copy of ``comparisons`` with ``gating`` (bool), ``gate_reason``, ``ignored`` and, with decisions, theirs.

    ``samples`` (``results.read_samples``' frame): the rows are decided from them (fixed runs).
    ``shards``: the run was adaptive (``--runs auto``): decided from the replay of its looks
    instead, never from a fixed-runs test of its samples. ``decided``: decisions made elsewhere,
    ``DECISION_COLUMNS`` per row in the table's order. With any of them, ``gating`` is a
    ``regression`` decision on a judged row and ``undecided`` an ``inconclusive`` one; without,
    compare.R's p-value rule (module docstring). ``pairs`` (the sample rows of each duet pair's base
    and head, ``results.pairs.pair_indices``): a duet run, decided by the paired test on them.
    compare.R's p-value rule (module docstring). ``noisy``: an inconclusive judged row too noisy to
    gate (``noisy_rows``); one beyond its noise budget is not ``undecided`` (the verdict may pass).
    """
    test = None
    if pairs is not None:  # a duet run: decided on its pairs, by the paired test (over its looks with --runs auto)
        from benchgate.stats.paired import PAIRED_TEST

        test = PAIRED_TEST
    if decided is None and shards:
        decided = decide_adaptive_rows(comparisons, shards, policy)
    if decided is None and samples is not None and pairs is not None:
        decided = decide_paired_rows(comparisons, samples, pairs, policy)
    if decided is None and samples is not None:
        decided = decide_rows(comparisons, samples, policy)
    if decided is None:
        return _apply_compare_r_rule(comparisons, policy)
    return _apply_decisions(comparisons, policy, decided, test)


def _apply_decisions(
    comparisons: pd.DataFrame, policy: GatePolicy, decided: pd.DataFrame, test: str | None = None
) -> pd.DataFrame:
    import numpy as np

    from benchgate.stats.decisions import format_change
    from benchgate.stats.yuenwelch import GATE_TEST

    gate_test = test or GATE_TEST  # the test that decided (the paired one for a duet run)

    if len(decided) != len(comparisons):
        raise ValueError(f"{len(decided)} decisions for {len(comparisons)} comparisons")
    result = comparisons.copy()
    for column in DECISION_COLUMNS:
        result[column] = decided[column].to_numpy() if column in decided else np.nan
    rules = row_rules(result["filename"], policy)
    judged = np.asarray(rules.judged, dtype=bool)
    decision = result["decision"].to_numpy(dtype=object)
    gating = judged & (decision == "regression")
    reasons = np.full(len(result), "", dtype=object)
    where = "after Holm correction" if policy.correction == "holm" else "without correction"
    for index in np.flatnonzero(gating):
        row = result.iloc[index]
        effect = rules.min_effect[index]
        reasons[index] = (
            f"{format_change(row['change'], row['ci_low'], row['ci_high'])} regression: {gate_test} p = "
            f"{row['gate_p']:.3g} < {row['ci_level']:.3g}, the {rules.threshold[index]} level {where}"
            + (f", |effect| >= {effect:g} %" if effect > 0 else "")
        )
    result["gating"] = gating
    result["gate_reason"] = reasons
    result["ignored"] = np.asarray(rules.ignored, dtype=bool)
    floor = np.where(np.asarray(rules.min_effect) > 0, rules.min_effect, policy.inconclusive_above)
    with np.errstate(invalid="ignore"):  # gated at more than its target: its noise could not reach it
        result["coarse"] = judged & (result["gated_at"].to_numpy(dtype=float) > floor)
    noisy, beyond = noisy_rows(result, floor, np.asarray(rules.max_sigma, dtype=float))
    inconclusive = judged & (decision == "inconclusive")
    result["noisy"] = inconclusive & noisy
    result["undecided"] = inconclusive & ~beyond
    result["min_effect"] = np.asarray(rules.min_effect, dtype=float)  # a rule's own, else the policy's
    result["gate_test"] = gate_test
    return result


def noisy_rows(decided: pd.DataFrame, floor, max_sigma):
    """Which rows are too noisy to gate, and which of them are beyond their noise budget (boolean arrays).

    Too noisy: no number of runs up to max-runs could rule out a regression of the row's floor at its
    noise (``noisy_mde``, the smallest it could rule out, is at least the floor), or its sigma exceeds its
    budget (``max_sigma``, NaN: none). Beyond the budget: the latter, which a configuration set on purpose.
    """
    import numpy as np

    sigma = decided["sigma"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        beyond = sigma > max_sigma
        hopeless = decided["noisy_mde"].to_numpy(dtype=float) >= floor
    return hopeless | beyond, beyond


def _apply_compare_r_rule(comparisons: pd.DataFrame, policy: GatePolicy) -> pd.DataFrame:
    """compare.R's p-value rule, for a table without samples (module docstring)."""
    import numpy as np

    result = comparisons.copy()
    p_column = "p_adjusted" if policy.correction == "holm" else "p_value"
    p_values = result[p_column].to_numpy(dtype=float)
    improvement = result["improvement"].to_numpy(dtype=float)
    gating = np.zeros(len(result), dtype=bool)
    reasons = np.full(len(result), "", dtype=object)
    rules = row_rules(result["filename"], policy)
    p_name = "Holm-adjusted p" if policy.correction == "holm" else "p"
    for index in range(len(result)):
        if rules.ignored[index]:
            continue
        threshold, min_effect = rules.threshold[index], rules.min_effect[index]
        level = THRESHOLDS[threshold]
        if level is None or not (improvement[index] < 0) or np.isnan(p_values[index]):
            continue
        if p_values[index] < level and abs(improvement[index]) >= min_effect:
            gating[index] = True
            reasons[index] = (
                f"{improvement[index]:.2f} % regression, {p_name} = {p_values[index]:.3g} < {level:g} "
                f"({threshold})" + (f", |effect| >= {min_effect:g} %" if min_effect > 0 else "")
            )
    result["gating"] = gating
    result["gate_reason"] = reasons
    result["ignored"] = np.asarray(rules.ignored, dtype=bool)
    return result


def untested_reason(gated: pd.DataFrame) -> str | None:
    """Why the gate could test nothing, or None when at least one comparison was tested.

    A run whose every comparison (rows the rules ignore aside) has fewer than 2
    samples on a side tested nothing, so it must not pass: a ``--runs 1`` run, or
    results with no head samples at all (the head never ran, or ``--head-label``
    names a binary that is not in the CSV). An empty table is not judged here.
    """
    if "incomplete" not in gated:  # a table that did not come from stats.compare_samples
        return None
    considered = gated[~gated["ignored"]] if "ignored" in gated else gated
    if not len(considered) or not bool(considered["incomplete"].all()):
        return None
    if int(considered["n_head"].sum()) == 0:
        return f"no comparison could be tested: the head has no samples ({len(considered)} comparisons)"
    if int(considered["n_base"].sum()) == 0:
        return f"no comparison could be tested: the base has no samples ({len(considered)} comparisons)"
    return (
        f"no comparison could be tested: all {len(considered)} have fewer than 2 samples on a side "
        "(the t-test needs at least 2 runs per binary)"
    )


def verdict(gated: pd.DataFrame) -> str:
    """``"fail"`` when a row gates or no comparison could be tested (``untested_reason``), else ``"inconclusive"``
    when a judged row is undecided (never a pass), otherwise ``"pass"``."""
    if bool(gated["gating"].any()) or untested_reason(gated) is not None:
        return "fail"
    if "undecided" in gated and bool(gated["undecided"].any()):
        return "inconclusive"
    return "pass"
