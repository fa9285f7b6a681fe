"""The history's static site: ``index.html`` and a page per benchmark file, from the model alone.

Plain files that load with no server and no network (inline CSS and SVG, no JavaScript, relative links), so
the directory can be opened from disk or published on GitHub Pages as it is: the index lists the change points
newest first and every series by category with a sparkline; ``b/<file>.html`` has a trend chart per series.
The store's text comes from run.json files (untrusted): the templates (``benchgate/data/history-*.html.j2``)
autoescape it, file names and anchors are hashes, and commits only fill a percent-encoded ``{sha}``.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path
from typing import Any

from benchgate.errors import InputError
from benchgate.history.model import ChangePoint, Series, SeriesKey
from benchgate.history.svgchart import TEMPLATES, commit_link, rate, sparkline_svg, trend_svg

PAGES = "b"  # the per-benchmark pages' directory
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def page_name(filename: str) -> str:
    """The per-benchmark page of ``filename``: a safe file name (the store's text never picks a path)."""
    readable = _UNSAFE.sub("_", filename)[:80].strip("._") or "benchmark"
    return f"{readable}-{_digest(filename)[:8]}.html"


def anchor(key: SeriesKey) -> str:
    """The id of a series' section on its page."""
    return "s-" + _digest(key.filename, key.configuration, key.node_flags, key.runner, key.branch)


def series_href(key: SeriesKey) -> str:
    """A series' address relative to the site's root: ``b/PAGE.html#ANCHOR`` (for the PR comment's link)."""
    return f"{PAGES}/{page_name(key.filename)}#{anchor(key)}"


def _category(filename: str) -> str:
    return filename.split("/", 1)[0] if "/" in filename else "(top level)"


def _kind(change: ChangePoint) -> str:
    return "slower" if change.change < 0 else "faster"


def _change_rows(
    changes: Sequence[ChangePoint],
    *,
    commit_url: str | None,
    names: bool,
    prefix: str,
    reports: frozenset = frozenset(),
) -> dict:
    """The change table's header and lines, each field padded to compare.R's monospaced columns."""
    width = max((len(c.key.label()) for c in changes), default=0) if names else 0
    header = f"{'':<{width + 1}}" if names else ""
    header += f"{'commit':<12} {'date':<10} {'change':>10} {'before':>14} {'after':>14} {'sure':>6}"
    lines = [
        {
            "label": change.key.label(),
            "href": prefix + series_href(change.key),
            "pad": " " * (width - len(change.key.label()) + 1),
            "sha": change.commit[:12].ljust(12),
            "link": commit_link(commit_url, change.commit),
            "date": f"{change.date[:10]:<10}",
            "kind": _kind(change),
            "change": f"{change.change:>+8.2f} %",
            "before": f"{rate(change.mean_before):>14}",
            "after": f"{rate(change.mean_after):>14}",
            "sure": f"{change.confidence:>6.0%}",
            # A bisect report written for this change point (site's bisect/<id>.md, as the example workflow does).
            "bisect": f"{prefix}bisect/{change.id}.md" if change.id in reports else "",
        }
        for change in changes
    ]
    return {"header": header, "lines": lines}


def _by_key(changes: Sequence[ChangePoint]) -> dict[SeriesKey, list[ChangePoint]]:
    by_key: dict[SeriesKey, list[ChangePoint]] = defaultdict(list)
    for change in sorted(changes, key=lambda c: c.index):
        by_key[change.key].append(change)
    return by_key


def _render(template: str, **context: Any) -> str:
    return TEMPLATES.get_template(template).render(**context)


def _benchmark_page(
    filename: str,
    series: list[Series],
    changes: dict[SeriesKey, list[ChangePoint]],
    commit_url: str | None,
    site_url: str | None,
) -> str:
    sections = [
        {
            "key": one.key,
            "anchor": anchor(one.key),
            "chart": trend_svg(one, changes.get(one.key, []), commit_url=commit_url),
            "changes": _change_rows(changes.get(one.key, []), commit_url=commit_url, names=False, prefix="../"),
        }
        for one in series
    ]
    return _render(
        "history-benchmark.html.j2",
        title=f"benchgate history: {filename}",
        canonical=f"{site_url.rstrip('/')}/{PAGES}/{page_name(filename)}" if site_url else None,
        filename=filename,
        linked=commit_url is not None,
        sections=sections,
    )


def _index_row(one: Series, changes: list[ChangePoint]) -> dict:
    last = changes[-1] if changes else None
    return {
        "href": series_href(one.key),
        "label": one.key.label(),
        "runner": one.key.runner if one.key.branch == "main" else f"{one.key.branch} · {one.key.runner}",
        "runs": len(one.points),
        "latest": rate(one.points[-1].mean_rate) if one.points else "NA",
        "sparkline": sparkline_svg(one, changes),
        "last": last and {"kind": _kind(last), "change": f"{last.change:+.2f} %", "commit": last.commit[:10]},
    }


def _index_page(
    series: Sequence[Series],
    changes: Sequence[ChangePoint],
    by_key: dict[SeriesKey, list[ChangePoint]],
    commit_url: str | None,
    site_url: str | None,
    reports: frozenset,
) -> str:
    categories: dict[str, list[Series]] = defaultdict(list)
    for one in sorted(series, key=lambda s: s.key):
        categories[_category(one.key.filename)].append(one)
    newest = sorted(changes, key=lambda c: (c.date, c.commit), reverse=True)
    return _render(
        "history-index.html.j2",
        title="benchgate history",
        canonical=f"{site_url.rstrip('/')}/index.html" if site_url else None,
        series_count=len(series),
        run_count=len({point.run_id for one in series for point in one.points}),
        change_count=len(changes),
        newest=_change_rows(newest, commit_url=commit_url, names=True, prefix="", reports=reports),
        categories=[
            (category, [_index_row(one, by_key.get(one.key, [])) for one in categories[category]])
            for category in sorted(categories)
        ],
    )


def write_site(
    out_dir: Path,
    series: Sequence[Series],
    changes: Sequence[ChangePoint],
    *,
    site_url: str | None = None,
    commit_url: str | None = None,
) -> list[Path]:
    """Write ``index.html`` and ``b/<file>.html`` per benchmark file into ``out_dir``; the files, index first.

    ``commit_url`` (``https://github.com/nodejs/node/commit/{sha}``) links every run and change point to its
    commit; ``site_url`` is where the site is published (each page names its address there).
    """
    if commit_url is not None and "{sha}" not in commit_url:
        raise InputError(f"the commit URL {commit_url!r} has no {{sha}} to put the commit in")
    if commit_url is not None and not commit_url.startswith(("https://", "http://")):
        raise InputError(f"the commit URL {commit_url!r} must start with https:// or http://")
    out_dir = Path(out_dir)
    (out_dir / PAGES).mkdir(parents=True, exist_ok=True)
    by_key = _by_key(changes)
    written = [out_dir / "index.html"]
    reports = frozenset(path.stem for path in (out_dir / "bisect").glob("cp-*.md"))
    written[0].write_text(_index_page(series, changes, by_key, commit_url, site_url, reports), encoding="utf-8")
    for filename, mine in groupby(sorted(series, key=lambda s: s.key), key=lambda s: s.key.filename):
        path = out_dir / PAGES / page_name(filename)
        path.write_text(_benchmark_page(filename, list(mine), by_key, commit_url, site_url), encoding="utf-8")
        written.append(path)
    return written
