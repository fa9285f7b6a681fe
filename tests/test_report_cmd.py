"""`benchgate report` against the fake GitHub: sticky comment, check run, labels, outputs and exit statuses."""

from __future__ import annotations

import json

import pytest
from fakegithub import Fault
from rundirs import HEAD_SHA, NEUTRAL, REGRESSION, write_run

from benchgate import results
from benchgate.cli import main
from benchgate.commands.report import report_results
from benchgate.github.client import GitHubClient
from benchgate.report.comment import MARKER

REPO = "nodejs/node"


@pytest.fixture
def actions(tmp_path, monkeypatch):
    """A simulated Actions environment: output and summary files, repository and run id."""
    files = {"output": tmp_path / "output.txt", "summary": tmp_path / "summary.md"}
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(files["output"]))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(files["summary"]))
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return files


def outputs(path) -> dict[str, str]:
    """Parse GITHUB_OUTPUT's name<<DELIMITER form."""
    lines = path.read_text().splitlines()
    values, index = {}, 0
    while index < len(lines):
        name, delimiter = lines[index].split("<<")
        end = lines.index(delimiter, index + 1)
        values[name] = "\n".join(lines[index + 1 : end])
        index = end + 1
    return values


def client_for(fake, retries: int = 2) -> GitHubClient:
    return GitHubClient(token="t", repository=REPO, api_url=fake.url, max_retries=retries, sleep=lambda s: None)


def run_report(fake, run_dir, *, tmp_path, retries=2, **kwargs):
    return report_results(
        [str(run_dir)],
        config_path=tmp_path / "absent.yml",
        pr=7,
        client=client_for(fake, retries),
        report_path=tmp_path / "report.md",
        **kwargs,
    )


def test_fail_posts_one_sticky_comment_and_failing_check(fake_github, tmp_path, actions, capsys):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    for index in range(120):  # our comment lands on the second page
        fake_github.add_comment(REPO, 7, f"comment {index}")
    run_dir = write_run(tmp_path / "run", REGRESSION)

    first = run_report(fake_github, run_dir, tmp_path=tmp_path)
    second = run_report(fake_github, run_dir, tmp_path=tmp_path)

    assert first.exit_status == second.exit_status == 1
    assert first.verdict == "fail" and first.regressions == 1
    bodies = fake_github.comments(REPO, 7)
    ours = [body for body in bodies if body.startswith(MARKER)]
    assert len(bodies) == 121 and len(ours) == 1
    assert first.comment_url == second.comment_url
    assert "buffers/buffer-compare.js n=100 size=16" in ours[0] and "❌ fails" in ours[0]
    runs = fake_github.state.repo(REPO).check_runs
    assert [(run.name, run.conclusion, run.head_sha) for run in runs] == [("benchgate", "failure", HEAD_SHA)] * 2
    assert runs[0].details_url == f"https://github.com/{REPO}/actions/runs/4242"
    out = capsys.readouterr().out
    annotation = "::error title=benchgate::buffers/buffer-compare.js n=100 size=16: -19.9 %25 [-20.7, -19.1] regression"
    assert annotation in out
    assert out.count("::error") == 2  # one gating row, two runs
    values = outputs(actions["output"])
    assert values["verdict"] == "fail" and values["regressions"] == "1"
    assert values["comment-url"] == first.comment_url and values["report-path"].endswith("report.md")
    assert "All 3 comparisons" in actions["summary"].read_text()


def test_pass_gives_success_check_and_exit_0(fake_github, tmp_path, actions):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    result = run_report(fake_github, write_run(tmp_path / "run", NEUTRAL), tmp_path=tmp_path)
    assert result.exit_status == 0 and result.verdict == "pass"
    assert fake_github.state.repo(REPO).check_runs[0].conclusion == "success"


@pytest.mark.parametrize(("role", "applied"), [("read", False), ("triage", False), ("write", True), ("admin", True)])
def test_loosening_label_counts_only_from_a_writer(fake_github, tmp_path, actions, role, applied):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    fake_github.set_role(REPO, "labeller", role)
    fake_github.add_event(REPO, 7, "labeled", "labeller", "benchmark:threshold=off")
    result = run_report(fake_github, write_run(tmp_path / "run", REGRESSION), tmp_path=tmp_path)
    body = fake_github.comments(REPO, 7)[0]
    if applied:
        assert result.exit_status == 0 and result.verdict == "pass"
        assert "✅ applied" in body and "has write access" in body
    else:
        assert result.exit_status == 1
        assert "🚫 ignored" in body and "lacks write, maintain or admin permission" in body
    assert fake_github.requests_to("GET", "/collaborators/labeller/permission")


