"""action.yml end to end: its own steps, run like the Actions runner runs a composite action, against the
fake GitHub as a separate process and a real benchmark run (node against itself, --jitless on the head).

Plus static checks of action.yml and the example workflows: they parse, inputs and outputs are consistent,
and no expression is interpolated into a script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from actionsim import evaluate, run_action, substitute
from nodelike import make_node_like_repo
from plotting import svg_size

from benchgate.history.store import series
from benchgate.report.comment import MARKER

REPO_ROOT = Path(__file__).resolve().parent.parent
REPO = "nodejs/node"
PR = 9
TOKEN = "ghs_e2e_test_token"

BENCHMARK = """'use strict';
// A numeric loop the optimizing compiler makes fast: --jitless makes it many times slower.
const common = require('../common.js');

const bench = common.createBenchmark(main, { size: [1000], n: [3000] });

function sum(values) {
  let total = 0;
  for (let i = 0; i < values.length; i++) total += values[i];
  return total;
}

function main({ size, n }) {
  const values = new Float64Array(size).map((_, i) => i % 7);
  let total = 0;
  for (let i = 0; i < 1000; i++) total += sum(values); // warm up the compiler
  bench.start();
  for (let i = 0; i < n; i++) total += sum(values);
  bench.end(n);
  if (total < 0) console.log(total);
}
"""


def action() -> dict:
    return yaml.safe_load((REPO_ROOT / "action.yml").read_text())


# -- static checks ---------------------------------------------------------------------------------


def test_action_inputs_and_outputs_are_consistent():
    spec = action()
    declared = set(spec["inputs"])
    text = (REPO_ROOT / "action.yml").read_text()
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert used <= declared, f"undeclared inputs used: {used - declared}"
    assert declared <= used, f"inputs never used: {declared - used}"
    required = {
        "mode",
        "github-token",
        "repo-path",
        "base-ref",
        "head-ref",
        "categories",
        "filter",
        "exclude",
        "set",
        "runs",
        "cpuset",
        "shard",
        "results",
        "threshold",
        "correction",
        "min-effect",
        "config",
        "label-prefix",
    }
    assert required <= declared
    assert {"verdict", "regressions", "comment-url", "report-path"} <= set(spec["outputs"])
    step_ids = {step.get("id") for step in spec["runs"]["steps"]}
    for name, output in spec["outputs"].items():
        match = re.fullmatch(r"\$\{\{ steps\.([a-z]+)\.outputs\.([a-z-]+) \}\}", output["value"])
        assert match and match.group(1) in step_ids, name
    assert spec["runs"]["using"] == "composite"


def test_no_expression_is_interpolated_into_a_script():
    for step in action()["runs"]["steps"]:
        if "uses" in step:  # another action, pinned to a commit; its inputs are not a script
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["name"]
            continue
        assert "${{" not in step["run"], step["name"]
        assert step["shell"] == "bash"


def test_the_benchmark_step_gets_no_token():
    run_step = next(step for step in action()["runs"]["steps"] if step["id"] == "run")
    assert not any("token" in str(value) or "secrets" in str(value) for value in run_step["env"].values())
    assert "unset GITHUB_TOKEN" in run_step["run"]


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "examples").rglob("*.yml")), ids=lambda p: p.name)
def test_example_yaml_parses(path):
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    if "jobs" in document:
        assert True in document or "on" in document  # YAML 1.1 reads the `on:` key as True
        for job in document["jobs"].values():
            for step in job.get("steps", []):
                # Untrusted event fields must go through env:, never straight into a script.
                run = step.get("run", "")
                assert not re.search(r"\$\{\{\s*github\.(event|head_ref)", run), step


def test_expression_subset():
    context = {"inputs": {"mode": "all", "x": ""}, "steps": {"a": {"outputs": {"approved": "true"}}}}
    assert evaluate("inputs.mode == 'ALL' && steps.a.outputs.approved == 'true'", context) is True
    assert evaluate("inputs.mode == 'run' || (inputs.mode == 'all' && !inputs.x)", context) is True
    assert substitute("${{ inputs.x || steps.a.outputs.approved }}-${{ steps.b.outputs.c }}", context) == "true-"


# -- end to end ------------------------------------------------------------------------------------


@pytest.fixture
def node_repo(tmp_path):
    """A Node-like git repository (real configure, make and cc; its "node" execs the installed node) whose
    benchmark/ holds the example suite's harness and one compiler-sensitive benchmark."""
    harness = (REPO_ROOT / "examples" / "suite" / "benchmark" / "common.js").read_text()
    return make_node_like_repo(
        tmp_path / "node", extra_files={"benchmark/common.js": harness, "benchmark/loops/sum.js": BENCHMARK}
    )


