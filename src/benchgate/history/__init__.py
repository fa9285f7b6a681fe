"""The history of main (docs/history.md): trusted runs in a store (``store``, ``runentry``, ``recording``,
``reading``), their series (``model``), change points, a PR row's context, releases as series, the static site.
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
