"""Static checks of the example workflows beyond test_action_e2e's: which events start them, what cancels a
run, that every run setting authorize resolves reaches the token-less run step, and where a pull request's
code may be checked out.

A `pull_request_target: labeled` workflow starts on every label; only the request label may start its jobs,
and nothing but a newer approved run of the same PR may cancel a multi-hour benchmark.

actions/checkout (v7, and since July 2026 v2.8.0, v3.7.0, v4.4.0, v5.1.0 and v6.1.0, which the floating major tags
follow) refuses to check out a fork pull request's head or merge commit in a `pull_request_target` or
`workflow_run` workflow unless the step sets `allow-unsafe-pr-checkout: true`. That opt-in belongs only where
the PR's code meets no credential: a job with `permissions: {}` and no secrets. A checkout of the PR's code in
any job holding a token fails, opted in or not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO_ROOT / "examples" / "workflows").glob("*.yml"))
ALL_WORKFLOWS = WORKFLOWS + sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
LABEL_GUARD = "github.event.label.name == 'benchmark'"
# What authorize resolves (config, inputs, trusted labels) that the run step must receive.
RUN_SETTINGS = (
    "runs",
    "min-runs",
    "max-runs",
    "categories",
    "filter",
    "exclude",
    "set",
    "cpuset",
    "shard",
    "changed-map",
    "build",
)


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
    # authorize's run-settings go to the run step whole; a setting given beside them would override the
    # configuration's (and trusted labels') value, so none is.
    for job in load(path)["jobs"].values():
        for step in run_steps(job):
            given = step["with"]
            assert given.get("run-settings") == "${{ needs.authorize.outputs.run-settings }}", path.name
            overriding = sorted(set(given) & set(RUN_SETTINGS) - {"shard"})  # a matrix job names its shard
            assert overriding == [], f"{path.name}: {overriding} would override authorize's run-settings"


def test_the_comment_workflow_skips_runs_whose_jobs_were_all_skipped():
    job = load(REPO_ROOT / "examples" / "workflows" / "benchmark-comment.yml")["jobs"]["report"]
    assert "github.event.workflow_run.conclusion != 'skipped'" in job["if"]


def test_action_documents_the_label_prefix_default():
    inputs = load(REPO_ROOT / "action.yml")["inputs"]
    assert inputs["label-prefix"]["default"] == ""  # empty: the configuration's, else benchmark
    assert "default benchmark" in inputs["label-prefix"]["description"]


# -- where a pull request's code may be checked out ------------------------------------------------------------

# A `ref:` or `repository:` naming the PR's own code: its head or merge commit, branch or repository (directly, through
# workflow_run, or as the head SHA authorize approved).
PR_CODE = re.compile(
    r"github\.event\.pull_request\.(head|merge_commit_sha)|github\.head_ref|github\.event\.workflow_run\.head_"
    r"|refs/pull/|outputs\.head[-_]sha"
)
# The events in which actions/checkout refuses a fork's code unless the step opts in.
GUARDED_EVENTS = {"pull_request_target", "workflow_run"}
OPT_IN = "allow-unsafe-pr-checkout"


def holds_token(workflow: dict, job: dict) -> bool:
    """Whether the job gets a token with any permission, or a secret: anything but `permissions: {}` counts (no
    `permissions:` at all means the repository's default token)."""
    permissions = job["permissions"] if "permissions" in job else workflow.get("permissions")
    dumped = yaml.safe_dump(job)
    return permissions != {} or "secrets." in dumped or "github.token" in dumped


def checkout_problems(workflow: dict, text: str) -> list[str]:
    """Every checkout that breaks the rules above, as `job: what`."""
    problems = []
    events = set(triggers(workflow))
    lines = text.splitlines()
    for name, job in workflow["jobs"].items():
        token = holds_token(workflow, job)
        for step in job.get("steps", []):
            if not str(step.get("uses", "")).startswith("actions/checkout@"):
                continue
            given = step.get("with") or {}
            pr_code = any(PR_CODE.search(str(given.get(key, ""))) for key in ("ref", "repository"))
            opted_in = given.get(OPT_IN) is True or str(given.get(OPT_IN, "")).lower() == "true"
            if pr_code and token:
                problems.append(f"{name}: checks out the pull request's code in a job that holds a token")
            if opted_in and token:
                problems.append(f"{name}: sets {OPT_IN} in a job that holds a token")
            if pr_code and events & GUARDED_EVENTS and not opted_in:
                problems.append(f"{name}: checkout refuses a fork's head under {sorted(events & GUARDED_EVENTS)}")
            if opted_in and given.get("persist-credentials") is not False:
                problems.append(f"{name}: {OPT_IN} without persist-credentials: false")
    for number, line in enumerate(lines):
        if line.strip().startswith(f"{OPT_IN}:") and "#" not in line and not lines[number - 1].strip().startswith("#"):
            problems.append(f"line {number + 1}: {OPT_IN} without a comment saying why it is safe there")
    return problems


@pytest.mark.parametrize("path", ALL_WORKFLOWS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_pr_code_is_checked_out_only_where_no_token_is(path):
    assert checkout_problems(load(path), path.read_text()) == []


def test_exactly_the_benchmark_jobs_opt_in_to_the_pr_checkout():
    opted_in = {
        (path.name, name)
        for path in ALL_WORKFLOWS
        for name, job in load(path)["jobs"].items()
        for step in job.get("steps", [])
        if (step.get("with") or {}).get(OPT_IN) is True
    }
    assert opted_in == {(path.name, "benchmark") for path in LABELED}


BAD_WORKFLOWS = {
    "head checkout with a write token": """
on: {pull_request_target: {types: [labeled]}}
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    permissions: {pull-requests: write}
    steps:
      - uses: actions/checkout@v7
        with:
          ref: ${{ github.event.pull_request.head.sha }}
          persist-credentials: false
          allow-unsafe-pr-checkout: true  # "safe"
""",
    "head checkout with the default token (no permissions anywhere)": """
on: workflow_dispatch
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
        with:
          ref: ${{ needs.authorize.outputs.head-sha }}
          persist-credentials: false
""",
    "head checkout with a secret": """
on: workflow_dispatch
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    env:
      KEY: ${{ secrets.KEY }}
    steps:
      - uses: actions/checkout@v7
        with:
          ref: refs/pull/1/merge
          persist-credentials: false
""",
    "fork head under pull_request_target without the opt-in": """
on: {pull_request_target: {types: [labeled]}}
permissions: {}
jobs:
  benchmark:
    runs-on: [self-hosted]
    permissions: {}
    steps:
      - uses: actions/checkout@v7
        with:
          ref: ${{ needs.authorize.outputs.head-sha }}
          persist-credentials: false
""",
    "fork head under workflow_run without the opt-in": """
on: {workflow_run: {workflows: [x], types: [completed]}}
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
        with:
          ref: ${{ github.event.workflow_run.head_sha }}
          persist-credentials: false
""",
    "opt-in in a job with a read token, default ref": """
on: {pull_request_target: {types: [labeled]}}
permissions: {contents: read}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
        with:
          persist-credentials: false
          allow-unsafe-pr-checkout: true  # "safe"
""",
    "opt-in without a reason": """
on: {pull_request_target: {types: [labeled]}}
permissions: {}
jobs:
  benchmark:
    runs-on: [self-hosted]
    steps:
      - uses: actions/checkout@v7
        with:
          ref: ${{ needs.authorize.outputs.head-sha }}
          persist-credentials: false
          allow-unsafe-pr-checkout: true
""",
}


@pytest.mark.parametrize("text", BAD_WORKFLOWS.values(), ids=list(BAD_WORKFLOWS))
def test_the_checkout_rules_catch(text):
    assert checkout_problems(yaml.safe_load(text), text)


def test_the_checkout_rules_pass_a_token_less_opted_in_job():
    text = BAD_WORKFLOWS["opt-in without a reason"].replace("true\n", "true  # no token in this job\n")
    assert checkout_problems(yaml.safe_load(text), text) == []


# -- pinned actions --------------------------------------------------------------------------------------------

USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$")
PINNED = re.compile(r"(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40})")
RELEASE_COMMENT = re.compile(r"^\s*#\s*v\d+\.\d+\.\d+\s*$")
# benchgate's own action has no released commit yet (this repository is benchgate): the examples name the tag and
# tell whoever copies them to pin a release's SHA; .github/zizmor.yml allows exactly this and nothing else.
OWN_ACTION = "benchgate/benchgate@v1"


def uses_lines(path: Path) -> list[tuple[int, str, str]]:
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = USES.match(line)
        if match:
            found.append((number, match.group(1), match.group(2)))
    return found


@pytest.mark.parametrize("path", ALL_WORKFLOWS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_action_is_pinned_to_a_commit_with_its_release_in_a_comment(path):
    assert uses_lines(path), "no uses: found"
    for number, reference, rest in uses_lines(path):
        if reference == OWN_ACTION:
            continue
        assert PINNED.fullmatch(reference), f"line {number}: {reference} is not pinned to a full commit SHA"
        assert RELEASE_COMMENT.match(rest), f"line {number}: {reference} lacks its release (# vX.Y.Z) beside it"


def test_each_action_is_pinned_to_one_commit_everywhere():
    pins: dict[str, set[str]] = {}
    for path in ALL_WORKFLOWS:
        for _, reference, rest in uses_lines(path):
            match = PINNED.fullmatch(reference)
            if match:
                pins.setdefault(match["action"], set()).add(f"{match['sha']}{rest.strip()}")
    assert pins and all(len(commits) == 1 for commits in pins.values()), pins