def test_accepted_regression_is_neutral(fake_github, tmp_path, actions):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    fake_github.set_role(REPO, "maintainer", "maintain")
    fake_github.add_event(REPO, 7, "labeled", "maintainer", "benchmark:accept-regression")
    result = run_report(fake_github, write_run(tmp_path / "run", REGRESSION), tmp_path=tmp_path)
    assert result.exit_status == 0 and result.verdict == "accepted"
    assert fake_github.state.repo(REPO).check_runs[0].conclusion == "neutral"


def test_head_failure_fails_the_gate(fake_github, tmp_path, actions, capsys):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    failure = {
        "filename": "url/url-parse.js",
        "configuration": "n=20",
        "side": "head",
        "exit_status": 1,
        "stderr_tail": "TypeError: boom",
        "reason": "exit status 1",
    }
    run_dir = write_run(tmp_path / "run", NEUTRAL, record={"failures": [failure]})
    result = run_report(fake_github, run_dir, tmp_path=tmp_path)
    assert result.exit_status == 1 and result.regressions == 0
    assert "failed on the head where the base succeeded" in fake_github.comments(REPO, 7)[0]
    out = capsys.readouterr().out  # the printed text says FAIL once and leads with why, never "pass"
    assert "gate: FAIL: 1 benchmark process(es) failed on the head where the base succeeded\n" in out
    assert "verdict: fail\n" in out and "pass" not in out


@pytest.mark.parametrize(("effects", "status"), [(NEUTRAL, 3), (REGRESSION, 1)])
def test_github_down_keeps_the_report_and_follows_the_gate(fake_github, tmp_path, actions, capsys, effects, status):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    fake_github.queue(*[Fault(502) for _ in range(50)])
    result = run_report(fake_github, write_run(tmp_path / "run", effects), tmp_path=tmp_path, retries=3)
    assert result.exit_status == status
    assert "after 4 attempts" in result.posting_error
    out = capsys.readouterr()
    assert "confidence improvement" in out.out  # the full compare.R table is on stdout
    assert "could not post the report" in out.out  # as an ::error:: annotation
    assert MARKER in actions["summary"].read_text()  # and the job summary has the comment
    assert (tmp_path / "report.md").read_text().startswith(MARKER)
    assert fake_github.comments(REPO, 7) == []


def test_cli_exit_3_when_github_answers_502_forever(fake_github, tmp_path, actions, monkeypatch, capsys):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    fake_github.queue(*[Fault(502) for _ in range(50)])
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "labeled", "pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    status = main(["report", str(run_dir), "--config", str(tmp_path / "absent.yml"), "--retries", "1"])
    err = capsys.readouterr().err
    assert status == 3
    assert "could not read pull request #7 after 2 attempts" in err


def test_moved_pr_is_refused(fake_github, tmp_path, actions, capsys):
    fake_github.add_pull(REPO, 7, head_sha="d" * 40)
    status = main(
        [
            "report",
            str(write_run(tmp_path / "run", NEUTRAL)),
            "--pr",
            "7",
            "--repository",
            REPO,
            "--api-url",
            fake_github.url,
            "--head-sha",
            HEAD_SHA,
            "--config",
            str(tmp_path / "absent.yml"),
        ]
    )
    assert status == 2
    assert "the PR moved since the approved run" in capsys.readouterr().err
    assert fake_github.comments(REPO, 7) == []


def test_results_for_another_commit_are_refused(tmp_path, actions, capsys):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    status = main(["report", str(run_dir), "--dry-run", "--head-sha", "e" * 40])
    assert status == 2 and "not the approved eeeeeeeeeeee" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"schema": 2}, "run record field schema: must be 1"),
        ({"runs": "30"}, "run record field runs: must be a whole number"),
        ({"failures": [{"filename": "x" * 600, "side": "head"}]}, "failures[0].filename: is 600 characters long"),
        ({"failures": [{"filename": "a.js", "side": "evil"}]}, "failures[0].side: must be one of base, head, both"),
        ({"environment": {"warnings": "not a list"}}, "environment.warnings: must be a list"),
        ({"binaries": {"head": {"sha": "$(rm -rf /)"}}}, "binaries.head.sha: must be a hexadecimal commit SHA"),
    ],
)
def test_untrusted_run_record_is_validated(tmp_path, actions, capsys, record, message):
    run_dir = write_run(tmp_path / "run", NEUTRAL, record=record)
    status = main(["report", str(run_dir), "--dry-run"])
    err = capsys.readouterr().err
    assert status == 2 and message in err and str(run_dir / "run.json") in err and err.count("\n") == 1


def test_oversized_run_record_is_refused_before_parsing(tmp_path, actions, capsys):
    run_dir = write_run(tmp_path / "run", NEUTRAL)
    (run_dir / "run.json").write_text('{"schema": 1, "pad": "' + "x" * (results.MAX_RECORD_BYTES + 1) + '"}')
    assert main(["report", str(run_dir), "--dry-run"]) == 2
    assert "file is too large" in capsys.readouterr().err


