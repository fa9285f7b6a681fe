"""Pure statistics over the samples: compare.R's table, the correction, the gate and the verdict.

- ``welch``: Welch's t-test per comparison, stars and accuracy exactly as compare.R, Holm's adjustment.
- ``defaults``: the defaults the policy and the tests share (no numpy).
- ``gate``: the policy (threshold, correction, rules) and each row's decision under it.
- ``analysis``: ``analyze(run_data, policy) -> Analysis``, the one analysis every command prints.
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
    "gate": (
        "GateRule",
        "GatePolicy",
    ),
    "analysis": (
        "Verdict",
        "Method",
        "ANALYSIS_COLUMNS",
        "RunData",
        "Analysis",
        "analyze",
    ),
    "outcome": ("Outcome",),
    "welch": (
        "COMPARISON_COLUMNS",
        "stars",
        "holm_adjust",
        "compare_samples",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
