"""action.yml's first step: `mode` is required, and mode `all` (the token and the pull request's code in one job) is
refused for the events that run with a write token on a pull request's behalf.

Runs only that step's script (through actionsim, like the runner would); a refused mode stops the action before
anything is installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from actionsim import run_action

REPO_ROOT = Path(__file__).resolve().parent.parent
REFUSED_FOR_ALL = ("pull_request_target", "workflow_run", "issue_comment")


def run_mode_step(tmp_path: Path, mode: str | None, event_name: str):
    runner_env = {
        "PATH": os.environ["PATH"],
        "GITHUB_EVENT_NAME": event_name,
        "RUNNER_TEMP": str(tmp_path / "temp"),
    }
    # `python: false`: were the mode accepted, the set-up step fails at once instead of installing anything.
    inputs = {"python": "false"} | ({} if mode is None else {"mode": mode})
    github = {"event_name": event_name, "event": {}, "repository": "nodejs/node", "token": ""}
    return run_action(REPO_ROOT, with_inputs=inputs, github=github, runner_env=runner_env, workdir=tmp_path)


def test_mode_is_required_and_checked_first():
    spec = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    assert spec["inputs"]["mode"].get("required") is True and "default" not in spec["inputs"]["mode"]
    assert spec["runs"]["steps"][0]["id"] == "mode"


@pytest.mark.parametrize("event_name", REFUSED_FOR_ALL)
def test_mode_all_is_refused_for_events_acting_for_a_pull_request(tmp_path, event_name):
    result = run_mode_step(tmp_path, "all", event_name)
    step = result.step("mode")
    assert step.returncode == 2
    errors = [line for line in step.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and step.stdout.strip() == errors[0], step.stdout
    assert f"mode all is refused for a {event_name} event" in errors[0]
    assert not any(other.ran for other in result.steps[1:]), "nothing may run after a refused mode"


@pytest.mark.parametrize("event_name", ["push", "schedule", "workflow_dispatch", "pull_request"])
def test_mode_all_is_accepted_for_trusted_events(tmp_path, event_name):
    result = run_mode_step(tmp_path, "all", event_name)
    assert result.step("mode").returncode == 0, result.step("mode").stdout
    assert result.step("setup").ran  # and fails at once on `python: false`, installing nothing


@pytest.mark.parametrize("mode", ["authorize", "run", "report"])
@pytest.mark.parametrize("event_name", REFUSED_FOR_ALL)
def test_the_split_modes_are_accepted_for_every_event(tmp_path, mode, event_name):
    assert run_mode_step(tmp_path, mode, event_name).step("mode").returncode == 0


@pytest.mark.parametrize(("mode", "message"), [(None, "input mode is required"), ("ALL ", "input mode must be")])
def test_a_missing_or_unknown_mode_is_refused(tmp_path, mode, message):
    step = run_mode_step(tmp_path, mode, "push").step("mode")
    assert step.returncode == 2 and step.stdout.startswith("::error title=benchgate::" + message), step.stdout
