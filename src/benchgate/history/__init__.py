"""The history of main (docs/history.md): trusted runs recorded (``recording``) into a store read as series
(``store``, ``model``), change points, a PR row's context (``model``), releases as series, the static site."""

from benchgate._lazy import exports

_MODULES = {
    "model": ("SeriesKey", "Point", "Series", "ChangePoint"),
    "recording": ("RecordResult", "record_run"),
    "store": ("open_store", "series"),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
