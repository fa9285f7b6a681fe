"""The gate: which comparisons fail a pull request, and why.

A row gates when it is a regression (improvement < 0), its p-value after the
configured correction is below the threshold's level, and the regression is at
least the minimum effect. Per-benchmark rules (by glob on the file name) may
change the threshold or minimum effect of some rows, or ignore them.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and numpy cost ~0.4 s to import; the runner loads this module before any benchmark
    import pandas as pd

THRESHOLDS = {"*": 0.05, "**": 0.01, "***": 0.001, "off": None}
CORRECTIONS = ("holm", "none")
MAX_MIN_EFFECT = 1000.0  # percent; the configuration's cap too
MIN_RUNS = 2  # Welch's t-test needs two samples a side
MAX_RUNS = 1000  # samples per side and configuration: a bound on what one label or option may ask for


@dataclass(frozen=True)
class GateRule:
    """A per-benchmark override, matched by glob on the benchmark file name."""

    pattern: str
    threshold: str | None = None
    min_effect: float | None = None
    ignore: bool = False


@dataclass(frozen=True)
class GatePolicy:
    """Everything that decides whether a row gates."""

    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    rules: tuple[GateRule, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.threshold not in THRESHOLDS:
            raise ValueError(f"threshold must be one of {', '.join(THRESHOLDS)}, not {self.threshold!r}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {self.correction!r}")
        if not (0 <= self.min_effect <= MAX_MIN_EFFECT):
            # inf (or 1e9) would turn the gate off without saying so; --threshold off is the way to do that.
            raise ValueError(f"min-effect must be a percentage from 0 to {MAX_MIN_EFFECT:g}, not {self.min_effect!r}")


def _rule_for(filename: str, rules: tuple[GateRule, ...]) -> GateRule | None:
    # The last matching rule wins, so later, more specific entries in the config override earlier ones.
    found = None
    for rule in rules:
        if fnmatch.fnmatchcase(filename, rule.pattern):
            found = rule
    return found


def apply_gate(comparisons: pd.DataFrame, policy: GatePolicy) -> pd.DataFrame:
    """Return a copy of ``comparisons`` with ``gating`` (bool), ``gate_reason`` and ``ignored`` columns."""
    import numpy as np

    result = comparisons.copy()
    p_column = "p_adjusted" if policy.correction == "holm" else "p_value"
    p_values = result[p_column].to_numpy(dtype=float)
    improvement = result["improvement"].to_numpy(dtype=float)
    gating = np.zeros(len(result), dtype=bool)
    reasons = np.full(len(result), "", dtype=object)
    ignored = np.zeros(len(result), dtype=bool)
    p_name = "Holm-adjusted p" if policy.correction == "holm" else "p"
    for index, filename in enumerate(result["filename"].to_numpy()):
        rule = _rule_for(filename, policy.rules)
        threshold = policy.threshold
        min_effect = policy.min_effect
        if rule is not None:
            if rule.ignore:
                ignored[index] = True
                continue
            threshold = rule.threshold or threshold
            min_effect = rule.min_effect if rule.min_effect is not None else min_effect
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
    result["ignored"] = ignored
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
    """``"fail"`` when any row gates or no comparison could be tested (``untested_reason``), otherwise ``"pass"``."""
    return "fail" if bool(gated["gating"].any()) or untested_reason(gated) is not None else "pass"
