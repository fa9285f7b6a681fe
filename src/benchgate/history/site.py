"""The history's static site from the model: ``index.html`` and ``b/<file>.html`` per benchmark file, no
JavaScript, inline SVG charts. The store's text (untrusted run.json) is autoescaped by the templates
(``benchgate/data/history-*.html.j2``); file names and anchors are hashes; a commit fills ``{sha}`` percent-encoded."""

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import astuple
from itertools import groupby
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from benchgate.errors import InputError
from benchgate.history.model import ChangePoint, Series, SeriesKey, digest

# The site's and the --plot charts' templates (benchgate/data/*.j2): autoescaped; a name not given them fails.
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


# Pixels: each chart's size and its plot area, where the runs go (oldest left).
TREND = {"width": 860, "height": 260, "left": 78, "top": 26, "plot_width": 766, "plot_height": 188}
SPARKLINE = {"width": 160, "height": 28, "left": 2, "top": 3, "plot_width": 156, "plot_height": 22}


def commit_link(commit_url: str | None, sha: str) -> str | None:
    """The commit's URL from the template (``https://github.com/nodejs/node/commit/{sha}``), or None."""
    return commit_url.replace("{sha}", quote(sha, safe="")) if commit_url else None


def rate(value: float) -> str:
    """A rate as compare.js prints it, shortened: ``1,234,567`` ops/s, ``12.3`` for small ones."""
    if not math.isfinite(value):
        return "NA"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    raw = ((high - low) if high > low else (abs(high) or 1.0)) / count
    exponent = math.floor(math.log10(raw))
    step = next(s * 10**exponent for s in (1, 2, 5, 10) if s * 10**exponent >= raw)
    ticks = [math.floor(low / step) * step]
    while ticks[-1] + step <= high + step * 1e-9:
        ticks.append(ticks[-1] + step)
    return ticks


def _chart(
    series: Series, changes: Sequence[ChangePoint], box: dict[str, int]
) -> tuple[dict[str, Any], Callable[[float], float], Callable[[float], float]]:
    """``series`` in ``box``: the rate axis' round ticks, the line and a dot per run (mean rate), a mark per change
    between the runs around it; and the chart's scales (a run's index, a rate to pixels)."""
    points = series.points
    finite = [point.mean_rate for point in points if math.isfinite(point.mean_rate)] or [0.0]
    ticks = nice_ticks(min(finite), max(finite))
    low, high = min(ticks[0], min(finite)), max(ticks[-1], max(finite))
    if high == low:
        high = low + 1.0

    def x(index: float) -> float:  # by position in the series, so a change point sits where its run is
        return box["left"] + box["plot_width"] * (index + 0.5) / max(len(points), 1)

    def y(value: float) -> float:
        return box["top"] + box["plot_height"] * (1 - (value - low) / (high - low))

    dots = [
        (x(index), y(point.mean_rate), point) for index, point in enumerate(points) if math.isfinite(point.mean_rate)
    ]
    chart = {
        **box,
        "ticks": [(y(tick), rate(tick)) for tick in ticks],
        "line": " ".join(f"{dot_x:.1f},{dot_y:.1f}" for dot_x, dot_y, _ in dots),
        "dots": dots,
        "changes": [(x(change.index - 0.5), change) for change in changes if 0 < change.index < len(points)],
    }
    return chart, x, y


