"""Pure statistics over the samples (no I/O): compare.R's table, the gate's tests and decisions, the verdict.

``welch`` is compare.R's table; ``yuenwelch`` and ``paired`` the gate's tests; ``decisions`` Holm, intervals
and decisions; ``resolution`` what a row is gated at; ``sequential`` and ``stopping`` the looks of ``--runs
auto``; ``gatetable`` and ``adaptivetable`` the decision tables; ``gate`` the policy; ``analysis`` and
``outcome`` the one analysis and its verdict.
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
