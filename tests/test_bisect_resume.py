"""`benchgate bisect --resume`: after kill -9 no measured probe is lost; a forged or cut state is refused in one line.

The fixture repository of tests/bisectrepo.py (16 commits, 30 % slower from commit 13 on), real builds.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from bisectrepo import make_bisect_repo

from benchgate import cli
from benchgate.bisect.state import EXIT_BISECT_STATE

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("make") is None or shutil.which("node") is None,
    reason="needs a C toolchain and node",
)


def plans(index: int) -> list[str]:
    return ["1000:0.02" if index < 13 else "700:0.02"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_bisect_repo(tmp_path_factory.mktemp("resume") / "node", plans, commits=16)


def arguments(repo, tmp_path, *extra: str) -> list[str]:
    return [
        "bisect",
        "bisect",
        "--repo",
        str(repo.path),
        "--from",
        repo.commits["c0"],
        "--to",
        "main",
        "--batch-runs",
        "6",
        "--build-cache",
        str(tmp_path / "cache"),
        "--output",
        str(tmp_path / "out"),
        "--format",
        "json",
        *extra,
    ]


def measured_probes(path) -> dict[str, dict]:
    data = json.loads(path.read_text())
    return {str(probe["index"]): probe for probe in data["probes"] if probe["runs"]}


def test_kill_9_then_resume_loses_no_probe(repo, tmp_path, monkeypatch, capsys):
    env = {**os.environ, "BISECT_COUNTER": str(tmp_path / "counter"), "BISECT_PLAN": "0"}
    monkeypatch.setenv("BISECT_COUNTER", env["BISECT_COUNTER"])
    monkeypatch.setenv("BISECT_PLAN", "0")
    state_path = tmp_path / "out" / "bisect-state.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "benchgate", *arguments(repo, tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "stderr").open("w"),
        start_new_session=True,  # its own group: the kill reaches the benchmark processes too
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if state_path.exists() and len(measured_probes(state_path)) >= 3:
                break
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    before = measured_probes(state_path)
    assert len(before) >= 3

    status = cli.main(arguments(repo, tmp_path, "--resume"))
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report = json.loads(captured.out)
    assert [culprit["key"] for culprit in report["culprits"]] == [repo.commits["c13"]]
    after = measured_probes(state_path)
    for index, probe in before.items():  # every probe measured before the kill is kept as it was
        assert after[index]["samples"] == probe["samples"] and after[index]["runs"] == probe["runs"]
    assert len(after) <= 6  # ceil(log2 16) + 2: nothing measured twice


def test_a_forged_or_truncated_state_is_refused_in_one_line(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BISECT_COUNTER", str(tmp_path / "counter"))
    monkeypatch.setenv("BISECT_PLAN", "0")
    status = cli.main(arguments(repo, tmp_path, "--max-probes", "3"))
    capsys.readouterr()
    assert status == 6  # stopped by the budget: no culprit yet
    state_path = tmp_path / "out" / "bisect-state.json"
    good = state_path.read_text()
    forged = json.loads(good)
    forged["probes"][0]["samples"] = {
        row: [rate * 2 for rate in rates] for row, rates in forged["probes"][0]["samples"].items()
    }
    for text in (good[:-40], json.dumps(forged)):
        state_path.write_text(text)
        status = cli.main(arguments(repo, tmp_path, "--resume"))
        err = capsys.readouterr().err
        assert status == EXIT_BISECT_STATE and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"benchgate: error: {state_path}: refused: ")
    # Without --resume an existing state is never overwritten.
    state_path.write_text(good)
    assert cli.main(arguments(repo, tmp_path)) == 2
    assert "--resume" in capsys.readouterr().err


def test_the_report_opens_an_issue_or_comments_through_github(repo, tmp_path, monkeypatch, capsys, fake_github):
    monkeypatch.setenv("BISECT_COUNTER", str(tmp_path / "counter"))
    monkeypatch.setenv("BISECT_PLAN", "0")
    for name, value in (
        ("GITHUB_TOKEN", "t"),
        ("GITHUB_REPOSITORY", "nodejs/node"),
        ("GITHUB_API_URL", fake_github.url),
    ):
        monkeypatch.setenv(name, value)
    fake_github.state.repo("nodejs/node")
    assert cli.main(arguments(repo, tmp_path, "--post", "somewhere")) == 2  # refused before anything is built
    assert "--post 'somewhere'" in capsys.readouterr().err
    assert cli.main(arguments(repo, tmp_path, "--post", "new")) == 0
    ((title, body),) = fake_github.issues("nodejs/node")
    assert title == "benchgate bisect: change 13"
    assert body.startswith("<!-- benchgate bisect -->\n## benchgate bisect") and repo.commits["c13"][:12] in body
    # A finished bisection resumed measures nothing more; its report goes to the issue as a comment, once.
    fake_github.add_pull("nodejs/node", 7)
    for _ in range(2):
        assert cli.main(arguments(repo, tmp_path, "--resume", "--post", "pr:7")) == 0
    (comment,) = fake_github.comments("nodejs/node", 7)
    assert comment == body
    capsys.readouterr()
