"""The history of main: every trusted run stored, its series, their change points, and the site.

- ``model``: SeriesKey, Point, Series, ChangePoint (pure data, shared by everything below).
- ``storeschema``, ``store``: the tables, the engine for a URL; ``runentry``: a run directory checked and
  summarized; ``writing``, ``recording``: one run in one transaction; ``reading``: ``series``.
- ``changepoints``, ``context``, ``releaseseries``: change points, a PR row's history, releases as series.
- ``site``, ``svgchart``: the static site (Jinja2 templates in ``benchgate/data``).
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
