"""`benchgate action bisect` (action.yml's mode bisect): who may run it, and which change points it bisects.

The store holds twelve runs of main with a 30 % step; a change point whose two runs are one commit apart names
its commit already and is not bisected. The bisection itself runs end to end in test_bisect_workflow.py; here
a recorder stands in for it where the test is about which change points reach it.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from actionsim import parse_outputs, run_action
from bisectrepo import write_main_run

from benchgate import cli
from benchgate.commands import action
from benchgate.errors import EXIT_BAD_INPUT, EXIT_OK

REPO_ROOT = Path(__file__).resolve().parent.parent
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.com")


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::error")]


@pytest.mark.parametrize(
    ("event_name", "ref", "refused"),
    [
        ("pull_request", "refs/pull/7/merge", "mode bisect is refused for a pull_request event"),
        ("pull_request_target", "refs/heads/main", "mode bisect is refused for a pull_request_target event"),
        ("push", "refs/heads/feature", "mode bisect is refused for push on refs/heads/feature"),
        ("workflow_dispatch", "refs/heads/feature", "mode bisect is refused for workflow_dispatch on"),
    ],
)
def test_bisect_is_refused_off_the_default_branchs_own_events(tmp_path, capsys, event_name, ref, refused):
    (tmp_path / "event.json").write_text(json.dumps({"repository": {"default_branch": "main"}}))
    environ = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REF": ref,
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "BENCHGATE_REPO_PATH": str(tmp_path / "nowhere"),  # refused before it is looked at
    }
    assert action.bisect_step(environ) == EXIT_BAD_INPUT
    out = capsys.readouterr().out
    assert error_lines(out) == [out.strip()] and refused in out


def guard_bisect(tmp_path: Path, event_name: str, ref: str):
    """action.yml run for mode bisect on this event (the default branch main); ``python: false`` makes the set-up
    step fail at once, were it reached: nothing is installed."""
    (tmp_path / "event.json").write_text(json.dumps({"repository": {"default_branch": "main"}}))
    runner_env = {
        "PATH": os.environ["PATH"],
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REF": ref,
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "RUNNER_TEMP": str(tmp_path),
    }
    github = {"event_name": event_name, "event": {}, "repository": "nodejs/node", "token": ""}
    inputs = {"mode": "bisect", "python": "false"}
    return run_action(REPO_ROOT, with_inputs=inputs, github=github, runner_env=runner_env, workdir=tmp_path)


def test_the_mode_guard_refuses_bisect_on_a_pull_request_before_installing_anything(tmp_path):
    result = guard_bisect(tmp_path, "pull_request", "refs/pull/7/merge")
    step = result.step("mode")
    assert step.returncode == EXIT_BAD_INPUT and error_lines(step.stdout) == [step.stdout.strip()]
    assert "mode bisect is refused for a pull_request event" in step.stdout
    assert not any(other.ran for other in result.steps[1:])


@pytest.mark.parametrize(("event_name", "ref"), [("schedule", ""), ("push", "refs/heads/main")])
def test_the_mode_guard_lets_the_default_branchs_own_events_bisect(tmp_path, event_name, ref):
    result = guard_bisect(tmp_path, event_name, ref)
    assert result.step("mode").returncode == 0, result.step("mode").stdout
    assert result.step("setup").ran  # and fails at once on `python: false`


def _git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True, check=True).stdout.strip()


def main_with_a_step(tmp_path: Path, *, every: int) -> tuple[dict[str, str], str]:
    """A checkout of 24 empty commits and a store of 12 runs of main, one every ``every`` commits, 30 % slower
    from the seventh run on; the environment of the bisect step for a schedule event, and the store's URL."""
    repo = tmp_path / "node"
    repo.mkdir()
    _git(repo, "init", "--quiet", "--initial-branch=main")
    commits = []
    for index in range(24):
        _git(repo, *IDENTITY, "commit", "--quiet", "--allow-empty", "-m", f"c{index}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    store = f"sqlite:///{tmp_path / 'history.db'}"
    now = datetime.now(UTC)
    for night in range(12):
        index = night * every
        run = tmp_path / "runs" / f"{night:02d}"
        rate = 1000.0 if night < 6 else 700.0
        write_main_run(run, commits[index], commits[max(index - 1, 0)], rate, now - timedelta(hours=24 - night), night)
        assert cli.main(["history", "record", str(run), "--store", store]) == 0
    environ = {
        "GITHUB_EVENT_NAME": "schedule",
        "BENCHGATE_REPO_PATH": str(repo),
        "BENCHGATE_CONFIG": str(tmp_path / "no-config.yml"),
        "BENCHGATE_HISTORY_STORE": store,
        "BENCHGATE_BISECT_OUTPUT": str(tmp_path / "bisect"),
        "BENCHGATE_HISTORY_SITE": str(tmp_path / "site"),
    }
    return environ, store


def test_a_change_point_one_commit_apart_is_not_bisected(tmp_path, monkeypatch, capsys):
    environ, store = main_with_a_step(tmp_path, every=1)
    since = (datetime.now(UTC) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (point,) = action.change_points_since(store, since)  # the step is found
    assert action.commits_between(Path(environ["BENCHGATE_REPO_PATH"]), point.before_commit, point.commit) == 1

    def no_bisection(argv):
        raise AssertionError(f"bisected a change point that names its commit: {argv}")

    monkeypatch.setattr(action, "_benchgate", no_bisection)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    capsys.readouterr()
    assert action.bisect_step(environ) == EXIT_OK
    assert parse_outputs(tmp_path / "output") == {"reports": "0"}
    assert not (tmp_path / "bisect").exists() and (tmp_path / "site" / "index.html").exists()
    assert error_lines(capsys.readouterr().out) == []


def test_a_change_point_two_commits_apart_is_bisected_once(tmp_path, monkeypatch):
    environ, _ = main_with_a_step(tmp_path, every=2)
    calls = []

    def bisection(argv):  # stands in for `benchgate bisect`: writes the report where it was told
        assert argv[0] == "bisect"
        calls.append(argv)
        output = Path(next(arg for arg in argv if arg.startswith("--output=")).partition("=")[2])
        output.mkdir(parents=True)
        (output / "bisect.md").write_text("# the culprit\n")
        (output / "bisect.json").write_text('{"culprits": []}\n')
        return EXIT_OK

    monkeypatch.setattr(action, "_benchgate", bisection)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output"))
    assert action.bisect_step(environ) == EXIT_OK
    (argv,) = calls
    change_id = argv[argv.index("--change") + 1]
    assert f"--repo={environ['BENCHGATE_REPO_PATH']}" in argv and "--resume" not in argv
    assert parse_outputs(tmp_path / "output") == {"reports": "1"}
    assert (tmp_path / "site" / "bisect" / f"{change_id}.md").read_text() == "# the culprit\n"
    assert f'href="bisect/{change_id}.md"' in (tmp_path / "site" / "index.html").read_text()

    # The next night: the site holds its report, so it is not bisected again.
    environ["BENCHGATE_BISECT_OUTPUT"] = str(tmp_path / "bisect-2")
    (tmp_path / "output").unlink()
    assert action.bisect_step(environ) == EXIT_OK
    assert len(calls) == 1 and parse_outputs(tmp_path / "output") == {"reports": "0"}


def test_a_bad_since_is_one_line_with_the_bad_input_status(tmp_path, capsys):
    environ, _ = main_with_a_step(tmp_path, every=2)
    capsys.readouterr()
    assert action.bisect_step({**environ, "BENCHGATE_BISECT_SINCE": "last tuesday"}) == EXIT_BAD_INPUT
    out = capsys.readouterr().out
    assert error_lines(out) == [out.strip()] and "input bisect-since" in out
