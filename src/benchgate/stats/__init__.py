"""Pure statistics over the samples: compare.R's table, the correction, the gate and the verdict.

- ``welch``: Welch's t-test per comparison, stars and accuracy exactly as compare.R, Holm's adjustment.
- ``gate``: which comparisons fail the pull request, under the threshold, correction and rules.
- ``outcome``: the verdict over the gated table and the run (head failures, incomplete runs, builds).

No I/O: functions of data frames and plain values.
"""

from benchgate._lazy import exports

_MODULES = {
    "gate": (
        "THRESHOLDS",
        "CORRECTIONS",
        "MAX_MIN_EFFECT",
        "MIN_RUNS",
        "MAX_RUNS",
        "GateRule",
        "GatePolicy",
        "apply_gate",
        "untested_reason",
        "verdict",
    ),
    "outcome": (
        "PASS",
        "FAIL",
        "ACCEPTED",
        "ERROR",
        "Outcome",
        "head_only_failures",
        "decide",
    ),
    "welch": (
        "STAR_LEVELS",
        "RISKS",
        "COMPARISON_COLUMNS",
        "stars",
        "holm_adjust",
        "compare_samples",
        "empty_comparisons",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
