"""Pure statistics over the samples (no I/O): compare.R's table, the gate's tests and decisions, the verdict.
docs/statistics.md describes them; ``analysis.analyze`` is the one analysis every command runs."""

from benchgate._lazy import exports

_MODULES = {
    "welch": ("COMPARISON_COLUMNS", "stars", "holm_adjust", "compare_samples"),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
