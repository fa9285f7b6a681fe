"""The history's static site: what the pages hold, that the store's text cannot inject anything, and
that a real browser (Debian's headless Chromium) renders the charts.

The HTML is read back with the standard library's parser, the way a browser tokenises it, so that
an escaping mistake shows up as a stray element or attribute, not as a string that happens to match.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pngpixels import count_colour, distinct_colours, read_png

from benchgate.errors import InputError
from benchgate.history import site
from benchgate.history.model import ChangePoint, Point, Series, SeriesKey

COMMIT_URL = "https://github.com/nodejs/node/commit/{sha}"
HOSTILE = "\"'><script>document.documentElement.setAttribute('data-pwned','1')</script>"
HOSTILE_IMG = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','2')\">"


def sha(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


def series(filename: str, configuration: str, rates: list[float], *, runner: str = "x86_64-4c-performance", **point):
    points = tuple(
        Point(
            run_id=f"run-{filename}-{configuration}-{i}",
            commit=point.get("commit", sha(f"c{i}")),
            parent=None,
            branch="main",
            date=point.get("date", f"2026-11-{i + 1:02d}T03:00:00Z"),
            node_version=point.get("node_version", "v24.0.0-pre"),
            mean_rate=rate,
            trimmed_mean=rate,
            log_spread=0.01,
            samples=30,
        )
        for i, rate in enumerate(rates)
    )
    return Series(
        SeriesKey(filename, configuration, point.get("flags", ""), runner, point.get("branch", "main")), points
    )


def step(index: int, values: list[float], one: Series) -> ChangePoint:
    before, after = sum(values[:index]) / index, sum(values[index:]) / (len(values) - index)
    p = one.points[index]
    return ChangePoint(one.key, index, p.commit, p.date, 100 * (after / before - 1), before, after, 0.999)


@pytest.fixture
def history() -> tuple[list[Series], list[ChangePoint]]:
    rng = random.Random(7)
    slower = [1e6 * (0.85 if i >= 12 else 1.0) * rng.gauss(1, 0.01) for i in range(20)]
    flat = [5e5 * rng.gauss(1, 0.01) for _ in range(20)]
    faster = [3e4 * (1.2 if i >= 5 else 1.0) * rng.gauss(1, 0.01) for i in range(20)]
    found = [
        series("buffers/buffer-compare.js", "n=1000000 size=16", slower),
        series("buffers/buffer-compare.js", "n=1000000 size=4096", flat),
        series("streams/creation.js", "kind='transform' n=50000000", faster),
    ]
    return found, [step(12, slower, found[0]), step(5, faster, found[2])]


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, as a browser's tokeniser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parsed(path: Path) -> Tags:
    tags = Tags()
    tags.feed(path.read_text(encoding="utf-8"))
    return tags


def test_index_and_one_page_per_benchmark_file_with_a_chart_per_series(tmp_path, history):
    found, changes = history
    written = site.write_site(tmp_path, found, changes, commit_url=COMMIT_URL)
    assert written[0] == tmp_path / "index.html" and len(written) == 3  # index + 2 benchmark files
    index = parsed(written[0])
    hrefs = [attrs["href"] for tag, attrs in index.tags if tag == "a"]
    # Every series is linked, relatively, to its section of its page; the links resolve on disk.
    for one in found:
        assert site.series_href(one.key) in hrefs
    for href in hrefs:
        if not href.startswith("https://github.com/nodejs/node/commit/"):
            target, _, fragment = href.partition("#")
            assert (tmp_path / target).is_file() and not href.startswith(("/", "http")), href
    # The change points, newest first, with the commit linked and the change in compare.R's sign.
    text = "".join(index.text)
    newest, older = (f"{change.change:+.2f} %" for change in changes)  # 2026-11-13, then 2026-11-06
    assert newest.startswith("-1") and older.startswith("+2") and text.index(newest) < text.index(older)
    assert COMMIT_URL.format(sha=changes[0].commit) in hrefs
    page = parsed(tmp_path / site.series_href(found[0].key).partition("#")[0])
    sections = [attrs["id"] for tag, attrs in page.tags if tag == "section"]
    assert sections == [site.anchor(found[0].key), site.anchor(found[1].key)]
    assert sum(tag == "polyline" for tag, _ in page.tags) == 2
    assert sum(tag == "circle" for tag, _ in page.tags) == 40  # one dot per run
    dashed = [attrs for tag, attrs in page.tags if tag == "line" and attrs.get("stroke") == site.SLOWER]
    assert len(dashed) == 1  # the -15 % step, and no mark on the flat series
    commits = {attrs["href"] for tag, attrs in page.tags if tag == "a" and attrs["href"].startswith("https://")}
    assert commits == {COMMIT_URL.format(sha=p.commit) for p in found[0].points}
    assert not any(tag == "script" for tag, _ in page.tags + index.tags)  # no JavaScript at all
    # Nothing to fetch: no src, no stylesheet or font link; it loads from file:// as from GitHub Pages.
    assert not [attrs for _, attrs in page.tags + index.tags if "src" in attrs]
    assert not [attrs for tag, attrs in page.tags + index.tags if tag == "link"]  # canonical only with site_url


def test_release_series_are_labelled_by_version_and_site_url_names_each_page(tmp_path):
    releases = series("url/url-parse.js", "n=1e6", [1.0e6, 1.1e6, 1.5e6], node_version="")
    releases = Series(
        releases.key,
        tuple(
            Point(**{**vars(p), "node_version": v})
            for p, v in zip(releases.points, ["v18.16.0", "v20.0.0", "v22.0.0"], strict=True)
        ),
    )
    written = site.write_site(tmp_path, [releases], [], site_url="https://example.github.io/bench/")
    page = written[1].read_text()
    assert all(version in page for version in ("v18.16.0", "v20.0.0", "v22.0.0"))
    assert f'href="https://example.github.io/bench/b/{written[1].name}"' in page
    assert "<p>None found.</p>" in written[0].read_text()


def test_hostile_names_and_commits_are_text_not_markup(tmp_path):
    hostile = series(
        f"{HOSTILE}/../../etc/{HOSTILE_IMG}.js",
        f"x={HOSTILE_IMG}",
        [1.0, 2.0, 1.0, 2.0],
        runner=HOSTILE,
        commit=f"javascript:alert(1)//{HOSTILE}",
        date=HOSTILE_IMG,
        node_version=HOSTILE,
        flags=f"--{HOSTILE}",
        branch=HOSTILE_IMG,
    )
    change = ChangePoint(hostile.key, 2, hostile.points[2].commit, HOSTILE_IMG, -50.0, 2.0, 1.0, 0.9)
    written = site.write_site(tmp_path, [hostile], [change], commit_url=COMMIT_URL)
    # The page's file name is derived, never the store's path: it stays inside b/.
    assert [path.parent for path in written] == [tmp_path, tmp_path / "b"]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        p.relative_to(tmp_path) for p in written
    )
    for path in written:
        tags = parsed(path)
        names = [tag for tag, _ in tags.tags]
        assert "script" not in names and "img" not in names, path
        for tag, attrs in tags.tags:
            assert not [name for name in attrs if name.startswith("on") or name == "data-pwned"], (tag, attrs)
            href = attrs.get("href") or ""
            assert not href.lower().startswith("javascript:"), href
            if href.startswith("https://github.com/"):
                assert href.startswith("https://github.com/nodejs/node/commit/javascript%3Aalert%281%29%2F%2F")
        # The hostile text is shown as text: the tokeniser gives it back literally.
        assert HOSTILE_IMG in "".join(tags.text)


def test_commit_url_must_be_a_web_template(tmp_path, history):
    found, changes = history
    with pytest.raises(InputError, match=r"no \{sha\}"):
        site.write_site(tmp_path, found, changes, commit_url="https://github.com/nodejs/node/commit/")
    with pytest.raises(InputError, match="https://"):
        site.write_site(tmp_path, found, changes, commit_url="javascript:alert('{sha}')")


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium)")


def chromium(*args: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


@needs_chromium
def test_chromium_renders_the_trend_chart_with_its_line_and_change_point(tmp_path, history):
    found, changes = history
    written = site.write_site(tmp_path / "site", found, changes, commit_url=COMMIT_URL)
    page = tmp_path / "site" / site.series_href(found[0].key).partition("#")[0]
    shot = tmp_path / "page.png"
    chromium("--window-size=1000,760", f"--screenshot={shot}", page.as_uri())
    width, height, rows = read_png(shot)
    assert (width, height) == (1000, 760)
    assert distinct_colours(rows) > 20  # not blank: text, grid, line and marks
    # The series' blue line and the change point's vermillion dashes, drawn by the browser.
    assert count_colour(rows, site.LINE, tolerance=16) > 1500
    assert count_colour(rows, site.SLOWER, tolerance=16) > 150
    # The rendered DOM: both charts laid out, the links intact, nothing from the page ran.
    dom = chromium("--dump-dom", written[0].as_uri()).stdout
    tags = Tags()
    tags.feed(dom)
    assert sum(tag == "svg" for tag, _ in tags.tags) == 3  # one sparkline per series on the index
    assert sum(tag == "a" and "href" in attrs for tag, attrs in tags.tags) >= 3 + 2 * 2


@needs_chromium
def test_chromium_runs_nothing_from_a_hostile_store(tmp_path):
    hostile = series(HOSTILE, HOSTILE_IMG, [1.0, 2.0, 1.5], runner=HOSTILE_IMG, commit=HOSTILE)
    change = ChangePoint(hostile.key, 1, HOSTILE, HOSTILE_IMG, 100.0, 1.0, 1.75, 0.9)
    written = site.write_site(tmp_path, [hostile], [change], commit_url=COMMIT_URL)
    for path in written:
        tags = Tags()
        tags.feed(chromium("--dump-dom", path.as_uri()).stdout)
        html = [attrs for tag, attrs in tags.tags if tag == "html"]
        assert html == [{"lang": "en"}], f"{path.name}: {html}"  # the payload never set data-pwned
        assert "img" not in [tag for tag, _ in tags.tags]
        assert HOSTILE_IMG in "".join(tags.text)


def test_a_sparkline_puts_its_change_between_the_runs_around_it_even_past_a_missing_run():
    one = series("a/b.js", "n=1", [1.0, float("nan"), 1.0, 2.0, 2.0])
    change = ChangePoint(one.key, 3, one.points[3].commit, one.points[3].date, 100.0, 1.0, 2.0, 0.99)
    drawn = site.sparkline_svg(one, [change])
    assert 'x1="95.6" x2="95.6"' in drawn  # 2 + 156 * (2.5 + 0.5) / 5: halfway between runs 2 and 3 of 0..4
    assert drawn.count(",") == 4  # four points on the line: the missing run is left out, not drawn at 0
