"""``benchgate history`` as text and JSON, and the PR comment's history section (docs/history.md)."""

import json
import math
from collections.abc import Sequence
from dataclasses import asdict

from benchgate.history.model import RECENT_COMMITS, ChangePoint, RowHistory, Series, SeriesKey
from benchgate.history.site import series_href
from benchgate.report.markup import code, table
from benchgate.report.tables import Bar, render_bars

MARK = "◆"  # a change point: the first run after it
MAX_ROWS = 30  # of the comment's section


def series_name(key: SeriesKey) -> str:
    """The series as one line: row, flags, runner, branch."""
    flags = f" [{key.node_flags}]" if key.node_flags else ""
    return f"{key.label()}{flags} (runner {key.runner}, {key.branch})"


def render_changes_text(changes: Sequence[ChangePoint], *, looked_at: int, too_short: int) -> str:
    """The change points, one a line, then what was looked at."""
    lines = [
        f"{series_name(change.key)}: {change.change:+.2f}% from {change.commit[:12]} ({change.date}), "
        f"{change.mean_before:,.6g} -> {change.mean_after:,.6g} ops/s, confidence {change.confidence:.2%}"
        for change in changes
    ] or ["no change points"]
    note = f"{looked_at} series looked at"
    if too_short:
        note += f", {too_short} too short for change points (skipped)"
    return "\n".join([*lines, note])


def changes_json(changes: Sequence[ChangePoint]) -> str:
    """The change points as a JSON list (``change`` in percent, negative = slower)."""
    items = []
    for change in changes:
        fields = asdict(change)
        key = fields.pop("key")
        fields["change"] = round(change.change, 4) if math.isfinite(change.change) else None
        items.append({"id": change.id, **key, **fields, "confidence": round(change.confidence, 6)})
    return json.dumps(items, indent=2)


def render_series(series: Series, changes: Sequence[ChangePoint]) -> str:
    """A series as a table: one line per stored run, its trimmed mean against the first run as a bar."""
    marked = {change.index for change in changes if change.key == series.key}
    first = series.points[0].trimmed_mean if series.points else float("nan")
    bars = []
    for index, point in enumerate(series.points):
        versus = (point.trimmed_mean / first - 1) * 100 if first else float("nan")
        spread = math.expm1(point.log_spread) * 100
        label = (
            f"{point.date[:10]} {point.commit[:12]:<12} {point.node_version:<9} "
            f"{point.trimmed_mean:>12,.6g} ±{spread:4.1f}% n={point.samples:<3}"
        )
        bars.append(Bar(label, versus, f"{MARK} change" if index in marked else ""))
    header = f"{series_name(series.key)}: {len(series.points)} runs, trimmed mean (ops/s) vs the first run"
    return f"{header}\n{render_bars(bars)}"


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
            cells = [name, "0", "no stored runs", "", *([""] if site_url else [])]  # no series to link
        else:
            spread = f"±{history.spread:.1f}%" if math.isfinite(history.spread) else "n/a (one run)"
            moved = f"no change point in its last {RECENT_COMMITS} runs"
            if (change := history.moved) is not None:
                moved = (
                    f"**yes**: {change.change:+.1f}% at {code(change.commit[:12], in_table=True)} ({change.date[:10]})"
                )
            cells = [name, str(history.runs), spread, moved]
            if site_url:  # the series' section of its page on the history site
                cells.append(f"[series]({site_url.rstrip('/')}/{series_href(history.series.key)})")
        shown.append(cells)
    note = "Context, not evidence: the gate decides from this pull request's samples only."
    lines = ["#### History of main", "", note, "", *table(header, shown, "lrrl" + ("l" if site_url else ""))]
    if len(rows) > MAX_ROWS:
        lines.append(f"\n… and {len(rows) - MAX_ROWS} more rows")
    return "\n".join(lines)