def test_shards_merge_and_dry_run_prints_the_comment(tmp_path, actions, capsys):
    first = write_run(tmp_path / "shard-1", {("buffers/a.js", "n=1"): 0.8}, seed=1)
    second = write_run(tmp_path / "shard-2", {("url/b.js", "n=1"): 1.0}, seed=2)
    status = main(["report", str(tmp_path / "shard-*"), "--dry-run", "--config", str(tmp_path / "absent.yml")])
    out = capsys.readouterr().out
    assert status == 1
    assert out.splitlines()[0].startswith("::error title=benchgate::buffers/a.js n=1: -19")
    body = out[out.index(MARKER) :]
    assert "in 2 shards" in body and "All 2 comparisons" in body
    assert first.exists() and second.exists()


def test_shards_of_different_commits_are_refused(tmp_path, actions, capsys):
    write_run(tmp_path / "shard-1", NEUTRAL)
    write_run(tmp_path / "shard-2", NEUTRAL, head_sha="f" * 40)
    assert main(["report", str(tmp_path / "shard-*"), "--dry-run"]) == 2
    assert "the shards disagree on the head commit" in capsys.readouterr().err


def test_posting_needs_a_pr(tmp_path, actions, capsys):
    assert main(["report", str(write_run(tmp_path / "run", NEUTRAL)), "--config", str(tmp_path / "x.yml")]) == 2
    assert "posting needs --pr" in capsys.readouterr().err


def test_without_a_pr_only_the_check_is_posted(fake_github, tmp_path, actions, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)  # the repository exists; no PR is named
    status = main(
        ["report", str(write_run(tmp_path / "run", REGRESSION)), "--head-sha", HEAD_SHA, "--config", "absent.yml"]
    )
    assert status == 1
    runs = fake_github.state.repo(REPO).check_runs
    assert [(run.conclusion, run.head_sha) for run in runs] == [("failure", HEAD_SHA)]
    assert fake_github.requests_to("GET") == [] and outputs(actions["output"])["comment-url"] == ""


def test_a_missing_shard_fails_the_gate(tmp_path, actions, capsys):
    write_run(tmp_path / "shard-1", NEUTRAL, record={"selection": {"shard": "1/3"}})
    write_run(tmp_path / "shard-3", NEUTRAL, seed=3, record={"selection": {"shard": "3/3"}})
    status = main(["report", str(tmp_path / "shard-*"), "--dry-run", "--config", str(tmp_path / "absent.yml")])
    out = capsys.readouterr().out
    assert status == 1
    assert "no results from shard(s) 2/3" in out and "the run did not complete" in out


def test_a_token_github_refuses_still_leaves_the_full_report(fake_github, tmp_path, actions, capsys):
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    fake_github.queue(Fault(401, "Bad credentials"))
    result = run_report(fake_github, write_run(tmp_path / "run", NEUTRAL), tmp_path=tmp_path)
    assert result.exit_status == 2 and "401 Bad credentials" in result.posting_error
    assert "confidence improvement" in capsys.readouterr().out
    assert MARKER in actions["summary"].read_text()
    assert outputs(actions["output"])["verdict"] == "pass"


def test_untrusted_names_are_printed_with_workflow_commands_stopped(fake_github, tmp_path, actions, capsys):
    # A benchmark file named by the PR, printed at the start of a line, must not reach the runner as a command.
    fake_github.add_pull(REPO, 7, head_sha=HEAD_SHA)
    hostile = {("::add-mask::x/::warning::y.js", "n=1"): 0.8, ("ok/a.js", "n=1"): 1.0}
    run_dir = write_run(tmp_path / "run", hostile)
    tokens = []
    for _ in range(2):
        run_report(fake_github, run_dir, tmp_path=tmp_path)
        lines = capsys.readouterr().out.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("::stop-commands::")]
        assert len(starts) == 1, lines
        token = lines[starts[0]].removeprefix("::stop-commands::")
        end = lines.index(f"::{token}::")
        # (benchgate's own ::error annotations carry the name as escaped data, never at the start of a line)
        hostile_lines = [i for i, line in enumerate(lines) if "::add-mask::" in line and not line.startswith("::error")]
        assert hostile_lines and all(starts[0] < i < end for i in hostile_lines)
        # benchgate's own annotation of the gating row is printed while commands work, before the pause.
        assert any(line.startswith("::error title=benchgate::") for line in lines[: starts[0]])
        tokens.append(token)
    assert tokens[0] != tokens[1] and len(tokens[0]) >= 32  # random: the untrusted text cannot guess it