@pytest.fixture
def fake_server(tmp_path, node_repo):
    """The fake GitHub in standalone mode (its own process), requiring the workflow token."""
    pull = {
        "head_sha": node_repo.commits["feature"],
        "base_sha": node_repo.commits["v2"],
        "labels": [],
        "files": ["doc/api/loops.md", "test/parallel/test-loops.js"],  # as GitHub lists them: no benchmarked code
    }
    state = {
        "repos": {
            REPO: {
                "collaborators": {"maintainer": "write", "drive-by": "read"},
                "pulls": {str(PR): pull},
                "events": [],
            }
        }
    }
    events = [("maintainer", "benchmark"), ("drive-by", "benchmark:threshold=off")]
    for index, (actor, label) in enumerate(events):
        state["repos"][REPO]["events"].append(
            {
                "id": 500 + index,
                "issue_number": PR,
                "event": "labeled",
                "actor": actor,
                "created_at": f"2026-01-01T00:00:0{index}Z",
                "label": label,
            }
        )
        pull["labels"].append(label)
    (tmp_path / "state.json").write_text(json.dumps(state))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "tests")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fakegithub",
            "--port",
            "0",
            "--state",
            str(tmp_path / "state.json"),
            "--dump",
            str(tmp_path / "dump.json"),
            "--port-file",
            str(tmp_path / "port"),
            "--token",
            TOKEN,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "port").exists() or not (tmp_path / "port").read_text():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "fake GitHub did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{(tmp_path / 'port').read_text()}", tmp_path / "dump.json"
    finally:
        process.terminate()
        process.wait(timeout=10)


def simulate(tmp_path, api_url, node_repo, name, inputs, *, event_name="pull_request"):
    """Run action.yml's steps for a `benchmark` label added to PR 9 (or a push of the head), as the runner would."""
    work = tmp_path / name
    (work / "temp").mkdir(parents=True)
    head, base = node_repo.commits["feature"], node_repo.commits["v2"]
    event = {
        "action": "labeled",
        "label": {"name": "benchmark"},
        "pull_request": {"number": PR, "head": {"sha": head}, "base": {"sha": base}},
        "sender": {"login": "maintainer"},
    }
    if event_name == "push":
        event = {"before": base, "after": head, "ref": "refs/heads/main"}
    (work / "event.json").write_text(json.dumps(event))
    runner_env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(work / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "777",
        "GITHUB_ACTOR": "maintainer",
        "GITHUB_SHA": head if event_name == "push" else base,
        "GITHUB_WORKSPACE": str(tmp_path),
        "RUNNER_TEMP": str(work / "temp"),
        "GITHUB_ACTION_PATH": str(REPO_ROOT),
        "BENCHGATE_SYSTEM_PACKAGES": "1",  # reuse this interpreter's packages: no PyPI in tests
        "BENCHGATE_CACHE": str(tmp_path / "cache"),
    }
    github = {"token": TOKEN, "event": event, "event_name": event_name, "repository": REPO, "sha": head}
    if event_name == "push":
        github["ref_name"] = "main"
    base_inputs = {
        "mode": "all",
        "python": sys.executable,
        "repo-path": str(node_repo.path),
        "categories": "loops",
        "results": str(work / "results"),
        "config": str(tmp_path / "base-checkout" / ".github" / "benchgate.yml"),
    }
    return run_action(
        REPO_ROOT, with_inputs={**base_inputs, **inputs}, github=github, runner_env=runner_env, workdir=work
    )


