"""The runner's files: outputs with multi-line values, the 1 MiB job summary, escaped annotations, the event."""

from __future__ import annotations

import json

import pytest
from actionsim import parse_outputs

from benchgate.errors import InputError
from benchgate.github import actions_env


def test_outputs_survive_newlines_and_delimiter_lookalikes(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    actions_env.set_outputs({"verdict": "fail", "set": "n=1\nEOF\nlen=2", "empty": None})
    assert parse_outputs(tmp_path / "out") == {"verdict": "fail", "set": "n=1\nEOF\nlen=2", "empty": ""}


def test_step_summary_stays_under_one_mebibyte(tmp_path, monkeypatch):
    path = tmp_path / "summary.md"
    path.write_text("x" * 1000)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    actions_env.write_step_summary("█" * 600_000)  # 1.8 MB of UTF-8
    data = path.read_bytes()
    assert len(data) < actions_env.STEP_SUMMARY_LIMIT
    assert data.decode("utf-8").endswith("the results artifact has everything)\n")


def test_annotation_cannot_start_another_command(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    actions_env.error_annotation("a.js n=1\n::add-mask::x 100%", title="bench, gate: x")
    out = capsys.readouterr().out
    assert out == "::error title=bench%2C gate%3A x::a.js n=1%0A::add-mask::x 100%25\n"
    assert out.count("\n") == 1


def test_no_annotations_outside_actions(capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    actions_env.error_annotation("x")
    assert capsys.readouterr().out == ""


def test_event_payload(tmp_path, monkeypatch):
    event = tmp_path / "event.json"
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    event.write_text(json.dumps({"pull_request": {"number": 12}}))
    assert actions_env.pull_request_number(actions_env.read_event()) == 12
    event.write_text(json.dumps({"issue": {"number": 3, "pull_request": {}}}))
    assert actions_env.pull_request_number(actions_env.read_event()) == 3
    event.write_text(json.dumps({"inputs": {"pr": "44"}}))
    assert actions_env.pull_request_number(actions_env.read_event()) == 44
    event.write_text(json.dumps({"issue": {"number": 3}}))  # an issue, not a PR
    assert actions_env.pull_request_number(actions_env.read_event()) is None
    for pr in ("²", "-4", "0", "4.0"):  # a digit int() refuses, or not a PR number: no PR
        assert actions_env.pull_request_number({"inputs": {"pr": pr}}) is None
    event.write_text("[1, 2")
    with pytest.raises(InputError, match="event payload is not valid JSON"):
        actions_env.read_event()


def test_workflow_run_url(monkeypatch):
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://ghe.example.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    monkeypatch.setenv("GITHUB_RUN_ID", "5")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    assert actions_env.workflow_run_url() == "https://ghe.example.com/o/r/actions/runs/5/attempts/2"
