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
    "bars": (
        "FULL",
        "EMPTY",
        "AXIS",
        "Bar",
        "scale_for",
        "render_bar",
        "render_bars",
    ),
    "chartdata": (
        "DPI",
        "STARRED",
        "FAIL",
        "SLOWER",
        "FASTER",
        "UNCLEAR",
        "COLOURS",
        "MARKERS",
        "text",
        "shorten",
        "row_kinds",
        "kind_labels",
        "Intervals",
        "intervals",
        "x_scale",
        "symlog_ticks",
        "percent",
        "selection",
        "title_lines",
        "ForestRows",
        "forest_rows",
    ),
    "comment": (
        "MARKER",
        "NOTHING_TO_BENCHMARK",
        "GITHUB_COMMENT_LIMIT",
        "MAX_NAME_IN_CHART",
        "significant_rows",
        "markdown_table",
        "bar_chart",
        "render_comment",
    ),
    "commentcontext": ("CommentContext",),
    "commentgate": (
        "plural",
        "verdict_lines",
        "power_lines",
    ),
    "gatelines": (
        "MDE_POWER",
        "gate_test",
        "change_cell",
        "runs_text",
        "Undecided",
        "undecided_rows",
        "Blind",
        "blind_spots",
        "decision_counts",
        "with_untested",
        "gate_finding",
        "gate_headline",
    ),
    "markup": (
        "CONTROL",
        "MARKDOWN_SPECIAL",
        "code",
        "plain",
        "block",
    ),
    "panels": (
        "SIDE_COLOURS",
        "PANEL_WIDTH",
        "PANEL_HEIGHT",
        "MAX_PANELS",
        "PANEL_FONT",
        "PANEL_LABEL",
        "BOX_LEFT",
        "BOX_RIGHT",
        "BOX_TOP",
        "BOX_BOTTOM",
        "ROWS",
        "HALF_BOX",
        "normalised",
        "box_stats",
        "Marks",
        "distributions_figure",
    ),
    "plots": (
        "PLOT_EXTRA",
        "DISTRIBUTIONS_SUFFIX",
        "FONT_POINTS",
        "ROW_INCHES",
        "MAX_LABEL",
        "FOREST_ALL_ROWS",
        "MAX_FOREST_ROWS",
        "require_matplotlib",
        "chart_paths",
        "forest_figure",
        "png_bytes",
        "chart_files",
    ),
    "tables": (
        "ACCURACY_KEYS",
        "CSV_COLUMNS",
        "MAX_SUMMARY_LINES",
        "format_improvement",
        "format_accuracy",
        "row_name",
        "render_compare_table",
        "bars_for",
        "gate_summary",
        "render_text",
        "markdown_order",
        "render_markdown_table",
        "VERDICT_MARKS",
        "render_markdown",
        "gate_p_values",
        "analysis_record",
        "render_json",
        "render_csv",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
