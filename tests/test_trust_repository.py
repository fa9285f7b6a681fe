"""An untrusted --repo run asks git for the Node checkout's worktrees once (the builds are done: they cannot
change), and both of its confinements hide them."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from nodelike import example_benchmark_files
from sandboxing import fresh_probe, needs_bwrap  # noqa: F401 - fresh_probe is a fixture

from benchgate.build import worktrees
from benchgate.run import plan

NODE = shutil.which("node")


@needs_bwrap
@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_prepare_asks_git_for_the_worktrees_once(tmp_path, monkeypatch):
    repo = tmp_path / "node"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name, text in example_benchmark_files().items():
        (tmp_path / "checkout" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "checkout" / name).write_text(text)
    bench = tmp_path / "checkout" / "benchmark"
    listed: list[Path] = []
    list_worktrees = worktrees.list_worktrees
    monkeypatch.setattr(worktrees, "list_worktrees", lambda path: listed.append(path) or list_worktrees(path))

    def built(options: plan.RunOptions, sandbox: dict, design: object) -> tuple[plan.RunOptions, Path, dict]:
        return replace(options, base_binary=NODE, head_binary=NODE), bench, {}

    monkeypatch.setattr(plan, "_build_both", built)
    options = plan.RunOptions(output=tmp_path / "out", repo=repo, head_ref="feature", categories=("calc",))
    run_plan, record = plan.prepare(options)
    assert record["sandbox"]["used"] is True and listed == [repo]
    assert run_plan is not None and repo in run_plan.sandbox.mounts.hidden
