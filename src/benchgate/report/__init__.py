"""Pure rendering of an analysis: compare.R's text table, markdown, JSON, CSV, bars and the PR comment.

- ``tables``: the comparison table in every format, the gate lines, the JSON record; ``gatelines``: the
  gate's decisions in words; ``bars``: text bars around a centre line.
- ``comment``: the sticky PR comment; ``commentgate``: its verdict and power sections and what both render;
  ``markup``: untrusted text as code spans, our own text escaped.
- ``plots`` and ``chartdata``: the ``--plot`` charts (matplotlib loads only when one is drawn).
- ``versionsreport``, ``historytext``, ``historycontext``: ``benchgate versions`` and ``history``.

Nothing here reads or writes files.
"""

from benchgate._lazy import exports

_MODULES = {
    "tables": (
        "CSV_COLUMNS",
        "format_improvement",
        "format_accuracy",
        "row_name",
        "render_compare_table",
        "gate_summary",
        "render_text",
        "render_markdown_table",
        "render_markdown",
        "render_json",
        "render_csv",
        "render",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
