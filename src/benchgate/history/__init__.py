"""The history of main: every trusted run stored, its series, their change points, and the site.

Runs flow in (``benchgate history record``), reports read from it (the PR comment's context, the
dashboard). The data model (``model``) is shared by the store, the change-point analysis and the
renderers; storage adapters stay apart from the analysis, as in Apache Otava.

- ``model``: SeriesKey, Point, Series, ChangePoint (pure data).
- ``schema``: the store's tables and their version; ``store``: the engine for a URL, schema checks, errors.
- ``runentry``: a run directory read and summarized for the store; ``writing``: one run in one transaction.
- ``recording``: ``record_run``; ``reading``: ``series``.
"""

from benchgate._lazy import exports

_MODULES = {
    "model": ("SeriesKey", "Point", "Series", "ChangePoint"),
    "recording": ("RecordResult", "record_run"),
    "reading": ("series",),
    "store": ("open_store",),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
