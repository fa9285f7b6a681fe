"""`benchgate action run|record|report`: the command lines each step hands to benchgate, from its environment.

The child process is replaced by a recorder here (tests/test_action_e2e.py runs the real ones).
"""

from __future__ import annotations

import json

import pytest

from benchgate.commands import action
from benchgate.commands import run as run_command
from benchgate.errors import EXIT_BAD_INPUT, EXIT_BUILD_FAILED, EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_OK
from benchgate.github import events


@pytest.fixture
def recorded(monkeypatch):
    calls: list[list[str]] = []
    status = {"value": 0}

    def fake(argv: list[str]) -> int:
        calls.append(argv)
        return status["value"]

    monkeypatch.setattr(action, "_benchgate", fake)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    return calls, status


@pytest.fixture
def ran(monkeypatch):
    """The run step's `benchgate run`, in this process: its RunOptions' values and settings are recorded."""
    calls: list[tuple[dict, object]] = []
    status = {"value": 0}

    def fake(values: dict, settings) -> int:
        calls.append((values, settings))
        return status["value"]

    monkeypatch.setattr(run_command, "run_and_analyze", fake)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    return calls, status


def _run_env(tmp_path, **extra: str) -> dict[str, str]:
    return {"RUNNER_TEMP": str(tmp_path), "BENCHGATE_RESULTS": "out", **extra}


@pytest.mark.parametrize("event_name", ["push", *events.PULL_REQUEST_EVENTS])
def test_given_binaries_run_sandboxed_for_a_pull_requests_checkout(tmp_path, ran, event_name):
    calls, _ = ran
    environ = _run_env(tmp_path, BENCHGATE_BASE_BINARY="/a", BENCHGATE_HEAD_BINARY="/b", GITHUB_EVENT_NAME=event_name)
    assert action.run_step(environ) == EXIT_OK
    values, _ = calls[0]
    assert values["untrusted_head"] is (event_name in events.PULL_REQUEST_EVENTS)
    assert values["categories"] == ("all",)  # no categories and no base to diff against: all of them


@pytest.mark.parametrize(
    ("status", "expected"),
    [(EXIT_GATE_FAILED, EXIT_OK), (EXIT_INCONCLUSIVE, EXIT_OK), (EXIT_BUILD_FAILED, EXIT_BUILD_FAILED)],
)
def test_the_run_step_leaves_the_verdict_to_the_report(tmp_path, ran, status, expected):
    calls, child = ran
    child["value"] = status
    assert action.run_step(_run_env(tmp_path, BENCHGATE_HEAD_REF="abc", BENCHGATE_REPO_PATH="/node")) == expected


def test_the_run_step_passes_the_merged_settings_on(tmp_path, ran):
    calls, _ = ran
    carried = {
        "runs": "auto",
        "min-runs": "5",
        "max-runs": "40",
        "filter": "tojson,parse",
        "set": "n=1\ntype=a,b",
        "categories": "",
        "changed-map": json.dumps({"rules": {}, "ignore": [], "default": []}),
        "build": json.dumps({"configure-flags": ["--without-intl"]}),
        "sources": {"runs": "label", "max-runs": "file", "filter": "file"},
    }
    environ = _run_env(
        tmp_path,
        BENCHGATE_RUN_SETTINGS=json.dumps(carried),
        BENCHGATE_RUNS="10",  # below the maintainer's label: the label's auto stays
        BENCHGATE_FILTER="url",  # over the file's filter
        BENCHGATE_HEAD_REF="head",
        BENCHGATE_BASE_REF="base",
    )
    assert action.run_step(environ) == EXIT_OK
    values, settings = calls[0]
    assert (settings.runs, settings.max_runs, settings.filter) == ("auto", 40, ("url",))
    assert settings.set == ("n=1", "type=a,b")
    # where each came from, as authorize said: the label's auto stays a label's, the input's filter an input's
    assert (settings.source_of("runs"), settings.source_of("max_runs"), settings.source_of("filter")) == (
        "label",
        "file",
        "option",
    )
    assert values["changed_from"] == "base" and values["categories"] == ()  # categories from the changed files
    assert values["build_settings"].configure_flags == ("--without-intl",)


def test_bad_run_settings_are_one_error_annotation(tmp_path, ran, capsys):
    assert action.run_step(_run_env(tmp_path, BENCHGATE_RUN_SETTINGS="[1]")) == EXIT_BAD_INPUT
    assert capsys.readouterr().out == "::error title=benchgate::input run-settings is not a JSON object\n"
    assert action.run_step(_run_env(tmp_path, BENCHGATE_RUN_SETTINGS='{"runs": "x"}')) == EXIT_BAD_INPUT
    assert "input run-settings runs" in capsys.readouterr().out
    assert action.run_step(_run_env(tmp_path)) == EXIT_BAD_INPUT  # nothing to build and no binaries
    assert "no head-ref" in capsys.readouterr().out
    unbalanced = _run_env(tmp_path, BENCHGATE_HEAD_REF="abc", BENCHGATE_HEAD_NODE_ARGS="--max-old-space-size='4096")
    assert action.run_step(unbalanced) == EXIT_BAD_INPUT and ran[0] == []
    assert capsys.readouterr().out.startswith("::error title=benchgate::input head-node-args: cannot split ")


def test_the_report_step_takes_the_gate_inputs_and_the_approved_commit(tmp_path, recorded):
    calls, _ = recorded
    environ = {
        "RUNNER_TEMP": str(tmp_path),
        "BENCHGATE_CONFIG": "c.yml",
        "BENCHGATE_RESULTS": "a, b",
        "BENCHGATE_MIN_EFFECT": "3%",
        "BENCHGATE_MAX_RESOLUTION": "30",
        "BENCHGATE_PR": "9",
        "BENCHGATE_APPROVED_SHA": "f" * 40,
        "BENCHGATE_PLOT": "true",
    }
    action.report_step(environ)
    argv = calls[0]
    assert {"--min-effect=3%", "--max-resolution=30", "--pr=9", f"--head-sha={'f' * 40}"} <= set(argv)
    assert argv[-3:] == ["--", "a", "b"] and any(a.startswith("--plot=") for a in argv)
    action.report_step({**environ, "BENCHGATE_GIVEN_BINARIES": "/a/b", "BENCHGATE_NOTHING": "true"})
    assert not any(a.startswith("--head-sha") for a in calls[1]) and calls[1][-2:] == ["--nothing-to-benchmark", "--"]


def test_the_record_step_names_branch_commit_and_store(recorded):
    calls, _ = recorded
    action.record_step({"BENCHGATE_RESULTS": "out", "BENCHGATE_CONFIG": "c.yml", "BENCHGATE_BRANCH": "main"})
    assert calls[0] == ["history", "record", "out", "--config=c.yml", "--branch=main"]


@pytest.mark.parametrize("event_name", events.TOKEN_FOR_PULL_REQUEST_EVENTS)
def test_mode_all_is_refused_where_a_token_acts_for_a_pull_request(event_name):
    assert "mode all is refused" in events.mode_refusal("all", event_name)
    assert events.mode_refusal("run", event_name) is None and events.mode_refusal("all", "push") is None
