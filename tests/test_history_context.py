"""The PR comment's history context: each regressed or undecided row's spread on main, whether main moved
there recently, a link to its series; only with a configured store, and never in the decision."""

from __future__ import annotations

import math
import re

import rundirs

from benchgate.cli import main
from benchgate.history.model import ChangePoint, Point, Series, SeriesKey, row_history
from benchgate.history.recording import record_run
from benchgate.history.site import series_href
from benchgate.report.comment import MARKER
from benchgate.report.historytext import render_history_context

COMPARE = ("buffers/buffer-compare.js", "n=100 size=16")


def _series(values: list[float], filename: str = COMPARE[0], configuration: str = COMPARE[1]) -> Series:
    key = SeriesKey(filename, configuration, "", "r1", "main")
    points = tuple(
        Point(str(i), f"{i:040x}", None, "main", f"2026-01-{i + 1:02d}T00:00:00Z", "v20", v, v, 0.01, 10)
        for i, v in enumerate(values)
    )
    return Series(key, points)


def test_row_history_spread_and_a_recent_change_point():
    series = _series([1000.0, 1010.0, 990.0, 1000.0] * 5 + [800.0] * 5)
    change = ChangePoint(series.key, 20, series.points[20].commit, series.points[20].date, -20.0, 1000, 800, 0.999)
    found = row_history([series], [change], *COMPARE, last=5)
    assert found.runs == 5 and found.spread < 1e-9 and found.moved == change  # the last 5 runs are all 800
    found = row_history([series], [change], *COMPARE, last=20, recent=3)
    assert found.moved is None and 5 < found.spread < 15  # the step is more than 3 runs back
    assert row_history([series], [], "url/url-parse.js", "n=10").series is None
    quiet = row_history([_series([1000.0, 1010.0])], [], *COMPARE)
    assert math.isclose(quiet.spread, math.expm1(math.log(1010 / 1000) / math.sqrt(2)) * 100)


def test_the_section_is_markdown_with_untrusted_names_quoted_and_links():
    hostile = _series([1000.0, 1001.0], filename="a|b`@team.js", configuration="n=1")
    text = render_history_context(
        [row_history([hostile], [], "a|b`@team.js", "n=1")], site_url="https://example.github.io/bench/"
    )
    assert text.startswith("#### History of main") and "Context, not evidence" in text
    assert "`a\\|b'@team.js n=1`" in text
    # The link is the series' section on the site (history.site.series_href): no store text in the URL.
    assert f"[series](https://example.github.io/bench/{series_href(hostile.key)})" in text
    assert re.fullmatch(r"b/a_b_team\.js-[0-9a-f]{8}\.html#s-[0-9a-f]{12}", series_href(hostile.key))
    assert render_history_context([]) == ""


def test_the_comment_gives_history_context_only_with_a_store(tmp_path, monkeypatch, capsys):
    store = f"sqlite:///{tmp_path / 'history.db'}"
    # Main: 12 runs, buffer-compare's head 20 % slower from the 9th on (a recent step), tojson steady.
    for index in range(12):
        effects = {COMPARE: 0.8 if index >= 8 else 1.0, ("buffers/buffer-tojson.js", "len=256 n=10"): 1.0}
        run = rundirs.write_run(tmp_path / f"main{index}", effects, seed=index + 1, head_sha=f"{index + 1:040x}")
        record_run(run, store, date=f"2026-02-{index + 1:02d}")
    pr_run = rundirs.write_run(tmp_path / "pr", rundirs.REGRESSION, seed=99)
    config = tmp_path / "benchgate.yml"
    config.write_text("history:\n  site-url: https://example.github.io/bench/\n")
    monkeypatch.delenv("BENCHGATE_HISTORY", raising=False)
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    assert main(["report", str(pr_run), "--dry-run", "--config", str(config)]) == 1
    assert "History of main" not in capsys.readouterr().out  # no store configured: no section
    monkeypatch.setenv("BENCHGATE_HISTORY", store)
    assert main(["report", str(pr_run), "--dry-run", "--config", str(config)]) == 1
    body = capsys.readouterr().out
    body = body[body.index(MARKER) :]
    section = body[body.index("#### History of main") :]
    row = next(line for line in section.splitlines() if "buffer-compare.js" in line)
    assert "| 12 |" in row and re.search(r"\*\*yes\*\*: -(19|20)\.\d% at `0{12}` \(2026-02-09\)", row), row
    link = re.search(r"\[series\]\(https://example\.github\.io/bench/(b/[^)#]+)#(s-[0-9a-f]{12})\)", row)
    assert link, row
    # It resolves on the site written from the same store: the page exists and holds the section.
    assert main(["history", "site", str(tmp_path / "site"), "--store", store, "--config", str(config)]) == 0
    page = (tmp_path / "site" / link.group(1)).read_text()
    assert f'<section id="{link.group(2)}">' in page and "buffers/buffer-compare.js n=100 size=16" in page
    capsys.readouterr()
    assert "tojson" not in section  # an improvement: neither regressed nor undecided
    # An unreadable store costs the section, not the comment.
    monkeypatch.setenv("BENCHGATE_HISTORY", f"sqlite:///{tmp_path / 'missing.db'}")
    assert main(["report", str(pr_run), "--dry-run", "--config", str(config)]) == 1
    captured = capsys.readouterr()
    assert "History of main" not in captured.out and "no history context in the comment" in captured.err