def trend_svg(series: Series, changes: Sequence[ChangePoint], *, commit_url: str | None) -> Markup:
    """The series' chart: mean rate per run (oldest left), the segments' means, a dashed line per change."""
    chart, x, y = _chart(series, changes, TREND)
    points = series.points
    every = max(1, math.ceil(len(points) / 12))  # at most about 12 labels under the axis
    # Under each point: the node version when every run is another release, else the short commit.
    versions = [point.node_version for point in points]
    unique = len(set(versions)) == len(versions) and all(versions)
    chart["labels"] = [
        (x(index), label[:12])
        for index, label in enumerate(versions if unique else [point.commit[:7] for point in points])
        if index % every == 0 or (index == len(points) - 1 and index % every > every // 2)
    ]
    # The mean of each stretch between change points, as Otava and Bencher draw it.
    bounds = [0, *sorted(change.index for _, change in chart["changes"]), len(points)]
    chart["segments"] = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        stretch = [point.mean_rate for point in points[start:end] if math.isfinite(point.mean_rate)]
        if stretch:
            chart["segments"].append((x(start - 0.5), x(end - 0.5), y(sum(stretch) / len(stretch))))
    return TEMPLATES.get_template("history-parts.html.j2").module.trend({**chart, "commit_url": commit_url})


def sparkline_svg(series: Series, changes: Sequence[ChangePoint]) -> Markup:
    """A small line of the series for the index, with its change points as ticks."""
    chart, _, _ = _chart(series, changes, SPARKLINE)
    if len(chart["dots"]) < 2:
        return Markup("")
    return TEMPLATES.get_template("history-parts.html.j2").module.sparkline(chart)


PAGES = "b"  # the per-benchmark pages' directory
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def page_name(filename: str) -> str:
    """The per-benchmark page of ``filename``: a safe file name (the store's text never picks a path)."""
    readable = _UNSAFE.sub("_", filename)[:80].strip("._") or "benchmark"
    return f"{readable}-{digest(filename)[:8]}.html"


def anchor(key: SeriesKey) -> str:
    """The id of a series' section on its page."""
    return "s-" + digest(*astuple(key))


def series_href(key: SeriesKey) -> str:
    """A series' address relative to the site's root: ``b/PAGE.html#ANCHOR`` (for the PR comment's link)."""
    return f"{PAGES}/{page_name(key.filename)}#{anchor(key)}"


def _kind(change: ChangePoint) -> str:
    return "slower" if change.change < 0 else "faster"


TEMPLATES.filters.update(label=SeriesKey.label, rate=rate, commit_link=commit_link, series_href=series_href, kind=_kind)


def check_commit_url(commit_url: str | None) -> None:
    """InputError unless ``commit_url`` (None: no links) is an http(s) URL with ``{sha}`` where the commit goes."""
    if commit_url is not None and "{sha}" not in commit_url:
        raise InputError(f"{commit_url[:80]!r} has no {{sha}} to put the commit in", where="--commit-url")
    if commit_url is not None and not commit_url.startswith(("https://", "http://")):
        raise InputError(f"{commit_url[:80]!r} must start with https:// or http://", where="--commit-url")


def write_site(
    out_dir: Path,
    series: Sequence[Series],
    changes: Sequence[ChangePoint],
    *,
    site_url: str | None = None,
    commit_url: str | None = None,
) -> list[Path]:
    """Write ``index.html`` and ``b/<file>.html`` per benchmark file into ``out_dir``; the files, index first.
    ``commit_url`` (``.../commit/{sha}``) links commits; ``site_url`` is where the site is published."""
    check_commit_url(commit_url)
    out_dir = Path(out_dir)
    (out_dir / PAGES).mkdir(parents=True, exist_ok=True)
    by_key: dict[SeriesKey, list[ChangePoint]] = defaultdict(list)
    for change in sorted(changes, key=lambda c: c.index):
        by_key[change.key].append(change)

    def category(one: Series) -> str:  # the benchmark's directory
        return one.key.filename.split("/", 1)[0] if "/" in one.key.filename else "(top level)"

    index = TEMPLATES.get_template("history-index.html.j2").render(
        title="benchgate history",
        canonical=f"{site_url.rstrip('/')}/index.html" if site_url else None,
        series_count=len(series),
        run_count=len({point.run_id for one in series for point in one.points}),
        newest=sorted(changes, key=lambda c: (c.date, c.commit), reverse=True),
        commit_url=commit_url,
        reports=frozenset(path.stem for path in (out_dir / "bisect").glob("cp-*.md")),
        categories=[
            (name, [(one, sparkline_svg(one, by_key[one.key]), by_key[one.key]) for one in group])
            for name, group in groupby(sorted(series, key=lambda one: (category(one), one.key)), key=category)
        ],
    )
    written = [out_dir / "index.html"]
    written[0].write_text(index, encoding="utf-8")
    for filename, mine in groupby(sorted(series, key=lambda s: s.key), key=lambda s: s.key.filename):
        sections = [
            {
                "key": one.key,
                "anchor": anchor(one.key),
                "chart": trend_svg(one, by_key[one.key], commit_url=commit_url),
                "changes": by_key[one.key],
            }
            for one in mine
        ]
        page = TEMPLATES.get_template("history-benchmark.html.j2").render(
            title=f"benchgate history: {filename}",
            canonical=f"{site_url.rstrip('/')}/{PAGES}/{page_name(filename)}" if site_url else None,
            filename=filename,
            commit_url=commit_url,
            sections=sections,
        )
        written.append(out_dir / PAGES / page_name(filename))
        written[-1].write_text(page, encoding="utf-8")
    return written
