"""`benchgate report` at the edges: a run that selected nothing, a run that tested nothing, and bad input.

- A docs-only PR: ``benchgate run --changed-from`` selects no benchmark and writes
  only run.json; the report is a pass with a short comment and a success check.
- A run that tested nothing (every row with fewer than 2 samples a side, or no head
  samples at all) never passes.
- ``--head-sha`` needs a recorded, matching head commit; a bad API URL or event
  payload is a one-line exit 2, not a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from rundirs import BASE_SHA, HEAD_SHA, NEUTRAL, write_run

from benchgate import results
from benchgate.cli import main
from benchgate.commands.report import report_results
from benchgate.errors import InputError
from benchgate.github.client import GitHubClient
from benchgate.report.comment import MARKER

REPO = "nodejs/node"
GOLDEN = Path(__file__).parent / "golden"
BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")


@pytest.fixture(autouse=True)
def plain_environment(tmp_path, monkeypatch):
    """No Actions context unless a test sets it: output and summary files go to tmp_path."""
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    for name in ("GITHUB_EVENT_PATH", "GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_RUN_ID", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)


def nothing_selected_run(directory: Path, **changes) -> Path:
    """A run.json as `benchgate run --changed-from` writes it when the change maps to no category."""
    directory.mkdir(parents=True)
    record = {
        "schema": 1,
        "tool": "benchgate",
        "binaries": {
            "base": {"path": "/tmp/node-base", "version": "v20.11.0", "sha": BASE_SHA, "node_args": []},
            "head": {"path": "/tmp/node-head", "version": "v20.11.0", "sha": HEAD_SHA, "node_args": []},
        },
        "selection": {
            "benchmark_dir": "/src/node/benchmark",
            "categories": [],
            "filter": [],
            "exclude": [],
            "set": [],
            "files": [],
            "shard": None,
            "changed": {"from": "main", "files": ["doc/api/url.md"], "categories": [], "unmapped": []},
        },
        "seed": 1,
        "runs": 30,
        "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:00:01Z",
        "complete": True,
        "interrupted": False,
        "durations": {},
        "samples": 0,
        "environment": {"cpu_model": "Test CPU"},
        "failures": [],
        "skipped": [],
        "progress": {"completed_jobs": 0, "csv_bytes": 0, "jobs": 0},
    }
    record.update(changes)
    results.write_run_record(directory / "run.json", record)
    return directory


def client_for(fake) -> GitHubClient:
    return GitHubClient(token="t", repository=REPO, api_url=fake.url, max_retries=1, sleep=lambda s: None)


def report_pr7(fake, tmp_path, sources: list[str], **options):
    """report_results for pull request 7 at HEAD_SHA, posting through the fake API (no config file)."""
    return report_results(
        sources,
        config_path=tmp_path / "absent.yml",
        repository=REPO,
        pr=7,
        head_sha=HEAD_SHA,
        client=client_for(fake),
        **options,
    )


# -- nothing to benchmark ------------------------------------------------------------------------


def test_nothing_selected_comment_matches_golden(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_RUN_ID", "42")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    run_dir = nothing_selected_run(tmp_path / "run")
    result = report_results([str(run_dir)], config_path=tmp_path / "absent.yml", dry_run=True)
    assert (result.exit_status, result.verdict, result.regressions) == (0, "pass", 0)
    golden = GOLDEN / "comment-nothing-to-benchmark.md"
    if os.environ.get("BENCHGATE_REGENERATE_GOLDEN") == "1":
        golden.write_text(result.comment, encoding="utf-8")
    assert result.comment == golden.read_text(encoding="utf-8")
    assert capsys.readouterr().out.endswith(result.comment)


def test_nothing_selected_posts_a_short_comment_and_a_success_check(fake_github, tmp_path, capsys):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    run_dir = nothing_selected_run(tmp_path / "run")
    result = report_pr7(fake_github, tmp_path, [str(run_dir)])
    assert result.exit_status == 0 and result.posting_error is None
    [body] = fake_github.comments(REPO, 7)
    assert body.startswith(MARKER) and "nothing to benchmark (the change touches no benchmarked area)" in body
    assert len(body) < 1000
    [check] = fake_github.state.repo(REPO).check_runs
    assert (check.conclusion, check.head_sha) == ("success", HEAD_SHA)
    assert check.output["title"] == "Nothing to benchmark (the change touches no benchmarked area)"
    out = capsys.readouterr().out
    assert "nothing to benchmark (the change touches no benchmarked area)\nverdict: pass\n" in out


def test_a_run_claiming_nothing_selected_fails_when_the_api_says_the_pr_touches_a_category(fake_github, tmp_path):
    # run.json comes from the machine that ran the PR's code: its empty selection is checked, not believed.
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA, files=["doc/api/url.md", "lib/url.js"])
    bench = tmp_path / "base" / "benchmark"
    (bench / "url").mkdir(parents=True)
    (bench / "url" / "url-parse.js").write_text("")
    result = report_pr7(fake_github, tmp_path, [str(nothing_selected_run(tmp_path / "run"))], benchmark_dir=bench)
    assert (result.exit_status, result.verdict) == (1, "fail")
    assert "nothing was benchmarked, but the pull request's changed files map to url" in result.comment
    [check] = fake_github.state.repo(REPO).check_runs
    assert check.conclusion == "failure"


def test_nothing_to_benchmark_from_authorize_needs_no_results(fake_github, tmp_path, capsys):
    # authorize found no category; the benchmark job did not run; report says so, after asking the API too.
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA, files=["doc/api/fs.md", "test/parallel/test-fs.js"])
    result = report_pr7(fake_github, tmp_path, [], nothing_to_benchmark=True)
    assert (result.exit_status, result.verdict) == (0, "pass")
    assert "nothing to benchmark" in fake_github.comments(REPO, 7)[0]
    assert fake_github.requests_to("GET", "/pulls/7/files")
    fake_github.add_pull(REPO, 8, head_sha=HEAD_SHA, files=["lib/fs.js"])
    contradicted = report_results(
        [],
        config_path=tmp_path / "absent.yml",
        repository=REPO,
        pr=8,
        client=client_for(fake_github),
        nothing_to_benchmark=True,
    )
    assert (contradicted.exit_status, contradicted.verdict) == (1, "fail")
    with pytest.raises(InputError, match="no RESULTS given"):
        report_results([], config_path=tmp_path / "absent.yml", dry_run=True)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"complete": False}, "an interrupted run"),
        ({"selection": {"files": ["url/url-parse.js"]}}, "a run that selected files but wrote no results"),
        ({"samples": 3}, "a run that measured samples"),
    ],
)
def test_only_a_complete_empty_selection_counts_as_nothing_to_benchmark(tmp_path, capsys, changes, why):
    run_dir = nothing_selected_run(tmp_path / "run", **changes)
    status = main(["report", str(run_dir), "--dry-run", "--config", str(tmp_path / "absent.yml")])
    assert status == 2, why
    assert "no results.csv in this directory" in capsys.readouterr().err


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_real_docs_only_run_reports_nothing_to_benchmark(tmp_path, capsys):
    checkout = tmp_path / "node"
    shutil.copytree(BENCH, checkout / "benchmark")
    (checkout / "doc").mkdir()
    (checkout / "doc" / "calc.md").write_text("# calc\n")
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "base"], ["checkout", "-qb", "pr"]):
        subprocess.run(git + args, check=True, capture_output=True)
    (checkout / "doc" / "calc.md").write_text("# better docs\n")
    out = tmp_path / "out"
    run_args = ["run", "--benchmark-dir", str(checkout / "benchmark"), "--changed-from", "main"]
    run_args += ["--base-binary", NODE, "--head-binary", NODE, "--no-progress", "--output", str(out)]
    assert main(run_args) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--dry-run", "--config", str(tmp_path / "absent.yml")]) == 0
    printed = capsys.readouterr().out
    assert "### ✅ benchgate: nothing to benchmark (the change touches no benchmarked area)" in printed


# -- a run that tested nothing does not pass -----------------------------------------------------


def test_a_run_with_one_sample_a_side_fails_and_says_why(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", NEUTRAL, runs=1)
    result = report_results([str(run_dir)], config_path=tmp_path / "absent.yml", dry_run=True)
    assert (result.exit_status, result.verdict) == (1, "fail")
    assert "### ❌ benchgate: the benchmark run fails the gate" in result.comment
    assert "no comparison could be tested: all 3 have fewer than 2 samples on a side" in result.comment
    assert "no regression fails the gate" not in result.comment


def test_a_run_without_head_samples_fails(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    csv = run_dir / "results.csv"
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text(lines[0] + "".join(line for line in lines[1:] if line.startswith('"old"')))
    status = main(["report", str(run_dir), "--dry-run", "--config", str(tmp_path / "absent.yml")])
    out = capsys.readouterr().out
    assert status == 1 and "the head has no samples (3 comparisons)" in out


# -- bad input is one line, exit 2 ---------------------------------------------------------------


@pytest.mark.parametrize("sha", ["zz", "c0ffee", "g" * 40, HEAD_SHA + "0"])
def test_head_sha_must_be_40_hex_digits(tmp_path, capsys, sha):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    assert main(["report", str(run_dir), "--dry-run", "--head-sha", sha]) == 2
    err = capsys.readouterr().err
    assert "--head-sha must be a full 40-character hexadecimal commit SHA" in err and err.count("\n") == 1


def test_head_sha_in_capitals_matches(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    status = main(["report", str(run_dir), "--dry-run", "--head-sha", HEAD_SHA.upper(), "--config", "absent.yml"])
    assert status == 0


@pytest.mark.parametrize("given", ["csv-only directory", "results.csv named directly", "record without a head"])
def test_head_sha_needs_a_recorded_head_commit(tmp_path, capsys, given):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    argument = str(run_dir)
    if given == "csv-only directory":
        (run_dir / "run.json").unlink()
    elif given == "results.csv named directly":
        argument = str(run_dir / "results.csv")
    else:
        write_run(run_dir, NEUTRAL, record={"binaries": {"base": {}, "head": {"version": "v20.11.0"}}})
    assert main(["report", argument, "--dry-run", "--head-sha", HEAD_SHA]) == 2
    err = capsys.readouterr().err
    assert "the results record no head commit" in err and err.count("\n") == 1
    # Without --head-sha there is nothing to check against, and the report goes on.
    assert main(["report", argument, "--dry-run", "--config", str(tmp_path / "absent.yml")]) == 0


@pytest.mark.parametrize("url", ["notaurl", "ftp://example.com", "http://"])
@pytest.mark.parametrize("how", ["option", "environment"])
def test_report_with_a_bad_api_url_is_one_line(tmp_path, capsys, monkeypatch, url, how):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    arguments = ["report", str(run_dir), "--pr", "7", "--repository", REPO, "--config", str(tmp_path / "absent.yml")]
    if how == "option":
        arguments += ["--api-url", url]
    else:
        monkeypatch.setenv("GITHUB_API_URL", url)
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchgate: error: GitHub: GitHub API URL") and err.count("\n") == 1


def _authorize(tmp_path, monkeypatch, event: dict, *extra: str) -> int:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request_target")
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    return main(["authorize", "--config", str(tmp_path / "absent.yml"), *extra])


def test_authorize_with_a_bad_api_url_is_one_line(tmp_path, capsys, monkeypatch):
    event = {"action": "labeled", "label": {"name": "benchmark"}, "pull_request": {"number": 5}}
    assert _authorize(tmp_path, monkeypatch, event, "--api-url", "notaurl") == 2
    err = capsys.readouterr().err
    assert "GitHub API URL must look like https://api.github.com" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ({"action": "labeled", "label": "benchmark", "pull_request": {"number": 5}}, "label must be an object"),
        ({"action": "labeled", "label": {"name": 3}, "pull_request": {"number": 5}}, "label.name must be a string"),
        ({"action": "labeled", "label": {"name": "benchmark"}, "pull_request": "5"}, "pull_request must be an"),
        ({"action": "labeled", "label": {"name": "benchmark"}, "pull_request": {"head": []}}, "pull_request.head"),
        ({"action": ["labeled"], "label": {"name": "benchmark"}}, "action must be a string"),
    ],
)
def test_authorize_refuses_a_malformed_event_in_one_line(tmp_path, capsys, monkeypatch, event, field):
    assert _authorize(tmp_path, monkeypatch, event) == 2
    err = capsys.readouterr().err
    assert f"event field {field}" in err and str(tmp_path / "event.json") in err and err.count("\n") == 1


# -- a run that cannot test anything is refused before it starts ---------------------------------


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("runs", ["1", "0", "1001"])
def test_run_refuses_fewer_than_2_runs_in_one_line(tmp_path, capsys, runs):
    out = tmp_path / "out"
    arguments = ["run", "--benchmark-dir", str(BENCH), "--base-binary", NODE, "--head-binary", NODE]
    status = main([*arguments, "--runs", runs, "--no-progress", "--output", str(out), "--", "calc"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    # The schema's runs parser, as for the file, an input or a label: one message everywhere.
    assert (
        f"option --runs: key 'runs': must be between 2 and 1000 (the t-test needs 2 samples a side), not {int(runs)}"
        in err
    )
    assert not out.exists()  # nothing was written
