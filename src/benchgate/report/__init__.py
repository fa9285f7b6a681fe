"""Pure rendering of an analysis: compare.R's text table, markdown, JSON, CSV, bars and the PR comment.

- ``tables``: the comparison table in every format, the gate lines, the JSON record.
- ``gatelines``: the gate's decisions in words: change cells, undecided rows and the runs they need, power.
- ``bars``: text bars around a centre line; ``comment``: the sticky PR comment; ``commentgate``: its
  verdict heading and power section; ``commentcontext``: what both render; ``markup``: untrusted
  text as code spans, our own text escaped.
- ``plots`` (forest plot), ``panels`` (distributions) and ``chartdata`` (what they show): the
  ``--plot`` charts as matplotlib figures and PNG bytes; matplotlib loads only when one is drawn.

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
