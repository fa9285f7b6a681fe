"""``benchgate history`` as text and JSON (``benchgate.history.model`` objects, no I/O): change points, and a
series as a table with the report's bars."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict

from benchgate.history.model import ChangePoint, Series, SeriesKey
from benchgate.report.bars import Bar, render_bars

MARK = "◆"  # a change point: the first run after it


def series_name(key: SeriesKey) -> str:
    """The series as one line: row, flags, runner, branch."""
    flags = f" [{key.node_flags}]" if key.node_flags else ""
    return f"{key.label()}{flags} (runner {key.runner}, {key.branch})"


def change_line(change: ChangePoint) -> str:
    """One change point: where, how much, before and after, how sure."""
    return (
        f"{series_name(change.key)}: {change.change:+.2f}% from {change.commit[:12]} ({change.date}), "
        f"{change.mean_before:,.6g} -> {change.mean_after:,.6g} ops/s, confidence {change.confidence:.2%}"
    )


def render_changes_text(changes: Sequence[ChangePoint], *, looked_at: int, too_short: int) -> str:
    """The change points, one a line, then what was looked at."""
    lines = [change_line(change) for change in changes] or ["no change points"]
    note = f"{looked_at} series looked at"
    if too_short:
        note += f", {too_short} too short for change points (skipped)"
    return "\n".join([*lines, note])


def changes_json(changes: Sequence[ChangePoint]) -> str:
    """The change points as a JSON list (``change`` in percent, negative = slower)."""
    items = [
        {
            "id": change.id,
            **asdict(change.key),
            "commit": change.commit,
            "before_commit": change.before_commit,
            "date": change.date,
            "index": change.index,
            "change": round(change.change, 4) if math.isfinite(change.change) else None,
            "mean_before": change.mean_before,
            "mean_after": change.mean_after,
            "confidence": round(change.confidence, 6),
        }
        for change in changes
    ]
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
