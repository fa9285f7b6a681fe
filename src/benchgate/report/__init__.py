"""Pure rendering of an analysis: compare.R's text table, markdown, JSON, CSV, bars and the PR comment.

- ``tables``: the comparison table in every format, the gate lines, the JSON record.
- ``bars``: text bars around a centre line; ``comment``: the sticky PR comment.
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
    "comment": (
        "MARKER",
        "NOTHING_TO_BENCHMARK",
        "GITHUB_COMMENT_LIMIT",
        "MAX_NAME_IN_CHART",
        "CommentContext",
        "code",
        "plain",
        "significant_rows",
        "markdown_table",
        "bar_chart",
        "false_positive_note",
        "render_comment",
    ),
    "tables": (
        "ACCURACY_KEYS",
        "CSV_COLUMNS",
        "format_improvement",
        "format_accuracy",
        "row_name",
        "render_compare_table",
        "false_positive_note",
        "bars_for",
        "gate_summary",
        "render_text",
        "markdown_order",
        "render_markdown_table",
        "render_markdown",
        "gate_p_values",
        "analysis_record",
        "render_json",
        "render_csv",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
