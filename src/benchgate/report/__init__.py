"""Pure rendering of an analysis (no file I/O): compare.R's text table, markdown, JSON, CSV, text bars, the PR
comment, the ``--plot`` charts (matplotlib loads only when one is drawn), ``versions`` and ``history`` reports."""

from benchgate._lazy import exports

_MODULES = {
    "tables": (
        *("CSV_COLUMNS", "format_improvement", "format_accuracy", "row_name", "render_compare_table"),
        *("gate_summary", "render_text", "render_markdown_table", "render_markdown", "render_json", "render_csv"),
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
