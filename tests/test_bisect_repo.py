"""`benchgate bisect --from --to --repo` on a Node-like fixture repository of 32 commits (tests/bisectrepo.py).

Real git, configure, make and cc; every probe is built through the binary cache and measured by
``benchgate run``'s machinery, with the seeded stub benchmark whose rate per commit each plan chooses.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from bisectrepo import make_bisect_repo

from benchgate import cli

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("make") is None or shutil.which("node") is None,
    reason="needs a C toolchain and node",
)

SINGLE, SPLIT, NOISY, CRASH = range(4)
PLANTED = 13  # plan SINGLE: 30 % slower from this commit on


def plans(index: int) -> list[str]:
    single = "1000:0.02" if index < PLANTED else "700:0.02"
    split = "1000:0.02" if index < 10 else "850:0.02" if index < 22 else "700:0.02"
    # The first midpoint (15) is like the later end but so noisy that 10 runs cannot tell.
    noisy = "1000:0.02" if index < 12 else "700:0.15" if index == 15 else "700:0.02"
    crash = "crash" if index == 15 else "1000:0.02" if index < 20 else "700:0.02"
    return [single, split, noisy, crash]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_bisect_repo(tmp_path_factory.mktemp("bisect") / "node", plans)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("build-cache")


def bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, plan: int, *extra: str, output=None):
    monkeypatch.setenv("BISECT_PLAN", str(plan))
    monkeypatch.setenv("BISECT_COUNTER", str(tmp_path / f"counter-{plan}"))
    output = output or tmp_path / f"out-{plan}"
    argv = ["bisect", "bisect", "--repo", str(repo.path), "--from", repo.commits["c0"], "--to", "main"]
    argv += ["--build-cache", str(cache_dir), "--output", str(output), "--format", "json", *extra]
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if captured.out.startswith("{") else None), captured.err


def test_a_planted_regression_is_found_in_at_most_log2_plus_two_probes(capsys, monkeypatch, tmp_path, repo, cache_dir):
    status, report, err = bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, SINGLE)
    assert status == 0, err
    assert report["candidates"] == 32
    (culprit,) = report["culprits"]
    assert culprit["key"] == repo.commits[f"c{PLANTED}"] and culprit["label"] == f"change {PLANTED}"
    assert culprit["author"] == "benchgate tests" and culprit["url"].endswith(repo.commits[f"c{PLANTED}"])
    assert 0.8 < culprit["share"] < 1.2
    assert report["probes_measured"] <= math.ceil(math.log2(32)) + 2
    (step,) = report["step"].values()
    assert -33 < step["change"] < -27  # the planted 30 %
    # Every probe's evidence: its class against both ends, its share with the interval, runs and samples.
    for probe in report["probes"]:
        index = int(probe["label"].split()[-1]) if probe["label"].startswith("change") else 0
        assert probe["cls"] == ("earlier" if index < PLANTED else "later"), probe
        assert probe["samples"] == probe["runs"] == 10 and probe["built"] is True
        if "rows" in probe:
            (row,) = probe["rows"].values()
            assert row["share_low"] <= row["share"] <= row["share_high"]
    assert "bisect: 7 probes done" in err or "probes done" in err
    markdown = (tmp_path / f"out-{SINGLE}" / "bisect.md").read_text()
    assert repo.commits[f"c{PLANTED}"][:12] in markdown and "| candidate" in markdown


def test_a_step_split_over_two_commits_names_both(capsys, monkeypatch, tmp_path, repo, cache_dir):
    status, report, err = bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, SPLIT, "--batch-runs", "6")
    assert status == 0, err
    found = {culprit["key"]: culprit["share"] for culprit in report["culprits"]}
    assert set(found) == {repo.commits["c10"], repo.commits["c22"]}
    # Each about half of the step (-15 % then -17.6 % of a -30 % step, on the log scale).
    assert all(0.3 < share < 0.7 for share in found.values()), found
    assert any(probe.get("cls") == "between" for probe in report["probes"])


def test_an_undecided_midpoint_is_settled_by_more_runs(capsys, monkeypatch, tmp_path, repo, cache_dir):
    status, report, err = bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, NOISY)
    assert status == 0, err
    (culprit,) = report["culprits"]
    assert culprit["key"] == repo.commits["c12"]
    midpoint = next(probe for probe in report["probes"] if probe["label"] == "change 15")
    assert midpoint["batches"] > 1 and midpoint["runs"] > 10 and midpoint["cls"] == "later" and midpoint["settled"]
    others = [probe for probe in report["probes"] if probe["label"] != "change 15"]
    assert all(probe["runs"] == 10 for probe in others)


def test_a_crashing_commit_is_skipped_to_its_neighbour(capsys, monkeypatch, tmp_path, repo, cache_dir):
    status, report, err = bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, CRASH, "--batch-runs", "6")
    assert status == 0, err
    (culprit,) = report["culprits"]
    assert culprit["key"] == repo.commits["c20"]
    skipped = [probe for probe in report["probes"] if probe["skipped"]]
    assert [probe["label"] for probe in skipped] == ["change 15"]
    assert skipped[0]["skipped"].startswith("crashed: bisect/stub.js n=1000: crashed (exited with status 1)")
    assert "change 14" in [probe["label"] for probe in report["probes"]]  # its neighbour instead


def test_a_commit_that_does_not_build_is_skipped(capsys, monkeypatch, tmp_path_factory, tmp_path, cache_dir):
    # 16 commits: the first midpoint, 7, does not compile; its neighbour 6 is probed instead.
    repo = make_bisect_repo(tmp_path_factory.mktemp("broken") / "node", plans, commits=16, broken=(7,))
    status, report, err = bisect(capsys, monkeypatch, tmp_path, repo, cache_dir, SINGLE, "--batch-runs", "6")
    assert status == 0, err
    assert [culprit["key"] for culprit in report["culprits"]] == [repo.commits[f"c{PLANTED}"]]
    (skipped,) = [probe for probe in report["probes"] if probe["skipped"]]
    assert skipped["label"] == "change 7" and skipped["skipped"].startswith("does not build")
