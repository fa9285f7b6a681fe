"""A series' trend chart as inline SVG: the mean rate per run, the change points marked, commits linked.

Generated here, with no JavaScript and no library from a CDN, so that the site loads from
``file://`` or GitHub Pages with no network. Every string that comes from the store (commits,
versions, dates: run.json's, so untrusted) is escaped with ``html.escape`` before it is written,
and a commit only ever fills the ``{sha}`` of a link template after being percent-encoded, so it
cannot change the link's scheme or leave its attribute.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from benchgate.history.model import ChangePoint, Series

LINE = "#0072B2"  # Okabe-Ito blue: the series
SLOWER = "#D55E00"  # Okabe-Ito vermillion: a change point where the rate fell
FASTER = "#009E73"  # Okabe-Ito bluish green: a change point where it rose
MEAN = "#555555"  # the mean between change points


def commit_link(commit_url: str | None, sha: str) -> str | None:
    """The commit's URL from the template (``https://github.com/nodejs/node/commit/{sha}``), or None."""
    if not commit_url:
        return None
    return commit_url.replace("{sha}", quote(sha, safe=""))


def rate(value: float) -> str:
    """A rate as compare.js prints it, shortened: ``1,234,567`` ops/s, ``12.3`` for small ones."""
    if not math.isfinite(value):
        return "NA"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    span = high - low
    if span <= 0:
        span = abs(high) or 1.0
    raw = span / count
    exponent = math.floor(math.log10(raw))
    step = next(s * 10**exponent for s in (1, 2, 5, 10) if s * 10**exponent >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(value)
        value += step
    return ticks or [low]


def _x_labels(series: Series) -> list[str]:
    """Under each point: the node version when every run is another release, else the short commit."""
    versions = [point.node_version for point in series.points]
    if len(set(versions)) == len(versions) and all(versions):
        return versions
    return [point.commit[:7] for point in series.points]


@dataclass(frozen=True)
class ChartSize:
    """Pixels of the chart and its margins."""

    width: int = 860
    height: int = 260
    left: int = 78
    right: int = 16
    top: int = 26
    bottom: int = 46


def trend_svg(
    series: Series, changes: Sequence[ChangePoint], *, commit_url: str | None, size: ChartSize = ChartSize()
) -> str:
    """The series' chart: mean rate per run (oldest left), the segments' means, a dashed line per change."""
    points = series.points
    values = [point.mean_rate for point in points]
    finite = [v for v in values if math.isfinite(v)] or [0.0]
    ticks = _nice_ticks(min(finite), max(finite))
    low, high = min(ticks[0], min(finite)), max(ticks[-1], max(finite))
    if high == low:
        high = low + 1.0
    plot_w, plot_h = size.width - size.left - size.right, size.height - size.top - size.bottom

    def x(index: float) -> float:
        return size.left + (plot_w * (index + 0.5) / max(len(points), 1))

    def y(value: float) -> float:
        return size.top + plot_h * (1 - (value - low) / (high - low))

    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{size.width}" height="{size.height}" '
        f'viewBox="0 0 {size.width} {size.height}" role="img">',
        f'<rect x="{size.left}" y="{size.top}" width="{plot_w}" height="{plot_h}" fill="#FFFFFF" stroke="#D0D7DE"/>',
    ]
    for tick in ticks:
        ty = y(tick)
        parts.append(f'<line x1="{size.left}" x2="{size.left + plot_w}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#EAEEF2"/>')
        parts.append(f'<text class="tick" x="{size.left - 6}" y="{ty + 4:.1f}" text-anchor="end">{rate(tick)}</text>')
    labels = _x_labels(series)
    every = max(1, math.ceil(len(points) / 12))  # at most about 12 labels under the axis
    for index, label in enumerate(labels):
        if index % every == 0 or (index == len(points) - 1 and index % every > every // 2):
            parts.append(
                f'<text class="tick" x="{x(index):.1f}" y="{size.top + plot_h + 16}" text-anchor="middle">'
                f"{escape(label[:12])}</text>"
            )
    parts.append(f'<text class="axis" x="{size.left}" y="{size.top - 8}">ops/s (higher is faster)</text>')
    # The mean of each stretch between change points, as Otava and Bencher draw it.
    bounds = [0, *sorted(change.index for change in changes if 0 < change.index < len(points)), len(points)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        stretch = [v for v in values[start:end] if math.isfinite(v)]
        if stretch:
            mean = sum(stretch) / len(stretch)
            parts.append(
                f'<line class="segment-mean" x1="{x(start - 0.5):.1f}" x2="{x(end - 0.5):.1f}" y1="{y(mean):.1f}" '
                f'y2="{y(mean):.1f}" stroke="{MEAN}" stroke-dasharray="2 3"/>'
            )
    for change in changes:
        if not 0 < change.index < len(points):
            continue
        colour = SLOWER if change.change < 0 else FASTER
        cx = x(change.index - 0.5)
        sign = "slower" if change.change < 0 else "faster"
        tip = escape(f"{change.change:+.2f} % at {change.commit} ({change.date}), {change.confidence:.0%} sure")
        parts.append(
            f'<g class="change {sign}"><title>{tip}</title>'
            f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{size.top}" y2="{size.top + plot_h}" stroke="{colour}" '
            f'stroke-width="2" stroke-dasharray="6 4"/>'
            f'<text x="{cx + 4:.1f}" y="{size.top + 12}" style="fill:{colour}" class="change-label">'
            f"{escape(f'{change.change:+.1f} %')}</text></g>"
        )
    drawn = [(x(i), y(v)) for i, v in enumerate(values) if math.isfinite(v)]
    if drawn:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in drawn)
        parts.append(f'<polyline class="line" points="{path}" fill="none" stroke="{LINE}" stroke-width="2.5"/>')
    for index, point in enumerate(points):
        if not math.isfinite(point.mean_rate):
            continue
        tip = escape(
            f"{point.commit} ({point.date}, {point.node_version}): {rate(point.mean_rate)} ops/s, "
            f"{point.samples} samples, spread {point.log_spread:.4f}"
        )
        where = f'cx="{x(index):.1f}" cy="{y(point.mean_rate):.1f}"'
        dot = f'<circle {where} r="3.5" fill="{LINE}"><title>{tip}</title></circle>'
        link = commit_link(commit_url, point.commit)
        parts.append(f'<a href="{escape(link)}">{dot}</a>' if link else dot)
    parts.append("</svg>")
    return "".join(parts)


def sparkline_svg(series: Series, changes: Sequence[ChangePoint], width: int = 160, height: int = 28) -> str:
    """A small line of the series for the index, with its change points as ticks."""
    drawn = [(i, p.mean_rate) for i, p in enumerate(series.points) if math.isfinite(p.mean_rate)]
    if len(drawn) < 2:
        return ""
    low, high = min(v for _, v in drawn), max(v for _, v in drawn)
    span = (high - low) or 1.0
    last = len(series.points) - 1

    def x(index: float) -> float:  # by position in the series, so a change point sits where its run is
        return 2 + (width - 4) * index / last

    path = " ".join(f"{x(i):.1f},{height - 3 - (height - 6) * (v - low) / span:.1f}" for i, v in drawn)
    marks = "".join(
        f'<line x1="{x(c.index - 0.5):.1f}" x2="{x(c.index - 0.5):.1f}" y1="0" y2="{height}" '
        f'stroke="{SLOWER if c.change < 0 else FASTER}" stroke-width="1.5"/>'
        for c in changes
        if 0 < c.index <= last
    )
    return (
        f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">{marks}<polyline points="{path}" fill="none" stroke="{LINE}" '
        'stroke-width="1.5"/></svg>'
    )
