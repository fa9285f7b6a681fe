"""Static checks of the example workflows beyond test_action_e2e's: which events start them, what cancels a
run, and that every run setting authorize resolves reaches the token-less run step.

A `pull_request_target: labeled` workflow starts on every label; only the request label may start its jobs,
and nothing but a newer approved run of the same PR may cancel a multi-hour benchmark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO_ROOT / "examples" / "workflows").glob("*.yml"))
LABEL_GUARD = "github.event.label.name == 'benchmark'"
# What authorize resolves (config, inputs, trusted labels) that the run step must receive.
RUN_SETTINGS = ("runs", "categories", "filter", "exclude", "set", "cpuset", "changed-map")


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict) -> dict:
    found = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the `on:` key as True
    return found if isinstance(found, dict) else {name: None for name in ([found] if isinstance(found, str) else found)}


def run_steps(job: dict) -> list[dict]:
    return [
        step
        for step in job.get("steps", [])
        if str(step.get("uses", "")).startswith("benchgate/benchgate@") and step.get("with", {}).get("mode") == "run"
    ]


LABELED = [path for path in WORKFLOWS if "labeled" in str(triggers(load(path)).get("pull_request_target"))]


def test_the_label_triggered_examples_are_found():
    assert {path.name for path in LABELED} == {"benchmark.yml", "benchmark-fork.yml", "benchmark-sharded.yml"}


@pytest.mark.parametrize("path", LABELED, ids=lambda p: p.name)
def test_only_the_request_label_starts_the_jobs(path):
    workflow = load(path)
    entry_jobs = {name: job for name, job in workflow["jobs"].items() if not job.get("needs")}
    assert entry_jobs, "a workflow needs a first job"
    for name, job in entry_jobs.items():
        condition = str(job.get("if", ""))
        assert LABEL_GUARD in condition, f"{name}: any label would start it"
        if "workflow_dispatch" in triggers(workflow):
            assert "github.event_name == 'workflow_dispatch'" in condition, name


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_only_the_benchmark_job_has_a_cancelling_concurrency_group(path):
    workflow = load(path)
    assert "concurrency" not in workflow, "workflow-wide concurrency lets any later event cancel the benchmark"
    for name, job in workflow["jobs"].items():
        concurrency = job.get("concurrency")
        if concurrency is None:
            continue
        assert run_steps(job), f"{name}: only the job that benchmarks may be replaced by a newer run"
        group = concurrency["group"]
        assert "needs.authorize.outputs.pr" in group, f"{name}: one group per approved PR"
        if "matrix" in job.get("strategy", {}):
            assert "matrix." in group, f"{name}: the shards of one run must not cancel each other"
    if path in LABELED:
        assert any(job.get("concurrency") for job in workflow["jobs"].values()), "a newer approved run replaces"


@pytest.mark.parametrize("path", [p for p in WORKFLOWS if any(run_steps(j) for j in load(p)["jobs"].values())])
def test_every_run_setting_reaches_the_run_step(path):
    for job in load(path)["jobs"].values():
        for step in run_steps(job):
            given = step["with"]
            for key in RUN_SETTINGS:
                assert key in given, f"{path.name}: run-settings {key} is dropped"
                pattern = rf"fromJSON\(needs\.authorize\.outputs\.run-settings\)\.{re.escape(key)}\b"
                assert re.search(pattern, str(given[key])), f"{path.name}: {key} does not come from run-settings"


def test_the_comment_workflow_skips_runs_whose_jobs_were_all_skipped():
    job = load(REPO_ROOT / "examples" / "workflows" / "benchmark-comment.yml")["jobs"]["report"]
    assert "github.event.workflow_run.conclusion != 'skipped'" in job["if"]


def test_action_documents_the_label_prefix_default():
    inputs = load(REPO_ROOT / "action.yml")["inputs"]
    assert inputs["label-prefix"]["default"] == ""  # empty: the configuration's, else benchmark
    assert "default benchmark" in inputs["label-prefix"]["description"]
