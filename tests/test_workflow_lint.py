"""Static checks of action.yml and every workflow (examples/workflows, .github/workflows) with two outside tools:

- zizmor (GitHub Actions security linter), offline, with .github/zizmor.yml: no finding of medium severity or
  higher. A finding inherent to the design (pull_request_target, workflow_run, the self-hosted benchmark runner)
  is silenced only by an inline `# zizmor: ignore[rule]` comment that says why it is safe there.
- check-jsonschema with its built-in (vendored, offline) SchemaStore schemas for workflows and actions.

Both come with the `test` extra; without them these tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
ACTION = REPO_ROOT / "action.yml"
WORKFLOWS = sorted((REPO_ROOT / "examples" / "workflows").glob("*.yml")) + sorted(
    (REPO_ROOT / ".github" / "workflows").glob("*.yml")
)
ZIZMOR_CONFIG = REPO_ROOT / ".github" / "zizmor.yml"
# An unreachable proxy: the checks must not need the network (check-jsonschema's built-in schemas are vendored).
OFFLINE = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def tool(name: str) -> str:
    """The tool next to this interpreter (the venv's), else on PATH; skip when neither has it."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' brings it)")
    return found


def zizmor(*args: str) -> list[dict]:
    command = [tool("zizmor"), "--offline", "--no-exit-codes", "--format=json", f"--config={ZIZMOR_CONFIG}", *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=OFFLINE, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def describe(finding: dict) -> str:
    location = finding["locations"][0]
    path = location["symbolic"]["key"].get("Local", {}).get("given_path", "?")
    line = location["concrete"]["location"]["start_point"]["row"] + 1
    return f"{path}:{line}: {finding['ident']} ({finding['determinations']['severity']}): {finding['desc']}"


def test_zizmor_finds_nothing_of_medium_severity_or_higher():
    findings = zizmor(str(ACTION), *map(str, WORKFLOWS))
    serious = [describe(f) for f in findings if f["determinations"]["severity"] in ("Medium", "High", "Unknown")]
    assert serious == []


def test_zizmor_still_flags_an_unpinned_action():
    """The configuration is read: a third-party action on a tag is a high finding (benchgate/* alone may be)."""
    findings = zizmor(str(REPO_ROOT / "tests" / "fixtures" / "workflows" / "unpinned.yml"))
    assert {(f["ident"], f["determinations"]["severity"]) for f in findings} >= {("unpinned-uses", "High")}
    assert all("benchgate/benchgate" not in describe(f) for f in findings)


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_zizmor_ignore_says_why(path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = re.search(r"#\s*zizmor:\s*ignore\[[^\]]+\](.*)$", line)
        if match:
            assert len(match.group(1).strip(" -:")) >= 10, f"line {number}: an ignore without its reason"


def check_jsonschema(schema: str, *paths: Path) -> subprocess.CompletedProcess:
    tool("check-jsonschema")
    command = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=OFFLINE, timeout=300)


def test_workflows_match_the_github_workflow_schema():
    done = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_action_matches_the_github_action_schema():
    done = check_jsonschema("vendor.github-actions", ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: soon\n    steps: []\n")
    done = check_jsonschema("vendor.github-workflows", broken)
    assert done.returncode != 0 and "timeout-minutes" in done.stdout + done.stderr
