"""examples/workflows/benchmark-bisect.yml end to end: the nightly job records main, bisects the new change point
that spans more than one commit, and the issue job opens one issue naming the culprit on the fake GitHub.

The jobs' steps run as the runner would run them (``run:`` scripts with bash, ``if:`` and ``${{ }}`` through
tests/actionsim.py's evaluator, benchgate's own action, mode bisect, through actionsim's composite runner);
checkout is a clone of the fixture repository (tests/bisectrepo.py), the artifact actions copy directories.
The store already holds eleven nights of main, every second commit, with a 30 % step from commit 14 on (the
one before is 12): the change point whose bisection names commit 13. A second night finds the same change
point and bisects it no more: the kept site holds its report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from actionsim import evaluate, parse_outputs, run_action, substitute
from bisectrepo import make_bisect_repo, write_main_run

from benchgate import cli

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = REPO_ROOT / "examples" / "workflows" / "benchmark-bisect.yml"
REPO = "nodejs/node"

pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("cc", "make", "node")), reason="needs cc, make and node"
)


def plans(index: int) -> list[str]:
    return ["1000:0.02" if index < 13 else "700:0.02"]


def run_job(name: str, job: dict, context: dict, workspace: Path, artifacts: Path, env: dict) -> dict:
    """Run one job's steps on a runner of its own (workspace, RUNNER_TEMP); returns its outputs."""
    runner_temp = workspace.parent / "runner-temp"
    runner_temp.mkdir(parents=True)
    env = {**env, "RUNNER_TEMP": str(runner_temp)}
    context = {**context, "steps": {}, "runner": {"temp": str(runner_temp)}}
    job_env = {key: substitute(value, context) for key, value in (job.get("env") or {}).items()}
    workspace.mkdir(parents=True, exist_ok=True)
    for index, step in enumerate(job["steps"]):
        if "if" in step and not evaluate(step["if"], context):
            continue
        given = {key: substitute(value, context) for key, value in (step.get("with") or {}).items()}
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/checkout@"):
            subprocess.run(["git", "clone", "--quiet", env["FIXTURE_REPO"], str(workspace)], check=True)
        elif uses.startswith("actions/upload-artifact@"):
            shutil.copytree(workspace / given["path"], artifacts / given["name"])
        elif uses.startswith("actions/download-artifact@"):
            shutil.copytree(artifacts / given["name"], Path(given["path"]))
        elif uses.startswith("benchgate/benchgate@"):
            # The action from this checkout, with this interpreter's packages (no PyPI in tests).
            runner_env = {
                **env,
                **job_env,
                "GITHUB_EVENT_NAME": context["github"]["event_name"],
                "GITHUB_WORKSPACE": str(workspace),
                "BENCHGATE_SYSTEM_PACKAGES": "1",
            }
            result = run_action(
                REPO_ROOT,
                with_inputs={"python": sys.executable, **given},
                github=context["github"],
                runner_env=runner_env,
                workdir=workspace.parent / f"{name}-{index}",
                timeout=900,
            )
            assert result.failed is None, f"{name} step {index}: {result.failed.stdout}\n{result.failed.stderr}"
            context["steps"][step.get("id", f"_{index}")] = {"outputs": result.outputs}
        else:
            outputs_file = workspace.parent / f"{name}-{index}.out"
            step_env = {key: substitute(value, context) for key, value in (step.get("env") or {}).items()}
            completed = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=workspace,
                env={**env, **job_env, **step_env, "GITHUB_OUTPUT": str(outputs_file)},
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert completed.returncode == 0, f"{name} step {index}: {completed.stdout}\n{completed.stderr}"
            context["steps"][step.get("id", f"_{index}")] = {"outputs": parse_outputs(outputs_file)}
    return {key: substitute(value, context) for key, value in (job.get("outputs") or {}).items()}


def test_the_nightly_workflow_bisects_the_new_change_point_and_opens_one_issue(tmp_path, fake_github, capsys):
    repo = make_bisect_repo(tmp_path / "node", plans, commits=24)
    store = f"sqlite:///{tmp_path / 'history.db'}"
    now = datetime.now(UTC)
    for night, index in enumerate(range(0, 22, 2)):  # eleven earlier nights: c0, c2, ..., c20
        run = tmp_path / "nights" / f"{night:02d}"
        parent = repo.commits[f"c{max(index - 1, 0)}"]
        rate = 1000.0 if index < 13 else 700.0
        write_main_run(run, repo.commits[f"c{index}"], parent, rate, now - timedelta(hours=30 - night), night)
        assert cli.main(["history", "record", str(run), "--store", store]) == 0
    capsys.readouterr()
    fake_github.state.repo(REPO)
    env = {
        **os.environ,
        "FIXTURE_REPO": str(repo.path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": fake_github.url,
        "BENCHGATE_CACHE": str(tmp_path / "cache"),
        "BISECT_COUNTER": str(tmp_path / "counter"),
        "BISECT_PLAN": "0",
    }
    site = tmp_path / "kept-site"  # the runner's kept history site
    variables = {
        "BENCHGATE_HISTORY": store,
        "BENCHGATE_SITE": str(site),
        "BENCHMARK_CATEGORIES": "bisect",
        "BENCHMARK_RUNS": "4",
    }
    context = {
        "github": {"event_name": "schedule", "repository": REPO, "token": "t"},
        "vars": {**variables, "BENCHGATE_INSTALLED": "true"},
        "needs": {},
    }
    workflow = yaml.safe_load(WORKFLOW.read_text())
    artifacts = tmp_path / "artifacts"
    outputs = run_job("record", workflow["jobs"]["record"], context, tmp_path / "record" / "ws", artifacts, env)
    assert outputs == {"reports": "1"}
    (report_dir,) = (artifacts / "bisect-reports").iterdir()
    site_index = (artifacts / "history-site" / "index.html").read_text()
    assert f'href="bisect/{report_dir.name}.md"' in site_index  # the change point links to its report

    issue = workflow["jobs"]["issue"]
    context["needs"] = {"record": {"outputs": outputs}}
    assert evaluate(issue["if"], context)
    assert issue["permissions"] == {"issues": "write"} and workflow["jobs"]["record"]["permissions"] == {}
    run_job("issue", issue, context, tmp_path / "issue" / "ws", artifacts, env)
    ((title, body),) = fake_github.issues(REPO)
    assert title == "benchgate bisect: change 13"
    assert repo.commits["c13"][:12] in body and "`change 13`" in body

    # The next night: the same change point is found again, and not bisected again (the kept site has its report).
    again = tmp_path / "artifacts-2"
    outputs = run_job("record", workflow["jobs"]["record"], context, tmp_path / "record-2" / "ws", again, env)
    assert outputs == {"reports": "0"} and not (again / "bisect-reports").exists()
    assert f'href="bisect/{report_dir.name}.md"' in (again / "history-site" / "index.html").read_text()
    context["needs"] = {"record": {"outputs": outputs}}
    assert not evaluate(issue["if"], context)