def comments_and_checks(dump: Path) -> tuple[list[dict], list[dict]]:
    data = json.loads(dump.read_text())
    assert data["violations"] == []
    repo = data["state"]["repos"][REPO]
    return repo["comments"], repo["check_runs"]


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("cc") is None, reason="needs node and cc")
def test_action_steps_fail_then_pass_against_fake_github(tmp_path, fake_server, node_repo):
    api_url, dump = fake_server
    head = node_repo.commits["feature"]
    node = shutil.which("node")

    # 1. node against itself with --jitless on the head: a real, large regression.
    failing = simulate(
        tmp_path,
        api_url,
        node_repo,
        "fail",
        {
            "base-binary": node,
            "head-binary": node,
            "head-node-args": "--jitless",
            "benchmark-dir": str(node_repo.path / "benchmark"),
            "runs": "8",
            "threshold": "**",
        },
    )
    authorized = failing.step("authorize")
    assert authorized.ran, [(step.id, step.returncode, step.stderr[-6000:]) for step in failing.steps]
    assert authorized.outputs["approved"] == "true", authorized.stderr
    assert authorized.outputs["head-sha"] == head and authorized.outputs["pr"] == str(PR)
    assert failing.step("run").returncode == 0, failing.step("run").stderr
    assert "GITHUB_TOKEN" not in failing.step("run").env
    report = failing.step("report")
    assert report.returncode == 1, report.stderr
    assert failing.outputs["verdict"] == "fail" and int(failing.outputs["regressions"]) >= 1
    assert re.search(r"^::error title=benchgate::loops/sum\.js n=3000 size=1000: -\d", report.stdout, re.M)
    assert MARKER in report.summary and "loops/sum.js" in report.summary
    assert Path(failing.outputs["report-path"]).read_text().startswith(MARKER)
    # The report and its charts are uploaded as the run's artifact, and the comment links there.
    uploaded = tmp_path / "fail" / "artifacts" / "benchgate-report"
    assert sorted(path.name for path in uploaded.iterdir()) == [
        "benchmark-distributions.svg",
        "benchmark.svg",
        "report.md",
    ]
    assert min(svg_size(uploaded / "benchmark.svg")) > 0  # an SVG (svg_size checks its root), of some size
    comments, checks = comments_and_checks(dump)
    assert len(comments) == 1 and failing.outputs["comment-url"].endswith(f"#issuecomment-{comments[0]['id']}")
    assert "❌ benchgate" in comments[0]["body"]
    assert "Charts: `benchmark.svg` and `benchmark-distributions.svg`" in comments[0]["body"]
    assert "lacks write, maintain or admin permission" in comments[0]["body"]  # drive-by's threshold=off
    assert [(c["name"], c["conclusion"], c["head_sha"]) for c in checks] == [("benchgate", "failure", head)]

    # 2. base and head built from the approved commits (no change to the benchmarked code): the gate passes.
    # The base branch's configuration sets the runs and the minimum effect this time: every comparison's
    # interval must rule out a regression of the minimum effect, or the verdict is inconclusive. This
    # 4-millisecond benchmark is noisy (30-40 % on a loaded machine), hence the large minimum effect.
    config = tmp_path / "base-checkout" / ".github" / "benchgate.yml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "runs: 10\nmin-effect: 90%\nrules:\n  - match: 'misc/*'\n    ignore: true\n"
        "build:\n  configure-flags: [--without-intl]\n"
    )
    passing = simulate(tmp_path, api_url, node_repo, "pass", {})
    assert passing.failed is None, passing.failed and passing.failed.stderr
    assert passing.step("authorize").outputs["runs"] == "10"
    # The base branch's build settings travel through authorize's outputs to the token-less run step.
    assert json.loads(passing.step("authorize").outputs["build"]) == {"configure-flags": ["--without-intl"]}
    assert passing.outputs["verdict"] == "pass" and passing.outputs["regressions"] == "0"
    record = json.loads((tmp_path / "pass" / "results" / "run.json").read_text())
    assert record["binaries"]["head"]["sha"] == head and record["binaries"]["base"]["sha"] == node_repo.commits["v2"]
    built_with = subprocess.run(
        [record["build"]["head"]["binary"], "--nodelike-info"], capture_output=True, text=True, check=True
    ).stdout
    assert "--without-intl" in built_with
    comments, checks = comments_and_checks(dump)
    assert len(comments) == 1 and "✅ benchgate" in comments[0]["body"]  # the same comment, edited in place
    assert head[:12] in comments[0]["body"]  # the run record names the built head commit
    assert "10 runs per side" in comments[0]["body"] and "min effect 90 % (file)" in comments[0]["body"]
    assert passing.outputs["comment-url"] == failing.outputs["comment-url"]
    assert [c["conclusion"] for c in checks] == ["failure", "success"]

    # 3. The base does not build: the run step fails (4) but leaves run.json, and the report step still
    # posts, as an infrastructure error (neutral check, exit 4), not as the PR's failure.
    broken = simulate(tmp_path, api_url, node_repo, "base-broken", {"base-ref": "broken"})
    assert broken.step("run").returncode == 4, broken.step("run").stderr
    recorded = json.loads((tmp_path / "base-broken" / "results" / "run.json").read_text())
    assert recorded["build_failure"]["side"] == "base"
    assert broken.step("report").ran and broken.step("report").returncode == 4, broken.step("report").stderr
    assert broken.outputs["verdict"] == "error"
    comments, checks = comments_and_checks(dump)
    assert len(comments) == 1 and "not this pull request's fault" in comments[0]["body"]
    assert [c["conclusion"] for c in checks] == ["failure", "success", "neutral"] and checks[-1]["head_sha"] == head

    # 4. README's one-job workflow on a push to main: mode all, base the commit before, head the pushed one.
    pushed = simulate(
        tmp_path,
        api_url,
        node_repo,
        "push",
        {
            "base-ref": node_repo.commits["v2"],
            "head-ref": head,
            "runs": "4",
            "history": "true",
            "history-store": f"sqlite:///{tmp_path / 'history.db'}",
        },
        event_name="push",
    )
    assert pushed.failed is None or pushed.failed.id == "report", pushed.failed and pushed.failed.stderr[-3000:]
    assert pushed.step("authorize").outputs["approved"] == "true" and pushed.step("run").ran
    # The push records into the history store (the PR runs above never ran that step).
    recorded_line = pushed.step("history").stdout
    assert pushed.step("history").returncode == 0 and f"recorded: run 1, commit {head[:12]} on main" in recorded_line
    assert not broken.step("history").ran
    stored = series(f"sqlite:///{tmp_path / 'history.db'}")
    assert stored and {point.commit for one in stored for point in one.points} == {head}
    assert {one.key.branch for one in stored} == {"main"}
    comments, checks = comments_and_checks(dump)
    assert len(comments) == 1  # no pull request: the check run alone
    assert checks[-1]["head_sha"] == head and checks[-1]["conclusion"] == {"pass": "success", "fail": "failure"}.get(
        pushed.outputs["verdict"], "neutral"
    )

    # 5. No categories configured: authorize maps the PR's changed files from the API (docs and tests only)
    # to none, the run step does not run, and the report posts "nothing to benchmark" after asking the API too.
    nothing = simulate(tmp_path, api_url, node_repo, "nothing", {"categories": ""})
    assert nothing.failed is None, nothing.failed and nothing.failed.stderr
    assert nothing.outputs["nothing-to-benchmark"] == "true" and not nothing.step("run").ran
    assert nothing.outputs["verdict"] == "pass"
    comments, checks = comments_and_checks(dump)
    assert len(comments) == 1 and "nothing to benchmark" in comments[0]["body"]
    assert [c["conclusion"] for c in checks][-1] == "success"


