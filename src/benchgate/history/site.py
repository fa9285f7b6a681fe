"""The history's static site: ``index.html`` and a page per benchmark file, from the model alone.

Pure rendering from ``Series`` and ``ChangePoint`` values (no store access), written as plain
files that load with no server and no network: inline CSS and SVG, no JavaScript, relative links
only, so the directory can be opened from disk or published on GitHub Pages as it is.

- ``index.html``: the change points of every series, newest first, in compare.R's monospaced
  layout; then every series by category (``buffers``, ``streams``, ...) with a sparkline and its
  latest rate.
- ``b/<file>.html``: per benchmark file, one trend chart per series (configuration, node flags,
  runner) with its change points marked and every run's commit linked (``commit_url``).

Everything from the store comes from run.json files and is untrusted: it is escaped wherever it is
written (text, attributes, SVG), file names and anchors are derived from hashes, and commits only
fill a percent-encoded ``{sha}`` in the link template.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from html import escape
from pathlib import Path

from benchgate.errors import InputError
from benchgate.history.model import ChangePoint, Series, SeriesKey
from benchgate.history.svgchart import FASTER, LINE, SLOWER, commit_link, rate, sparkline_svg, trend_svg

PAGES = "b"  # the per-benchmark pages' directory
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

STYLE = f"""
body {{ font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1F2328; margin: 24px; }}
h1 {{ font-size: 22px; margin: 0 0 4px; }} h2 {{ font-size: 17px; margin: 28px 0 8px; }}
h3 {{ font-size: 14px; margin: 20px 0 4px; font-family: ui-monospace, Menlo, Consolas, monospace; }}
pre, code, .mono {{ font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }}
pre {{ background: #F6F8FA; padding: 10px 12px; overflow-x: auto; border-radius: 6px; }}
table {{ border-collapse: collapse; }} td, th {{ padding: 3px 10px 3px 0; text-align: left; vertical-align: middle; }}
th {{ font-weight: 600; border-bottom: 1px solid #D0D7DE; }}
td.num {{ text-align: right; font-family: ui-monospace, Menlo, Consolas, monospace; }}
a {{ color: #0969DA; text-decoration: none; }} a:hover {{ text-decoration: underline; }}
.slower {{ color: {SLOWER}; }} .faster {{ color: {FASTER}; }} .muted {{ color: #656D76; }}
svg.trend text {{ font: 11px ui-monospace, Menlo, Consolas, monospace; fill: #444C56; }}
svg.trend .change-label {{ font-weight: bold; }}
.legend > span {{ margin-right: 18px; }} h1.mono {{ font-size: 19px; }}
.swatch {{ display: inline-block; width: 18px; height: 3px; vertical-align: middle; }}
"""


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


def _page(title: str, body: list[str], *, canonical: str | None) -> str:
    link = f'<link rel="canonical" href="{escape(canonical)}">' if canonical else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src 'self' data:\">"
        f"<title>{escape(title)}</title>{link}<style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _change_table(
    changes: Sequence[ChangePoint],
    *,
    commit_url: str | None,
    names: bool,
    prefix: str,
    reports: frozenset = frozenset(),
) -> str:
    """Change points in compare.R's monospaced layout: the name, then commit, change, means and sureness."""
    width = max((len(c.key.label()) for c in changes), default=0) if names else 0
    header = f"{'':<{width + 1}}" if names else ""
    header += f"{'commit':<12} {'date':<10} {'change':>10} {'before':>14} {'after':>14} {'sure':>6}"
    lines = [escape(header)]
    for change in changes:
        label = change.key.label()
        name = ""
        if names:
            pad = " " * (width - len(label) + 1)
            name = f'<a href="{escape(prefix + series_href(change.key))}">{escape(label)}</a>{pad}'
        sha = escape(change.commit[:12].ljust(12))
        link = commit_link(commit_url, change.commit)
        commit = f'<a href="{escape(link)}">{sha}</a>' if link else sha
        kind = "slower" if change.change < 0 else "faster"
        figures = (
            f'{escape(change.date[:10]):<10} <span class="{kind}">{change.change:>+8.2f} %</span> '
            f"{rate(change.mean_before):>14} {rate(change.mean_after):>14} {change.confidence:>6.0%}"
        )
        # A bisect report written for this change point (site's bisect/<id>.md, as the example workflow does).
        bisected = f' <a href="{escape(prefix)}bisect/{change.id}.md">bisect</a>' if change.id in reports else ""
        lines.append(f"{name}{commit} {figures}{bisected}")
    return '<pre class="changes">' + "\n".join(lines) + "</pre>"


def _by_key(changes: Sequence[ChangePoint]) -> dict[SeriesKey, list[ChangePoint]]:
    found: dict[SeriesKey, list[ChangePoint]] = defaultdict(list)
    for change in changes:
        found[change.key].append(change)
    return found


def _legend(linked: bool) -> str:
    return (
        '<p class="legend muted">'
        f'<span><span class="swatch" style="background:{LINE}"></span> mean rate per run'
        f"{' (a dot links its commit)' if linked else ''}</span>"
        f'<span><span class="swatch" style="background:{SLOWER}"></span> change point, slower</span>'
        f'<span><span class="swatch" style="background:{FASTER}"></span> change point, faster</span>'
        "<span>dotted: the mean between change points</span></p>"
    )


def _runner_cell(key: SeriesKey) -> str:
    return key.runner if key.branch == "main" else f"{key.branch} · {key.runner}"


def _key_line(key: SeriesKey) -> str:
    flags = f" · node flags <code>{escape(key.node_flags)}</code>" if key.node_flags else ""
    return f'<p class="muted">{escape(key.branch)} · runner <code>{escape(key.runner)}</code>{flags}</p>'


def _benchmark_page(
    filename: str,
    series: list[Series],
    changes: dict[SeriesKey, list[ChangePoint]],
    commit_url: str | None,
    site_url: str | None,
) -> str:
    body = [
        '<p><a href="../index.html">← all benchmarks</a></p>',
        f'<h1 class="mono">{escape(filename)}</h1>',
        f'<p class="muted">{len(series)} series; oldest run on the left.</p>',
        _legend(commit_url is not None),
    ]
    for one in series:
        mine = sorted(changes.get(one.key, []), key=lambda c: c.index)
        body.append(f'<section id="{anchor(one.key)}">')
        body.append(f"<h3>{escape(one.key.label())}</h3>")
        body.append(_key_line(one.key))
        body.append(trend_svg(one, mine, commit_url=commit_url))
        if mine:
            body.append(_change_table(mine, commit_url=commit_url, names=False, prefix="../"))
        body.append("</section>")
    canonical = f"{site_url.rstrip('/')}/{PAGES}/{page_name(filename)}" if site_url else None
    return _page(f"benchgate history: {filename}", body, canonical=canonical)


def _index_page(
    series: Sequence[Series],
    changes: Sequence[ChangePoint],
    commit_url: str | None,
    site_url: str | None,
    reports: frozenset = frozenset(),
) -> str:
    by_key = _by_key(changes)
    runs = {point.run_id for one in series for point in one.points}
    body = [
        "<h1>benchgate: history of the benchmarks</h1>",
        f'<p class="muted">{len(series)} series from {len(runs)} runs; {len(changes)} change points. '
        "Rates are operations per second (higher is faster); a change is in percent of the mean before it "
        "(negative is slower, as compare.R's improvement).</p>",
        "<h2>Change points, newest first</h2>",
    ]
    newest = sorted(changes, key=lambda c: (c.date, c.commit), reverse=True)
    table = _change_table(newest, commit_url=commit_url, names=True, prefix="", reports=reports)
    body.append(table if newest else "<p>None found.</p>")
    categories: dict[str, list[Series]] = defaultdict(list)
    for one in series:
        categories[_category(one.key.filename)].append(one)
    for category in sorted(categories):
        body.append(f"<h2>{escape(category)}</h2>")
        heads = ("benchmark", "runner", "runs", "latest ops/s", "trend", "last change")
        rows = ["<table><tr>" + "".join(f"<th>{head}</th>" for head in heads) + "</tr>"]
        for one in sorted(categories[category], key=lambda s: s.key):
            mine = sorted(by_key.get(one.key, []), key=lambda c: c.index)
            last = mine[-1] if mine else None
            latest = rate(one.points[-1].mean_rate) if one.points else "NA"
            change = (
                f'<span class="{"slower" if last.change < 0 else "faster"}">{last.change:+.2f} %</span> '
                f'<span class="muted">{escape(last.commit[:10])}</span>'
                if last
                else '<span class="muted">none</span>'
            )
            rows.append(
                f'<tr><td class="mono"><a href="{escape(series_href(one.key))}">{escape(one.key.label())}</a></td>'
                f'<td class="mono">{escape(_runner_cell(one.key))}</td><td class="num">{len(one.points)}</td>'
                f'<td class="num">{latest}</td><td>{sparkline_svg(one, mine)}</td><td class="mono">{change}</td></tr>'
            )
        body.append("\n".join(rows) + "</table>")
    canonical = f"{site_url.rstrip('/')}/index.html" if site_url else None
    return _page("benchgate history", body, canonical=canonical)


def write_site(
    out_dir: Path,
    series: Sequence[Series],
    changes: Sequence[ChangePoint],
    *,
    site_url: str | None = None,
    commit_url: str | None = None,
) -> list[Path]:
    """Write the site into ``out_dir``: ``index.html`` and ``b/<file>.html`` per benchmark file.

    ``commit_url`` is a template with ``{sha}`` (``https://github.com/nodejs/node/commit/{sha}``)
    that links every run and change point to its commit; ``site_url`` where the site is published
    (each page names its address there). Returns the files written, index first.
    """
    if commit_url is not None and "{sha}" not in commit_url:
        raise InputError(f"the commit URL {commit_url!r} has no {{sha}} to put the commit in")
    if commit_url is not None and not commit_url.startswith(("https://", "http://")):
        raise InputError(f"the commit URL {commit_url!r} must start with https:// or http://")
    out_dir = Path(out_dir)
    (out_dir / PAGES).mkdir(parents=True, exist_ok=True)
    by_key = _by_key(changes)
    files: dict[str, list[Series]] = defaultdict(list)
    for one in sorted(series, key=lambda s: s.key):
        files[one.key.filename].append(one)
    written = [out_dir / "index.html"]
    reports = frozenset(path.stem for path in (out_dir / "bisect").glob("cp-*.md"))
    written[0].write_text(_index_page(series, changes, commit_url, site_url, reports), encoding="utf-8")
    for filename, mine in sorted(files.items()):
        path = out_dir / PAGES / page_name(filename)
        path.write_text(_benchmark_page(filename, mine, by_key, commit_url, site_url), encoding="utf-8")
        written.append(path)
    return written
