"""Pure statistics over the samples: compare.R's table, the correction, the gate and the verdict.

- ``welch``: Welch's t-test per comparison, stars and accuracy exactly as compare.R, Holm's adjustment.
- ``defaults``: the defaults the policy and the tests share (no numpy).
- ``gate``: which comparisons fail the pull request, under the threshold, correction and rules.
- ``outcome``: the verdict over the gated table and the run (head failures, incomplete runs, builds).
- ``yuenwelch``: the gate's own test per comparison (Yuen's trimmed Welch test on log rates), its interval, mde.
- ``decisions``: regression, improvement, unchanged or inconclusive per row, Holm-consistent levels, verdict.
- ``resolution``: each row's resolution, the one it is gated at (coarser where its base's noise cannot reach
  its target), the runs-to-decide projection, main's history as a prior.
- ``gatetable``: the decision table of a report's samples (fixed runs), as a DataFrame.
- ``sequential``: the group-sequential design of adaptive runs: looks, alpha spending, its run.json record.
- ``stopping``: the looks of an adaptive run: settled rows, files that stop, the replay of a recorded run.
- ``adaptivetable``: the decision table of an adaptive run: its recorded looks replayed, checked and decided.

No I/O: functions of data frames and plain values.
"""

from benchgate._lazy import exports

_MODULES = {
    "adaptivetable": (
        "file_rows",
        "stop_units",
        "replay_samples",
        "check_shard",
        "decide_shards",
    ),
    "decisions": (
        "DECISIONS",
        "REGRESSION",
        "IMPROVEMENT",
        "UNCHANGED",
        "INCOMPLETE",
        "CONSTANT",
        "VERDICTS",
        "DEFAULT_ALPHA",
        "holm_levels",
        "Decisions",
        "decide_looks",
        "verdicts",
        "format_change",
    ),
    "defaults": (
        "DEFAULT_INCONCLUSIVE_ABOVE",
        "AUTO_MIN_RUNS",
        "AUTO_MAX_RUNS",
    ),
    "gate": (
        "THRESHOLDS",
        "CORRECTIONS",
        "MAX_MIN_EFFECT",
        "DISPLAY_LEVEL",
        "DECISION_COLUMNS",
        "GateRule",
        "GatePolicy",
        "RowRules",
        "row_rules",
        "decide_rows",
        "decide_adaptive_rows",
        "apply_gate",
        "untested_reason",
    ),
    "gatetable": (
        "sample_arrays",
        "sitting_out",
        "undecided_decisions",
        "decision_frame",
        "decision_table",
        "decide_samples",
    ),
    "yuenwelch": (
        "TESTS",
        "GATE_TEST",
        "TRIM",
        "TRIM_FROM",
        "YUEN_DF_FACTOR",
        "DEFAULT_POWER",
        "Stats",
        "STAT_FIELDS",
        "subset",
        "gate_statistics",
        "change_interval",
        "mde",
        "projected_interval",
        "regression_floor",
        "decidable",
        "runs_needed",
    ),
    "outcome": (
        "PASS",
        "FAIL",
        "ACCEPTED",
        "ERROR",
        "Outcome",
        "head_only_failures",
    ),
    "resolution": (
        "Coarsening",
        "reachable",
        "gated_at",
        "runs_to_reach",
        "prior_variance",
    ),
    "sequential": (
        "METHOD",
        "SPENDING",
        "DENSE_UNTIL",
        "DENSE_MAX",
        "LOOK_RATIO",
        "DEFAULT_FUTILITY_VARIANCE",
        "DEFAULT_SETTLE_ABOVE",
        "DEFAULT_SETTLE_LEVEL",
        "STOP_REASONS",
        "default_looks",
        "spending_fraction",
        "spending_weights",
        "Design",
        "make_design",
        "fixed_design",
        "next_look",
    ),
    "stopping": (
        "look_statistics",
        "LookResult",
        "decide_at_look",
        "files_to_stop",
        "stop_reasons",
        "Replay",
        "replay",
        "projected_runs",
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
