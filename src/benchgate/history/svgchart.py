"""A series' trend chart and sparkline as inline SVG (no JavaScript, nothing from a CDN: the site loads offline).

This module computes the geometry; the markup is ``benchgate/data/history-parts.html.j2``, autoescaped, so
the store's strings (run.json's, untrusted) are text wherever they land, and a commit fills a link template's
``{sha}`` only percent-encoded, so it cannot change the link's scheme.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from benchgate.history.model import ChangePoint, Series

# The site's templates (benchgate/data/history-*.j2): autoescaped, and a name a template does not get fails.
TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("benchgate", "data"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
LINE = "#0072B2"  # Okabe-Ito blue: the series
SLOWER = "#D55E00"  # Okabe-Ito vermillion: a change point where the rate fell
FASTER = "#009E73"  # Okabe-Ito bluish green: a change point where it rose
TEMPLATES.globals["colours"] = {"line": LINE, "slower": SLOWER, "faster": FASTER, "mean": "#555555"}


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
) -> Markup:
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

    every = max(1, math.ceil(len(points) / 12))  # at most about 12 labels under the axis
    labels = [
        (x(index), label[:12])
        for index, label in enumerate(_x_labels(series))
        if index % every == 0 or (index == len(points) - 1 and index % every > every // 2)
    ]
    # The mean of each stretch between change points, as Otava and Bencher draw it.
    bounds = [0, *sorted(change.index for change in changes if 0 < change.index < len(points)), len(points)]
    segments = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        stretch = [v for v in values[start:end] if math.isfinite(v)]
        if stretch:
            segments.append((x(start - 0.5), x(end - 0.5), y(sum(stretch) / len(stretch))))
    marks = [
        {
            "x": x(change.index - 0.5),
            "kind": "slower" if change.change < 0 else "faster",
            "tip": f"{change.change:+.2f} % at {change.commit} ({change.date}), {change.confidence:.0%} sure",
            "label": f"{change.change:+.1f} %",
        }
        for change in changes
        if 0 < change.index < len(points)
    ]
    dots = [
        {
            "x": x(index),
            "y": y(point.mean_rate),
            "link": commit_link(commit_url, point.commit),
            "tip": f"{point.commit} ({point.date}, {point.node_version}): {rate(point.mean_rate)} ops/s, "
            f"{point.samples} samples, spread {point.log_spread:.4f}",
        }
        for index, point in enumerate(points)
        if math.isfinite(point.mean_rate)
    ]
    chart = {
        **vars(size),
        "plot_width": plot_w,
        "plot_height": plot_h,
        "ticks": [(y(tick), rate(tick)) for tick in ticks],
        "labels": labels,
        "segments": segments,
        "changes": marks,
        "line": " ".join(f"{dot['x']:.1f},{dot['y']:.1f}" for dot in dots),
        "dots": dots,
    }
    return TEMPLATES.get_template("history-parts.html.j2").module.trend(chart)


def sparkline_svg(series: Series, changes: Sequence[ChangePoint], width: int = 160, height: int = 28) -> Markup:
    """A small line of the series for the index, with its change points as ticks."""
    drawn = [(i, p.mean_rate) for i, p in enumerate(series.points) if math.isfinite(p.mean_rate)]
    if len(drawn) < 2:
        return Markup("")
    low, high = min(v for _, v in drawn), max(v for _, v in drawn)
    span = (high - low) or 1.0
    last = len(series.points) - 1

    def x(index: float) -> float:  # by position in the series, so a change point sits where its run is
        return 2 + (width - 4) * index / last

    spark = {
        "width": width,
        "height": height,
        "line": " ".join(f"{x(i):.1f},{height - 3 - (height - 6) * (v - low) / span:.1f}" for i, v in drawn),
        "marks": [(x(c.index - 0.5), "slower" if c.change < 0 else "faster") for c in changes if 0 < c.index <= last],
    }
    return TEMPLATES.get_template("history-parts.html.j2").module.sparkline(spark)
