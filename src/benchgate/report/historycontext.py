"""The PR comment's history section (docs/history.md): for each regressed or undecided row, what main did
there, from ``benchgate.history.context.RowHistory``. Context, never part of the decision."""

from __future__ import annotations

import math
from collections.abc import Sequence
from urllib.parse import quote

from benchgate.history.context import RECENT_COMMITS, RowHistory
from benchgate.history.site import series_href
from benchgate.report.markup import code, table

MAX_ROWS = 30


def series_link(site_url: str, history: RowHistory) -> str:
    """Where the row's series is on the site: its section of its benchmark's page (``site.series_href``)."""
    if history.series is None:
        return f"{site_url.rstrip('/')}/#{quote(f'{history.filename} {history.configuration}')}"
    return f"{site_url.rstrip('/')}/{series_href(history.series.key)}"


def _moved(history: RowHistory) -> str:
    if history.series is None:
        return ""
    change = history.moved
    if change is None:
        return f"no change point in its last {RECENT_COMMITS} runs"
    return f"**yes**: {change.change:+.1f}% at {code(change.commit[:12], in_table=True)} ({change.date[:10]})"


def render_history_context(rows: Sequence[RowHistory], *, site_url: str | None = None) -> str:
    """A markdown section (a heading and a table); '' when there is nothing to say."""
    if not rows:
        return ""
    header = ["benchmark", "main's runs", "main's run-to-run spread", "main moved recently"]
    header += ["series"] if site_url else []
    shown = []
    for history in rows[:MAX_ROWS]:
        name = code(f"{history.filename} {history.configuration}", in_table=True, limit=120)
        if history.series is None:
            cells = [name, "0", "no stored runs", ""]
        else:
            spread = f"±{history.spread:.1f}%" if math.isfinite(history.spread) else "n/a (one run)"
            cells = [name, str(history.runs), spread, _moved(history)]
        if site_url:
            cells.append(f"[series]({series_link(site_url, history)})" if history.series is not None else "")
        shown.append(cells)
    note = "Context, not evidence: the gate decides from this pull request's samples only."
    lines = ["#### History of main", "", note, "", *table(header, shown, "lrrl" + ("l" if site_url else ""))]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n… and {len(rows) - MAX_ROWS} more rows")
    return "\n".join(lines)