def _workflows() -> list[Path]:
    return sorted((REPO_ROOT / "examples" / "workflows").glob("*.yml"))


@pytest.mark.parametrize("path", _workflows(), ids=lambda p: p.name)
def test_example_workflows_use_the_action_safely(path):
    declared = set(action()["inputs"])
    workflow = yaml.safe_load(path.read_text())
    assert workflow.get("permissions") == {}, "workflow-wide permissions must be none; jobs ask for what they need"
    for name, job in workflow["jobs"].items():
        uses = [step for step in job["steps"] if str(step.get("uses", "")).startswith("benchgate/benchgate@")]
        for step in uses:
            assert set(step.get("with", {})) <= declared, f"{name}: unknown inputs {set(step['with']) - declared}"
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
        modes = {step.get("with", {}).get("mode") for step in uses}
        if "run" in modes:  # the job that runs the PR's code
            assert job["permissions"] == {}, name
            assert "secrets." not in yaml.safe_dump(job) and "token" not in yaml.safe_dump(job), name
            assert "self-hosted" in job["runs-on"]
        if "report" in modes:
            assert job["permissions"]["pull-requests"] == "write" and job["permissions"]["checks"] == "write"
            assert "self-hosted" not in str(job["runs-on"])


def test_run_mode_takes_authorizes_run_settings(tmp_path):
    # A run job in another job than authorize gets its settings as one JSON input; explicit inputs win.
    work = tmp_path / "job"
    (work / "temp").mkdir(parents=True)
    node = shutil.which("node")
    settings = {"runs": "2", "categories": "json", "set": "n=50\nextra=1", "filter": "parse", "cpuset": ""}
    runner_env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_WORKSPACE": str(tmp_path),
        "RUNNER_TEMP": str(work / "temp"),
        "GITHUB_ACTION_PATH": str(REPO_ROOT),
        "BENCHGATE_SYSTEM_PACKAGES": "1",
    }
    inputs = {
        "mode": "run",
        "python": sys.executable,
        "base-binary": node,
        "head-binary": node,
        "benchmark-dir": str(REPO_ROOT / "examples" / "suite" / "benchmark"),
        "results": str(work / "results"),
        "run-settings": json.dumps(settings),
        "runs": "3",  # an input given beside run-settings wins
    }
    github = {"event_name": "push", "event": {}, "repository": REPO, "token": ""}
    result = run_action(REPO_ROOT, with_inputs=inputs, github=github, runner_env=runner_env, workdir=work)
    assert result.failed is None, result.failed and result.failed.stderr[-3000:]
    record = json.loads((work / "results" / "run.json").read_text())
    assert record["runs"] == 3 and record["selection"]["files"] == ["json/parse.js"]
    assert record["selection"]["set"] == ["n=50", "extra=1"] and record["options"]["cpuset"] is None

    broken = run_action(
        REPO_ROOT,
        with_inputs={**inputs, "run-settings": "{not json", "results": str(work / "broken")},
        github=github,
        runner_env=runner_env,
        workdir=tmp_path / "broken-job",
    )
    assert broken.step("run").returncode != 0
    assert "::error title=benchgate::input run-settings is not JSON" in broken.step("run").stdout
